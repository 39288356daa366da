// Build stamps: a file beside a build output holding a hash of everything the output was made from (sources, build
// files, toolchain environment, Node ABI, platform, arch) and of the output itself. A build step whose stamp is
// current skips its work. The output's own hash makes a stamp stale when anything else rebuilt the output.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/** Files under `dir` (recursively) whose names pass `keep`, sorted, relative to `root`. */
function listFiles(root, dir, keep) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, d), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const rel = path.join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (keep(e.name)) out.push(rel);
    }
  };
  walk(dir);
  return out.sort();
}

/** sha256 over the named files (path and content) and the extra strings. */
function inputsHash(root, files, extra = []) {
  const h = crypto.createHash("sha256");
  for (const f of files) {
    h.update(`file ${f}\0`);
    h.update(fs.readFileSync(path.join(root, f)));
    h.update("\0");
  }
  for (const x of extra) h.update(`extra ${x}\0`);
  return h.digest("hex");
}

function outputsHash(files) {
  const h = crypto.createHash("sha256");
  for (const f of files) h.update(fs.readFileSync(f));
  return h.digest("hex");
}

/** True when `stampFile` records `inputs` and every output exists with the recorded content. */
function isCurrent(stampFile, inputs, outputs) {
  try {
    const stamp = JSON.parse(fs.readFileSync(stampFile, "utf8"));
    return stamp.inputs === inputs && stamp.outputs === outputsHash(outputs);
  } catch {
    return false;
  }
}

function writeStamp(stampFile, inputs, outputs) {
  fs.mkdirSync(path.dirname(stampFile), { recursive: true });
  fs.writeFileSync(stampFile, JSON.stringify({ inputs, outputs: outputsHash(outputs) }) + "\n");
}

/** What decides the native addon's build: sources, build files, node-addon-api, Node ABI, platform, toolchain env. */
function nativeInputs(root, arch = process.arch) {
  const files = [
    "binding.gyp",
    "native/sources.gypi",
    ...listFiles(root, "native/core", (n) => /\.(cpp|h)$/.test(n)),
    ...listFiles(root, "native/addon", (n) => /\.(cpp|h)$/.test(n)),
  ];
  let addonApi = "?";
  try {
    addonApi = require(require.resolve("node-addon-api/package.json", { paths: [root] })).version;
  } catch {
    // hashed as unknown: a later install that finds it rebuilds
  }
  const env = ["CC", "CXX", "LINK", "AR", "CFLAGS", "CXXFLAGS", "LDFLAGS", "npm_config_nodedir"].map(
    (k) => `${k}=${process.env[k] ?? ""}`,
  );
  return inputsHash(root, files, [
    `node ${process.version} abi ${process.versions.modules} napi ${process.versions.napi}`,
    `platform ${process.platform} arch ${arch}`,
    `node-addon-api ${addonApi}`,
    ...env,
  ]);
}

module.exports = { listFiles, inputsHash, isCurrent, writeStamp, nativeInputs };
