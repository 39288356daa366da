// Per-ISA leaf kernels. Each *_scalar / *_avx2 / *_avx512 / *_neon function lives in a translation unit compiled
// for that instruction set; callers go through the one dispatch table (dispatch() in simd.h), never call them
// directly.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kgrank {

// Counts of one contiguous run of scores against a threshold t:
// greater = #{x > t}, equal = #{x == t} (IEEE: -0 == +0), nan = #{x is NaN}. A NaN threshold compares false.
struct Counts {
  uint64_t greater = 0;
  uint64_t equal = 0;
  uint64_t nan = 0;
};

// What a Monte-Carlo statistic sums per task (sampling.h lane_statistic_sums_body): the rank, its inverse, a hit.
enum class LaneTerm : int { Rank = 0, Inverse = 1, Hit = 2 };

// The known answers of a row (answers_f32's arguments), taken out by the kernel that streams the row
// (count_answers_f32).
struct AnswerJob {
  const float* row;
  const uint32_t* entries;
  size_t count;
  uint32_t mask;
  int32_t own;
  float t;
};

// Contribution of known answers to a row's counts, for the filtered setting: over the answer ids
// (entries[k] & mask), skipping `own`, counts scores > t (greater), == t (equal) and non-NaN (nan field = number of
// non-NaN answers, i.e. candidates removed).
namespace isa {
Counts answers_f32_scalar(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t);
#ifdef KGRANK_HAVE_AVX2
Counts answers_f32_avx2(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t);
#endif
#ifdef KGRANK_HAVE_AVX512
Counts answers_f32_avx512(const float* row, const uint32_t* entries, size_t n, uint32_t mask, int32_t own, float t);
#endif

// count_f32(x, n, t), with answers_f32(job) written to *known and whether job.own is among the answers to
// *own_found: the same counts as the two calls. Made for job.row == x with the answers ascending (as the index keeps
// them): a block of answers is gathered once the stream has passed its last one, from lines just loaded; blocks the
// loop leaves are gathered after it. Any row and any order of entries give the same counts. AVX2 and AVX-512 only
// (other levels make the two calls).
#ifdef KGRANK_HAVE_AVX2
Counts count_answers_f32_avx2(const float* x, size_t n, float t, const AnswerJob& job, Counts* known, bool* own_found);
#endif
#ifdef KGRANK_HAVE_AVX512
Counts count_answers_f32_avx512(const float* x, size_t n, float t, const AnswerJob& job, Counts* known,
                                bool* own_found);
#endif

// Counts over the columns a bit set selects (typed candidates with dense sets): bit j of bits[i] selects x[16 i + j];
// scores > t (greater), == t (equal) and non-NaN (nan field) among the selected, in one sequential pass over x.
Counts masked_count_f32_scalar(const float* x, const uint16_t* bits, size_t n, float t);
#ifdef KGRANK_HAVE_AVX2
Counts masked_count_f32_avx2(const float* x, const uint16_t* bits, size_t n, float t);
#endif
#ifdef KGRANK_HAVE_AVX512
Counts masked_count_f32_avx512(const float* x, const uint16_t* bits, size_t n, float t);
#endif
}  // namespace isa

namespace isa {
Counts count_f32_scalar(const float* x, size_t n, float t);
Counts count_f64_scalar(const double* x, size_t n, double t);
uint64_t read_scalar(const unsigned char* p, size_t bytes);

#ifdef KGRANK_HAVE_AVX2
Counts count_f32_avx2(const float* x, size_t n, float t);
Counts count_f64_avx2(const double* x, size_t n, double t);
uint64_t read_avx2(const unsigned char* p, size_t bytes);
uint64_t read_stream_avx2(const unsigned char* p, size_t bytes);
#endif

#ifdef KGRANK_HAVE_AVX512
Counts count_f32_avx512(const float* x, size_t n, float t);
Counts count_f64_avx512(const double* x, size_t n, double t);
uint64_t read_avx512(const unsigned char* p, size_t bytes);
uint64_t read_stream_avx512(const unsigned char* p, size_t bytes);
#endif

// The int32 fast path of the rank generator (sampling.h generate_ranks_small_body), and the Monte-Carlo statistics'
// sums for kSampleLanes samples at once (sampling.h lane_statistic_sums_body).
void generate_ranks_small_scalar(const double* num_candidates, uint32_t n, uint32_t key, double* out);
void lane_statistic_sums_scalar(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                                LaneTerm term, double k, double* sums);
#ifdef KGRANK_HAVE_AVX2
void generate_ranks_small_avx2(const double* num_candidates, uint32_t n, uint32_t key, double* out);
void lane_statistic_sums_avx2(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                              LaneTerm term, double k, double* sums);
#endif
#ifdef KGRANK_HAVE_AVX512
void generate_ranks_small_avx512(const double* num_candidates, uint32_t n, uint32_t key, double* out);
void lane_statistic_sums_avx512(const double* num_candidates, const double* weights, uint32_t n, const uint32_t* keys,
                                LaneTerm term, double k, double* sums);
#endif

// The draws of paired resampling (sampling.h keyed_swaps_body / keyed_picks_body), in the rank generation family.
void keyed_swaps_scalar(uint32_t key, uint32_t first, uint32_t count, uint8_t* out);
void keyed_picks_scalar(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out);
void masked_lane_sums_scalar(const uint8_t* mask, const double* z, size_t len, double* lanes);
void weighted_lane_sums_scalar(const uint32_t* counts, const double* x, size_t len, double* lanes);
#ifdef KGRANK_HAVE_AVX2
void keyed_swaps_avx2(uint32_t key, uint32_t first, uint32_t count, uint8_t* out);
void keyed_picks_avx2(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out);
void masked_lane_sums_avx2(const uint8_t* mask, const double* z, size_t len, double* lanes);
void weighted_lane_sums_avx2(const uint32_t* counts, const double* x, size_t len, double* lanes);
#endif
#ifdef KGRANK_HAVE_AVX512
void keyed_swaps_avx512(uint32_t key, uint32_t first, uint32_t count, uint8_t* out);
void keyed_picks_avx512(uint32_t key, uint32_t first, uint32_t count, double n, int32_t* out);
void masked_lane_sums_avx512(const uint8_t* mask, const double* z, size_t len, double* lanes);
void weighted_lane_sums_avx512(const uint32_t* counts, const double* x, size_t len, double* lanes);
#endif

#ifdef KGRANK_HAVE_NEON
Counts count_f32_neon(const float* x, size_t n, float t);
Counts count_f64_neon(const double* x, size_t n, double t);
uint64_t read_neon(const unsigned char* p, size_t bytes);
#endif
}  // namespace isa

}  // namespace kgrank
