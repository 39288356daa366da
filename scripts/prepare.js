#!/usr/bin/env node
// The repository's build, run by npm as `postprepare` (on `npm ci` / `npm install` in the repository: npm runs
// preprepare, prepare and postprepare for the root project only) and by `prepack` (`npm pack`, `npm publish`).
// Not `prepare`: npm 11 counts a `prepare` script as an install script of a package installed from a tarball or a
// folder, and warns about it, although it does not run it there; the published package must have none (see
// CONTRIBUTING.md). First the native addon (scripts/build-native.js: a prebuild that fits, a current local build,
// else node-gyp; its failure stops here only under KGRANK_REQUIRE_NATIVE=1), then the TypeScript (npm run build:ts)
// unless dist/ is current for src/, the tsconfig, the build scripts, this TypeScript and esbuild, and the Vega that
// dist/vendor bundles. A run whose stamps are current costs a hash of the sources, not a compile and 15 s of tsc.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const stamp = require("./stamp.js");

const root = path.join(__dirname, "..");
const stampFile = path.join(root, "dist", ".build-stamp.json");

function inputs() {
  // The bundled Vega (scripts/build-vega.mjs) is rebuilt when its packages change version.
  // Read from node_modules directly: vega's package.json is not among its exports, so require.resolve cannot find it.
  const versions = ["typescript", "vega", "vega-lite", "esbuild"].map((name) => {
    try {
      const manifest = fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8");
      return `${name} ${JSON.parse(manifest).version}`;
    } catch {
      return `${name} ?`; // unknown: hashed as such
    }
  });
  const files = [
    "tsconfig.json",
    "scripts/build-esm.mjs",
    "scripts/build-browser.mjs",
    "scripts/build-vega.mjs",
    ...stamp.listFiles(root, "src", () => true),
  ];
  return stamp.inputsHash(root, files, versions);
}

function outputs() {
  return stamp.listFiles(root, "dist", (n) => n !== ".build-stamp.json").map((f) => path.join(root, f));
}

// The addon first, in its own process: it exits 1 when a failed build must fail (KGRANK_REQUIRE_NATIVE=1).
const native = spawnSync(process.execPath, [path.join(__dirname, "build-native.js")], { cwd: root, stdio: "inherit" });
if (native.status !== 0) process.exit(native.status ?? 1);

const before = inputs();
if (stamp.isCurrent(stampFile, before, outputs())) {
  console.log("kgrank-native: dist/ is current for src/; not recompiling the TypeScript");
  process.exit(0);
}
const npm = process.env.npm_execpath
  ? [process.execPath, [process.env.npm_execpath]]
  : [process.platform === "win32" ? "npm.cmd" : "npm", []];
const r = spawnSync(npm[0], [...npm[1], "run", "build:ts"], { cwd: root, stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);
stamp.writeStamp(stampFile, before, outputs());
