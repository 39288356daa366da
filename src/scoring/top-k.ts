/**
 * Top-k predictions from a model's embeddings: per query the k best candidate entities and their scores, one kernel
 * call per side (native/core/interaction.cpp top_k_embeddings, twin src/fallback/interaction.ts topKEmbeddings).
 * The scores are those the ranking kernel compares for the same pairs, so a prediction and a rank never disagree.
 */
import { kernels } from "../backend/backend";
import { KgrankInputError } from "../checks/errors";
import { describe, integer, isArrayLike, optionKeys, threadCount, tripleArray } from "../checks/validate";
import {
  embeddingRows as rowsOf,
  exclusionRows,
  type EmbeddingRankInput,
  type FilterIndexHandle,
  type ScreenModeName,
} from "../contract/kernels";
import { mergeInto, type TopKList, type TopKPredictions } from "../ranking/top-k";
import { type AsyncArgs, type AsyncOptions, callOptions, withCallControl } from "../backend/call-control";
import { turn } from "../contract/event-loop";
import { BUDGET_WHY, EmbeddingModel, screenMode, screenQueryBytes } from "./embedding-model";
import { interactionOf } from "./interactions";
import {
  formatBytes,
  formatBytesApart,
  gather,
  localIds,
  memoryBudget,
  MIN_BLOCK_ROWS,
  MIN_CHUNK_ROWS,
  onceHint,
  screenShare,
  openReader,
  planOption,
  inMemoryReader,
  readWhole,
  type RowReader,
  type StreamPlan,
  TableChunks,
  uniqueIds,
} from "./entity-chunks";

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
  /**
   * A model whose entity table is read in chunks (openEntityTable; predictTopKAsync only): bytes the call may hold
   * for the lists, the known answers, the query rows and the table's chunks together (with `screen`, also the
   * screen's quantised copy of a chunk). Default: a quarter of the machine's memory. Ignored for a table held in
   * memory.
   */
  memoryBudget?: number;
  /**
   * A model whose entity table is read in chunks (predictTopKAsync): called once, before the table is read, with how
   * memoryBudget lets it be read (StreamPlan).
   */
  onPlan?: (plan: StreamPlan) => void;
  /**
   * The int8 screen (docs/screen.md) on the native backend, DistMult, ComplEx, TransE-L2 and RotatE-L2 at float32:
   * "auto" (default: where the CPU has a screen kernel that pays and, under memoryBudget, the copy fits), "off" or
   * "int8". The lists are the same in every mode, bit for bit; only the time and the memory differ.
   */
  screen?: ScreenModeName;
}

const PREDICT_TOP_K_KEYS = optionKeys<PredictTopKOptions>({
  onPlan: 1,
  triples: 1,
  queries: 1,
  side: 1,
  k: 1,
  filter: 1,
  entityRange: 1,
  threads: 1,
  memoryBudget: 1,
  screen: 1,
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
  const { result, work, range, threads, screen } = prepare(model, opts, false);
  for (const w of work) {
    kernels().topKEmbeddings(
      jobOf(model, w, screen, threads),
      { k: result.k, begin: range[0], end: range[1] },
      w.list.ids,
      w.list.scores,
      threads,
    );
    result[w.side] = w.list;
  }
  return result;
}

/** One side's queries, the known answers each must not list (global ids), and the list it fills. */
interface SideWork {
  side: "head" | "tail";
  anchor: Int32Array;
  relation: Int32Array;
  excludeOffsets: Uint32Array | null;
  excludeIds: Int32Array | null;
  list: TopKList;
}

/**
 * The kernel input of a side's queries against the table in memory (refused for a table read in chunks), with the
 * screen's table quantised once per model and backend; `decided`: the side's screen as an earlier input of this
 * call got it (screenFor counts a side's rows once per call).
 */
function jobOf(
  model: EmbeddingModel,
  w: SideWork,
  screen: ScreenModeName,
  threads: number | undefined,
  decided?: EmbeddingRankInput["screen"],
) {
  const { excludeOffsets, excludeIds } = w;
  const input: EmbeddingRankInput = model.job(w.side, w.anchor, w.relation, w.anchor, { excludeOffsets, excludeIds });
  input.screen = decided !== undefined ? decided : model.screenFor(screen, input, threads, true);
  return input;
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
  if (o.k === undefined) throw new KgrankInputError("k", "is required: the number of candidates to list per query");
  // k may exceed the range's entities (a small entity shard): those rows end with padding, -1 and NaN.
  const k = integer("k", o.k, 1);
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
    work.push({
      side: s,
      anchor,
      relation: q.relation,
      excludeOffsets,
      excludeIds,
      list: { ids: new Int32Array(q.rows * k), scores: new Float64Array(q.rows * k) },
    });
  }
  return {
    result,
    work,
    range,
    threads,
    asyncArgs,
    budget: memoryBudget(o.memoryBudget),
    onPlan: planOption(o.onPlan),
    screen: screenMode(o.screen),
  };
}

/**
 * Rows [row0, row0 + rows) of a list's k-th scores where the row's list is full, else NaN: the floor of the next
 * piece over larger ids (TopKRange.floor), which then skips what cannot enter.
 */
function floorOf(list: TopKList, row0: number, rows: number, k: number): Float64Array {
  const f = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const last = (row0 + i) * k + k - 1;
    f[i] = list.ids[last]! >= 0 ? list.scores[last]! : NaN;
  }
  return f;
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
  const { result, work, range, threads, asyncArgs, budget, onPlan, screen } = prepare(model, opts, true);
  if (model.entitySource) {
    return streamTopK(model, result, work, range, { budget, threads, asyncArgs, onPlan, screen });
  }
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
  // Each side's screen, decided once for the call (its rows counted once under auto).
  const screens = new Map(work.map((w) => [w, jobOf(model, w, screen, threads).screen]));
  return withCallControl(asyncArgs, pieces.length, async (control) => {
    for (const [done, [w, r0, r1, b, e]] of pieces.entries()) {
      control?.check();
      const part: TopKList = { ids: new Int32Array((r1 - r0) * k), scores: new Float64Array((r1 - r0) * k) };
      // A piece narrower than k lists all of it, padded (the kernel pads; the merge skips the pads).
      // The input again for each piece: a model whose arrays were transferred since the call began is refused.
      // Pieces of a row come in ascending entity ranges, so its list so far gives the floor.
      kernels().topKEmbeddings(
        rowsOf(jobOf(model, w, screen, threads, screens.get(w)), r0, r1),
        { k, begin: b, end: e, floor: floorOf(w.list, r0, r1 - r0, k) },
        part.ids,
        part.scores,
        threads,
      );
      mergeInto(w.list, r0, part, k);
      control?.progress(done + 1);
      await turn();
    }
    control?.finish();
    for (const w of work) result[w.side] = w.list;
    return result;
  });
}

/**
 * predictTopKAsync of a model whose entity table is read in chunks (openEntityTable) within `budget` bytes: the
 * lists, the known answers and (per piece) the kernel's query vectors are held throughout; the queries are cut into
 * blocks whose anchor rows are gathered from the file, and for each block the range is read once, chunk after chunk
 * (./entity-chunks.ts), each chunk's lists (pieces as above, global ids) merged into the block's. A list is a set
 * defined by its order, so the result equals predictTopK's of the table in memory bit for bit, whatever the budget.
 */
async function streamTopK(
  model: EmbeddingModel,
  result: TopKPredictions,
  work: SideWork[],
  range: [number, number],
  o: {
    budget: number;
    threads: number | undefined;
    asyncArgs: AsyncArgs;
    onPlan: ((plan: StreamPlan) => void) | undefined;
    screen: ScreenModeName;
  },
): Promise<TopKPredictions> {
  const { k, rows } = result;
  if (model.entitySource?.rowOfEntity) {
    throw new KgrankInputError(
      "model",
      `reads ${model.entitySource.name}, whose rows are in another order than the entity ids (its id map), in ` +
        `chunks: top-k lists order equal scores by entity id, which a pass in row order cannot; reorder the file ` +
        `once (e.g. with NumPy) or read it into memory`,
    );
  }
  const d = model.entityWidth;
  const B = model.precision === "float64" ? 8 : 4;
  const extra = interactionOf(model.interaction).memory;
  const threads = o.threads ?? kernels().threads;
  // The plan's sizes with the screen's quantised copy of the table a call lists from (one call at a time) and of a
  // piece's query rows at screenRow bytes a table row (0: none).
  const sizes = (screenRow: number) => {
    const table = new TableChunks(model, range[0], range[1], undefined, screenRow);
    // Held throughout: each side's list (ids, scores) and its known answers; per piece, its list, the kernel's query
    // (and PairRE coefficient) vectors and their screened forms, its per-thread segment lists and its sorted copy of
    // the known answers.
    let fixed = 0;
    let widest = 0;
    for (const w of work) {
      fixed += rows * k * 12 + 4 * (rows + 1) + 4 * (w.excludeIds?.length ?? 0);
      for (let r0 = 0; w.excludeOffsets && r0 < rows; r0 += PIECE_ROWS) {
        widest = Math.max(widest, w.excludeOffsets[Math.min(rows, r0 + PIECE_ROWS)]! - w.excludeOffsets[r0]!);
      }
    }
    const pieceRows = Math.min(PIECE_ROWS, rows);
    fixed += pieceRows * (k * 12 + d * B * (2 + extra.queryVectors) + k * (B + 4) * threads) + 4 * widest;
    // Each thread's task of a screened piece quantises the piece's rows and holds a block's undecided ids (64 rows x
    // 544, native/core/interaction.cpp top_k_embeddings).
    if (screenRow > 0) fixed += threads * (pieceRows * screenQueryBytes(screenRow) + 64 * 544 * 4);
    // A query row of a block: its anchor row, gathered and then copied in query order, PairRE's factor, ids.
    const perRow = 2 * d * B + B + 16;
    const free = o.budget - fixed;
    const queries = rows * work.length;
    const span0 = range[1] - range[0];
    // A workable run: MIN_BLOCK_ROWS queries per pass over the table, MIN_CHUNK_ROWS table rows per read.
    const minBlock = Math.min(MIN_BLOCK_ROWS, queries) * perRow;
    const minChunk = table.bytesFor(Math.min(MIN_CHUNK_ROWS, span0));
    // Read whole: the range (TableChunks.wholeBytes) beside one block of every query.
    const wholeBytes = table.wholeBytes;
    const onePassBudget =
      fixed + Math.min(wholeBytes + queries * perRow, Math.max(2 * queries * perRow, queries * perRow + minChunk));
    const whole = wholeBytes + Math.min(queries, MIN_BLOCK_ROWS) * perRow <= free;
    return { table, fixed, perRow, free, queries, span0, minBlock, minChunk, wholeBytes, onePassBudget, whole };
  };
  let screen = o.screen;
  // A kernel call lists one piece of at most PIECE_ROWS rows.
  let screenRow = model.screenRowBytes(screen, Math.min(PIECE_ROWS, rows));
  let plan = sizes(screenRow);
  // Under auto, a budget that holds the range whole only without the screen's copy, or that cannot hold a workable
  // block and chunk with it, takes the float32 path (the same lists) rather than read the range in chunks or refuse
  // the run for the copy (a refusal then names what the float32 path needs).
  if (screenRow > 0 && screen === "auto") model.noteScreenWhy(null);
  if (screenRow > 0 && screen === "auto" && !plan.whole) {
    const plain = sizes(0);
    if (plain.whole || plan.free < plan.minBlock + plan.minChunk) {
      screen = "off";
      screenRow = 0;
      plan = plain;
      model.noteScreenWhy(BUDGET_WHY);
    }
  }
  const { table, fixed, perRow, free, queries, span0, minBlock, minChunk, wholeBytes, onePassBudget, whole } = plan;
  if (!whole && free < minBlock + minChunk) {
    const least = fixed + Math.min(minBlock + minChunk, wholeBytes + minBlock);
    const [have, need] = formatBytesApart(o.budget, least);
    throw new KgrankInputError(
      "memoryBudget",
      `${have} cannot hold the top-${k} lists and known answers (${formatBytes(fixed)}) beside a query block ` +
        `(${Math.min(MIN_BLOCK_ROWS, queries)} rows, ${formatBytes(minBlock, true)}) and a table chunk ` +
        `(${Math.min(MIN_CHUNK_ROWS, span0)} rows, ${formatBytes(minChunk, true)}${screenShare(screenRow)}); ` +
        `give at least ${need}` +
        onceHint(least, onePassBudget),
    );
  }
  const blockRows = whole
    ? Math.min(queries, Math.floor((free - wholeBytes) / perRow))
    : Math.min(queries, Math.floor(Math.min(Math.max(minBlock, free / 2), free - minChunk) / perRow));
  const chunkRows = whole ? span0 : table.fit(free - blockRows * perRow);
  const chunkCount = Math.ceil(span0 / chunkRows);
  const span = threads * (1 << 20);
  // Progress: a unit per query row and chunk.
  const total = rows * work.length * chunkCount;
  // Blocks: consecutive rows of the sides in order.
  const segments: { w: SideWork; r0: number; r1: number }[][] = [];
  let current: { w: SideWork; r0: number; r1: number }[] = [];
  let room = blockRows;
  for (const w of work) {
    for (let r0 = 0; r0 < rows;) {
      const r1 = Math.min(rows, r0 + room);
      current.push({ w, r0, r1 });
      room -= r1 - r0;
      r0 = r1;
      if (room === 0) {
        segments.push(current);
        current = [];
        room = blockRows;
      }
    }
  }
  if (current.length > 0) segments.push(current);
  return withCallControl(o.asyncArgs, total, async (control) => {
    for (const w of work) {
      w.list.ids.fill(-1);
      w.list.scores.fill(NaN);
    }
    let done = 0;
    o.onPlan?.({
      whole,
      passes: whole ? 1 : segments.length,
      blockRows,
      chunkRows,
      chunks: whole ? 1 : chunkCount,
      tableBytes: whole ? wholeBytes : table.bufferBytes,
      budget: o.budget,
      onePassBudget,
    });
    const reader = await openReader(model.rowSource());
    try {
      let source: RowReader = reader;
      let chunks = table;
      if (whole) {
        // The range fits the budget: read once, whole, then handed out in place as a table in memory.
        const [first, last] = range;
        const data = await readWhole(reader, first, last, B === 8, control);
        source = inMemoryReader(reader, data, first, d);
        chunks = new TableChunks(model, first, last, source);
        chunks.fit(Number.MAX_SAFE_INTEGER);
      } else {
        table.readFrom(reader);
      }
      await listBlocks(source, chunks);
      await reader.check(); // every read is checked before it starts; this one covers the last
    } finally {
      await reader.close();
    }
    control?.finish();
    for (const w of work) result[w.side] = w.list;
    return result;

    async function listBlocks(source: RowReader, table: TableChunks): Promise<void> {
      for (const block of segments) {
        control?.check();
        const ids = uniqueIds(block.map((s) => s.w.anchor.subarray(s.r0, s.r1)));
        const gathered = B === 8 ? new Float64Array(ids.length * d) : new Float32Array(ids.length * d);
        await gather(source, ids, gathered, control);
        const inputs = block.map((s) => {
          const n = s.r1 - s.r0;
          const local = localIds(ids, s.w.anchor.subarray(s.r0, s.r1));
          const anchorRows = B === 8 ? new Float64Array(n * d) : new Float32Array(n * d);
          for (let i = 0; i < n; i++) anchorRows.set(gathered.subarray(local[i]! * d, (local[i]! + 1) * d), i * d);
          return {
            s,
            n,
            anchorRows,
            anchorScale: model.rowScales(anchorRows, n),
            ...exclusionRows(s.w.excludeOffsets, s.w.excludeIds, s.r0, s.r1),
            // Top-k reads no truth; row 0 of any chunk is a valid id for the binding's check.
            truth: new Int32Array(n),
          };
        });
        for await (const chunk of table.each(control)) {
          for (const p of inputs) {
            const input = model.sliceJob(
              p.s.w.side,
              chunk,
              p.s.w.anchor.subarray(p.s.r0, p.s.r1),
              p.s.w.relation.subarray(p.s.r0, p.s.r1),
              p.truth,
              {
                anchorRows: p.anchorRows,
                anchorScale: p.anchorScale,
                excludeOffsets: p.excludeOffsets,
                excludeIds: p.excludeIds,
              },
            );
            // A chunk read from disk: each call quantises the span it lists from for the screen.
            input.screen = model.screenFor(screen, input, o.threads, false);
            for (let r0 = 0; r0 < p.n; r0 += PIECE_ROWS) {
              const r1 = Math.min(p.n, r0 + PIECE_ROWS);
              const piece = rowsOf(input, r0, r1);
              for (let b = 0; b < chunk.rows; b += span) {
                control?.check();
                const part: TopKList = { ids: new Int32Array((r1 - r0) * k), scores: new Float64Array((r1 - r0) * k) };
                const e = Math.min(chunk.rows, b + span);
                // A row's chunks and spans come in ascending ids: its list so far gives the floor.
                const floor = floorOf(p.s.w.list, p.s.r0 + r0, r1 - r0, k);
                kernels().topKEmbeddings(piece, { k, begin: b, end: e, floor }, part.ids, part.scores, o.threads);
                mergeInto(p.s.w.list, p.s.r0 + r0, part, k);
                await turn();
              }
              done += r1 - r0;
              control?.progress(done);
            }
          }
        }
      }
    }
  });
}
