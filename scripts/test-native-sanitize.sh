#!/usr/bin/env bash
# The C++ unit tests of the core under AddressSanitizer + UndefinedBehaviorSanitizer, no recovery (the first report
# fails the test). clang when present (its UBSan also checks float-to-int overflow), else g++. Build directory per
# compiler: build-asan-clang/ or build-asan-gcc/.   KGRANK_SANITIZE_CXX=g++ forces a compiler.
set -euo pipefail
cd "$(dirname "$0")/.."

cxx="${KGRANK_SANITIZE_CXX:-}"
if [ -z "$cxx" ]; then
  if command -v clang++ >/dev/null; then cxx=clang++; else cxx=g++; fi
fi
case "$cxx" in
  *clang*) cc="${cxx/clang++/clang}"; dir=build-asan-clang ;;
  *) cc="${cxx/g++/gcc}"; dir=build-asan-gcc ;;
esac
echo "== sanitizer build with $cxx in $dir"
CC="$cc" CXX="$cxx" cmake -S native -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGRANK_BUILD_ADDON=OFF \
  -DKGRANK_SANITIZE=address,undefined >/dev/null
cmake --build "$dir" -j 2
ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}" \
  ctest --test-dir "$dir" --output-on-failure
