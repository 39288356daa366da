/**
 * The package as a user gets it: `npm pack`, install the tarball into an empty project (which compiles the addon
 * through the install script), then `import` (ESM), `require` (CommonJS) and type-check against it. A second
 * install with a broken compiler must still succeed, warn once, and run on the TypeScript fallback.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
const work = mkdtempSync(path.join(os.tmpdir(), "kgrank-pack-"));
let tarball = "";
let files: string[] = [];

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("KGRANK_") && !k.startsWith("VITEST") && k !== "NODE_OPTIONS") env[k] = v;
  }
  return { ...env, ...extra };
}

function install(dir: string, env: Record<string, string>) {
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, version: "1.0.0" }));
  return spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--foreground-scripts", tarball],
    { cwd: dir, env: cleanEnv(env), encoding: "utf8", timeout: 540_000 },
  );
}

function node(dir: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, args, { cwd: dir, env: cleanEnv(env), encoding: "utf8", timeout: 120_000 });
}

const demo =
  "const s = new Float32Array([3, 1, 2, 2, NaN, 0]);" +
  "const c = countScoresSync({ scores: s, numColumns: 3, thresholds: [2, 0] });" +
  "console.log(JSON.stringify({ info: backendInfo(), g: Array.from(c.greater), e: Array.from(c.equal), n: Array.from(c.nan) }));";

beforeAll(() => {
  expect(existsSync(path.join(root, "dist", "cjs", "index.js")), "run `npm run build:ts` first").toBe(true);
  // --ignore-scripts: pack the dist/ that exists instead of rebuilding it under the feet of other test files.
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: root,
    encoding: "utf8",
    env: cleanEnv(),
  });
  const meta = JSON.parse(out.slice(out.indexOf("[")))[0];
  tarball = path.join(work, meta.filename);
  files = meta.files.map((f: { path: string }) => f.path);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm package", () => {
  it("ships what a build needs and nothing else", () => {
    for (const needed of [
      "package.json", "README.md", "binding.gyp", "native/sources.gypi", "native/CMakeLists.txt",
      "native/core/count.cpp", "native/addon/addon.cpp", "scripts/install.js", "dist/cjs/index.js",
      "dist/cjs/index.d.ts", "dist/esm/index.mjs", "dist/esm/index.d.mts", "bin/kgrank.js",
      "data/nations/test.tsv",
    ]) {
      expect(files, needed).toContain(needed);
    }
    for (const f of files) {
      expect(f).not.toMatch(/^(build|build-[^/]+|node_modules|test|bench|\.ci)\//);
      expect(f).not.toMatch(/fb15k|wn18rr|codex/i);
    }
  });

  describe("installed with a working compiler", () => {
    const dir = path.join(work, "consumer");
    beforeAll(() => {
      rmSync(dir, { recursive: true, force: true });
      execFileSync("mkdir", ["-p", dir]);
      const r = install(dir, {});
      expect(r.status, r.stderr).toBe(0);
    }, 600_000);

    it("builds the addon during install", () => {
      expect(existsSync(path.join(dir, "node_modules", "kgrank-native", "build", "Release", "kgrank.node"))).toBe(true);
    });

    it("works with require (CommonJS)", () => {
      const r = node(dir, ["-e", `const { backendInfo, countScoresSync } = require("kgrank-native");${demo}`]);
      expect(r.status, r.stderr).toBe(0);
      const got = JSON.parse(r.stdout);
      expect(got.info.backend).toBe("native");
      expect(got).toMatchObject({ g: [1, 1], e: [1, 1], n: [0, 1] });
      expect(r.stderr).toBe("");
    });

    it("works with import (ESM) and shares one module instance with require", () => {
      const code =
        `import { backendInfo, countScoresSync, KgrankInputError } from "kgrank-native";\n` +
        `import { createRequire } from "node:module";\n` +
        `const cjs = createRequire(import.meta.url)("kgrank-native");\n` +
        `if (cjs.KgrankInputError !== KgrankInputError) throw new Error("two module instances");\n` +
        demo;
      const r = node(dir, ["--input-type=module", "-e", code]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ info: { backend: "native" }, g: [1, 1], e: [1, 1], n: [0, 1] });
    });

    it("ships types that type-check an ESM and a CommonJS consumer", () => {
      writeFileSync(
        path.join(dir, "esm.mts"),
        `import { countScoresSync, type BackendInfo, backendInfo } from "kgrank-native";\n` +
          `const info: BackendInfo = backendInfo();\n` +
          `const c = countScoresSync({ scores: new Float32Array(2), numColumns: 2, thresholds: [0] });\n` +
          `const g: Float64Array = c.greater;\nexport { info, g };\n`,
      );
      writeFileSync(
        path.join(dir, "cjs.cts"),
        `import kg = require("kgrank-native");\nconst n: number = kg.backendInfo().threads;\nexport = n;\n`,
      );
      const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
      const r = node(dir, [
        tsc, "--noEmit", "--strict", "--module", "node16", "--moduleResolution", "node16", "--types", "node",
        "--typeRoots", path.join(root, "node_modules", "@types"), "esm.mts", "cjs.cts",
      ]);
      expect(r.status, r.stdout + r.stderr).toBe(0);
    });

    it("provides the kgrank command", () => {
      const bin = path.join(dir, "node_modules", ".bin", "kgrank");
      const r = spawnSync(bin, ["info"], { cwd: dir, env: cleanEnv(), encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/backend\s+native/);
      // The main job runs from the installed package alone: bundled data, commander, no repository files.
      const ev = spawnSync(bin, ["evaluate", "--format", "json"], { cwd: dir, env: cleanEnv(), encoding: "utf8" });
      expect(ev.status, ev.stderr).toBe(0);
      const j = JSON.parse(ev.stdout);
      expect([j.dataset, j.split, j.triples]).toEqual(["nations", "test", 201]);
      expect(j.results.both.realistic.inverse_harmonic_mean_rank).toBeGreaterThan(j.expected.both.inverse_harmonic_mean_rank);
      const bad = spawnSync(bin, ["evaluate", "--dataset", "nope"], { cwd: dir, env: cleanEnv(), encoding: "utf8" });
      expect(bad.status).toBe(1);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    });
  });

  describe("installed where the addon cannot be compiled", () => {
    const dir = path.join(work, "no-compiler");
    let installOutput = "";
    beforeAll(() => {
      rmSync(dir, { recursive: true, force: true });
      execFileSync("mkdir", ["-p", dir]);
      const r = install(dir, { CXX: "/bin/false", CC: "/bin/false" });
      expect(r.status, r.stderr).toBe(0);
      installOutput = r.stdout + r.stderr;
    }, 600_000);

    it("still installs, with one clear warning", () => {
      expect(installOutput.split("WARNING kgrank-native: the native addon was not built").length - 1).toBe(1);
      expect(readdirSync(path.join(dir, "node_modules", "kgrank-native"))).toContain("dist");
    });

    it("runs on the fallback and says why, once", () => {
      const r = node(dir, ["-e", `const { backendInfo, countScoresSync } = require("kgrank-native");${demo}`]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ info: { backend: "ts" }, g: [1, 1], e: [1, 1], n: [0, 1] });
      expect(r.stderr.split("pure-TypeScript fallback").length - 1).toBe(1);
    });
  });
});
