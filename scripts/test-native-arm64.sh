#!/usr/bin/env bash
# The C++ core unit tests cross-compiled for aarch64 (Debian's g++-aarch64-linux-gnu, toolchain file
# native/cmake/aarch64-linux-gnu.cmake) and run under qemu-aarch64 by ctest. Fails when the toolchain or qemu is
# missing, when a test fails, or when the NEON kernels were not among the levels the tests ran.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "test-native-arm64: $tool not found (apt-get install g++-aarch64-linux-gnu qemu-user)" >&2; exit 1; }
done
build=build-core-arm64
cmake -S native -B "$build" -DCMAKE_BUILD_TYPE=Release -DKGRANK_BUILD_ADDON=OFF \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/native/cmake/aarch64-linux-gnu.cmake"
cmake --build "$build" -j 2
# KGRANK_TEST_EMULATED: tests whose long-double references are software quad precision on aarch64 run small cases only.
KGRANK_TEST_EMULATED=1 ctest --test-dir "$build" --output-on-failure
# ctest hides passing output: run the tests with NEON kernels once more, visibly, and require the NEON level in them
# (test_count: the counting kernels; test_interaction: the scoring micro-kernel).
for t in test_count test_interaction; do
  levels="$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/$t" | grep '^simd levels tested:')"
  echo "$t: $levels (under qemu-aarch64)"
  case " $levels " in *" neon "*) ;; *) echo "test-native-arm64: $t did not exercise the NEON kernels" >&2; exit 1 ;; esac
done
