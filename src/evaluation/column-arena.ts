/**
 * Storage for the one-call batches' columns (rankTriples' and rankTriplesConstrained's `out` and `keys`), carved
 * from blocks an evaluator keeps. V8 takes about 5 us to create an ArrayBuffer (measured on Node 20: three per
 * batch were 14 us, 3 % of a 512-row FB15k-237 batch's filtered pass); a block serves many batches, so a batch
 * costs views, not buffers. The columns stay where they were written: TaskBuffer adopts the views and no batch
 * writes into another's part of a block. The thresholds, which no column keeps, use one scratch array.
 */
import type { FloatArray } from "../contract/kernels";

/** The first block's bytes; each later block doubles, up to MAX_BLOCK_BYTES. */
const FIRST_BLOCK_BYTES = 1 << 16;
const MAX_BLOCK_BYTES = 1 << 22;
/** Batches of more rows get thresholds of their own (a scratch array is kept for the evaluator's lifetime). */
const MAX_SCRATCH_ROWS = 1 << 16;

/** Bytes a batch of `rows` takes: six float64 columns, then three int32 key columns, rounded up to 8. */
function batchBytes(rows: number): number {
  return 48 * rows + Math.ceil((12 * rows) / 8) * 8;
}

/** One batch's room: out (six columns of rows float64) and keys (three columns of rows int32), one buffer. */
export interface BatchRoom {
  out: Float64Array;
  keys: Int32Array;
}

function room(buffer: ArrayBuffer, at: number, rows: number): BatchRoom {
  return { out: new Float64Array(buffer, at, 6 * rows), keys: new Int32Array(buffer, at + 48 * rows, 3 * rows) };
}

export class ColumnArena {
  private block: ArrayBuffer | null = null;
  private used = 0;
  private nextBytes = FIRST_BLOCK_BYTES;
  private scratch32: Float32Array | null = null;
  private scratch64: Float64Array | null = null;

  /** Room for one batch of `rows`. A batch larger than a block gets a buffer of its own (the block stays). */
  take(rows: number): BatchRoom {
    const bytes = batchBytes(rows);
    if (bytes > MAX_BLOCK_BYTES) return room(new ArrayBuffer(bytes), 0, rows);
    // A detached block (its buffer transferred) reads 0 bytes long: no batch fits.
    if (this.block === null || this.used + bytes > this.block.byteLength) {
      const size = Math.max(bytes, this.nextBytes);
      this.nextBytes = Math.min(2 * this.nextBytes, MAX_BLOCK_BYTES);
      this.block = new ArrayBuffer(size);
      this.used = 0;
    }
    const at = this.used;
    this.used += bytes;
    return room(this.block, at, rows);
  }

  /**
   * One kernel call on a batch's room and thresholds (of the scores' type): `call` returns null, or a problem, and
   * then the room is given back, as it is when the call throws. The room comes back either way (a problem's message
   * reads the keys it wrote; nothing takes the room before the caller's next batch).
   */
  rankInto<P>(
    rows: number,
    float32: boolean,
    call: (room: BatchRoom, thresholds: FloatArray) => P | null,
  ): { room: BatchRoom; problem: P | null } {
    const taken = this.take(rows);
    let problem: P | null;
    try {
      problem = call(taken, this.thresholds(rows, float32));
    } catch (e) {
      this.giveBack(taken);
      throw e;
    }
    if (problem) this.giveBack(taken);
    return { room: taken, problem };
  }

  /** Gives back `taken`, the last take() (its batch failed: nothing adopted its columns); a buffer of its own is dropped. */
  giveBack(taken: BatchRoom): void {
    if (taken.out.buffer === this.block && taken.keys.byteOffset + taken.keys.byteLength === this.used) {
      this.used = taken.out.byteOffset;
    }
  }

  /** A thresholds array of `rows` of the scores' type, reused by every batch (valid until the next call). */
  thresholds(rows: number, float32: boolean): FloatArray {
    if (rows > MAX_SCRATCH_ROWS) return float32 ? new Float32Array(rows) : new Float64Array(rows);
    if (float32) {
      if (this.scratch32 === null || this.scratch32.length < rows) this.scratch32 = new Float32Array(rows);
      return this.scratch32.subarray(0, rows);
    }
    if (this.scratch64 === null || this.scratch64.length < rows) this.scratch64 = new Float64Array(rows);
    return this.scratch64.subarray(0, rows);
  }

  /** Lets go of the block and the scratch arrays (the evaluator takes no more batches); kept columns stay valid. */
  release(): void {
    this.block = null;
    this.used = 0;
    this.scratch32 = null;
    this.scratch64 = null;
  }
}
