/**
 * The array formats table (src/io/formats.ts): every extension it lists is read by readArray (the one array of a
 * file) and by the numbers reader of run flags, an entity table read in chunks opens every format whose arrays lie in
 * place, and the errors that list the supported extensions list the table's. Files are written here (a safetensors
 * file byte by byte, from its specification), so a format entry that reads wrongly fails.
 */
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { openEntityTable, writeNpy } from "../src/index";
import { readArray } from "../src/io/array-file";
import { ARRAY_FORMATS, arrayFormat, formatList } from "../src/io/formats";
import { writeNpz } from "../src/io/npz-write";
import { readNumbers } from "../src/run/arrays";
import { tempDir } from "./helpers/temp";

const dir = tempDir("formats");
const values = Float32Array.of(1.5, -2, 3.25, 4, 0.5, 6);

/** A safetensors file: 8-byte little-endian header length, the JSON header, then the data. */
function writeSafetensors(file: string, tensors: Record<string, Float32Array>, rows: number): void {
  let offset = 0;
  const header: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: "F32", shape: [rows, t.length / rows], data_offsets: [offset, offset + t.byteLength] };
    offset += t.byteLength;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(file, Buffer.concat([len, json, ...Object.values(tensors).map((t) => Buffer.from(t.buffer))]));
}

const writers: Record<string, (file: string) => void> = {
  ".npy": (file) => writeNpy(file, values, [3, 2]),
  ".npz": (file) => writeNpz(file, { table: { data: values, shape: [3, 2] } }),
  ".safetensors": (file) => writeSafetensors(file, { table: values }, 3),
};

describe("the array formats table", () => {
  it("lists .npy, .npz and .safetensors, each with a writer here", () => {
    expect(ARRAY_FORMATS.map((f) => f.ext)).toEqual(Object.keys(writers));
    expect(formatList()).toBe(".npy, .npz or .safetensors");
    expect(arrayFormat("X/Y.NPZ")?.ext).toBe(".npz");
    expect(arrayFormat("y.txt")).toBeUndefined();
  });

  it.each(ARRAY_FORMATS.map((f) => [f.ext, f] as const))("%s: readArray and readNumbers read its one array", (ext) => {
    const file = path.join(dir, `table${ext}`);
    writers[ext]!(file);
    const a = readArray(file, "--scores");
    expect(a.shape).toEqual([3, 2]);
    expect(Array.from(a.data)).toEqual(Array.from(values));
    const vector = path.join(dir, `vector${ext}`);
    if (ext === ".npy") writeNpy(vector, values);
    else if (ext === ".npz") writeNpz(vector, { v: { data: values } });
    else writeSafetensors(vector, { v: values }, 6);
    expect(Array.from(readNumbers(vector, "--weights"))).toEqual(Array.from(values));
  });

  it.each(ARRAY_FORMATS.map((f) => [f.ext, f] as const))(
    "%s: an entity table read in chunks opens where its arrays lie in place, else says what to do",
    async (ext, format) => {
      const file = path.join(dir, `entities${ext}`);
      writers[ext]!(file);
      if (format.locate) {
        const table = openEntityTable(file);
        const out = new Float32Array(4);
        await table.readRows(1, 3, out);
        expect(Array.from(out)).toEqual(Array.from(values.subarray(2)));
      } else {
        const inPlace = ARRAY_FORMATS.filter((f) => f.locate).map((f) => f.ext);
        expect(inPlace.length).toBeGreaterThan(0);
        let message = "";
        try {
          openEntityTable(file);
        } catch (e) {
          message = (e as Error).message;
        }
        for (const e of inPlace) expect(message).toContain(e);
        expect(message).toContain(format.why!(file));
      }
    },
  );

  it("a file holding two arrays is refused by readArray, naming them", () => {
    const file = path.join(dir, "two.safetensors");
    writeSafetensors(file, { a: values, b: values }, 3);
    expect(() => readArray(file, "--scores")).toThrow(/holds 2 arrays \("a", "b"\); save exactly one/);
  });
});
