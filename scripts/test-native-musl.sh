#!/usr/bin/env bash
# The C++ core unit tests built against musl with the musl prebuilds' toolchain, zig's clang (static executables:
# musl and libc++ linked in): x86_64 run natively, aarch64 under qemu-aarch64. zig comes from scripts/zig.mjs
# (KGRANK_ZIG, else a pinned version fetched once from the npm registry). Fails when zig or qemu is missing, when a
# test fails, or when the AVX2 / NEON kernels were not among the levels the tests ran.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v qemu-aarch64 >/dev/null || { echo "test-native-musl: qemu-aarch64 not found (apt-get install qemu-user)" >&2; exit 1; }
zig="$(node -e 'import("./scripts/zig.mjs").then(({ findZig }) => {
  const z = findZig();
  if (z.error) { console.error(`test-native-musl: ${z.error} (set KGRANK_ZIG)`); process.exit(1); }
  console.log(z.zig);
})')"
tools="$PWD/build-core-musl-toolchain"
mkdir -p "$tools"
for triple in x86_64-linux-musl aarch64-linux-musl; do
  for tool in cc c++; do
    # clang 18+ under zig's explicit CPU features: -mavx512f alone does not allow 512-bit vectors (as in prebuild.mjs).
    printf '#!/bin/sh\nfor a in "$@"; do if [ "$a" = -mavx512f ]; then set -- "$@" -mevex512; break; fi; done\nexec "%s" %s -target %s "$@"\n' \
      "$zig" "$tool" "$triple" > "$tools/$triple-$tool"
  done
done
for tool in ar ranlib; do printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$tool" > "$tools/zig-$tool"; done
chmod +x "$tools"/*

for arch in x86_64 aarch64; do
  build="build-core-musl-$arch"
  cross=()
  run=(env)
  if [ "$arch" = aarch64 ]; then
    cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 -DCMAKE_CROSSCOMPILING_EMULATOR=qemu-aarch64)
    run=(qemu-aarch64)
  fi
  cmake -S native -B "$build" -DCMAKE_BUILD_TYPE=Release -DKGRANK_BUILD_ADDON=OFF "${cross[@]}" \
    -DCMAKE_C_COMPILER="$tools/$arch-linux-musl-cc" -DCMAKE_CXX_COMPILER="$tools/$arch-linux-musl-c++" \
    -DCMAKE_AR="$tools/zig-ar" -DCMAKE_RANLIB="$tools/zig-ranlib"
  cmake --build "$build" -j "${KGRANK_JOBS:-2}"
  # Static musl executables: nothing of the host's glibc is involved.
  if readelf -l "$build/test_count" | grep -q INTERP; then
    echo "test-native-musl: $build/test_count is not a static executable" >&2
    exit 1
  fi
  # KGRANK_TEST_EMULATED (set at all: on): tests whose long-double references are software quad precision on aarch64
  # run small cases only. median_moments is left out under qemu: even its small cases took 500 s there and its
  # wall-clock bounds measured the emulator (n = 3, N = 1000: 223 ms against 200); it has no ISA- or libc-specific
  # code, and runs for x86_64 musl here and for aarch64 glibc in test-native-arm64.sh.
  if [ "$arch" = aarch64 ]; then
    KGRANK_TEST_EMULATED=1 ctest --test-dir "$build" --output-on-failure -E '^median_moments$'
  else
    ctest --test-dir "$build" --output-on-failure
  fi
  want=$([ "$arch" = aarch64 ] && echo neon || echo avx2)
  for t in test_count test_interaction; do
    levels="$("${run[@]}" "$build/$t" | grep '^simd levels tested:')"
    echo "$t ($arch-linux-musl): $levels"
    case " $levels " in *" $want "*) ;; *) echo "test-native-musl: $t did not exercise the $want kernels" >&2; exit 1 ;; esac
  done
done
