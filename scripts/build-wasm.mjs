#!/usr/bin/env node
// `npm run build:wasm` (and `prepack`): the WebAssembly build of native/core, wasm/kgrank.wasm - the tier between
// the native addon and the TypeScript fallback (src/backend/wasm.ts loads it). wasm32-wasi with SIMD128, one thread
// (KGRANK_SINGLE_THREAD), no exceptions, no Node-API: native/wasm/exports.cpp exports a C ABI over the instance's
// memory. Debian's clang with its WASI sysroot: apt-get install clang lld wasi-libc libc++-dev-wasm32
// libc++abi-14-dev-wasm32 libclang-rt-dev-wasm32. -ffp-contract=off as the native build (no fused multiply-add the
// code did not ask for): every kernel is the core's scalar level, so results equal the native addon's bit for bit.
// Skipped when the output is newer than every source. Options: --out FILE (default wasm/kgrank.wasm), --force.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const at = args.indexOf("--out");
const out = resolve(at >= 0 ? args[at + 1] : join(root, "wasm", "kgrank.wasm"));
const cxx = process.env.KGRANK_WASM_CXX ?? "clang++";

// The core's portable sources and its SIMD128 interaction kernel (no x86-64 or NEON file), and the exports.
const core = readdirSync(join(root, "native", "core"))
  .filter((f) => f.endsWith(".cpp") && !/_(avx2|avx512|neon)\.cpp$/.test(f))
  .map((f) => join("native", "core", f));
const sources = [...core, join("native", "wasm", "exports.cpp")];
const inputs = [
  ...sources,
  ...readdirSync(join(root, "native", "core"))
    .filter((f) => f.endsWith(".h"))
    .map((f) => join("native", "core", f)),
  "scripts/build-wasm.mjs",
];

if (!args.includes("--force") && existsSync(out)) {
  const built = statSync(out).mtimeMs;
  if (inputs.every((f) => statSync(join(root, f)).mtimeMs <= built)) {
    console.log(`kgrank-native wasm: ${out} is current`);
    process.exit(0);
  }
}

const flags = [
  "--target=wasm32-wasi",
  "-mexec-model=reactor",
  "-O3",
  "-msimd128",
  "-std=c++17",
  "-ffp-contract=off",
  "-fno-exceptions",
  "-DKGRANK_SINGLE_THREAD=1",
  "-DKGRANK_HAVE_WASM_SIMD128=1",
  "-Wl,--max-memory=4294967296",
  "-Wl,--strip-all",
];
mkdirSync(dirname(out), { recursive: true });
const tmp = `${out}.tmp`;
const r = spawnSync(cxx, [...flags, ...sources, "-o", tmp], { cwd: root, stdio: "inherit" });
if (r.error || r.status !== 0) {
  rmSync(tmp, { force: true });
  console.error(
    `kgrank-native wasm: ${cxx} failed (${r.error?.message ?? `status ${r.status}`}); it needs clang with the WASI ` +
      "sysroot: apt-get install clang lld wasi-libc libc++-dev-wasm32 libc++abi-14-dev-wasm32 libclang-rt-dev-wasm32",
  );
  process.exit(1);
}
renameSync(tmp, out);
console.log(`kgrank-native wasm: built ${out} (${statSync(out).size} bytes)`);
