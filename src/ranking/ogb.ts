/**
 * OGB's link-prediction evaluator as a drop-in (`ogb.linkproppred.Evaluator(name).eval` for the MRR datasets:
 * ogbl-wikikg2, ogbl-biokg, ogbl-citation2): `{ y_pred_pos, y_pred_neg }` in, OGB's per-edge lists out, with OGB's
 * realistic rank 1 + #(neg > pos) + #(neg >= pos and not >) / 2 and its float32 lists (1 / rank rounded to float32;
 * hits as 0 / 1). Counting is the sampled ranking kernel (native or its TypeScript twin).
 *
 * Differences from OGB, on purpose: a NaN positive score is an error here (in OGB every comparison with NaN is
 * false, so a NaN positive silently gets rank 1); a NaN negative is no candidate in both. OGB's own means of the
 * float32 lists (torch's float32 reduction) may differ from a float64 mean of the same lists by up to ~1e-7.
 */
import { KgrankInputError } from "../checks/errors";
import { ASYNC_KEYS, type AsyncOptions } from "../backend/call-control";
import { computeSampledRanks, computeSampledRanksSync, type Ranks } from "./ranks";
import { formatDims } from "../text/suggest";
import { describe, optionKeys, options } from "../checks/validate";

export interface OgbInput {
  /** Scores of the positive edges, shape (n,). */
  y_pred_pos: Float32Array | Float64Array | ArrayLike<number>;
  /** Scores of K negatives per positive, shape (n, K), row-major; or { data, shape } as readNpy gives it. */
  y_pred_neg: Float32Array | Float64Array | { data: Float32Array | Float64Array; shape: readonly number[] };
  threads?: number;
}

export interface OgbLists {
  "hits@1_list": Float32Array;
  "hits@3_list": Float32Array;
  "hits@10_list": Float32Array;
  mrr_list: Float32Array;
}

const OGB_KEYS = optionKeys<OgbInput>({ y_pred_pos: 1, y_pred_neg: 1, threads: 1 });
const OGB_ASYNC_KEYS = [...OGB_KEYS, ...ASYNC_KEYS];

function prepare(input: OgbInput, keys: readonly (keyof (OgbInput & AsyncOptions))[] = OGB_KEYS) {
  const o = options("input", input, keys);
  const pos = o.y_pred_pos as ArrayLike<number>;
  if (pos === null || typeof pos !== "object" || typeof (pos as { length?: unknown }).length !== "number") {
    throw new KgrankInputError("y_pred_pos", `must be an array of scores, shape (n,), got ${describe(pos)}`);
  }
  const n = pos.length;
  if (n === 0) throw new KgrankInputError("y_pred_pos", "is empty: pass at least one positive edge");
  let neg = o.y_pred_neg as OgbInput["y_pred_neg"];
  if (neg && typeof neg === "object" && "shape" in neg && "data" in neg) {
    const shape = neg.shape;
    if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== n) {
      throw new KgrankInputError(
        "y_pred_neg",
        `must have shape (${n}, K) like OGB's, got ${Array.isArray(shape) ? `(${formatDims(shape)})` : describe(shape)}`,
      );
    }
    neg = neg.data;
  }
  if (!(neg instanceof Float32Array) && !(neg instanceof Float64Array)) {
    throw new KgrankInputError(
      "y_pred_neg",
      `must be a Float32Array or Float64Array of shape (n, K), row-major, got ${describe(neg)}`,
    );
  }
  if (neg.length === 0 || neg.length % n !== 0) {
    throw new KgrankInputError(
      "y_pred_neg",
      `has ${neg.length} scores: it must hold K >= 1 per positive edge (${n} edges), shape (n, K)`,
    );
  }
  return {
    positiveScores: pos,
    negativeScores: neg,
    threads: o.threads as number | undefined,
    signal: o.signal as AbortSignal | undefined,
    onProgress: o.onProgress as AsyncOptions["onProgress"],
  };
}

function lists(r: Ranks): OgbLists {
  const n = r.realistic.length;
  const out: OgbLists = {
    "hits@1_list": new Float32Array(n),
    "hits@3_list": new Float32Array(n),
    "hits@10_list": new Float32Array(n),
    mrr_list: new Float32Array(n),
  };
  for (let i = 0; i < n; i++) {
    const rank = r.realistic[i]!;
    out["hits@1_list"][i] = rank <= 1 ? 1 : 0;
    out["hits@3_list"][i] = rank <= 3 ? 1 : 0;
    out["hits@10_list"][i] = rank <= 10 ? 1 : 0;
    out.mrr_list[i] = 1 / Math.fround(rank); // stored as float32, as OGB's 1. / rank.to(float)
  }
  return out;
}

/** The kernel's argument names are OGB's here. */
function inOgbTerms(e: unknown): unknown {
  if (!(e instanceof KgrankInputError)) return e;
  const name = { positiveScores: "y_pred_pos", negativeScores: "y_pred_neg" }[e.argument];
  if (!name) return e;
  const message = e.message
    .slice(e.argument.length + 2)
    .replaceAll("positiveScores", "y_pred_pos")
    .replaceAll("negativeScores", "y_pred_neg");
  return new KgrankInputError(name, message, e.index);
}

/**
 * OGB's `Evaluator.eval({ y_pred_pos, y_pred_neg })` for the MRR datasets, counting off the JavaScript thread;
 * `signal` and `onProgress` (edges counted) as computeSampledRanks.
 */
export async function ogbEvaluate(input: OgbInput & AsyncOptions): Promise<OgbLists> {
  try {
    return lists(await computeSampledRanks(prepare(input, OGB_ASYNC_KEYS)));
  } catch (e) {
    throw inOgbTerms(e);
  }
}

/** ogbEvaluate on the calling thread. */
export function ogbEvaluateSync(input: OgbInput): OgbLists {
  try {
    return lists(computeSampledRanksSync(prepare(input)));
  } catch (e) {
    throw inOgbTerms(e);
  }
}
