// The enums the addon shares with TypeScript, as tables of (name, value): the one list the addon's readers check a
// code against (args.h Args::code: a code is valid when it is below the table's size) and the one info().enums
// reports. test/enums.test.ts compares each table with its C++ enum (read from the core header) and with its
// TypeScript mirror, so a member added on one side and not the others fails there. Values run 0, 1, 2, ... in
// order (checked at compile time below).
#pragma once
#include <napi.h>

#include <cstddef>
#include <string>

#include "../core/aggregate.h"
#include "../core/expectation.h"
#include "../core/interaction.h"
#include "../core/pbg.h"
#include "../core/resample.h"
#include "../core/sampling.h"
#include "../core/simd.h"
#include "../core/status.h"

namespace kgrank_addon {

struct EnumEntry {
  const char* name;
  int value;
};

template <class E>
struct EnumTable;

#define KGRANK_ENUM_TABLE(Type, Label, ...)                            \
  template <>                                                          \
  struct EnumTable<Type> {                                             \
    static constexpr const char* label = Label;                        \
    static constexpr EnumEntry entries[] = {__VA_ARGS__};              \
    static constexpr size_t size = sizeof(entries) / sizeof(*entries); \
  }
#define KGRANK_ENTRY(Type, Name) \
  EnumEntry { #Name, static_cast < int>(Type::Name) }

KGRANK_ENUM_TABLE(kgrank::Interaction, "Interaction", KGRANK_ENTRY(kgrank::Interaction, TransEL1),
                  KGRANK_ENTRY(kgrank::Interaction, TransEL2), KGRANK_ENTRY(kgrank::Interaction, DistMult),
                  KGRANK_ENTRY(kgrank::Interaction, ComplEx), KGRANK_ENTRY(kgrank::Interaction, RotatE),
                  KGRANK_ENTRY(kgrank::Interaction, PairRE), KGRANK_ENTRY(kgrank::Interaction, RotatEL2));
KGRANK_ENUM_TABLE(kgrank::ComplexLayout, "ComplexLayout", KGRANK_ENTRY(kgrank::ComplexLayout, Halves),
                  KGRANK_ENTRY(kgrank::ComplexLayout, Interleaved));
KGRANK_ENUM_TABLE(kgrank::ScoreOp, "ScoreOp", KGRANK_ENTRY(kgrank::ScoreOp, Dot), KGRANK_ENTRY(kgrank::ScoreOp, L1),
                  KGRANK_ENTRY(kgrank::ScoreOp, L2Squared), KGRANK_ENTRY(kgrank::ScoreOp, Modulus),
                  KGRANK_ENTRY(kgrank::ScoreOp, PairL1));
KGRANK_ENUM_TABLE(kgrank::ClosedMetric, "ClosedMetric", KGRANK_ENTRY(kgrank::ClosedMetric, ArithmeticMean),
                  KGRANK_ENTRY(kgrank::ClosedMetric, InverseHarmonicMean), KGRANK_ENTRY(kgrank::ClosedMetric, Hits),
                  KGRANK_ENTRY(kgrank::ClosedMetric, GeometricMean),
                  KGRANK_ENTRY(kgrank::ClosedMetric, TruncatedInverse));
KGRANK_ENUM_TABLE(kgrank::Statistic, "Statistic", KGRANK_ENTRY(kgrank::Statistic, Mean),
                  KGRANK_ENTRY(kgrank::Statistic, GeometricMean), KGRANK_ENTRY(kgrank::Statistic, InverseHarmonic),
                  KGRANK_ENTRY(kgrank::Statistic, Median), KGRANK_ENTRY(kgrank::Statistic, Hits),
                  KGRANK_ENTRY(kgrank::Statistic, Variance), KGRANK_ENTRY(kgrank::Statistic, Mad),
                  KGRANK_ENTRY(kgrank::Statistic, Count));
KGRANK_ENUM_TABLE(kgrank::Resampling, "Resampling", KGRANK_ENTRY(kgrank::Resampling, Randomization),
                  KGRANK_ENTRY(kgrank::Resampling, Bootstrap));
// A plain enum (its members are kgrank::kSumWeights, ...).
KGRANK_ENUM_TABLE(kgrank::AggregateSlot, "AggregateSlot", EnumEntry{"kSumWeights", kgrank::kSumWeights},
                  EnumEntry{"kSumRanks", kgrank::kSumRanks}, EnumEntry{"kSumLogRanks", kgrank::kSumLogRanks},
                  EnumEntry{"kSumInverseRanks", kgrank::kSumInverseRanks},
                  EnumEntry{"kSumSquaredDev", kgrank::kSumSquaredDev}, EnumEntry{"kMedian", kgrank::kMedian},
                  EnumEntry{"kMad", kgrank::kMad}, EnumEntry{"kInvalidRanks", kgrank::kInvalidRanks},
                  EnumEntry{"kAggregateFixedSlots", kgrank::kAggregateFixedSlots});
KGRANK_ENUM_TABLE(kgrank::StatusCode, "StatusCode", KGRANK_ENTRY(kgrank::StatusCode, Ok),
                  KGRANK_ENTRY(kgrank::StatusCode, InvalidInput), KGRANK_ENTRY(kgrank::StatusCode, IdOutOfRange),
                  KGRANK_ENTRY(kgrank::StatusCode, NanTrueScore), KGRANK_ENTRY(kgrank::StatusCode, NotInIndex));
KGRANK_ENUM_TABLE(kgrank::ScreenMode, "ScreenMode", KGRANK_ENTRY(kgrank::ScreenMode, Off),
                  KGRANK_ENTRY(kgrank::ScreenMode, Auto), KGRANK_ENTRY(kgrank::ScreenMode, Int8));
KGRANK_ENUM_TABLE(kgrank::PbgComparator, "PbgComparator", KGRANK_ENTRY(kgrank::PbgComparator, Dot),
                  KGRANK_ENTRY(kgrank::PbgComparator, Cos), KGRANK_ENTRY(kgrank::PbgComparator, L2),
                  KGRANK_ENTRY(kgrank::PbgComparator, SquaredL2));
KGRANK_ENUM_TABLE(kgrank::PbgOperator, "PbgOperator", KGRANK_ENTRY(kgrank::PbgOperator, None),
                  KGRANK_ENTRY(kgrank::PbgOperator, Translation), KGRANK_ENTRY(kgrank::PbgOperator, Diagonal),
                  KGRANK_ENTRY(kgrank::PbgOperator, Linear), KGRANK_ENTRY(kgrank::PbgOperator, Affine),
                  KGRANK_ENTRY(kgrank::PbgOperator, ComplexDiagonal));
KGRANK_ENUM_TABLE(kgrank::SimdLevel, "SimdLevel", KGRANK_ENTRY(kgrank::SimdLevel, Scalar),
                  KGRANK_ENTRY(kgrank::SimdLevel, AVX2), KGRANK_ENTRY(kgrank::SimdLevel, AVX512),
                  KGRANK_ENTRY(kgrank::SimdLevel, NEON));

#undef KGRANK_ENTRY
#undef KGRANK_ENUM_TABLE

// True when the table's values are 0, 1, 2, ... in order, so that "below size" is "a member".
template <class E>
constexpr bool dense_from_zero() {
  for (size_t i = 0; i < EnumTable<E>::size; ++i) {
    if (EnumTable<E>::entries[i].value != static_cast<int>(i)) return false;
  }
  return true;
}

static_assert(dense_from_zero<kgrank::Interaction>() && dense_from_zero<kgrank::ComplexLayout>() &&
                  dense_from_zero<kgrank::ScoreOp>() && dense_from_zero<kgrank::ClosedMetric>() &&
                  dense_from_zero<kgrank::Statistic>() && dense_from_zero<kgrank::Resampling>() &&
                  dense_from_zero<kgrank::AggregateSlot>() && dense_from_zero<kgrank::StatusCode>() &&
                  dense_from_zero<kgrank::ScreenMode>() && dense_from_zero<kgrank::PbgComparator>() &&
                  dense_from_zero<kgrank::PbgOperator>() && dense_from_zero<kgrank::SimdLevel>(),
              "an enum table's values must run 0, 1, 2, ... in order");

// The number of members of E: the bound every reader checks a code of E against.
template <class E>
constexpr size_t enum_count() {
  return EnumTable<E>::size;
}

// The names of E's members, in value order ("a, b or c"), for a message.
template <class E>
std::string enum_names() {
  std::string out;
  for (size_t i = 0; i < EnumTable<E>::size; ++i) {
    if (i > 0) out += i + 1 == EnumTable<E>::size ? " or " : ", ";
    out += std::to_string(i) + " (" + EnumTable<E>::entries[i].name + ")";
  }
  return out;
}

template <class E>
void add_enum_table(Napi::Env env, Napi::Object out) {
  Napi::Object table = Napi::Object::New(env);
  for (size_t i = 0; i < EnumTable<E>::size; ++i) {
    table.Set(EnumTable<E>::entries[i].name, Napi::Number::New(env, EnumTable<E>::entries[i].value));
  }
  out.Set(EnumTable<E>::label, table);
}

// { Interaction: { TransEL1: 0, ... }, ... }: what info().enums reports.
inline Napi::Object enum_tables(Napi::Env env) {
  Napi::Object out = Napi::Object::New(env);
  add_enum_table<kgrank::Interaction>(env, out);
  add_enum_table<kgrank::ComplexLayout>(env, out);
  add_enum_table<kgrank::ScoreOp>(env, out);
  add_enum_table<kgrank::ClosedMetric>(env, out);
  add_enum_table<kgrank::Statistic>(env, out);
  add_enum_table<kgrank::Resampling>(env, out);
  add_enum_table<kgrank::AggregateSlot>(env, out);
  add_enum_table<kgrank::StatusCode>(env, out);
  add_enum_table<kgrank::ScreenMode>(env, out);
  add_enum_table<kgrank::PbgComparator>(env, out);
  add_enum_table<kgrank::PbgOperator>(env, out);
  add_enum_table<kgrank::SimdLevel>(env, out);
  return out;
}

}  // namespace kgrank_addon
