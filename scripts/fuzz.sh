#!/usr/bin/env bash
# Builds the libFuzzer targets (native/fuzz/fuzz_<name>.cpp, clang, ASan + UBSan) in build-fuzz/ and runs each for a
# bounded time, starting from its committed seed corpus native/fuzz/corpus/<name>/ (new inputs go to
# build-fuzz/corpus/<name>/, never to the repository). The first crash, sanitizer report or oracle mismatch stops the
# run with exit 1; the input is kept in build-fuzz/artifacts/<name>/ and printed as a reproduction command.
#   npm run fuzz                                   every target, 60 s each
#   KGRANK_FUZZ_SECONDS=600 npm run fuzz           longer
#   KGRANK_FUZZ_TARGETS="count_rows aggregate" npm run fuzz   a subset (names without the fuzz_ prefix)
#   KGRANK_FUZZ_JOBS=2                             parallel fuzzing processes per target (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${KGRANK_FUZZ_SECONDS:-60}"
jobs="${KGRANK_FUZZ_JOBS:-1}"
cxx="${KGRANK_FUZZ_CXX:-$(command -v clang++ || true)}"
cc="${KGRANK_FUZZ_CC:-$(command -v clang || true)}"
if [ -z "$cxx" ]; then
  echo "fuzz: clang++ not found (Debian: apt-get install clang; libFuzzer comes with libclang-rt-*-dev)" >&2
  exit 2
fi

CC="$cc" CXX="$cxx" cmake -S native -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKGRANK_BUILD_ADDON=OFF \
  -DKGRANK_BUILD_TESTS=OFF -DKGRANK_FUZZ=ON >/dev/null
cmake --build build-fuzz -j 2

if [ -n "${KGRANK_FUZZ_TARGETS:-}" ]; then
  names=($KGRANK_FUZZ_TARGETS)
else
  names=()
  for src in native/fuzz/fuzz_*.cpp; do
    n="$(basename "$src" .cpp)"
    names+=("${n#fuzz_}")
  done
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
summary=()
for name in "${names[@]}"; do
  bin="build-fuzz/fuzz_$name"
  [ -x "$bin" ] || { echo "fuzz: no target fuzz_$name" >&2; exit 2; }
  work="build-fuzz/corpus/$name"
  artifacts="build-fuzz/artifacts/$name/"
  mkdir -p "$work" "$artifacts"
  seeds=()
  [ -d "native/fuzz/corpus/$name" ] && seeds=("native/fuzz/corpus/$name")
  echo "== fuzz_$name for ${seconds}s (corpus $work${seeds:+ + ${seeds[0]}})"
  log="build-fuzz/fuzz_$name.log"
  parallel=()
  # -jobs makes libFuzzer write fuzz-<n>.log files in the working directory: only when asked for.
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  if ! "$bin" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 \
      "${parallel[@]}" -artifact_prefix="$artifacts" "$work" "${seeds[@]}" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz_$name FAILED; reproduce with: $bin $artifacts<crash file>" >&2
    ls -1 "$artifacts" >&2 || true
    exit 1
  fi
  runs="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -n 1 || true)"
  cov="$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 || true)"
  summary+=("fuzz_$name: ${runs:-?} runs, ${cov:-cov ?}, corpus $(ls "$work" | wc -l) inputs")
  echo "   ${summary[-1]}"
done
printf '%s\n' "${summary[@]}"
