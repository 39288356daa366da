/**
 * Determinism (issue 8): the same evaluation (UMLS, seeded scores with ties and NaN, filtered, both sides, bootstrap
 * intervals, a Monte-Carlo estimate) run in fresh processes under every backend setting: native at each SIMD level
 * with 1 and 2 threads must agree bit for bit; the TypeScript fallback must give identical ranks and metrics within
 * 1e-12 relative. Runs scripts/determinism-run.cjs against dist/ (built by `npm ci` / `npm run build:ts`).
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
const script = path.join(root, "scripts", "determinism-run.cjs");

function run(env: Record<string, string>) {
  const out = execFileSync(process.execPath, [script], { env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return JSON.parse(out) as {
    backend: { backend: string; simd: string; threads: number };
    ranks: unknown;
    values: Record<string, number>;
    intervals: unknown;
    estimate: unknown;
  };
}

function closeDeep(a: unknown, b: unknown, where: string): void {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(b)) return expect(a, where).toBeNaN();
    const err = b === 0 ? Math.abs(a) : Math.abs(a - b) / Math.abs(b);
    expect(err, `${where}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-12);
    return;
  }
  if (a && typeof a === "object") {
    expect(Object.keys(b as object).sort(), where).toEqual(Object.keys(a).sort());
    for (const k of Object.keys(a)) closeDeep((a as never)[k], (b as never)[k], `${where}.${k}`);
    return;
  }
  expect(a, where).toEqual(b);
}

describe("determinism across runs, thread counts, SIMD levels and backends", () => {
  const reference = run({ KGRANK_BACKEND: "native", KGRANK_SIMD: "", KGRANK_THREADS: "2" });
  const levels = ["scalar", "avx2", "avx512", "neon"];

  it("a second run in a new process is identical", () => {
    expect(run({ KGRANK_BACKEND: "native", KGRANK_SIMD: "", KGRANK_THREADS: "2" })).toEqual(reference);
  });

  for (const simd of levels) {
    for (const threads of ["1", "2"]) {
      it(`native ${simd} with ${threads} thread(s) is bit-identical (when the CPU has ${simd})`, () => {
        let out;
        try {
          out = run({ KGRANK_BACKEND: "native", KGRANK_SIMD: simd, KGRANK_THREADS: threads });
        } catch (e) {
          // Asking for a level the CPU lacks is a clear error: that is the only accepted failure.
          expect(String((e as { stderr?: string }).stderr)).toMatch(/not supported|unsupported/i);
          return;
        }
        expect(out.backend.simd).toBe(simd);
        const { backend: _b, ...rest } = out;
        const { backend: _r, ...want } = reference;
        expect(rest).toEqual(want);
      });
    }
  }

  it("the TypeScript fallback gives identical ranks and metrics within 1e-12", () => {
    const ts = run({ KGRANK_BACKEND: "ts", KGRANK_SIMD: "", KGRANK_THREADS: "" });
    expect(ts.backend.backend).toBe("ts");
    expect(ts.ranks).toEqual(reference.ranks);
    closeDeep(ts.values, reference.values, "values");
    closeDeep(ts.intervals, reference.intervals, "intervals");
    closeDeep(ts.estimate, reference.estimate, "estimate");
  });
});
