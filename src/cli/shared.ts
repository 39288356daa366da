/** Helpers shared by the kgrank commands: option parsers, output, datasets, arrays from files. */
import * as path from "node:path";

import { Option } from "commander";

import { KgrankInputError } from "../checks/errors";
import type { RankResults } from "../evaluation/results";
import { writeFileAtomic } from "../io/atomic";
import { type Dataset, loadDataset, loadDatasetAsync, type Split, SPLITS } from "../io/datasets";
import { readRegularFile } from "../io/files";
import { type NpyData, readNpy } from "../io/npy";
import { readNpz } from "../io/npz";
import { readSafetensors } from "../io/safetensors";
import { formatDims, quoted, quotedList } from "../text/suggest";

import { filteredCandidateCounts } from "../evaluation/candidate-counts";
import { FORMATS } from "../run/format";

export interface Out {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Work done so far (e.g. a queue worker reports it through its job); called beside the progress bar. */
  progress?: (done: number, total: number) => void;
}

export const SIDES = ["head", "tail"] as const;
export type TaskSide = (typeof SIDES)[number];

// ---- option parsers ----------------------------------------------------------------------------------------------

/*
 * Flag parsers throw a KgrankInputError naming the flag, not commander's InvalidArgumentError: it reaches main()'s
 * catch as it is and prints as every other CLI error, `kgrank: --bootstrap: must be ...` (commander's own format,
 * "error: option '--bootstrap <n>' argument '1' is invalid. ...", named the flag twice and differed from the rest).
 */
export function intArg(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (v: string) => {
    const n = Number(v);
    if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new KgrankInputError(name, `must be an integer ${range}, got ${quoted(v)}`);
    }
    return n;
  };
}

export function listArg(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function ksArg(v: string): number[] {
  return listArg(v).map((s) => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new KgrankInputError("--ks", `takes positive integers separated by commas, got ${quoted(s)}`);
    return n;
  });
}

export function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

export const formatOption = () =>
  new Option("--format <format>", "output format").choices(FORMATS as string[]).default("table");
export const outputOption = () =>
  new Option("-o, --output <file>", "write the output to FILE (atomically: temporary name, then rename)").argParser(
    (v: string) => {
      if (v.trim() === "")
        throw new KgrankInputError("--output", "needs a file name (leave it out to print to stdout)");
      return v;
    },
  );
export const quietOption = () => new Option("-q, --quiet", "no progress bar and no notes on stderr");
export const ksOption = () => new Option("--ks <list>", "cut-offs of Hits@k (default 1,3,5,10)").argParser(ksArg);

// ---- shared helpers ----------------------------------------------------------------------------------------------

export function emit(out: Out, text: string, output: string | undefined, quiet: boolean | undefined): void {
  const body = text.endsWith("\n") ? text : text + "\n";
  if (output) {
    writeFileAtomic(output, body, "--output");
    if (!quiet) out.stderr(`wrote ${output}\n`);
  } else {
    out.stdout(body);
  }
}

export function datasetFrom(opts: { dataset?: string; datasetDir?: string }): Dataset {
  return loadDataset(opts.dataset, { datasetDir: opts.datasetDir });
}

/** datasetFrom off the event loop (a queue worker keeps renewing its job's lock while FB15k-237 loads). */
export function datasetFromAsync(opts: { dataset?: string; datasetDir?: string }): Promise<Dataset> {
  return loadDatasetAsync(opts.dataset, { datasetDir: opts.datasetDir });
}

export function splitArg(v: string): Split {
  if (v !== "valid" && v !== "test" && v !== "train")
    throw new KgrankInputError("--split", `must be train, valid or test, got ${quoted(v)}`);
  return v;
}

/** The splits that filter: a comma list of train, valid, test, or "none". The evaluated split is always added. */
export function filterSplits(list: string[], evaluated: Split): Split[] {
  if (list.length === 1 && list[0] === "none") return [];
  const out = new Set<Split>();
  for (const s of list) {
    if (!(SPLITS as readonly string[]).includes(s)) {
      throw new KgrankInputError(
        "--filter",
        `${quoted(s)} is not a split; use a comma list of train, valid, test (or "none" for raw ranks)`,
      );
    }
    out.add(s as Split);
  }
  out.add(evaluated);
  return SPLITS.filter((s) => out.has(s));
}

/** One float array from a .npy, .npz or .safetensors file (the latter two must hold exactly one array). */
export function readArray(file: string, argument: string): NpyData {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npz" || ext === ".safetensors") {
    const all = ext === ".npz" ? readNpz(file, argument) : readSafetensors(file, argument);
    const names = Object.keys(all);
    if (names.length !== 1)
      throw new KgrankInputError(
        argument,
        `${file} holds ${names.length} arrays (${quotedList(names)}); save exactly one`,
      );
    return all[names[0]!]!;
  }
  return readNpy(file, argument);
}

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
    if (a.dtype === "f2" || a.dtype === "f4" || a.dtype === "f8") return a.data;
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

export function nanIfMissing(f: () => number): number {
  try {
    return f();
  } catch {
    return NaN;
  }
}

export function safeGet(r: RankResults, key: string): number | undefined {
  try {
    return r.get(key);
  } catch {
    return undefined;
  }
}

export function safeExpected(r: RankResults, key: string): number | undefined {
  try {
    return r.expected(key);
  } catch {
    return undefined;
  }
}

// ---- metrics -----------------------------------------------------------------------------------------------------

/** Numbers from .npy, .txt (one per line) or .json (an array). */
export function readNumbers(file: string, argument: string): Float64Array {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".npy" || ext === ".npz" || ext === ".safetensors") {
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
      const line = raw.trim();
      if (line === "") return;
      const v = Number(line);
      if (!Number.isFinite(v))
        throw new KgrankInputError(
          argument,
          `${file} line ${i + 1}: "${line.slice(0, 40)}" is not a number (one rank per line)`,
        );
      outN.push(v);
    });
  if (outN.length === 0) throw new KgrankInputError(argument, `${file} holds no numbers`);
  return Float64Array.from(outN);
}

// ---- adjust and expectations -------------------------------------------------------------------------------------

export function candidateCounts(
  ds: Dataset,
  split: Split,
  filter: string[],
): { head: Float64Array; tail: Float64Array; both: Float64Array; setting: string } {
  const evaluated = ds.splits[split];
  const fs = filterSplits(filter, split);
  const c = fs.length
    ? filteredCandidateCounts(
        evaluated,
        fs.map((s) => ds.splits[s]),
        ds.numEntities,
        ds.numRelations,
      )
    : {
        head: new Float64Array(evaluated.length / 3).fill(ds.numEntities),
        tail: new Float64Array(evaluated.length / 3).fill(ds.numEntities),
      };
  const both = new Float64Array(c.head.length * 2);
  both.set(c.head, 0);
  both.set(c.tail, c.head.length);
  return { ...c, both, setting: fs.length ? `filtered by ${fs.join("+")}` : "unfiltered" };
}
