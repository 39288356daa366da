/** backendInfo() on whichever backend this test project selected. */
import { describe, expect, it } from "vitest";

import { allKernels, kernels, nativeAddon } from "../src/backend/backend";
import { backendInfo } from "../src/index";

describe("backendInfo", () => {
  it("reports the backend, SIMD level and threads this test project asked for, and the version", () => {
    const info = backendInfo();
    // vitest.config.mts sets KGRANK_BACKEND / KGRANK_SIMD / KGRANK_THREADS per project; the loader must honour them.
    const wanted = process.env.KGRANK_BACKEND;
    expect(wanted, "run through vitest.config.mts projects").toMatch(/^(native|wasm|ts)$/);
    expect(info.backend).toBe(wanted);
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.threads).toBeGreaterThanOrEqual(1);
    if (info.backend === "native") {
      expect(info.simd).toBe(process.env.KGRANK_SIMD);
      expect(info.threads).toBe(Number(process.env.KGRANK_THREADS));
      expect(info.supportedSimd).toContain(info.simd);
      expect(info.supportedSimd[0]).toBe("scalar");
      expect(info.addonPath).toMatch(/kgrank\.node$/);
    } else if (info.backend === "wasm") {
      expect(info).toMatchObject({ simd: "simd128", threads: 1, tier: "wasm", supportedSimd: [] });
      expect(info.wasmPath).toMatch(/kgrank\.wasm$/);
    } else {
      expect(info.simd).toBe("none");
    }
  });

  it("returns a copy that callers cannot use to change the selection", () => {
    const a = backendInfo();
    a.supportedSimd.push("neon");
    expect(backendInfo().supportedSimd).not.toContain("neon");
  });
});

describe("one ISA dispatch table (native/core/simd.cpp), KGRANK_SIMD honoured by every kernel family", () => {
  const info = backendInfo();
  const addon = nativeAddon();
  const code = { scalar: 0, avx2: 1, avx512: 2, neon: 3 } as const;
  const ranks = Float64Array.from({ length: 50_000 }, (_, i) => 1 + (i % 997));
  const ks = Float64Array.of(1, 10);

  it.runIf(info.backend === "native")("the aggregate and the counting run the kernels of this project's level", () => {
    const level = code[info.simd as keyof typeof code];
    // First run every other supported level, so the hook cannot pass by default.
    for (const k of allKernels(1))
      if (k.backend === "native" && k.simd !== info.simd) k.aggregateRanks(ranks, null, ks, ks, 7);
    for (const k of allKernels(1)) if (k.backend === "native" && k.simd !== info.simd) k.generateRanks(ranks, 1, 0);
    kernels().aggregateRanks(ranks, null, ks, ks, 7);
    kernels().generateRanks(ranks, 1, 0);
    kernels().countScores(ranks, 1000, ranks.subarray(0, 50), {
      greater: new Float64Array(50),
      equal: new Float64Array(50),
      nan: new Float64Array(50),
    });
    const d = addon!.dispatchInfo(level);
    expect(d.last.rankSums).toBe(d.variants.rankSums);
    expect(d.last.count).toBe(d.variants.count);
    expect(d.last.generateRanks).toBe(d.variants.generateRanks);
    expect(d.variants.count).toBe(info.simd);
    if (info.simd === "scalar") {
      expect(d.last.rankSums).toBe("scalar");
      expect(d.last.generateRanks).toBe("scalar");
      expect(d.last.count).toBe("scalar");
    }
  });

  it.runIf(info.backend === "native")("the scalar level's table holds only scalar kernels", () => {
    const d = addon!.dispatchInfo(code.scalar);
    expect(d.variants).toEqual({
      count: "scalar",
      read: "scalar",
      answers: "scalar",
      rankSums: "scalar",
      generateRanks: "scalar",
    });
  });
});
