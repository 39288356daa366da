// The prebuilt addon for this process, if the package ships one: prebuilds/<platform>-<arch>/<tags>.node, chosen
// by node-gyp-build's own tuple and tag matching (platform, arch, runtime, ABI, libc). Shared by the install script
// (skip compiling when a prebuild fits) and the loader in src/backend/backend.ts (prebuilds first, then local builds).
"use strict";
const fs = require("node:fs");
const path = require("node:path");

function readdir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Absolute path of the best matching prebuild under `root`, or undefined. */
function findPrebuild(root) {
  let ngb;
  try {
    ngb = require(require.resolve("node-gyp-build", { paths: [root] }));
  } catch {
    return undefined;
  }
  const dir = path.join(root, "prebuilds");
  const tuple = readdir(dir)
    .map(ngb.parseTuple)
    .filter(ngb.matchTuple(process.platform, process.arch))
    .sort(ngb.compareTuples)[0];
  if (!tuple) return undefined;
  const files = readdir(path.join(dir, tuple.name))
    .map(ngb.parseTags)
    .filter(ngb.matchTags("node", process.versions.modules))
    .sort(ngb.compareTags("node"));
  return files[0] ? path.join(dir, tuple.name, files[0].file) : undefined;
}

/** The prebuild's file name for Node's ABI and glibc: node-gyp-build tags (runtime, abi, libc). */
function prebuildName() {
  return `node.abi${process.versions.modules}.glibc.node`;
}

module.exports = { findPrebuild, prebuildName };
