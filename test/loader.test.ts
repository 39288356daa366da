/**
 * Backend selection as a user sees it: each case runs in a fresh Node process with its own environment, against
 * the compiled package (dist/), so loader behaviour, warnings and errors are observed from outside. Runs once
 * (not per backend): it chooses the backend itself.
 */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { runProcess } from "./helpers/process";

const root = path.resolve(__dirname, "..");

/** `node -e code` in the repository root, without this project's backend variables unless `env` gives them. */
function runNode(code: string, env: Record<string, string | undefined>) {
  const clean: Record<string, string | undefined> = {};
  for (const k of [
    "KGRANK_BACKEND",
    "KGRANK_SIMD",
    "KGRANK_THREADS",
    "KGRANK_ADDON_PATH",
    "KGRANK_BUILD_FROM_SOURCE",
    "KGRANK_WASM_PATH",
  ])
    clean[k] = undefined;
  return runProcess(process.execPath, ["-e", code], { cwd: root, env: { ...clean, ...env }, timeout: 60_000 });
}

const printInfo = `console.log(JSON.stringify(require("./dist/cjs/index.js").backendInfo()))`;

describe("backend selection by environment", () => {
  it("KGRANK_BACKEND=ts forces the fallback without a warning", () => {
    const r = runNode(printInfo, { KGRANK_BACKEND: "ts" });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).backend).toBe("ts");
    expect(r.stderr).not.toMatch(/Warning/);
  });

  it("rejects an unknown KGRANK_BACKEND with a message naming the accepted values", () => {
    const r = runNode(printInfo, { KGRANK_BACKEND: "gpu" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/KGRANK_BACKEND=gpu is not valid: use native, wasm, ts or auto/);
  });

  it("falls back with exactly one aggregated warning when the addon cannot be found", () => {
    const missing = path.join(root, "no-such-dir", "kgrank.node");
    const code = `${printInfo}; require("./dist/cjs/index.js"); console.log("again")`;
    const noWasm = path.join(root, "no-such-dir", "kgrank.wasm");
    const r = runNode(code, { KGRANK_ADDON_PATH: missing, KGRANK_WASM_PATH: noWasm });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[0]!).backend).toBe("ts");
    expect(r.stderr.match(/KGRANK_FALLBACK|pure-TypeScript fallback/g)?.length).toBeGreaterThanOrEqual(1);
    expect(r.stderr.split("pure-TypeScript fallback").length - 1).toBe(1);
    expect(r.stderr).toContain(`${missing}: not built`);
    expect(r.stderr).toContain(`${noWasm}: not built (npm run build:wasm)`);
  });

  it("KGRANK_BACKEND=native fails loudly when the addon cannot load", () => {
    const r = runNode(printInfo, { KGRANK_BACKEND: "native", KGRANK_ADDON_PATH: path.join(root, "package.json") });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/KGRANK_BACKEND=native but the native addon could not be loaded/);
    expect(r.stderr).toMatch(/npm run build:native/);
  });

  it("KGRANK_BACKEND=native loads the addon at its best SIMD level by default", () => {
    const r = runNode(printInfo, { KGRANK_BACKEND: "native" });
    expect(r.status).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info.backend).toBe("native");
    expect(info.simd).toBe(info.supportedSimd[info.supportedSimd.length - 1]);
  });

  it("KGRANK_SIMD=scalar forces the lowest level and KGRANK_THREADS sets threads", () => {
    const r = runNode(printInfo, { KGRANK_SIMD: "scalar", KGRANK_THREADS: "1" });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ backend: "native", simd: "scalar", threads: 1 });
  });

  it("asking for an unsupported or unknown SIMD level is a clear error", () => {
    const supported: string[] = JSON.parse(runNode(printInfo, {}).stdout).supportedSimd;
    const unsupported = ["avx512", "neon", "avx2"].find((l) => !supported.includes(l))!;
    const r = runNode(printInfo, { KGRANK_SIMD: unsupported });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`KGRANK_SIMD=${unsupported} is not supported by this CPU or build`);
    const bogus = runNode(printInfo, { KGRANK_SIMD: "sse9" });
    expect(bogus.status).not.toBe(0);
    expect(bogus.stderr).toContain("KGRANK_SIMD=sse9 is not a SIMD level");
  });

  it("rejects a bad KGRANK_THREADS", () => {
    const r = runNode(printInfo, { KGRANK_THREADS: "0" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("KGRANK_THREADS=0 is not valid");
  });

  it("names the tier in use, its file, and why each place tried before it was skipped", () => {
    // The repository has no prebuilds/: the local build is in use, the prebuild tier skipped with its reason.
    const native = JSON.parse(runNode(printInfo, {}).stdout);
    expect(native).toMatchObject({ backend: "native", tier: "native build" });
    expect(native.addonPath).toBe(path.join(root, "build", "Release", "kgrank.node"));
    expect(native.skipped).toEqual([
      `native prebuild: ${path.join(root, "prebuilds")}: the package ships no prebuilds`,
    ]);
    const missing = path.join(root, "no-such-dir", "kgrank.node");
    const noWasm = path.join(root, "no-such-dir", "kgrank.wasm");
    const r = runNode(printInfo, { KGRANK_ADDON_PATH: missing, KGRANK_WASM_PATH: noWasm });
    expect(JSON.parse(r.stdout)).toMatchObject({
      backend: "ts",
      tier: "ts",
      skipped: [`native build: ${missing}: not built`, `wasm: ${noWasm}: not built (npm run build:wasm)`],
    });
    // The warning names the fix: a build from source with the package's own command (it has no install script).
    expect(r.stderr).toContain("`npx kgrank build-native --from-source`");
    const ts = JSON.parse(runNode(printInfo, { KGRANK_BACKEND: "ts" }).stdout);
    expect(ts).toMatchObject({
      tier: "ts",
      skipped: ["native: not tried (KGRANK_BACKEND=ts)", "wasm: not tried (KGRANK_BACKEND=ts)"],
    });
  });

  const wasmFile = path.join(root, "wasm", "kgrank.wasm");
  const wasmBuilt = existsSync(wasmFile);
  const wasmTitle = (t: string) => (wasmBuilt ? t : `${t} [skipped: npm run build:wasm first]`);

  it.skipIf(!wasmBuilt)(wasmTitle("without a native addon, the WebAssembly core comes before the fallback"), () => {
    const missing = path.join(root, "no-such-dir", "kgrank.node");
    const r = runNode(printInfo, { KGRANK_ADDON_PATH: missing });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      backend: "wasm",
      simd: "simd128",
      threads: 1,
      tier: "wasm",
      wasmPath: wasmFile,
      skipped: [`native build: ${missing}: not built`],
    });
    // One warning, naming the native fix and how to silence it.
    expect(r.stderr.split("WebAssembly core (one thread").length - 1).toBe(1);
    expect(r.stderr).toContain("KGRANK_WASM");
    expect(r.stderr).toContain("npx kgrank build-native --from-source");
    expect(r.stderr).toContain("KGRANK_BACKEND=wasm to silence this warning");
  });

  it.skipIf(!wasmBuilt)(wasmTitle("KGRANK_BACKEND=wasm selects the WebAssembly core without a warning"), () => {
    const r = runNode(printInfo, { KGRANK_BACKEND: "wasm" });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      backend: "wasm",
      tier: "wasm",
      wasmPath: wasmFile,
      skipped: ["native: not tried (KGRANK_BACKEND=wasm)"],
    });
    expect(r.stderr).not.toMatch(/Warning/);
  });

  it("KGRANK_BACKEND=wasm fails loudly when the WebAssembly core cannot load, naming the build", () => {
    const bad = path.join(root, "package.json");
    const r = runNode(printInfo, { KGRANK_BACKEND: "wasm", KGRANK_WASM_PATH: bad });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`KGRANK_BACKEND=wasm but the WebAssembly core could not be loaded: ${bad}:`);
    expect(r.stderr).toMatch(/npm run build:wasm/);
  });
});
