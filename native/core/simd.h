// Runtime instruction-set detection and selection for kgrank's kernels.
// The core is compiled for a baseline target; ISA-specific kernels live in their own translation units,
// each compiled with its own flags, and are only called after select_simd() found the CPU (and OS) able.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels.h"

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

// Extensions beyond a level's own that the int8 screen's kernels use (screen.cpp), detected once: AVX512_VNNI
// (CPUID 7.0 ECX 11), AVX-VNNI (7.1 EAX 4), and AMX-TILE with AMX-INT8 (7.0 EDX 24, 25) where the OS saves the tile
// state (XCR0 bits 17, 18). Each needs only the register state its level checks (AMX: its own). False off x86-64.
struct CpuExtensions {
  bool avx512_vnni = false;
  bool avx_vnni = false;
  bool amx_int8 = false;
};
const CpuExtensions& cpu_extensions();

// ---- the one ISA dispatch table ---------------------------------------------------------------------------------
// Every kernel family finds its per-ISA kernel here, from the level the caller asked for (CountOptions::simd, or the
// level argument of aggregate_ranks): KGRANK_SIMD, which the facade turns into that level, is honoured by all.

struct RankChunkSums;  // rank_sums.h
using CountF32Fn = Counts (*)(const float* x, size_t n, float t);
using CountF64Fn = Counts (*)(const double* x, size_t n, double t);
using ReadFn = uint64_t (*)(const unsigned char* p, size_t bytes);
using AnswersF32Fn = Counts (*)(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own,
                                float t);
// Null where the level has no fused kernel: the caller then counts and takes the answers out in two calls.
using CountAnswersF32Fn = Counts (*)(const float* x, size_t n, float t, const AnswerJob& job, Counts* known,
                                     bool* own_found);
using MaskedCountF32Fn = Counts (*)(const float* x, const uint16_t* bits, size_t n, float t);
using RankChunkSumsFn = void (*)(const double* x, size_t n, const double* ks, size_t num_k, uint64_t* hits,
                                 uint32_t* hist, bool centred, RankChunkSums* out);
using GenerateRanksSmallFn = void (*)(const double* num_candidates, uint32_t n, uint32_t key, double* out);
using LaneStatisticSumsFn = void (*)(const double* num_candidates, const double* weights, uint32_t n,
                                     const uint32_t* keys, LaneTerm term, double k, double* sums);

using KeyedSwapsFn = void (*)(uint32_t key, uint32_t first, uint32_t count, uint8_t* out);
using KeyedPicksFn = void (*)(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out);
using LaneSumsMaskedFn = void (*)(const uint8_t* mask, const double* z, size_t len, double* lanes);
using LaneSumsWeightedFn = void (*)(const uint32_t* counts, const double* x, size_t len, double* lanes);
enum class KernelFamily : int { Count = 0, Read = 1, Answers = 2, RankSums = 3, GenerateRanks = 4 };
constexpr int kKernelFamilies = 5;

struct KernelTable {
  CountF32Fn count_f32;
  CountF64Fn count_f64;
  ReadFn read;
  ReadFn read_stream;  // the read family too: the same with non-temporal loads (read where the ISA has none)
  AnswersF32Fn answers_f32;
  CountAnswersF32Fn count_answers_f32;  // the count family too (null: no fused kernel at the level)
  MaskedCountF32Fn masked_count_f32;    // the answers family too (typed candidates' dense sets)
  RankChunkSumsFn rank_chunk_sums;
  GenerateRanksSmallFn generate_ranks_small;
  LaneStatisticSumsFn lane_statistic_sums;  // the rank generation family too
  KeyedSwapsFn keyed_swaps;                 // the rank generation family too (random draws)
  KeyedPicksFn keyed_picks;                 // the rank generation family too
  LaneSumsMaskedFn masked_lane_sums;        // the rank generation family too (paired resampling's sums)
  LaneSumsWeightedFn weighted_lane_sums;    // the rank generation family too
  // The instruction set each family's kernel above is written for (indexed by KernelFamily): a family without a
  // kernel of its own at a level runs the next lower one (answers: NEON -> scalar; rank sums: AVX-512 -> AVX2;
  // rank sums and rank generation: NEON -> scalar).
  SimdLevel variant[kKernelFamilies];
};

// The kernels of `level`; a level this binary or CPU does not support gives the scalar table.
const KernelTable& kernel_table(SimdLevel level);

// What every kernel user calls: kernel_table(level), recording for the debug hook below which variant of `family`
// the caller is about to run (one relaxed store per call, not per chunk).
const KernelTable& dispatch(SimdLevel level, KernelFamily family);

// Debug/info hook: the variant of `family` that the most recent dispatch() for it chose (Scalar before any), so a
// test can check that a level's calls run that level's kernels (e.g. that the scalar level aggregates with the
// scalar kernel). Any thread's most recent call; tests call it right after their own.
SimdLevel last_dispatched(KernelFamily family);

const char* kernel_family_name(KernelFamily family);

}  // namespace kgrank
