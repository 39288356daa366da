#!/usr/bin/env node
// npm install hook: compile the native addon with node-gyp. If that is impossible (no compiler, no Python, an
// unusual platform) the install still succeeds: one warning says why, and the package runs on its pure-TypeScript
// fallback. Set KGRANK_REQUIRE_NATIVE=1 to make a failed build fail the install (CI does), or
// KGRANK_SKIP_BUILD=1 to skip compiling.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.join(__dirname, "..");

function warn(reason) {
  const msg =
    `kgrank-native: the native addon was not built (${reason}). The package will use its pure-TypeScript ` +
    `fallback: same results, slower. Install a C++17 compiler and Python 3, then run \`npm rebuild kgrank-native\`.`;
  if (process.env.KGRANK_REQUIRE_NATIVE === "1") {
    console.error(`${msg}\nKGRANK_REQUIRE_NATIVE=1, so the install fails.`);
    process.exit(1);
  }
  console.warn(`WARNING ${msg}`);
  process.exit(0);
}

if (process.env.KGRANK_SKIP_BUILD === "1") warn("KGRANK_SKIP_BUILD=1");

function nodeGypCommand() {
  if (process.env.npm_config_node_gyp) return [process.execPath, [process.env.npm_config_node_gyp]];
  try {
    return [process.execPath, [require.resolve("node-gyp/bin/node-gyp.js", { paths: [root] })]];
  } catch {
    return ["node-gyp", []];
  }
}

const [cmd, prefix] = nodeGypCommand();
const jobs = String(Math.max(1, require("node:os").availableParallelism()));
const result = spawnSync(cmd, [...prefix, "rebuild", "--jobs", jobs], { cwd: root, stdio: "inherit" });
if (result.error) warn(`could not run node-gyp: ${result.error.message}`);
if (result.status !== 0) warn(`node-gyp exited with status ${result.status}`);
