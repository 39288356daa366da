// Bindings of PyTorch-BigGraph's scores (native/core/pbg.h): pbgAdjust and pbgCompare, each one record
// (src/contract/addon.ts PbgAdjustArgs, PbgCompareArgs). Every length is checked here against the record's sizes.
#include <napi.h>

#include <string>

#include "../core/pbg.h"
#include "args.h"
#include "common.h"

namespace kgrank_addon {
namespace {

kgrank::PbgComparison comparison(const Args& args) {
  kgrank::PbgComparison s;
  s.comparator = args.code<kgrank::PbgComparator>("comparator");
  s.bias = args.boolean("bias");
  s.dimension = args.size("dimension", 1);
  return s;
}

// An operator parameter of `length` doubles, or null when the operator does not read it.
const double* parameter(const Args& args, const char* field, bool read, size_t length) {
  if (!read) return nullptr;
  const Napi::TypedArray a = args.typed(field, napi_float64_array);
  expect_length(args, field, a, length, (std::to_string(length) + " values for this operator").c_str());
  return static_cast<const double*>(raw_data(a));
}

// pbgAdjust: { comparator, bias, dimension, operator, count, rows (Float32Array or Float64Array, count x dimension),
// global (Float64Array of dimension values, or absent), the operator's parameters (translation, diagonal, linear,
// real, imag: Float64Array), out (Float64Array, count x dimension), threads }.
Napi::Value PbgAdjust(const Napi::CallbackInfo& info) {
  const Args args(info, "pbgAdjust");
  kgrank::PbgAdjustJob job;
  job.comparison = comparison(args);
  const size_t d = job.comparison.dimension;
  job.op = args.code<kgrank::PbgOperator>("operator");
  job.count = args.size("count");
  if (job.count > SIZE_MAX / d) args.range_error("count", "is too large for the dimension");
  const Napi::TypedArray rows = args.floats("rows");
  expect_length(args, "rows", rows, job.count * d, "count x dimension values");
  if (rows.TypedArrayType() == napi_float32_array) {
    job.rows_f32 = static_cast<const float*>(raw_data(rows));
  } else {
    job.rows_f64 = static_cast<const double*>(raw_data(rows));
  }
  const Napi::TypedArray global = args.optional_typed("global", napi_float64_array);
  if (!global.IsEmpty()) {
    expect_length(args, "global", global, d, "dimension values");
    job.global = static_cast<const double*>(raw_data(global));
  }
  using Op = kgrank::PbgOperator;
  const Op op = job.op;
  job.translation = parameter(args, "translation", op == Op::Translation || op == Op::Affine, d);
  job.diagonal = parameter(args, "diagonal", op == Op::Diagonal, d);
  if ((op == Op::Linear || op == Op::Affine) && d > SIZE_MAX / d) args.range_error("dimension", "is too large");
  job.linear = parameter(args, "linear", op == Op::Linear || op == Op::Affine, d * d);
  job.real = parameter(args, "real", op == Op::ComplexDiagonal, d / 2);
  job.imag = parameter(args, "imag", op == Op::ComplexDiagonal, d / 2);
  const Napi::TypedArray out = args.typed("out", napi_float64_array);
  expect_length(args, "out", out, job.count * d, "count x dimension values");
  check_status(info.Env(), kgrank::pbg_adjust(job, static_cast<double*>(raw_data(out)), args.threads()));
  return info.Env().Undefined();
}

// pbgCompare: { comparator, bias, dimension, queries (Float64Array, numQueries x dimension), numQueries, candidates
// (Float64Array, or a Float32Array of rows no adjustment changes; numCandidates x dimension), numCandidates,
// queryFirst, out (Float64Array), outStride, outOffset, simd, threads }: query j's score of candidate c to out[j *
// outStride + outOffset + c].
Napi::Value PbgCompare(const Napi::CallbackInfo& info) {
  const Args args(info, "pbgCompare");
  kgrank::PbgCompareJob job;
  job.comparison = comparison(args);
  const size_t d = job.comparison.dimension;
  job.num_queries = args.size("numQueries");
  job.num_candidates = args.size("numCandidates");
  if (job.num_queries > SIZE_MAX / d) args.range_error("numQueries", "is too large for the dimension");
  if (job.num_candidates > SIZE_MAX / d) args.range_error("numCandidates", "is too large for the dimension");
  const Napi::TypedArray queries = args.typed("queries", napi_float64_array);
  expect_length(args, "queries", queries, job.num_queries * d, "numQueries x dimension values");
  const Napi::TypedArray candidates = args.floats("candidates");
  expect_length(args, "candidates", candidates, job.num_candidates * d, "numCandidates x dimension values");
  job.queries = static_cast<const double*>(raw_data(queries));
  if (candidates.TypedArrayType() == napi_float32_array) {
    job.candidates_f32 = static_cast<const float*>(raw_data(candidates));
  } else {
    job.candidates = static_cast<const double*>(raw_data(candidates));
  }
  job.query_first = args.boolean("queryFirst");
  job.out_stride = args.size("outStride");
  job.out_offset = args.size("outOffset");
  const Napi::TypedArray out = args.typed("out", napi_float64_array);
  if (job.num_queries > 0 && job.num_candidates > 0) {
    if (job.num_queries > 1 &&
        (job.out_offset > job.out_stride || job.num_candidates > job.out_stride - job.out_offset))
      args.range_error("outOffset", "+ numCandidates must be at most outStride (rows of out do not overlap)");
    if (job.num_queries - 1 > (SIZE_MAX - job.out_stride) / job.out_stride ||
        out.ElementLength() < (job.num_queries - 1) * job.out_stride + job.out_offset + job.num_candidates)
      args.range_error("out", "must hold (numQueries - 1) x outStride + outOffset + numCandidates values");
  }
  const kgrank::CountOptions opt = args.options();
  check_status(info.Env(), kgrank::pbg_compare(job, static_cast<double*>(raw_data(out)), opt.simd, opt.threads));
  return info.Env().Undefined();
}

}  // namespace

void register_pbg(Napi::Env env, Napi::Object exports) {
  export_function<PbgAdjust>(env, exports, "pbgAdjust");
  export_function<PbgCompare>(env, exports, "pbgCompare");
}

}  // namespace kgrank_addon
