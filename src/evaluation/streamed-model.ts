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
import type { EmbeddingModel } from "../scoring/embedding-model";
import { formatBytes, gather, localIds, TableChunks, uniqueIds } from "../scoring/entity-chunks";
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

/**
 * Ranks every streamed side of a model batch into its work's `out` (the layout rankEmbeddings writes: greater | equal
 * | nan | removed | trueScore | status, index). Throws a KgrankInputError when the budget cannot hold one query row and
 * one table row beside the fixed bytes.
 */
export async function runStreamed(model: EmbeddingModel, works: ModelSideWork[], opts: StreamOptions): Promise<void> {
  const source = model.rowSource();
  const [first, last] = opts.range ?? [0, model.numEntities];
  const d = model.entityWidth;
  const wide = model.precision === "float64";
  const B = wide ? 8 : 4;
  const pair = model.interaction === "pairre";
  const table = new TableChunks(model, first, last);
  // A query row while its block is ranked: its anchor row and the kernel's query vector (PairRE: also the
  // coefficient vector and the anchor's factor), up to two gathered rows (anchor, true answer), ids and outputs
  // (ours and the binding's copies); a row's known answers (4 bytes each, twice) and OGB negatives on top.
  const perRow = d * B * (4 + (pair ? 1 : 0)) + 200;
  const rowBytes = (w: StreamRows, i: number) =>
    perRow +
    (w.excludeOffsets ? 8 * (w.excludeOffsets[i + 1]! - w.excludeOffsets[i]!) : 0) +
    w.negativesPerRow * (8 + d * B);
  const free = opts.budget - opts.fixedBytes;
  const blockLimit = Math.floor(free / 2);
  const streams = works.filter((w) => w.stream && w.rows > 0);
  if (streams.length === 0) return;
  const needsTable = streams.some((w) => !w.stream!.negatives);
  // Every row must fit a block (a key with many known answers is the largest) beside one table row.
  let largest = 0;
  for (const w of streams) for (let i = 0; i < w.rows; i++) largest = Math.max(largest, rowBytes(w.stream!, i));
  const smallest = largest + (needsTable ? table.rowBytes : 0);
  if (free < smallest || blockLimit < largest) {
    throw new KgrankInputError(
      "memoryBudget",
      `${formatBytes(opts.budget)} cannot hold one query block beside the filter index (${formatBytes(opts.fixedBytes)}): ` +
        `a query row needs up to ${formatBytes(largest)} (with its known answers) and each table chunk row ` +
        `${formatBytes(table.rowBytes)}; give at least ${formatBytes(opts.fixedBytes + 2 * smallest, true)} (more makes fewer, larger reads)`,
    );
  }
  // Query blocks: consecutive rows of the sides in order, each within blockLimit bytes.
  const blocks: { segments: Segment[]; bytes: number }[] = [];
  let current: Segment[] = [];
  let bytes = 0;
  for (const work of streams) {
    const rows = work.stream!;
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
        const control = opts.call?.part(at(c, before), 1 / passes);
        await k.rankEmbeddingsAsync(input, p.part, opts.threads, control);
        if (p.part[5 * p.n] !== 0) {
          fail(p.s.work, p.part[5 * p.n]!, p.s.r0 + p.part[5 * p.n + 1]!);
          return;
        }
        for (let i = 0; i < 4 * p.n; i++) p.acc[i] = p.acc[i]! + p.part[i]!;
        before += p.n;
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
