#!/usr/bin/env node
// `prepack`: build the prebuilt addons the npm package ships, prebuilds/linux-x64 and prebuilds/linux-arm64
// (glibc), named with node-gyp-build's tags napi and glibc (kgrank.napi.glibc.node: a Node-API binary, no V8
// header, so one file serves Node 20.17+, 22, 24, 26 and Bun). x64 with the host compiler, arm64 with Debian's
// cross compiler (g++-aarch64-linux-gnu); both with node-gyp against this Node's own headers (--nodedir: nothing is
// downloaded). Each arch builds in build-prebuild/<arch>/ (the developer's build/ is untouched) and is skipped when
// its stamp is current. Options: --out DIR (default prebuilds/), --arch x64,arm64 (or KGRANK_PREBUILD_ARCHES),
// --stage DIR (default build-prebuild/).
// Every toolchain is checked before anything compiles: a missing cross compiler fails the pack at once, naming the
// package to install or KGRANK_PREBUILD_ARCHES=x64 (a package silently without its arm64 binary would put arm64
// users on the fallback). A failure removes the output folder and the staging folder, so no half-made prebuild is
// packed or loaded later. Other hosts than Linux x64 build nothing here: the package then has no prebuilds.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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
const arches = (opt("--arch") ?? process.env.KGRANK_PREBUILD_ARCHES ?? "x64,arm64").split(",").filter(Boolean);

if (process.platform !== "linux" || process.arch !== "x64") {
  console.log(`kgrank-native prebuild: host ${process.platform}-${process.arch}; prebuilds are made on linux-x64 only`);
  process.exit(0);
}

const cross = {
  x64: { env: {}, strip: "strip" },
  arm64: {
    env: {
      CC: "aarch64-linux-gnu-gcc",
      CXX: "aarch64-linux-gnu-g++",
      LINK: "aarch64-linux-gnu-g++",
      AR: "aarch64-linux-gnu-ar",
    },
    strip: "aarch64-linux-gnu-strip",
  },
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

// Every toolchain first, before minutes of compiling.
for (const arch of arches) {
  const tc = cross[arch];
  if (!tc) fail(`unknown arch ${arch} (x64, arm64)`);
  for (const tool of [tc.env.CXX, tc.strip].filter(Boolean)) {
    if (spawnSync(tool, ["--version"]).status !== 0) {
      fail(
        `${tool} not found, needed for the linux-${arch} prebuild: ` +
          (arch === "arm64"
            ? "apt-get install g++-aarch64-linux-gnu binutils-aarch64-linux-gnu, or set KGRANK_PREBUILD_ARCHES=x64 to pack without the arm64 prebuild"
            : "install binutils"),
      );
    }
  }
}

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
  const inputs = stamp.nativeInputs(root, arch);
  for (const [k, v] of Object.entries(saved))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  const t0 = Date.now();
  if (stamp.isCurrent(stampFile, inputs, [stripped])) {
    console.log(`kgrank-native prebuild: linux-${arch} is current (${stampFile})`);
  } else {
    run(process.execPath, [nodeGyp, "rebuild", `--arch=${arch}`, `--nodedir=${nodedir}`, "--jobs", jobs], env, stage);
    copyFileSync(built, stripped);
    run(tc.strip, ["--strip-unneeded", stripped], {});
    stamp.writeStamp(stampFile, inputs, [stripped]);
    console.log(`kgrank-native prebuild: linux-${arch} built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  const dest = join(out, `linux-${arch}`);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  copyFileSync(stripped, join(dest, prebuildName()));
  console.log(`kgrank-native prebuild: ${join(dest, prebuildName())}`);
}
