/** backendInfo() on whichever backend this test project selected. */
import { describe, expect, it } from "vitest";

import { backendInfo } from "../src/index";

describe("backendInfo", () => {
  it("reports the backend, SIMD level and threads this test project asked for, and the version", () => {
    const info = backendInfo();
    // vitest.config.mts sets KGRANK_BACKEND / KGRANK_SIMD / KGRANK_THREADS per project; the loader must honour them.
    const wanted = process.env.KGRANK_BACKEND;
    expect(wanted, "run through vitest.config.mts projects").toMatch(/^(native|ts)$/);
    expect(info.backend).toBe(wanted);
    if (process.env.KGRANK_SIMD) expect(info.simd).toBe(process.env.KGRANK_SIMD);
    if (process.env.KGRANK_THREADS) expect(info.threads).toBe(Number(process.env.KGRANK_THREADS));
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.threads).toBeGreaterThanOrEqual(1);
    if (info.backend === "native") {
      expect(info.supportedSimd).toContain(info.simd);
      expect(info.supportedSimd[0]).toBe("scalar");
      expect(info.addonPath).toMatch(/kgrank\.node$/);
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
