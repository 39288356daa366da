/**
 * The entity embeddings of a PyTorch-BigGraph checkpoint, read partition by partition within a memory budget: a
 * partition that fits in its share of the budget is read whole once and kept (the least recently used dropped first
 * when they no longer fit); a larger one is read in chunks of rows as it is streamed, and single rows where a query
 * needs them. h5wasm reads only the HDF5 chunks a row range touches. An entity shard's tables (`own`: its range of
 * global ids) keep only the partitions inside that range whole: the rows of the others are read one by one.
 */
import type { PbgCheckpoint, PbgEntityType } from "./checkpoint";
import { type H5Dataset, H5File } from "./hdf5";

interface Partition {
  readonly type: PbgEntityType;
  readonly index: number;
  readonly rows: number;
  readonly file: H5File;
  readonly data: H5Dataset;
}

export class PbgEmbeddings {
  private readonly parts: Partition[] = [];
  private readonly kept = new Map<Partition, Float32Array>();
  private keptBytes = 0;

  private constructor(
    readonly ckpt: PbgCheckpoint,
    /** Bytes of raw partitions kept in memory at most. */
    private readonly keepBytes: number,
    /** Rows read per chunk of a streamed partition. */
    readonly chunkRows: number,
    /** An entity shard's global ids [begin, end): only partitions inside it are kept whole. Null: every partition. */
    private readonly own: readonly [number, number] | null,
  ) {}

  /** Opens every partition's file (kept open until close()). */
  static async open(
    ckpt: PbgCheckpoint,
    budgetBytes: number,
    own: readonly [number, number] | null = null,
  ): Promise<PbgEmbeddings> {
    const d = ckpt.dimension;
    const t = new PbgEmbeddings(
      ckpt,
      Math.floor(budgetBytes / 4),
      Math.max(1, Math.floor(budgetBytes / 16 / (4 * d))),
      own,
    );
    try {
      for (const type of ckpt.types) {
        for (let p = 0; p < type.partitions.length; p++) {
          const file = await H5File.open(ckpt.embeddingsFile(type.name, p), "--model-dir");
          const data = file.dataset("embeddings", `partition ${p} of entity type "${type.name}"`);
          t.parts.push({ type, index: p, rows: type.partitions[p]!, file, data });
        }
      }
    } catch (e) {
      t.close();
      throw e;
    }
    return t;
  }

  close(): void {
    for (const p of this.parts) p.file.close();
    this.kept.clear();
    this.keptBytes = 0;
  }

  /** The partition holding global id `id`, and the id's row in it. */
  private locate(id: number): [Partition, number] {
    for (const p of this.parts) {
      const start = p.type.partitionOffsets[p.index]!;
      if (id >= start && id < start + p.rows) return [p, id - start];
    }
    throw new RangeError(`entity ${id} is outside the checkpoint's ${this.ckpt.numEntities} entities`);
  }

  /** A whole partition when it fits in the share kept, else null. */
  private whole(p: Partition): Float32Array | null {
    const have = this.kept.get(p);
    if (have) {
      this.kept.delete(p); // most recently used last
      this.kept.set(p, have);
      return have;
    }
    const bytes = p.rows * this.ckpt.dimension * 4;
    if (bytes > this.keepBytes) return null;
    const start = p.type.partitionOffsets[p.index]!;
    if (this.own && !(start >= this.own[0] && start + p.rows <= this.own[1])) return null; // another shard's
    for (const [q, rows] of this.kept) {
      if (this.keptBytes + bytes <= this.keepBytes) break;
      this.kept.delete(q);
      this.keptBytes -= rows.byteLength;
    }
    const rows = p.data.rowsF32(0, p.rows);
    this.kept.set(p, rows);
    this.keptBytes += bytes;
    return rows;
  }

  /** The rows of the given global ids, row-major (ids.length x dimension). */
  rowsOf(ids: ArrayLike<number>): Float32Array {
    const d = this.ckpt.dimension;
    const out = new Float32Array(ids.length * d);
    for (let i = 0; i < ids.length; i++) {
      const [p, r] = this.locate(ids[i]!);
      const whole = this.whole(p);
      out.set(whole ? whole.subarray(r * d, (r + 1) * d) : p.data.rowsF32(r, r + 1), i * d);
    }
    return out;
  }

  /**
   * A type's rows in chunks, partition by partition: [global id of the chunk's first row, its rows, row count]; only
   * those of global ids [range[0], range[1]) when a range is given (an entity shard's).
   */
  *chunks(
    type: PbgEntityType,
    range: readonly [number, number] | null = null,
  ): Generator<[number, Float32Array, number]> {
    const d = this.ckpt.dimension;
    for (const p of this.parts) {
      if (p.type !== type) continue;
      const start = type.partitionOffsets[p.index]!;
      const lo = range ? Math.max(0, range[0] - start) : 0;
      const hi = range ? Math.min(p.rows, range[1] - start) : p.rows;
      if (lo >= hi) continue;
      const whole = this.whole(p);
      for (let r = lo; r < hi; r += this.chunkRows) {
        const end = Math.min(hi, r + this.chunkRows);
        yield [start + r, whole ? whole.subarray(r * d, end * d) : p.data.rowsF32(r, end), end - r];
      }
    }
  }
}
