/**
 * The native build's output (scripts/build-native.js: `kgrank build-native`, the repository's prepare) where it
 * compiles the addon: one line when the build works, the
 * compiler's whole output when it fails, the compiler's output as it comes when asked for (KGRANK_VERBOSE_BUILD=1,
 * npm's --foreground-scripts). Run in a copy of the package's scripts with a stand-in for node-gyp
 * (npm_config_node_gyp, as npm passes it) that prints what a compile prints and copies this checkout's addon; a real
 * compile is `npm ci`'s and the package test's.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

import { runProcess } from "./helpers/process";
import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const work = tempDir("build-native");
const COMPILER_LINES = Array.from({ length: 89 }, (_, i) => `  CXX(target) Release/obj.target/kgrank/part${i}.o`);

/** A package folder with the build script and its helpers, no prebuild, and a node-gyp that exits `status`. */
function packageCopy(name: string, status: number): { dir: string; gyp: string } {
  const dir = path.join(work, name);
  for (const sub of ["scripts", "native/core", "native/addon"]) mkdirSync(path.join(dir, sub), { recursive: true });
  for (const f of ["build-native.js", "find-prebuild.js", "stamp.js"])
    copyFileSync(path.join(root, "scripts", f), path.join(dir, "scripts", f));
  for (const f of ["binding.gyp", "native/sources.gypi"]) copyFileSync(path.join(root, f), path.join(dir, f));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "kgrank-native", version: "0.0.0" }));
  const gyp = path.join(dir, "fake-node-gyp.cjs");
  const addon = path.join(root, "build", "Release", "kgrank.node");
  writeFileSync(
    gyp,
    [
      `const fs = require("node:fs");`,
      `console.log(${JSON.stringify(COMPILER_LINES.join("\n"))});`,
      `console.error("gyp info ok");`,
      status === 0
        ? `fs.mkdirSync("build/Release", { recursive: true }); fs.copyFileSync(${JSON.stringify(addon)}, "build/Release/kgrank.node");`
        : `console.error("kernels.cpp:1:1: error: no compiler here"); process.exit(${status});`,
    ].join("\n"),
  );
  return { dir, gyp };
}

function build(name: string, status: number, env: Record<string, string> = {}, npmGyp = true) {
  const { dir, gyp } = packageCopy(name, status);
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("KGRANK_") && !k.startsWith("npm_") && !k.startsWith("VITEST")) clean[k] = v;
  }
  return runProcess(process.execPath, [path.join(dir, "scripts", "build-native.js")], {
    cwd: dir,
    env: { ...clean, ...(npmGyp ? { npm_config_node_gyp: gyp } : {}), ...env },
    inheritEnv: false,
  });
}

describe("the native build's output when it compiles", () => {
  it("a build that works prints one line, none of the compiler's", () => {
    const r = build("quiet", 0);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toMatch(/^kgrank-native: compiled build\/Release\/kgrank\.node in \d+ s\n$/);
    expect(r.stderr).toBe("");
  });

  it("a build that fails prints the compiler's whole output, then the one warning", () => {
    const r = build("fails", 2);
    expect(r.status, r.stderr).toBe(0);
    for (const line of [...COMPILER_LINES, "gyp info ok", "kernels.cpp:1:1: error: no compiler here"])
      expect(r.stdout + r.stderr).toContain(line);
    expect(r.stderr.split("WARNING kgrank-native: the native addon was not built").length - 1).toBe(1);
    expect(r.stdout + r.stderr).not.toContain("compiled build/Release");
    const strict = build("fails-strict", 2, { KGRANK_REQUIRE_NATIVE: "1" });
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain("kernels.cpp:1:1: error: no compiler here");
    expect(strict.stderr).toContain("KGRANK_REQUIRE_NATIVE=1, so the build fails");
  });

  it("KGRANK_VERBOSE_BUILD=1 or npm's --foreground-scripts shows the compiler's output as it comes", () => {
    for (const [name, env] of [
      ["verbose", { KGRANK_VERBOSE_BUILD: "1" }],
      ["foreground", { npm_config_foreground_scripts: "true" }],
    ] as const) {
      const r = build(name, 0, env);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout, name).toContain(COMPILER_LINES.join("\n"));
      expect(r.stderr, name).toContain("gyp info ok");
      expect(r.stdout, name).toMatch(/kgrank-native: compiled build\/Release\/kgrank\.node in \d+ s\n$/);
    }
  });

  it("run outside npm (`kgrank build-native`), it finds the node-gyp that npm bundles", () => {
    // No npm_config_node_gyp and no node-gyp dependency in the package: the one in npm's own node_modules, found
    // from npm_execpath (npm's bin/npm-cli.js) as npx passes it, or beside this Node's npm.
    const npm = path.join(work, "npm");
    mkdirSync(path.join(npm, "bin"), { recursive: true });
    mkdirSync(path.join(npm, "node_modules", "node-gyp", "bin"), { recursive: true });
    const { gyp } = packageCopy("npm-gyp-source", 0);
    copyFileSync(gyp, path.join(npm, "node_modules", "node-gyp", "bin", "node-gyp.js"));
    const r = build("npm-gyp", 0, { npm_execpath: path.join(npm, "bin", "npm-cli.js") }, false);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^kgrank-native: compiled build\/Release\/kgrank\.node in \d+ s\n$/);
  });

  it("the repository's npm ci (scripts/prepare.js) stops with the failed build under KGRANK_REQUIRE_NATIVE=1", () => {
    // .ci/run relies on it: a failed native build fails `npm ci` before the TypeScript is built.
    const { dir, gyp } = packageCopy("prepare-strict", 2);
    copyFileSync(path.join(root, "scripts", "prepare.js"), path.join(dir, "scripts", "prepare.js"));
    // What the TypeScript step needs to run, and a build:ts that says it ran.
    writeFileSync(path.join(dir, "tsconfig.json"), "{}");
    for (const f of ["build-esm.mjs", "build-browser.mjs", "build-vega.mjs"])
      writeFileSync(path.join(dir, "scripts", f), "");
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: "kgrank-native", version: "0.0.0", scripts: { "build:ts": "echo TYPESCRIPT-BUILT" } }),
    );
    const r = runProcess(process.execPath, [path.join(dir, "scripts", "prepare.js")], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", npm_config_node_gyp: gyp, KGRANK_REQUIRE_NATIVE: "1" },
      inheritEnv: false,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("KGRANK_REQUIRE_NATIVE=1, so the build fails");
    expect(r.stdout + r.stderr).not.toContain("TYPESCRIPT-BUILT");
  });
});
