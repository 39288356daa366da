// The prebuilt addon for this process, if the package ships one: prebuilds/<platform>-<arch>/<tags>.node, chosen
// by node-gyp-build's own tuple and tag matching (platform, arch, runtime, ABI or napi), the libc being the one this
// process runs on (libcOf). The prebuilds are Node-API binaries (kgrank.napi.glibc.node, kgrank.napi.musl.node: no
// V8 header is used, Node-API version pinned in binding.gyp), so one file per libc serves every Node version and Bun.
// Shared by the install script (skip compiling when a prebuild fits) and the loader in src/backend/backend.ts
// (prebuilds first, then local builds; local builds first when the install built from source, which leaves
// FROM_SOURCE_MARK beside its build).
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

/**
 * The C library this process runs on: LIBC when set (node-gyp-build's override); else, on Linux, musl when a musl
 * libc is mapped into the process (/proc/self/maps: Alpine's ld-musl-<arch>.so.1, Debian's <arch>-linux-musl/libc.so,
 * Void's libc.so; glibc's is libc.so.6), so a musl runtime on any distribution gets the musl binary; without
 * /proc, /etc/alpine-release decides (node-gyp-build's own test).
 */
function libcOf() {
  if (process.env.LIBC) return process.env.LIBC;
  if (process.platform !== "linux") return "glibc";
  let maps = "";
  try {
    maps = fs.readFileSync("/proc/self/maps", "utf8");
  } catch {
    // No procfs: the distribution's marker below.
  }
  if (maps !== "")
    return /\/(ld-musl-[^/\s]*|libc\.musl-[^/\s]*|libc\.so)$|-linux-musl\//m.test(maps) ? "musl" : "glibc";
  return fs.existsSync("/etc/alpine-release") ? "musl" : "glibc";
}

/** The prebuild for this process under `root` ({ file }), or why there is none ({ reason }). */
function explainPrebuild(root) {
  let ngb;
  try {
    ngb = require(require.resolve("node-gyp-build", { paths: [root] }));
  } catch {
    return { reason: "node-gyp-build, which matches prebuilds, is not installed" };
  }
  const dir = path.join(root, "prebuilds");
  const tuples = readdir(dir);
  if (tuples.length === 0) return { reason: "the package ships no prebuilds" };
  const libc = libcOf();
  const here = `${process.platform}-${process.arch}${process.platform === "linux" ? ` (${libc})` : ""}`;
  const tuple = tuples
    .map(ngb.parseTuple)
    .filter(ngb.matchTuple(process.platform, process.arch))
    .sort(ngb.compareTuples)[0];
  if (!tuple) return { reason: `none for ${here} (the package ships ${tuples.join(", ")})` };
  const files = readdir(path.join(dir, tuple.name))
    .map(ngb.parseTags)
    // node-gyp-build's matchTags compares libc with its own guess (Alpine or not): the libc tag is compared here
    // with this process's, the other tags by its rules.
    .filter(
      (tags) =>
        (tags.libc ?? libc) === libc && ngb.matchTags("node", process.versions.modules)({ ...tags, libc: undefined }),
    )
    .sort(ngb.compareTags("node"));
  if (!files[0]) return { reason: `none of its files in ${tuple.name}/ fits ${here}` };
  return { file: path.join(dir, tuple.name, files[0].file) };
}

/** Absolute path of the best matching prebuild under `root`, or undefined. */
function findPrebuild(root) {
  return explainPrebuild(root).file;
}

/** The prebuild's file name: node-gyp-build tags napi (any Node-API runtime and version) and the libc. */
function prebuildName(libc = "glibc") {
  return `kgrank.napi.${libc}.node`;
}

/** Left in build/Release/ by an install that built from source: the loader then prefers that build. */
const FROM_SOURCE_MARK = "kgrank.from-source";

/** True when the local build in `root` was made by a build from source, or the environment asks for one. */
function prefersBuild(root) {
  return (
    process.env.KGRANK_BUILD_FROM_SOURCE === "1" || fs.existsSync(path.join(root, "build", "Release", FROM_SOURCE_MARK))
  );
}

module.exports = { explainPrebuild, findPrebuild, prebuildName, prefersBuild, FROM_SOURCE_MARK };
