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
import { scaleBytes } from "../checks/alloc";
import { KgrankInputError } from "../checks/errors";
import { exclusionRows, type FloatArray } from "../contract/kernels";
import type { EmbeddingModel, EntityRowSource } from "../scoring/embedding-model";
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

/** A readable size: 1.50 GiB, 12.0 MiB, 512 B. */
function formatBytes(n: number): string {
  const [v, unit] = scaleBytes(n);
  return `${unit === "B" ? v : v.toFixed(v < 10 ? 2 : 1)} ${unit}`;
}

/** Runs of sorted ids closer than this many bytes of rows are read as one range. */
const GAP_BYTES = 256 << 10;
/** Longest range read for a gather. */
const RUN_BYTES = 8 << 20;

/** Sorted unique ids of several arrays. */
function uniqueIds(arrays: Int32Array[]): Int32Array {
  let n = 0;
  for (const a of arrays) n += a.length;
  const all = new Int32Array(n);
  let o = 0;
  for (const a of arrays) {
    all.set(a, o);
    o += a.length;
  }
  all.sort();
  let w = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[w++] = all[i]!;
  return all.slice(0, w);
}

/** Index of each id in the sorted unique `ids`. */
function localIds(ids: Int32Array, of: Int32Array): Int32Array {
  const out = new Int32Array(of.length);
  for (let i = 0; i < of.length; i++) {
    const v = of[i]!;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ids[mid]! < v) lo = mid + 1;
      else hi = mid;
    }
    out[i] = lo;
  }
  return out;
}

/** The rows of the sorted unique `ids` read from the source into `into` (ids.length x cols). */
async function gather(source: EntityRowSource, ids: Int32Array, into: FloatArray, call?: CallControl): Promise<void> {
  const d = source.cols;
  const gap = Math.max(1, Math.floor(GAP_BYTES / source.storedRowBytes));
  const run = Math.max(1, Math.floor(RUN_BYTES / (d * into.BYTES_PER_ELEMENT)));
  const wide = into instanceof Float64Array;
  for (let i = 0; i < ids.length;) {
    call?.check();
    let j = i;
    while (j + 1 < ids.length && ids[j + 1]! - ids[j]! <= gap && ids[j + 1]! - ids[i]! < run) j++;
    const a = ids[i]!;
    const b = ids[j]! + 1;
    if (b - a === j - i + 1) {
      await source.readRows(a, b, into.subarray(i * d, (j + 1) * d));
    } else {
      const tmp = wide ? new Float64Array((b - a) * d) : new Float32Array((b - a) * d);
      await source.readRows(a, b, tmp);
      for (let k = i; k <= j; k++) into.set(tmp.subarray((ids[k]! - a) * d, (ids[k]! - a + 1) * d), k * d);
    }
    i = j + 1;
  }
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
  const E = last - first;
  const wide = model.precision === "float64";
  const B = wide ? 8 : 4;
  const pair = model.interaction === "pairre";
  const convert = !((source.storedRowBytes === d * 4 && !wide) || (source.storedRowBytes === d * 8 && wide));
  // A table in memory is ranked in place: no chunk buffers.
  const view = "view" in source ? source.view : undefined;
  // A query row while its block is ranked: its anchor row and the kernel's query vector (PairRE: also the
  // coefficient vector and the anchor's factor), up to two gathered rows (anchor, true answer), ids and outputs
  // (ours and the binding's copies); a row's known answers (4 bytes each, twice) and OGB negatives on top.
  const perRow = d * B * (4 + (pair ? 1 : 0)) + 200;
  const rowBytes = (w: StreamRows, i: number) =>
    perRow +
    (w.excludeOffsets ? 8 * (w.excludeOffsets[i + 1]! - w.excludeOffsets[i]!) : 0) +
    w.negativesPerRow * (8 + d * B);
  // A table row in a chunk: two chunk buffers (one read while the other is ranked), their stored bytes when they
  // must be converted, PairRE's factors.
  const chunkRowBytes = view
    ? (pair ? B : 0) + 1
    : 2 * (d * B + (convert ? source.storedRowBytes : 0) + (pair ? B : 0));
  const free = opts.budget - opts.fixedBytes;
  const blockLimit = Math.floor(free / 2);
  const streams = works.filter((w) => w.stream && w.rows > 0);
  if (streams.length === 0) return;
  const needsTable = streams.some((w) => !w.stream!.negatives);
  // Every row must fit a block (a key with many known answers is the largest) beside one table row.
  let largest = 0;
  for (const w of streams) for (let i = 0; i < w.rows; i++) largest = Math.max(largest, rowBytes(w.stream!, i));
  const smallest = largest + (needsTable ? chunkRowBytes : 0);
  if (free < smallest || blockLimit < largest) {
    throw new KgrankInputError(
      "memoryBudget",
      `${formatBytes(opts.budget)} cannot hold one query block beside the filter index (${formatBytes(opts.fixedBytes)}): ` +
        `a query row needs up to ${formatBytes(largest)} (with its known answers) and each table chunk row ` +
        `${formatBytes(chunkRowBytes)}; give at least ${formatBytes(opts.fixedBytes + 2 * smallest)} (more makes fewer, larger reads)`,
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
  let chunkRows = Math.min(E, Math.floor((free - maxBlock) / chunkRowBytes));
  if (chunkRows > 512) chunkRows -= chunkRows % 512;
  chunkRows = Math.max(1, chunkRows);
  const chunks = Math.ceil(E / chunkRows);
  const k = kernels();
  let done = 0;
  let bufs: FloatArray[] | null = null;
  let scratch: Uint8Array[] | null = null;
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
    const table = { data: gathered, rows: ids.length, offset: 0, scale: model.rowScales(gathered, ids.length) };
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
      const input = model.sliceJob(s.work.side, table, anchorLocal, r.relation.subarray(s.r0, s.r1), truthLocal, {
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
    if (!view) {
      bufs ??= [0, 1].map(() => (wide ? new Float64Array(chunkRows * d) : new Float32Array(chunkRows * d)));
      if (convert) scratch ??= [0, 1].map(() => new Uint8Array(chunkRows * source.storedRowBytes));
    }
    const read = (c: number) => {
      if (view) return Promise.resolve();
      const a = first + c * chunkRows;
      const b = Math.min(last, a + chunkRows);
      const p = source.readRows(a, b, bufs![c % 2]!.subarray(0, (b - a) * d), scratch?.[c % 2]);
      p.catch(() => {}); // awaited below; a rejection while a chunk is ranked is not unhandled
      return p;
    };
    let pending: Promise<void> | null = read(0);
    try {
      for (let c = 0; c < chunks; c++) {
        await pending;
        opts.call?.check();
        pending = c + 1 < chunks ? read(c + 1) : null;
        const a = first + c * chunkRows;
        const rows = Math.min(last, a + chunkRows) - a;
        const data = view ? view(a, a + rows) : bufs![c % 2]!.subarray(0, rows * d);
        const chunk = { data, rows, offset: a, scale: model.rowScales(data, rows) };
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
          const control = opts.call?.part(at(c + 1, before), 1 / passes);
          await k.rankEmbeddingsAsync(input, p.part, opts.threads, control);
          if (p.part[5 * p.n] !== 0) {
            fail(p.s.work, p.part[5 * p.n]!, p.s.r0 + p.part[5 * p.n + 1]!);
            return;
          }
          for (let i = 0; i < 4 * p.n; i++) p.acc[i] = p.acc[i]! + p.part[i]!;
          before += p.n;
        }
      }
    } finally {
      // A read still running (the call failed or was stopped meanwhile) ends before the call settles.
      await pending?.catch(() => {});
    }
    for (const p of prepared) {
      const w = p.s.work;
      for (let c = 0; c < 4; c++) w.out.set(p.acc.subarray(c * p.n, (c + 1) * p.n), c * w.rows + p.s.r0);
      w.out.set(p.trueScores, 4 * w.rows + p.s.r0);
    }
    done += blockRows;
  }
}
