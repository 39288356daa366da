/**
 * Determinism: the same evaluation (UMLS, seeded scores with ties and NaN, filtered, both sides, bootstrap
 * intervals, a Monte-Carlo estimate) run in fresh processes under every backend setting: native at each SIMD level
 * with 1 and 2 threads must agree bit for bit; the TypeScript fallback must give identical ranks and metrics within
 * 1e-12 relative. Runs scripts/determinism-run.cjs against dist/ (rebuilt from src/ when stale by the globalSetup,
 * test/helpers/build-dist.ts).
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
const script = path.join(root, "scripts", "determinism-run.cjs");

function run(env: Record<string, string>) {
  const out = execFileSync(process.execPath, [script], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out) as {
    backend: { backend: string; simd: string; threads: number; supportedSimd?: string[] };
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

  const supported: string[] = reference.backend.supportedSimd ?? [];

  it("asking for a SIMD level this CPU lacks is a clear error", () => {
    const missing = levels.find((l) => !supported.includes(l))!;
    let stderr = "";
    try {
      run({ KGRANK_BACKEND: "native", KGRANK_SIMD: missing, KGRANK_THREADS: "1" });
    } catch (e) {
      stderr = String((e as { stderr?: string }).stderr);
    }
    expect(stderr, `KGRANK_SIMD=${missing}`).toMatch(/not supported|unsupported/i);
  });

  for (const simd of levels) {
    for (const threads of ["1", "2"]) {
      // A level the CPU lacks cannot be checked here: skipped, with the reason in the name.
      const title = `native ${simd} with ${threads} thread(s) is bit-identical`;
      it.skipIf(!supported.includes(simd))(
        supported.includes(simd) ? title : `${title} [skipped: this CPU lacks ${simd}]`,
        () => {
          const out = run({ KGRANK_BACKEND: "native", KGRANK_SIMD: simd, KGRANK_THREADS: threads });
          expect(out.backend.simd).toBe(simd);
          const { backend: _b, ...rest } = out;
          const { backend: _r, ...want } = reference;
          expect(rest).toEqual(want);
        },
      );
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
