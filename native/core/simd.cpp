#include "simd.h"

#include <atomic>
#include <cstdint>

#include "rank_sums.h"

#if defined(__x86_64__) || defined(_M_X64)
#define KGRANK_X86_64 1
#if defined(_MSC_VER)
#include <immintrin.h>
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

#if defined(__aarch64__) || defined(_M_ARM64)
#define KGRANK_ARM64 1
#endif

namespace kgrank {

const char* simd_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Scalar: return "scalar";
    case SimdLevel::AVX2: return "avx2";
    case SimdLevel::AVX512: return "avx512";
    case SimdLevel::NEON: return "neon";
  }
  return "unknown";
}

bool parse_simd(const std::string& name, SimdLevel* out) {
  static const SimdLevel all[] = {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON};
  for (SimdLevel level : all) {
    if (name == simd_name(level)) {
      *out = level;
      return true;
    }
  }
  return false;
}

namespace {

#ifdef KGRANK_X86_64
struct CpuidRegs {
  uint32_t eax, ebx, ecx, edx;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r{0, 0, 0, 0};
#if defined(_MSC_VER)
  int regs[4];
  __cpuidex(regs, static_cast<int>(leaf), static_cast<int>(subleaf));
  r.eax = regs[0];
  r.ebx = regs[1];
  r.ecx = regs[2];
  r.edx = regs[3];
#else
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
#endif
  return r;
}

uint64_t xgetbv0() {
#if defined(_MSC_VER)
  return _xgetbv(0);
#else
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
#endif
}

struct X86Features {
  bool avx2 = false;
  bool avx512 = false;
};

X86Features detect_x86() {
  X86Features f;
  const uint32_t max_leaf = cpuid(0, 0).eax;
  if (max_leaf < 7) return f;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = (l1.ecx >> 27) & 1;
  const bool avx = (l1.ecx >> 28) & 1;
  const bool fma = (l1.ecx >> 12) & 1;
  const bool popcnt = (l1.ecx >> 23) & 1;
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = xgetbv0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;    // SSE + AVX state saved by the OS
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  const CpuidRegs l7 = cpuid(7, 0);
  const bool avx2 = (l7.ebx >> 5) & 1;
  const bool bmi2 = (l7.ebx >> 8) & 1;
  const bool avx512f = (l7.ebx >> 16) & 1;
  const bool avx512dq = (l7.ebx >> 17) & 1;
  const bool avx512bw = (l7.ebx >> 30) & 1;
  const bool avx512vl = (l7.ebx >> 31) & 1;
  f.avx2 = os_ymm && avx2 && fma && popcnt && bmi2;
  f.avx512 = f.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl;
  return f;
}

CpuExtensions detect_extensions() {
  CpuExtensions e;
  if (cpuid(0, 0).eax < 7) return e;
  const CpuidRegs l7 = cpuid(7, 0);
  const CpuidRegs l71 = cpuid(7, 1);
  e.avx512_vnni = (l7.ecx >> 11) & 1;
  e.avx_vnni = (l71.eax >> 4) & 1;
  const bool osxsave = (cpuid(1, 0).ecx >> 27) & 1;
  e.amx_int8 = osxsave && ((l7.edx >> 24) & 1) && ((l7.edx >> 25) & 1) && ((xgetbv0() >> 17) & 3) == 3;
  return e;
}
#endif

}  // namespace

const CpuExtensions& cpu_extensions() {
#ifdef KGRANK_X86_64
  static const CpuExtensions e = detect_extensions();
#else
  static const CpuExtensions e;
#endif
  return e;
}

bool simd_supported(SimdLevel level) {
  switch (level) {
    case SimdLevel::Scalar: return true;
#if defined(KGRANK_X86_64) && defined(KGRANK_HAVE_AVX2)
    case SimdLevel::AVX2: {
      static const bool ok = detect_x86().avx2;
      return ok;
    }
#endif
#if defined(KGRANK_X86_64) && defined(KGRANK_HAVE_AVX512)
    case SimdLevel::AVX512: {
      static const bool ok = detect_x86().avx512;
      return ok;
    }
#endif
#if defined(KGRANK_ARM64) && defined(KGRANK_HAVE_NEON)
    case SimdLevel::NEON: return true;  // Advanced SIMD is mandatory on AArch64
#endif
    default: return false;
  }
}

SimdLevel best_simd() {
  static const SimdLevel best = [] {
    if (simd_supported(SimdLevel::AVX512)) return SimdLevel::AVX512;
    if (simd_supported(SimdLevel::AVX2)) return SimdLevel::AVX2;
    if (simd_supported(SimdLevel::NEON)) return SimdLevel::NEON;
    return SimdLevel::Scalar;
  }();
  return best;
}

std::string supported_simd_list() {
  std::string out = "scalar";
  static const SimdLevel wide[] = {SimdLevel::NEON, SimdLevel::AVX2, SimdLevel::AVX512};
  for (SimdLevel level : wide) {
    if (simd_supported(level)) {
      out += ",";
      out += simd_name(level);
    }
  }
  return out;
}

namespace {

KernelTable make_table(SimdLevel level) {
  KernelTable t{isa::count_f32_scalar,
                isa::count_f64_scalar,
                isa::read_scalar,
                isa::read_scalar,
                isa::answers_f32_scalar,
                nullptr,
                isa::masked_count_f32_scalar,
                isa::rank_chunk_sums_scalar,
                isa::generate_ranks_small_scalar,
                isa::lane_statistic_sums_scalar,
                isa::keyed_swaps_scalar,
                isa::keyed_picks_scalar,
                isa::masked_lane_sums_scalar,
                isa::weighted_lane_sums_scalar,
                {SimdLevel::Scalar, SimdLevel::Scalar, SimdLevel::Scalar, SimdLevel::Scalar, SimdLevel::Scalar}};
  auto set = [&t](KernelFamily f, SimdLevel v) { t.variant[static_cast<int>(f)] = v; };
  switch (level) {
#ifdef KGRANK_HAVE_AVX2
    case SimdLevel::AVX2:
      t.count_f32 = isa::count_f32_avx2;
      t.count_f64 = isa::count_f64_avx2;
      t.read = isa::read_avx2;
      t.read_stream = isa::read_stream_avx2;
      t.answers_f32 = isa::answers_f32_avx2;
      t.count_answers_f32 = isa::count_answers_f32_avx2;
      t.masked_count_f32 = isa::masked_count_f32_avx2;
      t.rank_chunk_sums = isa::rank_chunk_sums_avx2;
      t.generate_ranks_small = isa::generate_ranks_small_avx2;
      t.lane_statistic_sums = isa::lane_statistic_sums_avx2;
      t.keyed_swaps = isa::keyed_swaps_avx2;
      t.keyed_picks = isa::keyed_picks_avx2;
      t.masked_lane_sums = isa::masked_lane_sums_avx2;
      t.weighted_lane_sums = isa::weighted_lane_sums_avx2;
      for (KernelFamily f : {KernelFamily::Count, KernelFamily::Read, KernelFamily::Answers, KernelFamily::RankSums,
                             KernelFamily::GenerateRanks}) {
        set(f, SimdLevel::AVX2);
      }
      break;
#endif
#if defined(KGRANK_HAVE_AVX512) && defined(KGRANK_HAVE_AVX2)
    case SimdLevel::AVX512:
      // AVX2's table with the AVX-512 kernels that exist (none for rank sums: AVX2's runs).
      t = make_table(SimdLevel::AVX2);
      t.count_f32 = isa::count_f32_avx512;
      t.count_f64 = isa::count_f64_avx512;
      t.read = isa::read_avx512;
      t.read_stream = isa::read_stream_avx512;
      t.answers_f32 = isa::answers_f32_avx512;
      t.count_answers_f32 = isa::count_answers_f32_avx512;
      t.masked_count_f32 = isa::masked_count_f32_avx512;
      t.generate_ranks_small = isa::generate_ranks_small_avx512;
      t.lane_statistic_sums = isa::lane_statistic_sums_avx512;
      t.keyed_swaps = isa::keyed_swaps_avx512;
      t.keyed_picks = isa::keyed_picks_avx512;
      t.masked_lane_sums = isa::masked_lane_sums_avx512;
      t.weighted_lane_sums = isa::weighted_lane_sums_avx512;
      for (KernelFamily f :
           {KernelFamily::Count, KernelFamily::Read, KernelFamily::Answers, KernelFamily::GenerateRanks}) {
        set(f, SimdLevel::AVX512);
      }
      break;
#endif
#ifdef KGRANK_HAVE_NEON
    case SimdLevel::NEON:
      t.count_f32 = isa::count_f32_neon;
      t.count_f64 = isa::count_f64_neon;
      t.read = isa::read_neon;
      t.read_stream = isa::read_neon;
      for (KernelFamily f : {KernelFamily::Count, KernelFamily::Read}) set(f, SimdLevel::NEON);
      break;
#endif
    default: break;
  }
  return t;
}

std::atomic<int> g_last_dispatched[kKernelFamilies] = {};

}  // namespace

const KernelTable& kernel_table(SimdLevel level) {
  static const KernelTable tables[4] = {make_table(SimdLevel::Scalar), make_table(SimdLevel::AVX2),
                                        make_table(SimdLevel::AVX512), make_table(SimdLevel::NEON)};
  const int l = static_cast<int>(level);
  return (l >= 0 && l < 4 && simd_supported(level)) ? tables[l] : tables[0];
}

const KernelTable& dispatch(SimdLevel level, KernelFamily family) {
  const KernelTable& t = kernel_table(level);
  g_last_dispatched[static_cast<int>(family)].store(static_cast<int>(t.variant[static_cast<int>(family)]),
                                                    std::memory_order_relaxed);
  return t;
}

SimdLevel last_dispatched(KernelFamily family) {
  return static_cast<SimdLevel>(g_last_dispatched[static_cast<int>(family)].load(std::memory_order_relaxed));
}

const char* kernel_family_name(KernelFamily family) {
  switch (family) {
    case KernelFamily::Count: return "count";
    case KernelFamily::Read: return "read";
    case KernelFamily::Answers: return "answers";
    case KernelFamily::RankSums: return "rankSums";
    case KernelFamily::GenerateRanks: return "generateRanks";
  }
  return "unknown";
}

}  // namespace kgrank
