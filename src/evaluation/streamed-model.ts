/**
 * Ranking from a model whose entity table is read from disk in chunks (EmbeddingModel built on an EntityRowSource,
 * e.g. openEntityTable), within a memory budget. The model batch's rows (every side together) are split into query
 * blocks; for each block:
 *   1. the rows of its anchors, true answers (and OGB negatives) are gathered from the file (runs of nearby ids read
 *      as one range), and the true scores computed from them by the kernel (rankEmbeddings with the true answer as the
 *      one negative: the code that scores every column);
 *   2. the table is read once, chunk after chunk, the next chunk read while the current one is ranked; each chunk is
 *      one kernel call per side (rankEmbeddings with entityOffset, the anchor rows and the true scores given), whose
 *      counts (greater, equal, NaN, removed known answers) are integers and add up over chunks to the whole table's.
 * Each (query, entity) score is the same whichever chunk holds the entity, so the ranks equal those of the table in
 * memory, bit for bit, whatever the budget. Memory: the filter index (given as fixedBytes), one block's query-side
 * arrays, two chunks (and their stored bytes when they must be converted) stay within the budget.
 */
import { kernels } from "../backend/backend";
import type { CallControl } from "../backend/call-control";
import { KgrankInputError } from "../checks/errors";
import { exclusionRows } from "../contract/kernels";
import { BUDGET_WHY, type EmbeddingModel, screenQueryBytes } from "../scoring/embedding-model";
import { interactionOf } from "../scoring/interactions";
import {
  formatBytes,
  formatBytesApart,
  gather,
  localIds,
  MIN_BLOCK_ROWS,
  MIN_CHUNK_ROWS,
  inMemoryReader,
  onceHint,
  screenShare,
  openReader,
  readWhole,
  type RowReader,
  type StreamPlan,
  TableChunks,
  uniqueIds,
} from "../scoring/entity-chunks";
import type { ModelSideWork, StreamRows } from "./model-batch";

/** Options of one streamed run. */
export interface StreamOptions {
  /** Bytes the run may hold: the filter index, one query block, two table chunks. */
  budget: number;
  /** Bytes already held for the run (the filter index). */
  fixedBytes: number;
  threads: number | undefined;
  call?: CallControl | undefined;
  /** Rank against entities [begin, end) only (an entity shard); default every entity. */
  range?: [number, number] | null;
  /** Called once, before the table is read, with how it will be read. */
  onPlan?: ((plan: StreamPlan) => void) | undefined;
}

/** Rows [r0, r1) of one side's work: the unit of a query block. */
interface Segment {
  work: ModelSideWork;
  rows: StreamRows;
  r0: number;
  r1: number;
}

/** Sets a work's status (out[5 rows], out[5 rows + 1]) as the kernel would: the first failure found wins. */
function fail(work: ModelSideWork, code: number, row: number): void {
  const s = 5 * work.rows;
  if (work.out[s] === 0) {
    work.out[s] = code;
    work.out[s + 1] = row;
  }
}

/** A stream's rows with every entity id (anchors, true answers, negatives, known answers) as its row of the table. */
function toRows(r: StreamRows, rowOf: Int32Array): StreamRows {
  const map = (a: Int32Array) => a.map((id) => rowOf[id]!);
  return {
    ...r,
    anchor: map(r.anchor),
    truth: map(r.truth),
    negatives: r.negatives ? map(r.negatives) : null,
    excludeIds: r.excludeIds ? map(r.excludeIds) : null,
  };
}

/**
 * What ranking from the table in memory holds beyond the arrays every run holds (ids, outputs): the kernel's copies
 * of a row's ids and of its known answers (4 bytes each). Its tiles (per thread, whatever the rows) are not counted,
 * as in a chunk's kernel call.
 */
const inMemoryBytes = (rows: number, excluded: number) => 16 * rows + 4 * excluded;

/**
 * Ranks every streamed side of a model batch into its work's `out` (the layout rankEmbeddings writes: greater | equal
 * | nan | removed | trueScore | status, index). The table is read through one open file for the whole run
 * (openReader), checked once more when the reads are done. When it fits the budget beside the filter index and the
 * query rows, it is read once, whole, and ranked as a table in memory; else in query blocks and chunks (rankBlocks).
 * A table whose rows are not in entity id order (EntityRowSource.rowOfEntity) is ranked with every id mapped to its
 * row: a rank counts candidates, whatever their order. Throws a KgrankInputError when the budget cannot hold a
 * workable block (MIN_BLOCK_ROWS query rows) beside a workable chunk (MIN_CHUNK_ROWS table rows).
 */
export async function runStreamed(model: EmbeddingModel, works: ModelSideWork[], opts: StreamOptions): Promise<void> {
  const all = works.filter((w) => w.stream && w.rows > 0);
  if (all.length === 0) return;
  const source = model.rowSource();
  const rowOf = source.rowOfEntity ?? null;
  if (rowOf && opts.range && (opts.range[0] !== 0 || opts.range[1] !== model.numEntities)) {
    throw new KgrankInputError(
      "model",
      `reads ${source.name}, whose rows are in another order than the entity ids (its id map), in chunks: an entity ` +
        `shard's range of ids is not a range of its rows; reorder the file once (e.g. with NumPy) or read it into memory`,
    );
  }
  const streams = all.map((work) => ({ work, rows: rowOf ? toRows(work.stream!, rowOf) : work.stream! }));
  const reader = await openReader(source);
  try {
    await rankBlocks(model, reader, streams, opts);
    await reader.check(); // every read is checked before it starts; this one covers the last
  } finally {
    await reader.close();
  }
}

async function rankBlocks(
  model: EmbeddingModel,
  source: RowReader,
  given: { work: ModelSideWork; rows: StreamRows }[],
  opts: StreamOptions,
): Promise<void> {
  const [first, last] = opts.range ?? [0, model.numEntities];
  const d = model.entityWidth;
  const wide = model.precision === "float64";
  const B = wide ? 8 : 4;
  const extra = interactionOf(model.interaction).memory;
  const free = opts.budget - opts.fixedBytes;
  const needsTable = given.some((s) => !s.rows.negatives);
  // The plan's sizes with the screen's quantised copy of the table a call ranks (one call at a time) and of its
  // query rows at screenRow bytes a table row (0: none).
  const sizes = (screenRow: number) => {
    const table = new TableChunks(model, first, last, source, screenRow);
    // A query row while its block is ranked: its anchor row and the kernel's query vector (PairRE: also the
    // coefficient vector and the anchor's factor), up to two gathered rows (anchor, true answer), ids and outputs
    // (ours and the binding's copies), the screen's forms of it; a row's known answers (4 bytes each, twice) and
    // OGB negatives on top.
    const perRow = d * B * (4 + extra.queryVectors) + 200 + screenQueryBytes(screenRow);
    const rowBytes = (w: StreamRows, i: number) =>
      perRow +
      (w.excludeOffsets ? 8 * (w.excludeOffsets[i + 1]! - w.excludeOffsets[i]!) : 0) +
      w.negativesPerRow * (8 + d * B);
    // The rows' costs: every row must fit a block, and a workable block holds MIN_BLOCK_ROWS of the largest.
    const costs: number[] = [];
    let totalBytes = 0;
    for (const { work, rows } of given) {
      for (let i = 0; i < work.rows; i++) {
        const b = rowBytes(rows, i);
        costs.push(b);
        totalBytes += b;
      }
    }
    costs.sort((a, b) => b - a);
    let minBlock = 0;
    for (let i = 0; i < Math.min(MIN_BLOCK_ROWS, costs.length); i++) minBlock += costs[i]!;
    const minChunk = needsTable ? table.bytesFor(Math.min(last - first, MIN_CHUNK_ROWS)) : 0;
    return { table, rowBytes, totalBytes, minBlock, minChunk };
  };
  let totalRows = 0;
  let excluded = 0;
  for (const { work, rows } of given) {
    totalRows += work.rows;
    excluded += rows.excludeIds?.length ?? 0;
  }
  const readsWhole = (p: { table: TableChunks }) =>
    needsTable && p.table.wholeBytes + inMemoryBytes(totalRows, excluded) <= free && !("view" in source && source.view);
  const workable = (p: { minBlock: number; minChunk: number }) => free >= p.minBlock + p.minChunk;
  let screenRow = Math.max(0, ...given.map((s) => model.screenRowBytes(s.rows.screen, s.work.rows)));
  let plan = sizes(screenRow);
  let streams = given;
  // Under auto, a budget that holds the table whole only without the screen's copy, or that cannot hold a workable
  // block and chunk with it, takes the float32 path (the same counts) rather than read the table in chunks or refuse
  // the run for the copy (a refusal then names what the float32 path needs); int8 keeps the copy (and is refused
  // below, naming it).
  const auto = given.every((s) => s.rows.screen === "auto");
  if (screenRow > 0 && auto) model.noteScreenWhy(null);
  if (screenRow > 0 && auto && !readsWhole(plan)) {
    const plain = sizes(0);
    if (readsWhole(plain) || !workable(plan)) {
      screenRow = 0;
      plan = plain;
      streams = given.map((s) => ({ work: s.work, rows: { ...s.rows, screen: "off" } }));
      model.noteScreenWhy(BUDGET_WHY);
    }
  }
  const { table, rowBytes, totalBytes, minBlock, minChunk } = plan;
  // Read whole: the range (TableChunks.wholeBytes) beside the query rows in memory.
  const wholeBytes = table.wholeBytes;
  const wholeNeed = wholeBytes + inMemoryBytes(totalRows, excluded);
  const onePassBudget = opts.fixedBytes + Math.min(wholeNeed, Math.max(2 * totalBytes, totalBytes + minChunk));
  if (readsWhole(plan)) {
    opts.onPlan?.({
      whole: true,
      passes: 1,
      blockRows: totalRows,
      chunkRows: last - first,
      chunks: 1,
      tableBytes: wholeBytes,
      budget: opts.budget,
      onePassBudget,
    });
    const data = await readWhole(source, first, last, wide, opts.call);
    await source.check();
    const inMemory = inMemoryReader(source, data, first, d);
    if (opts.range) {
      // An entity shard: ranked as a shard of a table in memory (one chunk, handed out in place).
      await rankBlocks(model, inMemory, streams, { ...opts, onPlan: undefined });
      return;
    }
    const whole = { data, rows: last - first, offset: 0, scale: model.rowScales(data, last - first) };
    let offset = 0;
    for (const { work, rows: r } of streams) {
      opts.call?.check();
      const input = model.sliceJob(
        work.side,
        whole,
        r.anchor,
        r.relation,
        r.truth,
        r.negatives
          ? { negatives: r.negatives, negativesPerRow: r.negativesPerRow }
          : { excludeOffsets: r.excludeOffsets, excludeIds: r.excludeIds },
      );
      input.screen = model.screenFor(r.screen, input, opts.threads, false);
      await kernels().rankEmbeddingsAsync(input, work.out, opts.threads, opts.call?.part(offset));
      offset += work.rows;
    }
    return;
  }
  if (free < minBlock + minChunk) {
    const least = opts.fixedBytes + Math.min(minBlock + minChunk, needsTable ? wholeNeed : Infinity);
    const [have, need] = formatBytesApart(opts.budget, least);
    throw new KgrankInputError(
      "memoryBudget",
      `${have} cannot hold a query block beside the filter index (${formatBytes(opts.fixedBytes)}) and a table ` +
        `chunk: ${Math.min(MIN_BLOCK_ROWS, totalRows)} query rows need up to ${formatBytes(minBlock, true)} (with ` +
        `their known answers) and ${Math.min(last - first, MIN_CHUNK_ROWS)} table rows ${formatBytes(minChunk, true)}` +
        `${screenShare(screenRow)}; ` +
        `give at least ${need}${onceHint(least, onePassBudget)}`,
    );
  }
  const blockLimit = Math.min(Math.max(minBlock, Math.floor(free / 2)), free - minChunk);
  // Query blocks: consecutive rows of the sides in order, each within blockLimit bytes.
  const blocks: { segments: Segment[]; bytes: number }[] = [];
  let current: Segment[] = [];
  let bytes = 0;
  for (const { work, rows } of streams) {
    let r0 = 0;
    for (let i = 0; i < work.rows; i++) {
      const b = rowBytes(rows, i);
      if (bytes + b > blockLimit && (i > r0 || current.length > 0)) {
        if (i > r0) current.push({ work, rows, r0, r1: i });
        blocks.push({ segments: current, bytes });
        current = [];
        bytes = 0;
        r0 = i;
      }
      bytes += b;
    }
    current.push({ work, rows, r0, r1: work.rows });
  }
  if (current.length > 0) blocks.push({ segments: current, bytes });
  const maxBlock = Math.max(...blocks.map((b) => b.bytes));
  table.fit(free - maxBlock);
  const chunks = table.count;
  opts.onPlan?.({
    whole: false,
    passes: needsTable ? blocks.length : 0,
    blockRows: Math.max(...blocks.map((b) => b.segments.reduce((n, s) => n + s.r1 - s.r0, 0))),
    chunkRows: table.chunkRows,
    chunks,
    tableBytes: table.bufferBytes,
    budget: opts.budget,
    onePassBudget,
  });
  const k = kernels();
  let done = 0;
  for (const block of blocks) {
    opts.call?.check();
    // Progress: each row of the block is done after the true-score pass and one pass per chunk.
    const blockRows = block.segments.reduce((n, s) => n + s.r1 - s.r0, 0);
    const passes = block.segments.some((s) => !s.rows.negatives) ? chunks + 1 : 1;
    const at = (pass: number, before: number) => done + (blockRows * pass + before) / passes;
    let before = 0;
    // 1. Gather the block's anchor, true answer and negative rows; the true scores (OGB: the whole count).
    const ids = uniqueIds(
      block.segments.flatMap((s) => {
        const r = s.rows;
        const K = r.negativesPerRow;
        return [
          r.anchor.subarray(s.r0, s.r1),
          r.truth.subarray(s.r0, s.r1),
          ...(r.negatives ? [r.negatives.subarray(s.r0 * K, s.r1 * K)] : []),
        ];
      }),
    );
    const gathered = wide ? new Float64Array(ids.length * d) : new Float32Array(ids.length * d);
    await gather(source, ids, gathered, opts.call);
    const rows = { data: gathered, rows: ids.length, offset: 0, scale: model.rowScales(gathered, ids.length) };
    const prepared = [];
    for (const s of block.segments) {
      const n = s.r1 - s.r0;
      const r = s.rows;
      const anchorLocal = localIds(ids, r.anchor.subarray(s.r0, s.r1));
      const truthLocal = localIds(ids, r.truth.subarray(s.r0, s.r1));
      const anchorRows = wide ? new Float64Array(n * d) : new Float32Array(n * d);
      for (let i = 0; i < n; i++)
        anchorRows.set(gathered.subarray(anchorLocal[i]! * d, (anchorLocal[i]! + 1) * d), i * d);
      const anchorScale = model.rowScales(anchorRows, n);
      const K = r.negatives ? r.negativesPerRow : 1;
      const negatives = r.negatives ? localIds(ids, r.negatives.subarray(s.r0 * K, s.r1 * K)) : truthLocal;
      const out = new Float64Array(5 * n + 2);
      const input = model.sliceJob(s.work.side, rows, anchorLocal, r.relation.subarray(s.r0, s.r1), truthLocal, {
        negatives,
        negativesPerRow: K,
        anchorRows,
        anchorScale,
      });
      const control = opts.call?.part(at(0, before), 1 / passes);
      await k.rankEmbeddingsAsync(input, out, opts.threads, control);
      before += n;
      opts.call?.progress(at(0, before));
      const status = out[5 * n]!;
      if (status !== 0) {
        fail(s.work, status, s.r0 + out[5 * n + 1]!);
        return;
      }
      const trueScores = out.slice(4 * n, 5 * n);
      if (r.negatives) {
        // The OGB protocol's count is complete: the K negatives are the candidates.
        for (let c = 0; c < 5; c++) s.work.out.set(out.subarray(c * n, (c + 1) * n), c * s.work.rows + s.r0);
        continue;
      }
      prepared.push({
        s,
        n,
        anchorRows,
        anchorScale,
        trueScores,
        ...exclusionRows(r.excludeOffsets, r.excludeIds, s.r0, s.r1),
        acc: new Float64Array(4 * n),
        part: new Float64Array(5 * n + 2),
      });
    }
    if (prepared.length === 0) {
      done += blockRows;
      continue;
    }
    // 2. The table, chunk after chunk; the next chunk is read while this one is ranked.
    let c = 0;
    for await (const chunk of table.each(opts.call)) {
      c++; // passes: 0 the true scores, then one per chunk
      before = 0;
      for (const p of prepared) {
        const r = p.s.rows;
        const input = model.sliceJob(
          p.s.work.side,
          chunk,
          r.anchor.subarray(p.s.r0, p.s.r1),
          r.relation.subarray(p.s.r0, p.s.r1),
          r.truth.subarray(p.s.r0, p.s.r1),
          {
            anchorRows: p.anchorRows,
            anchorScale: p.anchorScale,
            trueScores: p.trueScores,
            excludeOffsets: p.excludeOffsets,
            excludeIds: p.excludeIds,
          },
        );
        // Each chunk's table is quantised by its own call (once, however many slices the call runs in).
        input.screen = model.screenFor(r.screen, input, opts.threads, false);
        const control = opts.call?.part(at(c, before), 1 / passes);
        await k.rankEmbeddingsAsync(input, p.part, opts.threads, control);
        if (p.part[5 * p.n] !== 0) {
          fail(p.s.work, p.part[5 * p.n]!, p.s.r0 + p.part[5 * p.n + 1]!);
          return;
        }
        for (let i = 0; i < 4 * p.n; i++) p.acc[i] = p.acc[i]! + p.part[i]!;
        before += p.n;
        // Each pass's rows reported as they are done (a short kernel call may end before its progress is read).
        opts.call?.progress(at(c, before));
      }
    }
    for (const p of prepared) {
      const w = p.s.work;
      for (let c = 0; c < 4; c++) w.out.set(p.acc.subarray(c * p.n, (c + 1) * p.n), c * w.rows + p.s.r0);
      w.out.set(p.trueScores, 4 * w.rows + p.s.r0);
    }
    done += blockRows;
  }
}
