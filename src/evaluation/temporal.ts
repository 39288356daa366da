/**
 * TemporalEvaluator: link prediction on temporal quadruples (h, r, t, τ) in the three filter settings side by side,
 * from the same score rows: raw (nothing removed), static (every known (h, r, t), at any time, removed) and
 * time-aware (only the facts known at the same τ removed). Each setting is an ordinary RankEvaluator; the time-aware
 * one keys its filter index by the composite relation r x T + τ (T timestamps), so (anchor, r, τ) keys are
 * (anchor, r x T + τ) keys and the index keeps its bytes per fact. R x T must stay below 2^31.
 */
import { KgrankInputError } from "../checks/errors";
import { isArrayLike, options as checkOptions } from "../checks/validate";
import type { AsyncOptions } from "../backend/call-control";
import type { EmbeddingModel } from "../scoring/embedding-model";
import { RankEvaluator } from "./evaluator";
import type { RankResults } from "./results";
import type { EvaluationSide, FinalizeOptions, RankEvaluatorOptions, TemporalSetting } from "./types";

export type { TemporalSetting } from "./types";
/** @internal Every temporal setting, in the order the CLI reports them. */
export const TEMPORAL_SETTINGS: readonly TemporalSetting[] = ["raw", "static", "timeAware"];

export interface TemporalEvaluatorOptions {
  numEntities: number;
  numRelations: number;
  /** Number of timestamps T: timestamp ids are 0 .. T-1. */
  numTimestamps: number;
  /**
   * Known quadruples (n x 4 Int32Array: head, relation, tail, timestamp), one array or several (train, valid,
   * test). Include the evaluated split: every evaluated quadruple must be in this set.
   */
  filterQuadruples: Int32Array | Int32Array[];
  sides?: "both" | EvaluationSide;
  ks?: number[];
  metrics?: RankEvaluatorOptions["metrics"];
  weighting?: RankEvaluatorOptions["weighting"];
  threads?: number;
}

/** Quadruples ranked from a static model's embeddings: the model scores (h, r, t) whatever τ. */
export interface TemporalModelBatch {
  model: EmbeddingModel;
  /** The evaluated quadruples of the batch: b x 4 (head, relation, tail, timestamp). */
  quadruples: Int32Array;
  side: EvaluationSide;
  threads?: number;
}

/** Triples scored per model call: bounds the transient memory to about 64 bytes each (16 MiB). */
const MODEL_TRIPLES = 1 << 18;

export interface TemporalScoreBatch {
  /** The evaluated quadruples of the batch: b x 4 (head, relation, tail, timestamp). */
  quadruples: Int32Array | ArrayLike<number>;
  /** "tail" rows score (h, r, e, τ) for every entity e; "head" rows score (e, r, t, τ). */
  side: EvaluationSide;
  /** Row-major b x numEntities scores. NaN marks a non-candidate. */
  scores: Float32Array | Float64Array;
  threads?: number;
}

const OPTION_KEYS = [
  "numEntities",
  "numRelations",
  "numTimestamps",
  "filterQuadruples",
  "sides",
  "ks",
  "metrics",
  "weighting",
  "threads",
];

function positiveInteger(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1)
    throw new KgrankInputError(name, `must be a positive integer, got ${String(v)}`);
  return v;
}

export class TemporalEvaluator {
  readonly numEntities: number;
  readonly numRelations: number;
  readonly numTimestamps: number;
  /** One evaluator per setting; the time-aware one's relation ids are r x numTimestamps + τ. */
  readonly evaluators: Readonly<Record<TemporalSetting, RankEvaluator>>;

  constructor(args: TemporalEvaluatorOptions) {
    checkOptions("TemporalEvaluator options", args, OPTION_KEYS);
    this.numEntities = positiveInteger("numEntities", args.numEntities);
    this.numRelations = positiveInteger("numRelations", args.numRelations);
    this.numTimestamps = positiveInteger("numTimestamps", args.numTimestamps);
    if (this.numRelations * this.numTimestamps > 0x7fffffff) {
      throw new KgrankInputError(
        "numTimestamps",
        `numRelations x numTimestamps = ${this.numRelations * this.numTimestamps} is past 2^31 - 1, the time-aware ` +
          "filter's composite relation ids; coarsen the timestamps (e.g. days to weeks)",
      );
    }
    const lists = Array.isArray(args.filterQuadruples) ? args.filterQuadruples : [args.filterQuadruples];
    const staticTriples: Int32Array[] = [];
    const timedTriples: Int32Array[] = [];
    lists.forEach((q, k) => {
      const name = Array.isArray(args.filterQuadruples) ? `filterQuadruples[${k}]` : "filterQuadruples";
      const [triples, timed] = this.split(q, name);
      staticTriples.push(triples);
      timedTriples.push(timed);
    });
    const common = {
      numEntities: this.numEntities,
      ...(args.sides !== undefined && { sides: args.sides }),
      ...(args.ks !== undefined && { ks: args.ks }),
      ...(args.metrics !== undefined && { metrics: args.metrics }),
      ...(args.weighting !== undefined && { weighting: args.weighting }),
      ...(args.threads !== undefined && { threads: args.threads }),
    };
    const temporal = (setting: TemporalSetting) => ({ temporal: { setting, numTimestamps: this.numTimestamps } });
    this.evaluators = {
      raw: new RankEvaluator({ ...common, numRelations: this.numRelations, ...temporal("raw") }),
      static: new RankEvaluator({
        ...common,
        numRelations: this.numRelations,
        filterTriples: staticTriples,
        ...temporal("static"),
      }),
      timeAware: new RankEvaluator({
        ...common,
        numRelations: this.numRelations * this.numTimestamps,
        filterTriples: timedTriples,
        ...temporal("timeAware"),
      }),
    };
  }

  /**
   * The three settings' states (RankEvaluator.serialize, each recording its setting and timestamps): a shard's part
   * of a temporal evaluation, merged with the other shards' by TemporalEvaluator.merge.
   */
  serialize(opts: { meta?: Record<string, unknown> } = {}): Record<TemporalSetting, Uint8Array> {
    return {
      raw: this.evaluators.raw.serialize(opts),
      static: this.evaluators.static.serialize(opts),
      timeAware: this.evaluators.timeAware.serialize(opts),
    };
  }

  /**
   * The shards' states (each a serialize() result) merged per setting: one evaluator per setting holding every
   * shard's tasks, as one TemporalEvaluator fed every batch would. A state filed under another setting than the one
   * it records, or states of other settings, timestamps or filters, are refused naming the shard.
   */
  static merge(shards: Record<TemporalSetting, Uint8Array>[]): Record<TemporalSetting, RankEvaluator> {
    if (!Array.isArray(shards) || shards.length === 0)
      throw new KgrankInputError("shards", "must be a non-empty array of TemporalEvaluator.serialize() results");
    const merged = {} as Record<TemporalSetting, RankEvaluator>;
    for (const setting of TEMPORAL_SETTINGS) {
      const states = shards.map((s, i) => {
        const bytes = (s as Partial<Record<TemporalSetting, unknown>> | null)?.[setting];
        if (!(bytes instanceof Uint8Array))
          throw new KgrankInputError(
            `shards[${i}].${setting}`,
            "must be the state serialize() returned for this setting",
          );
        const recorded = RankEvaluator.deserialize(bytes).info().temporal;
        if (recorded?.setting !== setting) {
          throw new KgrankInputError(
            `shards[${i}].${setting}`,
            `holds ${recorded ? `the ${recorded.setting} setting's state` : "a state of no temporal setting"}: give each ` +
              "setting's state under its own key, as serialize() returns them",
          );
        }
        return bytes;
      });
      merged[setting] = RankEvaluator.merge(states);
    }
    return merged;
  }

  /** n x 4 quadruples to n x 3 (h, r, t) and n x 3 (h, r x T + τ, t); ids checked against the sizes. */
  private split(q: unknown, name: string): [Int32Array, Int32Array] {
    if (!isArrayLike(q) || q.length % 4 !== 0)
      throw new KgrankInputError(name, "must be n x 4 quadruples (head, relation, tail, timestamp), row-major");
    const n = q.length / 4;
    const triples = new Int32Array(n * 3);
    const timed = new Int32Array(n * 3);
    const limits = [this.numEntities, this.numRelations, this.numEntities, this.numTimestamps];
    const fields = ["head", "relation", "tail", "timestamp"];
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < 4; c++) {
        const v = q[4 * i + c] as number;
        if (!Number.isInteger(v) || v < 0 || v >= limits[c]!) {
          throw new KgrankInputError(
            name,
            `row ${i} has ${fields[c]} id ${String(v)}, outside 0 .. ${limits[c]! - 1}; map the labels with the same ` +
              "dataset as the evaluator's sizes",
            i,
          );
        }
      }
      const h = q[4 * i] as number;
      const r = q[4 * i + 1] as number;
      const t = q[4 * i + 2] as number;
      triples[3 * i] = timed[3 * i] = h;
      triples[3 * i + 1] = r;
      timed[3 * i + 1] = r * this.numTimestamps + (q[4 * i + 3] as number);
      triples[3 * i + 2] = timed[3 * i + 2] = t;
    }
    return [triples, timed];
  }

  private batches(batch: TemporalScoreBatch): Record<TemporalSetting, Parameters<RankEvaluator["addSync"]>[0]> {
    checkOptions("batch", batch, ["quadruples", "side", "scores", "threads"]);
    const [triples, timed] = this.split(batch.quadruples, "quadruples");
    const rest = {
      side: batch.side,
      scores: batch.scores,
      ...(batch.threads !== undefined && { threads: batch.threads }),
    };
    return { raw: { triples, ...rest }, static: { triples, ...rest }, timeAware: { triples: timed, ...rest } };
  }

  /** Ranks the rows in the three settings. */
  addSync(batch: TemporalScoreBatch): void {
    const b = this.batches(batch);
    for (const s of TEMPORAL_SETTINGS) this.evaluators[s].addSync(b[s]);
  }

  /** Ranks the rows in the three settings, off the main thread where the backend can. */
  async add(batch: TemporalScoreBatch & AsyncOptions): Promise<void> {
    const { signal, onProgress, ...rest } = batch as TemporalScoreBatch & AsyncOptions & Record<string, unknown>;
    const b = this.batches(rest as TemporalScoreBatch);
    const control = { ...(signal !== undefined && { signal }), ...(onProgress !== undefined && { onProgress }) };
    for (const s of TEMPORAL_SETTINGS) await this.evaluators[s].add({ ...b[s], ...control });
  }

  /**
   * Ranks the rows of a static embedding model (its interaction ignores τ) in the three settings: each row's scores
   * of every entity come from model.scoreTriples, about MODEL_TRIPLES triples per call, and go to addSync.
   */
  addModelSync(batch: TemporalModelBatch): void {
    checkOptions("batch", batch, ["model", "quadruples", "side", "threads"]);
    const { model, quadruples, side } = batch;
    if (!(quadruples instanceof Int32Array) || quadruples.length % 4 !== 0)
      throw new KgrankInputError("quadruples", "must be an Int32Array of b x 4 ids (head, relation, tail, timestamp)");
    if (side !== "head" && side !== "tail") throw new KgrankInputError("side", 'must be "head" or "tail"');
    if (model?.numEntities !== this.numEntities || model.numRelations < this.numRelations) {
      throw new KgrankInputError(
        "model",
        `must score ${this.numEntities} entities and ${this.numRelations} relations, as the evaluator was made for`,
      );
    }
    const e = this.numEntities;
    const per = Math.max(1, Math.floor(MODEL_TRIPLES / e));
    const opts = batch.threads !== undefined ? { threads: batch.threads } : {};
    for (let start = 0; start < quadruples.length / 4; start += per) {
      const rows = quadruples.subarray(4 * start, 4 * Math.min(start + per, quadruples.length / 4));
      const b = rows.length / 4;
      this.split(rows, "quadruples");
      const triples = new Int32Array(b * e * 3);
      for (let i = 0; i < b; i++) {
        const [h, r, t] = [rows[4 * i]!, rows[4 * i + 1]!, rows[4 * i + 2]!];
        for (let c = 0, k = 3 * i * e; c < e; c++, k += 3) {
          triples[k] = side === "head" ? c : h;
          triples[k + 1] = r;
          triples[k + 2] = side === "tail" ? c : t;
        }
      }
      this.addSync({ quadruples: rows, side, scores: model.scoreTriples(triples, opts), ...opts });
    }
  }

  /** Every metric of each setting, keyed raw / static / timeAware. */
  finalize(opts: FinalizeOptions = {}): Record<TemporalSetting, RankResults> {
    return {
      raw: this.evaluators.raw.finalize(opts),
      static: this.evaluators.static.finalize(opts),
      timeAware: this.evaluators.timeAware.finalize(opts),
    };
  }
}
