/** The native filter index (native/addon/filter_bindings.cpp) behind the FilterIndexHandle interface. */
import {
  asIs,
  type AnswerCountsArgs,
  type AnswersArgs,
  type CountFilteredArgs,
  type CountFilteredRangeArgs,
  type FilterIndexArgs,
  type Hold,
  type MissingArgs,
  type RankTriplesArgs,
  type RankTriplesConstrainedArgs,
} from "../contract/addon";
import {
  type FilteredCountBuffers,
  type FilterIndexHandle,
  type FloatArray,
  type RankTriplesProblem,
  type Side,
  StatusCode,
} from "../contract/kernels";
import {
  holdable,
  nativeAsync,
  nativeCall,
  type NativeControls,
  nativeError,
  type NativeKernelControl,
  statusOf,
} from "./native-call";

/** What `new addon.FilterIndex(record)` returns: each method takes one record (src/contract/addon.ts). */
interface NativeFilterIndex {
  answers(args: AnswersArgs): Int32Array;
  missing(args: MissingArgs): number;
  answerCounts(args: AnswerCountsArgs): void;
  stats(): { keys: number; answers: number; bytes: number; wide: boolean };
  countFiltered(args: CountFilteredArgs): void;
  countFilteredAsync(args: CountFilteredArgs, control?: NativeKernelControl): Promise<void>;
  countFilteredRange(args: CountFilteredRangeArgs): void;
  countFilteredRangeAsync(args: CountFilteredRangeArgs, control?: NativeKernelControl): Promise<void>;
  rankTriples(args: RankTriplesArgs): void;
  rankTriplesConstrained(args: RankTriplesConstrainedArgs): void;
}

export type NativeFilterIndexClass = new (args: FilterIndexArgs) => NativeFilterIndex;

/** The statuses FilterIndexHandle.rankTriples returns as a RankTriplesProblem instead of throwing. */
function isRankTriplesProblem(status: StatusCode): status is RankTriplesProblem["status"] {
  return status === StatusCode.IdOutOfRange || status === StatusCode.NanTrueScore || status === StatusCode.NotInIndex;
}

/** A failed status of a one-call rank as its problem, or the error as the facade's. */
function rankProblem(e: unknown, constrained: boolean): RankTriplesProblem {
  const s = statusOf(e);
  if (constrained && s?.status === StatusCode.InvalidInput) return { status: s.status, index: 0, message: s.message };
  if (!s || !isRankTriplesProblem(s.status)) throw nativeError(e, "triples");
  return { status: s.status, index: s.index };
}

export function nativeFilterIndex(
  addon: NativeControls & { FilterIndex: NativeFilterIndexClass },
  triples: Int32Array[],
  numEntities: number,
  numRelations: number,
  side: Side,
  simd: number,
  threads: number,
): FilterIndexHandle {
  const index = nativeCall(
    "filterTriples",
    () => new addon.FilterIndex({ triples, numEntities, numRelations, side: side === "tail" ? 1 : 0, threads }),
  );
  /** The record countFiltered and its async and range forms share. */
  const counted = (
    hold: Hold,
    scores: FloatArray,
    anchor: Int32Array,
    relation: Int32Array,
    truth: Int32Array,
    thresholds: FloatArray,
    out: FilteredCountBuffers,
    t: number | undefined,
  ): CountFilteredArgs => ({
    scores: hold(scores),
    anchor: hold(anchor),
    relation: hold(relation),
    truth: hold(truth),
    thresholds,
    greater: out.greater,
    equal: out.equal,
    nan: out.nan,
    removed: out.removed,
    simd,
    threads: t ?? threads,
  });
  return {
    side,
    numEntities,
    numRelations,
    answers: (anchor, relation) => nativeCall("anchor", () => index.answers({ anchor, relation })),
    missing: (anchor, relation, answer) => nativeCall("triples", () => index.missing({ anchor, relation, answer })),
    answerCounts(triples, out) {
      try {
        index.answerCounts({ triples, out });
        return null;
      } catch (e) {
        const s = statusOf(e);
        if (s?.status !== StatusCode.IdOutOfRange) throw nativeError(e, "triples");
        return { status: s.status, index: s.index };
      }
    },
    stats: () => index.stats(),
    countFiltered(scores, anchor, relation, truth, th, out, t?: number) {
      nativeCall("triples", () => index.countFiltered(counted(asIs, scores, anchor, relation, truth, th, out, t)));
    },
    countFilteredAsync(scores, anchor, relation, truth, th, out, t, control) {
      const args = counted(holdable, scores, anchor, relation, truth, th, out, t);
      return nativeAsync(addon, "triples", control, truth.length, (c) => index.countFilteredAsync(args, c));
    },
    countFilteredRange(scores, columnStart, width, anchor, relation, truth, th, out, t?: number) {
      const args = { ...counted(asIs, scores, anchor, relation, truth, th, out, t), columnStart, width };
      nativeCall("triples", () => index.countFilteredRange(args));
    },
    countFilteredRangeAsync(scores, columnStart, width, anchor, relation, truth, th, out, t, control) {
      // Here the thresholds are an input (given), so they are held too.
      const args = { ...counted(holdable, scores, anchor, relation, truth, holdable(th), out, t), columnStart, width };
      return nativeAsync(addon, "triples", control, truth.length, (c) => index.countFilteredRangeAsync(args, c));
    },
    rankTriples(scores, triples, keys, thresholds, out, t?: number) {
      try {
        index.rankTriples({ scores, triples, keys, thresholds, out, simd, threads: t ?? threads });
        return null;
      } catch (e) {
        return rankProblem(e, false);
      }
    },
    rankTriplesConstrained(scores, triples, filtered, sets, keys, thresholds, out, t?: number) {
      try {
        index.rankTriplesConstrained({
          scores,
          triples,
          filtered,
          sets,
          keys,
          thresholds,
          out,
          simd,
          threads: t ?? threads,
        });
        return null;
      } catch (e) {
        return rankProblem(e, true);
      }
    },
  };
}
