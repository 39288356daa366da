/**
 * Top-k predictions from a model's embeddings: per query the k best candidate entities and their scores, one kernel
 * call per side (native/core/interaction.cpp top_k_embeddings, twin src/fallback/interaction.ts topKEmbeddings).
 * The scores are those the ranking kernel compares for the same pairs, so a prediction and a rank never disagree.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { describe, integer, isArrayLike, optionKeys, threadCount, tripleArray } from "../checks/validate";
import { embeddingRows as rowsOf, type EmbeddingRankInput, type FilterIndexHandle } from "../contract/kernels";
import { mergeInto, type TopKList, type TopKPredictions } from "../ranking/top-k";
import { type AsyncOptions, callOptions, withCallControl } from "../backend/call-control";
import { turn } from "../contract/event-loop";
import { EmbeddingModel } from "./embedding-model";

export interface PredictTopKOptions {
  /**
   * Evaluated triples, b x 3 (head, relation, tail): each side predicts from its anchor (the head for "tail", the
   * tail for "head"); with a filter the triple's own answer stays a candidate. Give this or `queries`.
   */
  triples?: Int32Array | ArrayLike<number>;
  /**
   * Queries without a known answer, b x 2 (anchor, relation): the head for side "tail" (WikiKG90Mv2's hr), the
   * tail for side "head". With a filter every known answer is removed. Give this or `triples`.
   */
  queries?: Int32Array | ArrayLike<number>;
  /** "head", "tail" or (triples only; their default) "both". Queries: default "tail". */
  side?: "head" | "tail" | "both";
  /** Candidates listed per query, an integer from 1 to the number of entities in entityRange. */
  k: number;
  /**
   * Known triples (b x 3 each; one array or several): their answers of a query are removed from its candidates
   * (filtered). Omitted: raw, every entity of the range is a candidate.
   */
  filter?: Int32Array | ArrayLike<number> | readonly (Int32Array | ArrayLike<number>)[];
  /** The candidate entities [begin, end) (an entity shard); default the whole table. */
  entityRange?: readonly [number, number];
  threads?: number;
}

const PREDICT_TOP_K_KEYS = optionKeys<PredictTopKOptions>({
  triples: 1,
  queries: 1,
  side: 1,
  k: 1,
  filter: 1,
  entityRange: 1,
  threads: 1,
});

/** The query rows of the call: anchor, relation and (triples) truth, per side. */
function queryRows(
  model: EmbeddingModel,
  opts: { triples?: unknown; queries?: unknown },
): {
  anchorOf: (side: "head" | "tail") => Int32Array;
  relation: Int32Array;
  truthOf: ((side: "head" | "tail") => Int32Array) | null;
  rows: number;
} {
  if ((opts.triples === undefined) === (opts.queries === undefined)) {
    throw new KgrankInputError(
      opts.triples === undefined ? "triples" : "queries",
      "give exactly one of triples (b x 3, the true answer known) or queries (b x 2 anchor, relation: prediction)",
    );
  }
  if (opts.triples !== undefined) {
    const t = tripleArray("triples", opts.triples, model.numEntities, model.numRelations);
    const rows = t.length / 3;
    const col = (c: number) => Int32Array.from({ length: rows }, (_, i) => t[3 * i + c]!);
    const head = col(0);
    const tail = col(2);
    return {
      rows,
      relation: col(1),
      anchorOf: (s) => (s === "tail" ? head : tail),
      truthOf: (s) => (s === "tail" ? tail : head),
    };
  }
  if (!isArrayLike(opts.queries)) {
    throw new KgrankInputError(
      "queries",
      `must be an Int32Array of (anchor, relation) rows, got ${describe(opts.queries)}`,
    );
  }
  const q = opts.queries as ArrayLike<number>;
  if (q.length % 2 !== 0) {
    throw new KgrankInputError("queries", `has ${q.length} numbers, not whole (anchor, relation) rows: give b x 2 ids`);
  }
  const rows = q.length / 2;
  const anchor = new Int32Array(rows);
  const relation = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    const a = q[2 * i]!;
    const r = q[2 * i + 1]!;
    if (!Number.isInteger(a) || a < 0 || a >= model.numEntities) {
      throw new KgrankInputError(
        "queries",
        `row ${i}: anchor ${describe(a)} is not an entity id in [0, ${model.numEntities})`,
      );
    }
    if (!Number.isInteger(r) || r < 0 || r >= model.numRelations) {
      throw new KgrankInputError(
        "queries",
        `row ${i}: relation ${describe(r)} is not a relation id in [0, ${model.numRelations})`,
      );
    }
    anchor[i] = a;
    relation[i] = r;
  }
  return { rows, relation, anchorOf: () => anchor, truthOf: null };
}

function entityRange(value: unknown, numEntities: number): [number, number] {
  if (value === undefined) return [0, numEntities];
  if (!isArrayLike(value) || value.length !== 2) {
    throw new KgrankInputError("entityRange", `must be [begin, end], got ${describe(value)}`);
  }
  const [b, e] = value as ArrayLike<unknown> as [unknown, unknown];
  if (
    !Number.isInteger(b) ||
    !Number.isInteger(e) ||
    (b as number) < 0 ||
    (e as number) > numEntities ||
    (b as number) >= (e as number)
  ) {
    throw new KgrankInputError(
      "entityRange",
      `[${describe(b)}, ${describe(e)}] is not a range of the model's entities: give integers 0 <= begin < end <= ${numEntities}`,
    );
  }
  return [b as number, e as number];
}

function filterTriples(value: unknown, model: EmbeddingModel): Int32Array[] | null {
  if (value === undefined) return null;
  const many = Array.isArray(value) && value.length > 0 && typeof value[0] !== "number";
  const list = many ? (value as unknown[]) : [value];
  return list.map((t, i) => tripleArray(many ? `filter[${i}]` : "filter", t, model.numEntities, model.numRelations));
}

/**
 * The k best candidate entities of each query and their scores, from a model's embeddings: score descending, equal
 * scores by the smaller entity id first, NaN scores never listed, rows with fewer than k candidates padded with id
 * -1 and score NaN. Filtered (a `filter` given): a query's known answers in the filter are not candidates, except,
 * for `triples`, the triple's own answer; for `queries` (no answer known) every known answer is removed. Scores are
 * exactly the ranking kernel's (RankEvaluator.addModel) for the same pair, on both backends and every thread count.
 * Lists of disjoint `entityRange`s merge exactly with mergeTopK.
 *
 * @example
 * const top = predictTopK(model, { queries: Int32Array.of(0, 3), side: "tail", k: 10 });
 * top.tail!.ids; // Int32Array(10): the 10 best tails of (0, 3, ?)
 */
export function predictTopK(model: EmbeddingModel, opts: PredictTopKOptions): TopKPredictions {
  const { result, work, range, threads } = prepare(model, opts, false);
  for (const w of work) {
    kernels().topKEmbeddings(
      w.input,
      { k: result.k, begin: range[0], end: range[1] },
      w.list.ids,
      w.list.scores,
      threads,
    );
    result[w.side] = w.list;
  }
  return result;
}

/** One side's kernel input and the list it fills. */
interface SideWork {
  side: "head" | "tail";
  input: EmbeddingRankInput;
  list: TopKList;
}

/** The checked options of a call, its result without lists, and each side's kernel input. */
function prepare(model: EmbeddingModel, opts: unknown, isAsync: boolean) {
  if (!(model instanceof EmbeddingModel)) {
    throw new KgrankInputError(
      "model",
      `must be an EmbeddingModel (new EmbeddingModel({...}) or loadEmbeddingModel()), got ${describe(model)}`,
    );
  }
  const { options: o, asyncArgs } = callOptions("options", opts, PREDICT_TOP_K_KEYS, isAsync);
  const range = entityRange(o.entityRange, model.numEntities);
  const candidates = range[1] - range[0];
  if (o.k === undefined) throw new KgrankInputError("k", "is required: the number of candidates to list per query");
  const k = integer("k", o.k, 1);
  if (k > candidates) {
    throw new KgrankInputError(
      "k",
      `${k} is larger than the ${candidates} candidate entities of [${range[0]}, ${range[1]}): pass k <= ${candidates}`,
    );
  }
  const q = queryRows(model, o);
  if (q.rows === 0)
    throw new KgrankInputError(o.triples !== undefined ? "triples" : "queries", "is empty: pass at least one row");
  const side = o.side ?? (q.truthOf ? "both" : "tail");
  if (side !== "head" && side !== "tail" && !(side === "both" && q.truthOf)) {
    throw new KgrankInputError(
      "side",
      `must be "head", "tail"${q.truthOf ? ' or "both"' : " (queries have one anchor: predict one side per call)"}, got ${describe(side)}`,
    );
  }
  const threads = threadCount(o.threads);
  const filter = filterTriples(o.filter, model);
  const result: TopKPredictions = { k, rows: q.rows, entityRange: range, filtered: filter !== null };
  const work: SideWork[] = [];
  for (const s of side === "both" ? (["head", "tail"] as const) : [side as "head" | "tail"]) {
    const anchor = q.anchorOf(s);
    const truth = q.truthOf ? q.truthOf(s) : null;
    let excludeOffsets: Uint32Array | null = null;
    let excludeIds: Int32Array | null = null;
    if (filter) {
      const index: FilterIndexHandle = kernels().buildFilterIndex(
        filter,
        model.numEntities,
        model.numRelations,
        s,
        threads,
      );
      const lists: Int32Array[] = [];
      excludeOffsets = new Uint32Array(q.rows + 1);
      for (let i = 0; i < q.rows; i++) {
        const ans = index.answers(anchor[i]!, q.relation[i]!);
        const own = truth ? truth[i]! : -1;
        const kept = own >= 0 && ans.includes(own) ? ans.filter((a) => a !== own) : ans;
        lists.push(kept);
        excludeOffsets[i + 1] = excludeOffsets[i]! + kept.length;
      }
      excludeIds = new Int32Array(excludeOffsets[q.rows]!);
      lists.forEach((l, i) => excludeIds!.set(l, excludeOffsets![i]!));
    }
    const input = model.job(s, anchor, q.relation, anchor, { excludeOffsets, excludeIds });
    work.push({ side: s, input, list: { ids: new Int32Array(q.rows * k), scores: new Float64Array(q.rows * k) } });
  }
  return { result, work, range, threads, asyncArgs };
}

/** Queries per piece of predictTopKAsync: the native kernel's rows per task. */
const PIECE_ROWS = 1024;

/**
 * predictTopK in pieces (up to 1,024 queries x 1,048,576 entities per thread: a few seconds at d = 64) between
 * event-loop turns, with `signal` (checked before each piece; an aborted call rejects with its reason) and
 * `onProgress` (`{ done, total }` pieces). Each piece is a synchronous kernel call: the event loop waits for it. The
 * pieces' lists merge exactly (mergeTopK's rule), so the result equals predictTopK's bit for bit, at about its speed.
 *
 * @example
 * const top = await predictTopKAsync(model, { queries: hr, side: "tail", k: 10, filter, signal, onProgress });
 */
export async function predictTopKAsync(
  model: EmbeddingModel,
  opts: PredictTopKOptions & AsyncOptions,
): Promise<TopKPredictions> {
  const { result, work, range, threads, asyncArgs } = prepare(model, opts, true);
  const k = result.k;
  const span = (threads ?? kernels().threads) * (1 << 20);
  const pieces: [SideWork, number, number, number, number][] = [];
  for (const w of work) {
    w.list.ids.fill(-1);
    w.list.scores.fill(NaN);
    for (let r0 = 0; r0 < result.rows; r0 += PIECE_ROWS) {
      for (let b = range[0]; b < range[1]; b += span) {
        pieces.push([w, r0, Math.min(result.rows, r0 + PIECE_ROWS), b, Math.min(range[1], b + span)]);
      }
    }
  }
  return withCallControl(asyncArgs, pieces.length, async (control) => {
    for (const [done, [w, r0, r1, b, e]] of pieces.entries()) {
      control?.check();
      const part: TopKList = { ids: new Int32Array((r1 - r0) * k), scores: new Float64Array((r1 - r0) * k) };
      // A piece narrower than k lists all of it, padded (the kernel pads; the merge skips the pads).
      // model.job again: a model whose arrays were transferred since the call began is refused, not read.
      const { anchor, relationIds, truth, excludeOffsets, excludeIds } = w.input;
      const input = model.job(w.side, anchor, relationIds, truth, { excludeOffsets, excludeIds });
      kernels().topKEmbeddings(rowsOf(input, r0, r1), { k, begin: b, end: e }, part.ids, part.scores, threads);
      mergeInto(w.list, r0, part, k);
      control?.progress(done + 1);
      await turn();
    }
    control?.finish();
    for (const w of work) result[w.side] = w.list;
    return result;
  });
}
