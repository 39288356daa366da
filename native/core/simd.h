// Runtime instruction-set detection and selection for kgrank's kernels.
// The core is compiled for a baseline target; ISA-specific kernels live in their own translation units,
// each compiled with its own flags, and are only called after select_simd() found the CPU (and OS) able.
#pragma once
#include <string>

namespace kgrank {

enum class SimdLevel : int { Scalar = 0, AVX2 = 1, AVX512 = 2, NEON = 3 };

// Canonical lowercase name ("scalar", "avx2", "avx512", "neon").
const char* simd_name(SimdLevel level);

// Parses a level name; returns false if the name is unknown.
bool parse_simd(const std::string& name, SimdLevel* out);

// True when the running CPU and OS support the level and this binary contains its kernels.
bool simd_supported(SimdLevel level);

// The best level this binary and machine support (detected once, then cached).
SimdLevel best_simd();

// Every supported level, lowest first, as a comma-separated list ("scalar,avx2").
std::string supported_simd_list();

}  // namespace kgrank
