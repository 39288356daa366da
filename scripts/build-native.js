#!/usr/bin/env node
// The native addon's build, which no install runs: the package has no install-time script (npm 11, pnpm 10 and Bun
// block dependency scripts, and warn about each), and needs none: the loader finds the prebuild at run time.
// Who runs it: `kgrank build-native` (bin/kgrank.js, in an installed package: where no prebuild fits, or to build
// from source), and in the repository scripts/prepare.js (the `postprepare` script of `npm ci`, and `prepack`).
// What it does: use the prebuilt addon when the package ships one for this platform, arch and libc (prebuilds/,
// Node-API binaries made by scripts/prebuild.mjs at pack time); else keep a local build whose stamp says it is
// current for these sources and this Node (a second `npm ci` or `npm pack` must not recompile); else
// compile the native addon with node-gyp (npm's own when no other is found). KGRANK_BUILD_FROM_SOURCE=1 (or
// `kgrank build-native --from-source`, npm's --build-from-source) ignores the prebuilds and marks the build
// (find-prebuild.js FROM_SOURCE_MARK), so that the loader runs it before any prebuild. If compiling is impossible
// (no compiler, no Python, an unusual platform) it still exits 0: one warning says why, and the package runs on its
// WebAssembly core or pure-TypeScript fallback. Set KGRANK_REQUIRE_NATIVE=1 to make a failed build exit 1 (CI
// does), or KGRANK_SKIP_BUILD=1 to skip compiling. The compiler's output is printed only when the build fails (or
// with KGRANK_VERBOSE_BUILD=1 / `kgrank build-native --verbose` / npm's --foreground-scripts); a build that works
// says so in one line.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.join(__dirname, "..");

function warn(reason) {
  const msg =
    `kgrank-native: the native addon was not built (${reason}). The package will use its WebAssembly core or ` +
    `pure-TypeScript fallback: same results, slower. Install a C++17 compiler, make and Python 3, then run ` +
    `\`npx kgrank build-native\`.`;
  if (process.env.KGRANK_REQUIRE_NATIVE === "1") {
    console.error(`${msg}\nKGRANK_REQUIRE_NATIVE=1, so the build fails.`);
    process.exit(1);
  }
  console.warn(`WARNING ${msg}`);
  process.exit(0);
}

if (process.env.KGRANK_SKIP_BUILD === "1") warn("KGRANK_SKIP_BUILD=1");

const fs = require("node:fs");
const { findPrebuild, FROM_SOURCE_MARK } = require("./find-prebuild.js");
const stamp = require("./stamp.js");

/** The addon at `file` loads in this Node and answers info(); else the reason it does not. */
function loads(file) {
  try {
    require(file).info();
    return true;
  } catch (err) {
    return String(err.message).split("\n")[0];
  }
}

const fromSource = process.env.KGRANK_BUILD_FROM_SOURCE === "1" || process.env.npm_config_build_from_source === "true";
const built = path.join(root, "build", "Release", "kgrank.node");
const stampFile = path.join(root, "build", "Release", "kgrank.stamp.json");
const mark = path.join(root, "build", "Release", FROM_SOURCE_MARK);

/** A build from source is run before any prebuild: the mark tells the loader so. */
function marked() {
  if (fromSource) {
    fs.writeFileSync(
      mark,
      "built by KGRANK_BUILD_FROM_SOURCE=1 / kgrank build-native --from-source: loaded before any prebuild\n",
    );
    console.log(`kgrank-native: built from source; the loader uses ${path.relative(root, built)} before any prebuild`);
  } else {
    fs.rmSync(mark, { force: true });
  }
}

if (!fromSource) {
  const prebuild = findPrebuild(root);
  if (prebuild) {
    const ok = loads(prebuild);
    if (ok === true) {
      console.log(`kgrank-native: using the prebuilt addon ${path.relative(root, prebuild)}; nothing to compile`);
      marked();
      process.exit(0);
    }
    console.warn(`kgrank-native: the prebuilt addon ${path.relative(root, prebuild)} does not load (${ok}); compiling`);
  }
}

const inputs = stamp.nativeInputs(root);
if (stamp.isCurrent(stampFile, inputs, [built]) && loads(built) === true) {
  console.log("kgrank-native: build/Release/kgrank.node is current for these sources and this Node; not rebuilding");
  marked();
  process.exit(0);
}

/**
 * node-gyp: the one npm passes to scripts (npm_config_node_gyp: prepare, `npx kgrank build-native`), the
 * repository's devDependency, the one npm bundles (beside npm_execpath, or beside this Node's npm), else one on PATH.
 */
function nodeGypCommand() {
  if (process.env.npm_config_node_gyp) return [process.execPath, [process.env.npm_config_node_gyp]];
  const gypJs = path.join("node-gyp", "bin", "node-gyp.js");
  try {
    return [process.execPath, [require.resolve(gypJs, { paths: [root] })]];
  } catch {
    // not a dependency here (an installed package has no devDependencies)
  }
  const npmDirs = [
    process.env.npm_execpath && path.join(path.dirname(process.env.npm_execpath), ".."),
    path.join(path.dirname(process.execPath), "..", "lib", "node_modules", "npm"),
    path.join(path.dirname(process.execPath), "node_modules", "npm"),
  ].filter(Boolean);
  for (const dir of npmDirs) {
    const file = path.join(dir, "node_modules", gypJs);
    if (fs.existsSync(file)) return [process.execPath, [file]];
  }
  return ["node-gyp", []];
}

/**
 * The compiler's output is shown as it comes only when asked for: KGRANK_VERBOSE_BUILD=1, npm's --foreground-scripts
 * or a verbose npm log level. Otherwise it is kept and printed only if the build fails; a good build prints one line.
 */
const verbose =
  process.env.KGRANK_VERBOSE_BUILD === "1" ||
  process.env.npm_config_foreground_scripts === "true" ||
  ["verbose", "silly"].includes(process.env.npm_config_loglevel ?? "");
const [cmd, prefix] = nodeGypCommand();
const jobs = String(Math.max(1, require("node:os").availableParallelism()));
const t0 = Date.now();
const result = spawnSync(cmd, [...prefix, "rebuild", "--jobs", jobs], {
  cwd: root,
  stdio: verbose ? "inherit" : ["ignore", "pipe", "pipe"],
  maxBuffer: 256 * 1024 * 1024,
});
if (result.error || result.status !== 0) {
  if (!verbose) {
    // Interleaving of the two streams is lost; each is whole and in order.
    process.stderr.write(result.stdout ?? "");
    process.stderr.write(result.stderr ?? "");
  }
  if (result.error) warn(`could not run node-gyp: ${result.error.message}`);
  warn(`node-gyp exited with status ${result.status}`);
}
stamp.writeStamp(stampFile, inputs, [built]);
console.log(`kgrank-native: compiled ${path.relative(root, built)} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
marked();
