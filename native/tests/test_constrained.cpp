// Typed candidates (rank_triples_constrained) against the definition written out (constrained_reference.h): random
// graphs on both index sides, float32 and float64, 32- and 64-bit index entries; per relation an empty allowed set,
// every entity, sparse and dense random sets (so many rows' sets leave out their true answer); scores with ties,
// -0 and NaN; filtered, unfiltered with an index of no triples and unfiltered with the full index (which must then
// be ignored); every SIMD level, 1 and 2 threads, more than 64 rows (several tasks). Then each status: IdOutOfRange
// (flat index), NanTrueScore and NotInIndex (row; NotInIndex only filtered), InvalidInput for each kind of broken
// set, and a broken set in a relation no row uses, which is not an error; a cancelled job control throws Cancelled.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "check.h"
#include "constrained.h"
#include "constrained_reference.h"
#include "filter_index.h"
#include "simd.h"
#include "thread_pool.h"

using kgrank::FilterIndex;
using kgrank::SimdLevel;
using kgrank::StatusCode;
using kgrank_test::ConstrainedProblem;

namespace {

std::vector<SimdLevel> levels() {
  std::vector<SimdLevel> out;
  for (SimdLevel l : {SimdLevel::Scalar, SimdLevel::AVX2, SimdLevel::AVX512, SimdLevel::NEON}) {
    if (kgrank::simd_supported(l)) out.push_back(l);
  }
  return out;
}

// The problem with the caller's bit sets (CandidateSets::bits): every other relation's set as bits, whatever its
// size (the caller decides which are streamed), the rest gathered from its ids.
ConstrainedProblem with_caller_bits(ConstrainedProblem p) {
  const size_t words = (static_cast<size_t>(p.num_entities) + 15) / 16;
  p.bits_at.assign(static_cast<size_t>(p.num_relations), -1);
  p.bits.clear();
  for (size_t r = 0; r < p.bits_at.size(); r += 2) {
    p.bits_at[r] = static_cast<int32_t>(p.bits.size());
    p.bits.resize(p.bits.size() + words, 0);
    for (uint32_t k = p.offsets[r]; k < p.offsets[r + 1]; ++k) {
      const uint32_t id = p.ids[k];
      p.bits[static_cast<size_t>(p.bits_at[r]) + id / 16] |= static_cast<uint16_t>(1u << (id % 16));
    }
  }
  return p;
}

// How often the random problems hit the cases the test is about (each must be > 0 at the end).
struct Coverage {
  size_t rows = 0, empty_set = 0, full_set = 0, gathered = 0, truth_left_out = 0, filtered_out = 0, nan_candidate = 0,
         tie = 0;
};
Coverage coverage;

// The problem's kernel results against the reference at every level and thread count.
template <typename T>
void check_all(const ConstrainedProblem& p, const std::vector<T>& scores, const FilterIndex& index, bool filtered,
               const char* what) {
  const kgrank_test::ConstrainedExpected<T> want = kgrank_test::constrained_reference(p, scores, filtered);
  for (SimdLevel level : levels()) {
    for (unsigned threads : {1u, 2u}) {
      kgrank::CountOptions opt;
      opt.simd = level;
      opt.threads = threads;
      const kgrank_test::ConstrainedRun<T> got = kgrank_test::run_constrained(p, scores, index, filtered, opt);
      // The same problem with the caller's bit sets: the same results.
      if (p.bits_at.empty() && p.num_relations < 64) {
        const kgrank_test::ConstrainedRun<T> given =
            kgrank_test::run_constrained(with_caller_bits(p), scores, index, filtered, opt);
        const char* why_given = "";
        const int bad_given = kgrank_test::constrained_mismatches(want, given, &why_given);
        if (bad_given != 0)
          std::fprintf(stderr, "%s with caller bits: %d mismatches, first: %s\n", what, bad_given, why_given);
        CHECK_EQ(bad_given, 0);
      }
      // The level's answers kernel ran (float32 gathers at AVX2 / AVX-512; float64 counts in plain code).
      CHECK(kgrank::last_dispatched(kgrank::KernelFamily::Answers) ==
            kgrank::kernel_table(level).variant[static_cast<int>(kgrank::KernelFamily::Answers)]);
      const char* why = "";
      const int bad = kgrank_test::constrained_mismatches(want, got, &why);
      if (bad != 0) {
        std::fprintf(stderr, "%s (%s, %s, %u threads, float%zu, %s side, filtered %d): %d mismatches, first: %s\n",
                     what, kgrank::simd_name(level), got.status.message.c_str(), threads, 8 * sizeof(T),
                     p.tail_side ? "tail" : "head", filtered ? 1 : 0, bad, why);
      }
      CHECK_EQ(bad, 0);
    }
  }
}

// Scores with many ties (halves in [-1.5, 1.5], zeros of either sign) and NaN about every ninth entry, never at a
// row's own true answer.
template <typename T>
std::vector<T> random_scores(std::mt19937_64& rng, const ConstrainedProblem& p) {
  const size_t n = static_cast<size_t>(p.num_entities);
  std::vector<T> s(p.rows() * n);
  for (T& v : s) {
    const uint64_t k = rng() % 18;
    v = k == 0 ? std::numeric_limits<T>::quiet_NaN() : k == 1 ? -T(0) : static_cast<T>(static_cast<int>(k % 7) - 3) / 2;
  }
  for (size_t r = 0; r < p.rows(); ++r) {
    const int32_t truth = p.triples[3 * r + (p.tail_side ? 2 : 0)];
    T& own = s[r * n + static_cast<size_t>(truth)];
    if (own != own) own = T(0.5);
  }
  return s;
}

template <typename T>
void tally(const ConstrainedProblem& p, const std::vector<T>& scores, bool filtered) {
  const size_t n = static_cast<size_t>(p.num_entities);
  std::set<std::tuple<int32_t, int32_t, int32_t>> known;
  for (size_t i = 0; i < p.known.size(); i += 3) known.insert({p.known[i], p.known[i + 1], p.known[i + 2]});
  for (size_t r = 0; r < p.rows(); ++r) {
    const int32_t h = p.triples[3 * r], rel = p.triples[3 * r + 1], tl = p.triples[3 * r + 2];
    const int32_t truth = p.tail_side ? tl : h;
    const uint32_t* first = p.ids.data() + p.offsets[rel];
    const uint32_t* last = p.ids.data() + p.offsets[rel + 1];
    const T t = scores[r * n + static_cast<size_t>(truth)];
    ++coverage.rows;
    coverage.empty_set += first == last;
    coverage.full_set += static_cast<size_t>(last - first) == n;
    // The kernel gathers a set with fewer than one id per 64 columns and streams the row under a bit set otherwise.
    coverage.gathered += first != last && static_cast<size_t>(last - first) * 64 < n;
    coverage.truth_left_out += !std::binary_search(first, last, static_cast<uint32_t>(truth));
    for (const uint32_t* q = first; q != last; ++q) {
      const int32_t c = static_cast<int32_t>(*q);
      if (c == truth) continue;
      const T v = scores[r * n + *q];
      coverage.nan_candidate += v != v;
      coverage.tie += v == t;
      if (filtered)
        coverage.filtered_out +=
            known.count(p.tail_side ? std::make_tuple(h, rel, c) : std::make_tuple(c, rel, tl)) > 0;
    }
  }
}

// Random allowed sets for the relations in `active` (the others empty): kinds by position - empty, every entity,
// sparse (about 1 in 8), dense (about 7 in 8), sparse again, very sparse (about 1 in 100: gathered, not streamed).
void random_sets(std::mt19937_64& rng, ConstrainedProblem& p, const std::vector<int32_t>& active) {
  const size_t R = static_cast<size_t>(p.num_relations);
  std::vector<std::vector<uint32_t>> sets(R);
  for (size_t k = 0; k < active.size(); ++k) {
    std::vector<uint32_t>& s = sets[static_cast<size_t>(active[k])];
    const size_t kind = k % 6;
    for (uint32_t e = 0; e < static_cast<uint32_t>(p.num_entities); ++e) {
      const bool in = kind == 1 || (kind == 3 && rng() % 8 != 0) || ((kind == 2 || kind == 4) && rng() % 8 == 0) ||
                      (kind == 5 && rng() % 100 == 0);
      if (in) s.push_back(e);
    }
  }
  p.offsets.assign(R + 1, 0);
  p.ids.clear();
  for (size_t r = 0; r < R; ++r) {
    p.ids.insert(p.ids.end(), sets[r].begin(), sets[r].end());
    p.offsets[r + 1] = static_cast<uint32_t>(p.ids.size());
  }
  p.size = p.ids.size();
}

// A random graph whose triples use the relations in `active`: half of them with a head among a few entities, half
// with a tail among them, so keys have many answers on both sides. Rows: `rows` known triples (filtered), and the
// same number of rows half of which are arbitrary triples (unfiltered).
void run(std::mt19937_64& rng, int32_t n, int32_t R, const std::vector<int32_t>& active, size_t triples, size_t rows,
         bool expect_wide) {
  std::uniform_int_distribution<int32_t> ent(0, n - 1);
  const int32_t few = std::min<int32_t>(n, 6);
  ConstrainedProblem base;
  base.num_entities = n;
  base.num_relations = R;
  base.known.resize(3 * triples);
  for (size_t i = 0; i < triples; ++i) {
    const bool few_heads = i % 2 == 0;
    base.known[3 * i] = few_heads ? ent(rng) % few : ent(rng);
    base.known[3 * i + 1] = active[rng() % active.size()];
    base.known[3 * i + 2] = few_heads ? ent(rng) : ent(rng) % few;
  }
  random_sets(rng, base, active);
  for (bool tail_side : {true, false}) {
    ConstrainedProblem p = base;
    p.tail_side = tail_side;
    FilterIndex full, none;
    CHECK(kgrank_test::build_index(p, true, &full).ok());
    CHECK(kgrank_test::build_index(p, false, &none).ok());
    CHECK_EQ(full.wide(), expect_wide);
    // Filtered: known triples only (duplicates too).
    p.triples.resize(3 * rows);
    for (size_t r = 0; r < rows; ++r) {
      const size_t k = rng() % triples;
      std::copy(p.known.begin() + static_cast<long>(3 * k), p.known.begin() + static_cast<long>(3 * k + 3),
                p.triples.begin() + static_cast<long>(3 * r));
    }
    {
      const std::vector<float> sf = random_scores<float>(rng, p);
      const std::vector<double> sd = random_scores<double>(rng, p);
      tally(p, sf, true);
      check_all(p, sf, full, true, "filtered");
      check_all(p, sd, full, true, "filtered");
    }
    // Unfiltered: every other row an arbitrary triple of an active relation.
    for (size_t r = 0; r < rows; r += 2) {
      p.triples[3 * r] = ent(rng);
      p.triples[3 * r + 1] = active[rng() % active.size()];
      p.triples[3 * r + 2] = ent(rng);
    }
    {
      const std::vector<float> sf = random_scores<float>(rng, p);
      const std::vector<double> sd = random_scores<double>(rng, p);
      tally(p, sf, false);
      check_all(p, sf, none, false, "unfiltered, empty index");
      check_all(p, sd, none, false, "unfiltered, empty index");
      // Unfiltered with the full index: the index is not consulted.
      check_all(p, sf, full, false, "unfiltered, full index");
      check_all(p, sd, full, false, "unfiltered, full index");
    }
  }
}

// A small fixed problem for the statuses: 10 entities, 3 relations, a known triple set, valid sets, 100 rows of
// known triples (tail side), finite scores.
ConstrainedProblem small_problem() {
  ConstrainedProblem p;
  p.num_entities = 10;
  p.num_relations = 3;
  p.known = {0, 0, 1, 0, 0, 2, 1, 0, 3, 2, 1, 4, 3, 1, 5, 4, 2, 6, 5, 2, 7, 6, 0, 8, 7, 1, 9, 8, 2, 0};
  // relation 0: {1, 2, 3, 8}, relation 1: {0, 4, 9}, relation 2: {6, 7}
  p.offsets = {0, 4, 7, 9};
  p.ids = {1, 2, 3, 8, 0, 4, 9, 6, 7};
  p.size = p.ids.size();
  for (size_t r = 0; r < 100; ++r) {
    const size_t k = r % (p.known.size() / 3);
    p.triples.insert(p.triples.end(), p.known.begin() + static_cast<long>(3 * k),
                     p.known.begin() + static_cast<long>(3 * k + 3));
  }
  return p;
}

std::vector<double> small_scores(const ConstrainedProblem& p) {
  std::vector<double> s(p.rows() * 10);
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<double>((i * 7) % 5);
  return s;
}

// The status of one call, checked against the expected code and index and against the reference, at every level
// and thread count, filtered or not, float32 and float64.
void expect_status(const ConstrainedProblem& p, const std::vector<double>& scores, bool filtered, StatusCode code,
                   size_t index, const char* what) {
  FilterIndex index_full;
  CHECK(kgrank_test::build_index(p, filtered, &index_full).ok());
  const std::vector<float> sf(scores.begin(), scores.end());
  const kgrank_test::ConstrainedExpected<double> want = kgrank_test::constrained_reference(p, scores, filtered);
  if (want.code != code || (code != StatusCode::Ok && code != StatusCode::InvalidInput && want.index != index)) {
    std::fprintf(stderr, "%s: the reference disagrees with the test's expectation\n", what);
  }
  CHECK(want.code == code);
  for (SimdLevel level : levels()) {
    for (unsigned threads : {1u, 2u}) {
      kgrank::CountOptions opt;
      opt.simd = level;
      opt.threads = threads;
      const kgrank_test::ConstrainedRun<double> gd = kgrank_test::run_constrained(p, scores, index_full, filtered, opt);
      const kgrank_test::ConstrainedRun<float> gf = kgrank_test::run_constrained(p, sf, index_full, filtered, opt);
      for (const kgrank::Status* st : {&gd.status, &gf.status}) {
        if (st->code != code || (code != StatusCode::Ok && code != StatusCode::InvalidInput && st->index != index)) {
          std::fprintf(stderr, "%s: got status %d at %zu (%s), want %d at %zu\n", what, static_cast<int>(st->code),
                       st->index, st->message.c_str(), static_cast<int>(code), index);
          CHECK(false);
        }
        if (code != StatusCode::Ok) CHECK(!st->message.empty());
      }
      const char* why = "";
      if (kgrank_test::constrained_mismatches(want, gd, &why) != 0) {
        std::fprintf(stderr, "%s: float64 differs from the reference: %s\n", what, why);
        CHECK(false);
      }
    }
  }
}

void statuses() {
  const ConstrainedProblem ok = small_problem();
  const std::vector<double> s = small_scores(ok);
  expect_status(ok, s, true, StatusCode::Ok, 0, "valid");
  expect_status(ok, s, false, StatusCode::Ok, 0, "valid, unfiltered");

  // IdOutOfRange: the flat index of the first bad id (head, relation, tail), before sets or scores are looked at.
  for (bool tail_side : {true, false}) {
    const struct {
      size_t at;
      int32_t value;
    } bad_ids[] = {{3 * 70, -1},     {3 * 70, 10},     {3 * 70 + 1, 3},
                   {3 * 70 + 1, -5}, {3 * 70 + 2, 10}, {3 * 70 + 2, std::numeric_limits<int32_t>::min()},
                   {0, 1 << 30}};
    for (const auto& b : bad_ids) {
      ConstrainedProblem p = ok;
      p.tail_side = tail_side;
      p.triples[b.at] = b.value;
      p.triples[3 * 90 + 1] = 7;  // a later bad id does not win
      p.offsets[0] = 1;           // nor do broken sets
      std::vector<double> sn = s;
      sn[5 * 10 + 1] = std::nan("");  // nor a NaN true score
      expect_status(p, sn, true, StatusCode::IdOutOfRange, b.at, "IdOutOfRange");
      expect_status(p, sn, false, StatusCode::IdOutOfRange, b.at, "IdOutOfRange, unfiltered");
    }
  }

  // NanTrueScore: the first row whose true score is NaN, ahead of an unknown triple in an earlier row; a NaN score
  // of another candidate is no error.
  {
    ConstrainedProblem p = ok;
    p.triples[3 * 3 + 2] = 5;  // row 3: (0, 0, 5), not a filter triple
    std::vector<double> sn = s;
    sn[80 * 10 + static_cast<size_t>(p.triples[3 * 80 + 2])] = std::nan("");
    sn[90 * 10 + static_cast<size_t>(p.triples[3 * 90 + 2])] = std::nan("");
    sn[7 * 10 + static_cast<size_t>((p.triples[3 * 7 + 2] + 1) % 10)] = std::nan("");
    expect_status(p, sn, true, StatusCode::NanTrueScore, 80, "NanTrueScore");
    expect_status(p, sn, false, StatusCode::NanTrueScore, 80, "NanTrueScore, unfiltered");
    for (bool tail_side : {true, false}) {
      ConstrainedProblem q = ok;
      q.tail_side = tail_side;
      std::vector<double> sq = s;
      sq[66 * 10 + static_cast<size_t>(q.triples[3 * 66 + (tail_side ? 2 : 0)])] = -std::nan("");
      expect_status(q, sq, true, StatusCode::NanTrueScore, 66, "NanTrueScore, by side");
    }
  }

  // NotInIndex: filtered only; the first row whose triple is not a filter triple (the true answer's, whatever the
  // allowed set holds).
  for (bool tail_side : {true, false}) {
    ConstrainedProblem p = ok;
    p.tail_side = tail_side;
    p.triples[3 * 75 + 2] = 9;  // (7, 1, 9) is known; make row 75 (0 or 1, rel, 9) unknown
    p.triples[3 * 75] = 0;
    p.triples[3 * 75 + 1] = 2;
    p.triples[3 * 95 + 1] = 2;
    p.triples[3 * 95 + 2] = 3;
    expect_status(p, s, true, StatusCode::NotInIndex, 75, "NotInIndex");
    expect_status(p, s, false, StatusCode::Ok, 0, "NotInIndex, unfiltered: no error");
  }

  // InvalidInput: broken sets of a relation the rows use (every relation is used by the 100 rows).
  const auto broken = [&](ConstrainedProblem p, const char* what) {
    expect_status(p, s, true, StatusCode::InvalidInput, 0, what);
    expect_status(p, s, false, StatusCode::InvalidInput, 0, what);
  };
  {
    ConstrainedProblem p = ok;
    p.offsets[0] = 1;
    broken(p, "offsets[0] != 0");
    p.ids.insert(p.ids.begin(), 3);
    p.size = p.ids.size();
    p.offsets = {1, 5, 8, 10};
    broken(p, "offsets[0] != 0, the sets otherwise whole");
  }
  {
    ConstrainedProblem p = ok;
    p.offsets = {0, 4, 3, 9};
    broken(p, "offsets decrease");
    p.offsets = {0, 7, 4, 9};
    broken(p, "offsets decrease (first relation past the second)");
    p.offsets = {0, 4, 7, 6};
    broken(p, "offsets decrease at the last relation");
  }
  {
    ConstrainedProblem p = ok;
    p.offsets = {0, 4, 7, 10};
    broken(p, "offsets[R] past size");
    p.offsets = {0, 4, 11, 9};
    broken(p, "an inner offset past size");
    p.offsets = {0, 4, 0xFFFFFFFFu, 9};
    broken(p, "an offset of 2^32 - 1");
    p.offsets = {0, 4, 7, 9};
    p.size = 8;
    broken(p, "size below offsets[R]");
  }
  {
    // The caller's bit set of a used relation that ends past the bit words, or starts past them.
    ConstrainedProblem p = with_caller_bits(ok);
    p.bits.pop_back();
    broken(p, "a caller's bit set past the bit words");
    p = with_caller_bits(ok);
    p.bits_at[2] = static_cast<int32_t>(p.bits.size() + 1);
    broken(p, "a caller's bit set starting past the bit words");
  }
  for (uint32_t value : {10u, 11u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    ConstrainedProblem p = ok;
    p.ids[8] = value;  // relation 2's last id
    broken(p, "an id >= numEntities");
    p = ok;
    p.ids[0] = value;  // relation 0's first id
    broken(p, "an id >= numEntities, first of its set");
  }
  {
    ConstrainedProblem p = ok;
    p.ids = {1, 2, 2, 8, 0, 4, 9, 6, 7};
    broken(p, "a repeated id");
    p.ids = {1, 3, 2, 8, 0, 4, 9, 6, 7};
    broken(p, "ids not ascending");
    p.ids = {1, 2, 3, 8, 0, 4, 9, 7, 6};
    broken(p, "ids not ascending in the last relation");
  }
  // A broken set of a relation no row uses is no error (rows of relation 2 replaced by relation 0 and 1 rows).
  {
    ConstrainedProblem p = ok;
    for (size_t r = 0; r < p.rows(); ++r) {
      if (p.triples[3 * r + 1] == 2) std::copy(ok.triples.begin(), ok.triples.begin() + 3, p.triples.begin() + 3 * r);
    }
    expect_status(p, s, true, StatusCode::Ok, 0, "unused relation, valid");
    p.ids = {1, 2, 3, 8, 0, 4, 9, 12, 7};
    expect_status(p, s, true, StatusCode::Ok, 0, "an id >= numEntities in an unused relation");
    expect_status(p, s, false, StatusCode::Ok, 0, "an id >= numEntities in an unused relation, unfiltered");
    p.ids = {1, 2, 3, 8, 0, 4, 9, 7, 6};
    expect_status(p, s, true, StatusCode::Ok, 0, "ids not ascending in an unused relation");
    p.ids = {1, 2, 3, 8, 0, 4, 9, 6, 6};
    expect_status(p, s, true, StatusCode::Ok, 0, "a repeated id in an unused relation");
    // Offsets are checked whatever the rows use: they say where every set lies.
    p.ids = ok.ids;
    p.offsets = {0, 4, 7, 6};
    expect_status(p, s, true, StatusCode::InvalidInput, 0, "offsets decrease at an unused relation");
    // No rows: nothing is used, only the offsets are checked.
    ConstrainedProblem none = ok;
    none.triples.clear();
    none.ids = {1, 2, 3, 8, 0, 4, 9, 12, 7};
    expect_status(none, {}, true, StatusCode::Ok, 0, "no rows");
  }
  // Ids past offsets[R] are not part of any set: never read, never checked.
  {
    ConstrainedProblem p = ok;
    p.ids.push_back(0xFFFFFFFFu);
    p.ids.push_back(3);
    p.size = p.ids.size();
    expect_status(p, s, true, StatusCode::Ok, 0, "ids past offsets[R]");
  }
}

// A job control cancelled before the call: the counting loop skips its tasks and throws Cancelled (as rank_triples'
// counting does); without a cancel the control changes nothing.
void cancellation() {
  const ConstrainedProblem p = small_problem();
  const std::vector<double> s = small_scores(p);
  FilterIndex index;
  CHECK(kgrank_test::build_index(p, true, &index).ok());
  const kgrank_test::ConstrainedExpected<double> want = kgrank_test::constrained_reference(p, s, true);
  for (unsigned threads : {1u, 2u}) {
    kgrank::CountOptions opt;
    opt.threads = threads;
    kgrank::JobControl live;
    opt.control = &live;
    CHECK_EQ(kgrank_test::constrained_mismatches(want, kgrank_test::run_constrained(p, s, index, true, opt)), 0);
    kgrank::JobControl cancelled;
    cancelled.cancel();
    opt.control = &cancelled;
    bool thrown = false;
    try {
      kgrank_test::run_constrained(p, s, index, true, opt);
    } catch (const kgrank::Cancelled&) {
      thrown = true;
    }
    CHECK(thrown);
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(20261127);
  statuses();
  cancellation();
  // 32-bit entries: a tiny dense graph (many filtered candidates per row), then one past the two-thread threshold.
  run(rng, 40, 5, {0, 1, 2, 3, 4}, 300, 150, false);
  run(rng, 1200, 7, {0, 1, 2, 3, 4, 5, 6}, 3000, 130, false);
  // 64-bit entries: 17 entity bits + 16 relation bits; the rows use the first, last and two middle relations.
  run(rng, 65537, 32769, {0, 1, 16384, 32768, 777}, 4000, 70, true);
  CHECK(coverage.rows > 0);
  CHECK(coverage.empty_set > 0);
  CHECK(coverage.full_set > 0);
  CHECK(coverage.truth_left_out > 0);
  CHECK(coverage.filtered_out > 0);
  CHECK(coverage.nan_candidate > 0);
  CHECK(coverage.tie > 0);
  CHECK(coverage.gathered > 0);
  std::printf(
      "rows %zu: empty set %zu, every entity %zu, gathered %zu, truth left out %zu, filtered out %zu, NaN %zu, ties %zu\n",
      coverage.rows, coverage.empty_set, coverage.full_set, coverage.gathered, coverage.truth_left_out,
      coverage.filtered_out, coverage.nan_candidate, coverage.tie);
  TEST_MAIN_END();
}
