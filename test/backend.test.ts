/** backendInfo() on whichever backend this test project selected. */
import { describe, expect, it } from "vitest";

import { backendInfo } from "../src/index";

describe("backendInfo", () => {
  it("reports backend, simd, threads and version", () => {
    const info = backendInfo();
    expect(["native", "ts"]).toContain(info.backend);
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
