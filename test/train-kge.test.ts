/**
 * bench/train_kge.py, the seeded NumPy trainer of DistMult and ComplEx whose models issue 44's speed numbers are
 * measured on: run on the bundled Nations for each model, its output directory is read by `kgrank evaluate
 * --model-dir` as it is (OGB's layout, float32, ComplEx rows as real | imaginary halves), and kgrank's filtered MRR
 * equals an independent float64 reference computed here from the .npy bytes; the trained model beats the untrained
 * one (epoch 0, the same seed's initial values) by a clear margin; two runs with one seed write the same bytes and
 * another seed other ones; bad arguments exit 2 naming the argument. Needs Python with NumPy (skipped with the reason
 * otherwise; CI installs it and fails instead of skipping). The long tier runs it on both backends.
 */
import { readFileSync, readdirSync } from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";

import { backendLabel } from "./helpers/backend";
import { kgrank } from "./helpers/cli";
import { loadBundled } from "./helpers/datasets";
import { describeWith, external, pythonWith } from "./helpers/external";
import { runProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const SCRIPT = path.resolve(__dirname, "..", "bench", "train_kge.py");
const NATIONS = path.resolve(__dirname, "..", "data", "nations");
const python = pythonWith("numpy");
const numpy = external("Python with NumPy", python !== null, "install Debian's python3-numpy (or pip install numpy)");

/** The script's files of a model directory. */
const FILES = ["config.json", "entities.tsv", "entity_embedding.npy", "relation_embedding.npy", "relations.tsv"];

/** A little-endian float32 .npy file's shape and values, read here (not through kgrank's reader). */
function readF32(file: string): { shape: number[]; data: Float32Array } {
  const bytes = readFileSync(file);
  expect(bytes.subarray(0, 6).toString("latin1")).toBe("\x93NUMPY");
  const major = bytes[6]!;
  const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = bytes.subarray(major === 1 ? 10 : 12, start).toString("latin1");
  expect(header).toMatch(/'descr': '<f4'/);
  expect(header).toMatch(/'fortran_order': False/);
  const shape = /'shape': \((\d+), (\d+)\)/.exec(header)!.slice(1).map(Number);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + bytes.length));
  expect(data.length).toBe(shape[0]! * shape[1]!);
  return { shape, data };
}

/**
 * The filtered (train + valid + test), realistic (ties at their mean position) MRR over both sides of Nations' test
 * triples, from the embeddings in float64: DistMult sum(h r t), ComplEx Re(sum(h r conj(t))) on halves.
 */
function referenceMrr(dir: string, model: "distmult" | "complex"): number {
  const ds = loadBundled("nations");
  const E = readF32(path.join(dir, "entity_embedding.npy"));
  const R = readF32(path.join(dir, "relation_embedding.npy"));
  const n = ds.entities.length;
  const w = E.shape[1]!;
  const score = (h: number, r: number, t: number): number => {
    const e = (i: number, k: number) => E.data[i * w + k]!;
    const rel = (k: number) => R.data[r * w + k]!;
    let s = 0;
    if (model === "distmult") for (let k = 0; k < w; k++) s += e(h, k) * rel(k) * e(t, k);
    else {
      const d = w / 2;
      for (let k = 0; k < d; k++) {
        const [hr, hi, rr, ri, tr, ti] = [e(h, k), e(h, d + k), rel(k), rel(d + k), e(t, k), e(t, d + k)];
        s += (hr * rr - hi * ri) * tr + (hr * ri + hi * rr) * ti;
      }
    }
    return s;
  };
  const known = new Set<string>();
  for (const split of [ds.splits.train, ds.splits.valid, ds.splits.test])
    for (let i = 0; i < split.length; i += 3) known.add(`${split[i]},${split[i + 1]},${split[i + 2]}`);
  const test = ds.splits.test;
  let sum = 0;
  let tasks = 0;
  for (let i = 0; i < test.length; i += 3) {
    const [h, r, t] = [test[i]!, test[i + 1]!, test[i + 2]!];
    for (const side of ["head", "tail"] as const) {
      const truth = side === "head" ? h : t;
      const s0 = score(h, r, t);
      let greater = 0;
      let equal = 0;
      for (let c = 0; c < n; c++) {
        if (c === truth) continue;
        const [ch, ct] = side === "head" ? [c, t] : [h, c];
        if (known.has(`${ch},${r},${ct}`)) continue;
        const s = score(ch, r, ct);
        if (s > s0) greater++;
        else if (s === s0) equal++;
      }
      sum += 1 / (1 + greater + equal / 2);
      tasks++;
    }
  }
  return sum / tasks;
}

describeWith(`bench/train_kge.py on Nations, read by kgrank on ${backendLabel}`, python, numpy, (py) => {
  const dir = tempDir("train-kge");
  const train = (out: string, ...args: string[]) => {
    const r = runProcess(py, [SCRIPT, "--dataset-dir", NATIONS, "--out", path.join(dir, out), ...args]);
    expect(r.status, r.stderr).toBe(0);
    return path.join(dir, out);
  };
  const mrr = async (modelDir: string, ...extra: string[]): Promise<number> => {
    const r = await kgrank(
      ["evaluate", "--model-dir", modelDir, "--dataset-dir", NATIONS, "--format", "json", ...extra],
      dir,
    );
    expect(r.status, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as {
      dataset: string;
      results: { both: { realistic: { inverse_harmonic_mean_rank: number } } };
    };
    expect(json.dataset).toBe("nations");
    return json.results.both.realistic.inverse_harmonic_mean_rank;
  };
  const bytes = (d: string) => Object.fromEntries(FILES.map((f) => [f, readFileSync(path.join(d, f))]));

  for (const [model, dim, width] of [
    ["distmult", 16, 16],
    ["complex", 8, 16],
  ] as const) {
    const args = ["--model", model, "--dim", String(dim), "--seed", "7"];

    it(`${model}: kgrank reads the model directory as it is, and its filtered MRR is the float64 reference's`, async () => {
      const out = train(`${model}-trained`, ...args, "--epochs", "40");
      expect(readdirSync(out).sort()).toEqual(FILES);
      const config = JSON.parse(readFileSync(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
      expect(config).toMatchObject({
        model: model === "distmult" ? "DistMult" : "ComplEx",
        hidden_dim: dim,
        double_entity_embedding: model === "complex",
        double_relation_embedding: model === "complex",
        dataset: "nations",
        seed: 7,
        epochs: 40,
      });
      const ds = loadBundled("nations");
      expect(readF32(path.join(out, "entity_embedding.npy")).shape).toEqual([ds.entities.length, width]);
      expect(readF32(path.join(out, "relation_embedding.npy")).shape).toEqual([ds.relations.length, width]);
      expect(readFileSync(path.join(out, "entities.tsv"), "utf8")).toBe(
        ds.entities.map((e, i) => `${i}\t${e}\n`).join(""),
      );
      expect(await mrr(out, "--precision", "float64")).toBeCloseTo(referenceMrr(out, model), 12);
    });

    it(`${model}: the trained model beats the untrained one (epoch 0) by a clear margin`, async () => {
      const untrained = await mrr(train(`${model}-epoch0`, ...args, "--epochs", "0"));
      const trained = await mrr(train(`${model}-epoch40`, ...args, "--epochs", "40"));
      // Nations' random filtered MRR is 0.38 (14 entities); trained models reach 0.6-0.8.
      expect(untrained).toBeLessThan(0.5);
      expect(trained).toBeGreaterThan(untrained + 0.15);
    });

    it(`${model}: one seed writes the same bytes twice, another seed other embeddings`, () => {
      const a = bytes(train(`${model}-a`, ...args, "--epochs", "5"));
      const b = bytes(train(`${model}-b`, ...args, "--epochs", "5"));
      for (const f of FILES) expect(b[f]!.equals(a[f]!), f).toBe(true);
      const other = args.map((x) => (x === "7" ? "8" : x));
      const c = bytes(train(`${model}-c`, ...other, "--epochs", "5"));
      expect(c["entity_embedding.npy"]!.equals(a["entity_embedding.npy"]!)).toBe(false);
      expect(c["relation_embedding.npy"]!.equals(a["relation_embedding.npy"]!)).toBe(false);
    });
  }

  it("refuses bad arguments with exit 2 and a message naming the argument", () => {
    const base = ["--dataset-dir", NATIONS, "--model", "distmult", "--dim", "4", "--epochs", "1", "--seed", "1"];
    const cases: [string[], RegExp][] = [
      [[...base.slice(2), "--dataset-dir", dir], /--dataset-dir .* has no train\.tsv or train\.txt/],
      [[...base, "--dim", "0"], /--dim is 0; it must be an integer of at least 1/],
      [[...base, "--epochs", "-1"], /--epochs is -1; it must be an integer of at least 0/],
      [[...base, "--seed", "-3"], /--seed is -3; it must be a non-negative integer/],
      [[...base, "--lr", "nan"], /--lr is nan; it must be a positive finite number/],
      [[...base.slice(0, 2), "--model", "transe", ...base.slice(4)], /--model: invalid choice: 'transe'/],
    ];
    for (const [argv, message] of cases) {
      const r = runProcess(py, [SCRIPT, ...argv, "--out", path.join(dir, "bad")]);
      expect(r.status, argv.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(readdirSync(dir)).not.toContain("bad");
  });
});
