#!/usr/bin/env node
// npm `prepare` hook: compile the TypeScript (npm run build:ts) unless dist/ is current for src/, the tsconfig,
// the build scripts, this TypeScript and esbuild, and the Vega that dist/vendor bundles. npx in the repository installs the package itself into its cache as a
// link and re-runs prepare there; with a current dist/ that costs a hash of the sources, not 15 s of tsc.
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
