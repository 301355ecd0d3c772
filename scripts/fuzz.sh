#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (Debian's clang 14 works) and runs
# each for a bounded time, one process each, one after the other.
#   [FUZZ_PARALLEL=N] bash scripts/fuzz.sh [seconds per target, default 60] [target ...]
# Each target starts from its checked-in seeds (fuzz/corpus/<target>/, read
# only) plus what earlier runs found (build-fuzz/corpus/<target>/, where new
# inputs are written). Findings (crash-*, leak-*, timeout-*, oom-*) land in
# build-fuzz/findings/<target>/, the log in build-fuzz/<target>.log; the last
# line printed per target has the executions (#N) and coverage (cov:, ft:).
# To keep a finding as a regression input once it is fixed, copy it into
# fuzz/corpus/<target>/ (replayed by ctest as fuzz/replay_<target>).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
CC=${CC:-clang}
CXX=${CXX:-clang++}
command -v "$CXX" >/dev/null || {
  echo "fuzz.sh: needs clang (apt-get install clang libclang-rt-14-dev)"
  exit 1
}
CC=$CC CXX=$CXX cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNEARDUP_BUILD_FUZZ=ON -DNEARDUP_BUILD_TESTS=OFF -DNEARDUP_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in fuzz/*_fuzz.cc; do targets+=("$(basename "$t" .cc)"); done
fi
# Only the fuzz targets (and the library under them), not the tools.
ninja -C build-fuzz ${FUZZ_JOBS:+-j"$FUZZ_JOBS"} "${targets[@]}"
# FUZZ_PARALLEL=N runs up to N targets at once (default 1: one after the
# other); each target is still one process.
parallel=${FUZZ_PARALLEL:-1}
run_one() {
  local name=$1 target=build-fuzz/fuzz/$1
  mkdir -p "build-fuzz/corpus/$name" "build-fuzz/findings/$name"
  local seeds=()
  [ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
  local rc=0
  "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/findings/$name/" "build-fuzz/corpus/$name" "${seeds[@]}" \
    2>"build-fuzz/$name.log" || rc=$?
  {
    echo "== $name (${secs}s) =="
    [ "$rc" -eq 0 ] || echo "FINDING in $name: see build-fuzz/findings/$name/ and build-fuzz/$name.log"
    grep -E "^#[0-9]+" "build-fuzz/$name.log" | tail -1 || tail -2 "build-fuzz/$name.log"
    grep -E "^stat::number_of_executed_units" "build-fuzz/$name.log" || true
  }
  return "$rc"
}
status=0
running=0
for name in "${targets[@]}"; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
