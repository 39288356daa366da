/**
 * Labelled triples of a dataset's splits to PyKEEN's ids without keeping a string per row: each piece of TSV is
 * split and its labels interned at once (native/core/intern.cpp on the native backend, the TypeScript twin below on
 * the fallback; twin of each other), then finish() sorts the training labels and maps every split. The same ids as labelMaps +
 * mapTriples (./tsv.ts) over the rows: entities are the sorted distinct heads and tails of train, relations the
 * sorted distinct relations of train (by code point, Python's sorted()); a valid or test row with a label not in
 * those is dropped and counted. Memory: the distinct labels once and 12 bytes per row (the fallback also holds a
 * piece's rows while it interns them).
 */
import { isAscii } from "node:buffer";

import { nativeParse, type NativeTripleInterner } from "../backend/backend";
import { nativeParsers } from "../backend/parsers";
import { byCodePoint, splitTsvBytesTs } from "./tsv";

interface InternedSplits {
  /** Entity labels in id order (sorted by code point). */
  entityLabels: string[];
  relationLabels: string[];
  /** Per split (train, valid, test): t x 3 (head, relation, tail) ids. */
  triples: [Int32Array, Int32Array, Int32Array];
  /** Rows per split dropped for a label not in train (0 for train). */
  dropped: [number, number, number];
}

export interface TripleTable {
  /** Splits whole TSV lines (errors as splitTsvBytes, naming `argument`) and appends their rows to `split`. */
  add(split: 0 | 1 | 2, bytes: Buffer, argument: string): void;
  /** Rows added to `split` so far. */
  rows(split: 0 | 1 | 2): number;
  /** Sorts the training labels and maps the rows; the table is spent. */
  finish(): InternedSplits;
}

/** A table on the backend in use. */
export function tripleTable(): TripleTable {
  const interner = nativeParsers()?.tripleInterner();
  return interner ? nativeTable(interner) : new TsTripleTable();
}

/** Labels from UTF-8 bytes and n + 1 offsets: one decode and slices when ASCII, else one decode per label. */
function decodeLabels(bytes: Uint8Array, offsets: Float64Array): string[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = offsets.length - 1;
  const labels = new Array<string>(n);
  if (isAscii(buf)) {
    const text = buf.toString("latin1");
    for (let k = 0; k < n; k++) labels[k] = text.slice(offsets[k]!, offsets[k + 1]!);
  } else {
    for (let k = 0; k < n; k++) labels[k] = buf.toString("utf8", offsets[k]!, offsets[k + 1]!);
  }
  return labels;
}

function nativeTable(interner: NativeTripleInterner): TripleTable {
  const counts = [0, 0, 0];
  return {
    add(split, bytes, argument) {
      counts[split]! += nativeParse(argument, () => interner.add(split, bytes));
    },
    rows: (split) => counts[split]!,
    finish() {
      const r = interner.finish();
      return {
        entityLabels: decodeLabels(r.entityBytes, r.entityOffsets),
        relationLabels: decodeLabels(r.relationBytes, r.relationOffsets),
        triples: r.triples,
        dropped: r.dropped,
      };
    },
  };
}

/** Labels interned in first-seen order, with whether each occurs (in its role) in train. */
class Labels {
  readonly ids = new Map<string, number>();
  readonly labels: string[] = [];
  readonly inTrain: boolean[] = [];
  intern(label: string, train: boolean): number {
    let id = this.ids.get(label);
    if (id === undefined) {
      id = this.labels.length;
      this.ids.set(label, id);
      this.labels.push(label);
      this.inTrain.push(train);
    } else if (train) this.inTrain[id] = true;
    return id;
  }
  /** The training labels sorted, and first-seen id -> sorted id (-1 when not in train). */
  sorted(): { labels: string[]; remap: Int32Array } {
    const labels = this.labels.filter((_, k) => this.inTrain[k]).sort(byCodePoint);
    const remap = new Int32Array(this.labels.length).fill(-1);
    for (let k = 0; k < labels.length; k++) remap[this.ids.get(labels[k]!)!] = k;
    return { labels, remap };
  }
}

/** The TypeScript twin of native/core/intern.cpp. */
class TsTripleTable implements TripleTable {
  private readonly entities = new Labels();
  private readonly relations = new Labels();
  private readonly ids: Int32Array[] = [new Int32Array(3072), new Int32Array(3072), new Int32Array(3072)];
  private readonly used = [0, 0, 0];

  add(split: 0 | 1 | 2, bytes: Buffer, argument: string): void {
    const rows = splitTsvBytesTs(bytes, argument);
    const train = split === 0;
    let ids = this.ids[split]!;
    let k = this.used[split]!;
    if (k + rows.length * 3 > ids.length) {
      const grown = new Int32Array(Math.max(ids.length * 2, k + rows.length * 3));
      grown.set(ids.subarray(0, k));
      ids = this.ids[split] = grown;
    }
    for (const [h, r, t] of rows) {
      ids[k++] = this.entities.intern(h, train);
      ids[k++] = this.relations.intern(r, train);
      ids[k++] = this.entities.intern(t, train);
    }
    this.used[split] = k;
  }

  rows(split: 0 | 1 | 2): number {
    return this.used[split]! / 3;
  }

  finish(): InternedSplits {
    const e = this.entities.sorted();
    const r = this.relations.sorted();
    const triples = [0, 1, 2].map((s) => {
      const v = this.ids[s]!;
      let w = 0;
      for (let i = 0; i < this.used[s]!; i += 3) {
        const h = e.remap[v[i]!]!;
        const rel = r.remap[v[i + 1]!]!;
        const t = e.remap[v[i + 2]!]!;
        if (h < 0 || rel < 0 || t < 0) continue;
        v[w++] = h;
        v[w++] = rel;
        v[w++] = t;
      }
      return v.slice(0, w);
    }) as [Int32Array, Int32Array, Int32Array];
    return {
      entityLabels: e.labels,
      relationLabels: r.labels,
      triples,
      dropped: triples.map((t, s) => this.used[s]! / 3 - t.length / 3) as [number, number, number],
    };
  }
}
