/** Arrays and numbers from the files a run is given (the array formats of src/io/formats.ts, .txt, .json), checked as flags. */
import * as path from "node:path";

import { KgrankInputError } from "../checks/errors";
import type { Dataset } from "../io/datasets";
import { readRegularFile } from "../io/files";
import { readArray } from "../io/array-file";
import { arrayFormat } from "../io/formats";
import type { NpyData } from "../io/npy";
import { formatDims } from "../text/suggest";

/** Evaluated triples as ids (rows x 3, integer .npy), e.g. PyKEEN's `mapped_triples` in the order of its score rows. */
export function readIdTriples(file: string, argument: string, ds: Dataset): Int32Array {
  const a = readArray(file, argument);
  if (!/^[iub]/.test(a.dtype))
    throw new KgrankInputError(argument, `dtype ${a.dtype} is not an integer type: save id triples as int32 or int64`);
  expectShape(a, [-1, 3], argument, "one (head, relation, tail) id row per score row");
  const out = new Int32Array(a.data.length);
  for (let i = 0; i < out.length; i++) {
    const v = a.data[i]!;
    const bound = i % 3 === 1 ? ds.numRelations : ds.numEntities;
    if (v < 0 || v >= bound) {
      throw new KgrankInputError(
        argument,
        `row ${Math.floor(i / 3)}: ${i % 3 === 1 ? "relation" : "entity"} id ${v} is outside [0, ${bound}) of ${ds.name}'s training ids`,
      );
    }
    out[i] = v;
  }
  return out;
}

export function floatScores(a: NpyData, argument: string): Float32Array | Float64Array {
  if (a.data instanceof Float32Array || a.data instanceof Float64Array) {
    if (a.dtype === "f2" || a.dtype === "bf16" || a.dtype === "f4" || a.dtype === "f8") return a.data;
  }
  throw new KgrankInputError(
    argument,
    `dtype ${a.dtype} is not a float type: save scores as float32 or float64 (numpy: scores.astype("float32"))`,
  );
}

export function expectShape(a: NpyData, want: number[], argument: string, what: string): void {
  const ok = a.shape.length === want.length && a.shape.every((d, i) => want[i] === -1 || d === want[i]);
  if (!ok) {
    throw new KgrankInputError(
      argument,
      `shape (${formatDims(a.shape)}) does not match (${want.map((d) => (d === -1 ? "K" : d)).join(", ")}): ${what}`,
    );
  }
}

/** A plain decimal number as `--ranks-out` and numpy's `fmt="%.1f"` write it: no sign, exponent, hex or spaces. */
export const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** A number as numpy's np.savetxt writes it (default `%.18e`, or `%d` / `%.1f`): a decimal, an optional exponent. */
const SAVETXT_NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * Numbers from .npy, .txt (one per line) or .json (an array). With `decimal`, a .txt line holds one number as
 * np.savetxt writes it (SAVETXT_NUMBER: no sign, hex, digit separators or spaces) and nothing else; without, anything
 * JavaScript's Number reads as finite.
 */
export function readNumbers(file: string, argument: string, decimal = false): Float64Array {
  const ext = path.extname(file).toLowerCase();
  if (arrayFormat(file)) {
    const a = readArray(file, argument);
    if (a.shape.length > 2 || (a.shape.length === 2 && a.shape[1] !== 1)) {
      throw new KgrankInputError(
        argument,
        `shape (${formatDims(a.shape)}) is not a vector: save one number per task (shape (n,))`,
      );
    }
    return Float64Array.from(a.data);
  }
  const text = readRegularFile(file, argument).toString("utf8");
  if (ext === ".json") {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new KgrankInputError(argument, `${file} is not valid JSON (${(e as Error).message.slice(0, 120)})`);
    }
    if (!Array.isArray(v) || v.some((x) => typeof x !== "number"))
      throw new KgrankInputError(argument, `${file} must hold a JSON array of numbers`);
    return Float64Array.from(v as number[]);
  }
  const outN: number[] = [];
  text
    .replace(/^\uFEFF/, "")
    .split("\n")
    .forEach((raw, i) => {
      const line = decimal ? raw.replace(/\r$/, "") : raw.trim();
      if (line.trim() === "") return;
      if (decimal && !SAVETXT_NUMBER.test(line))
        throw new KgrankInputError(
          argument,
          `${file} line ${i + 1}: "${line.slice(0, 40)}" is not a decimal number (one per line, like 2, 2.5 or 2.5e+00, as np.savetxt writes them)`,
        );
      const v = Number(line);
      if (!Number.isFinite(v))
        throw new KgrankInputError(
          argument,
          `${file} line ${i + 1}: "${line.slice(0, 40)}" is not a number (one per line)`,
        );
      outN.push(v);
    });
  if (outN.length === 0) throw new KgrankInputError(argument, `${file} holds no numbers`);
  return Float64Array.from(outN);
}
