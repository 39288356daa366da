// Typed candidates (per-relation candidate sets, Krompaß et al. 2015): a filtered evaluator batch ranked against the
// candidates its relation allows on the ranked side, not against every entity. Fallback twin:
// src/fallback/filter-index.ts rankTriplesConstrained.
#pragma once
#include <cstddef>
#include <cstdint>

#include "count.h"
#include "filter_index.h"
#include "status.h"

namespace kgrank {

// The allowed entities of one side, per relation: relation r's are ids[offsets[r] .. offsets[r + 1]), ascending and
// unique, each in [0, num_entities). offsets has num_relations + 1 entries, offsets[0] == 0, offsets[R] <= size (ids
// past offsets[R] are never read).
// Memory is linear in the constraint's size: nothing is relations x entities.
struct CandidateSets {
  const uint32_t* offsets = nullptr;
  const uint32_t* ids = nullptr;
  size_t size = 0;  // number of ids
  // Optional: the caller's bit sets of its dense relations, built once (the facade's CandidateSets.arrays()):
  // relation r's set is bits[bits_at[r] .. + (num_entities + 15) / 16) when bits_at[r] >= 0 (bit j of word i: entity
  // 16 i + j, the same set as its ids), else its ids are gathered. Null: the kernel builds them per call.
  const uint16_t* bits = nullptr;
  const int32_t* bits_at = nullptr;  // num_relations entries
  size_t bits_size = 0;              // number of words
};

// rank_triples (count.h) with each task's candidates cut to its relation's allowed set: the candidates of the task
// (anchor, r, truth) are allowed(r) and the true answer itself (it stays a candidate when the set leaves it out, as
// OpenKE's type_constrain and PyKEEN's restriction keep the evaluated triple), less the other known answers of
// (anchor, r) when `filtered`, less NaN scores. So optimistic = 1 + greater, pessimistic = 1 + greater + equal over
// those candidates, numCandidates = 1 + their count. Same keys, out layout, thread split and statuses as
// rank_triples (a job control cancels between 64-row tasks; no progress is counted); NotInIndex only when
// `filtered`. `sets` must cover index.num_relations() relations: offsets that are not monotone or end past `size`,
// ids out of range or not ascending in a relation a row uses and counts from its ids, or a caller's bit set past the
// bit words, are InvalidInput (checked before anything is counted). A relation with a caller's bit set is counted
// from its bits, its ids not read: the caller keeps the two the same set (CandidateSets.arrays() does).
// A set with at least one id per 64 columns is counted in one streamed pass over the row under a bit set of its
// columns (the caller's, or built per call: at most 8 bytes per allowed id); a sparser one is gathered, and only its
// columns are read.
Status rank_triples_constrained(const float* scores, size_t rows, const int32_t* triples, const FilterIndex& index,
                                bool filtered, const CandidateSets& sets, int32_t* keys, float* thresholds_out,
                                double* out, const CountOptions& options);
Status rank_triples_constrained(const double* scores, size_t rows, const int32_t* triples, const FilterIndex& index,
                                bool filtered, const CandidateSets& sets, int32_t* keys, double* thresholds_out,
                                double* out, const CountOptions& options);

}  // namespace kgrank
