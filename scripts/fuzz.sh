#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a bounded time.
#   bash scripts/fuzz.sh [seconds per target, default 60]
# Findings (crash-*, leak-*, timeout-*) land in build-fuzz/findings/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang (apt-get install clang libclang-rt-14-dev)"; exit 1; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNEARDUP_BUILD_FUZZ=ON -DNEARDUP_BUILD_TESTS=OFF -DNEARDUP_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
ninja -C build-fuzz
status=0
for target in build-fuzz/fuzz/*_fuzz; do
  name=$(basename "$target")
  mkdir -p "build-fuzz/corpus/$name" "build-fuzz/findings/$name"
  echo "== $name (${secs}s) =="
  if ! "$target" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="build-fuzz/findings/$name/" "build-fuzz/corpus/$name" 2>"build-fuzz/$name.log"; then
    status=1
    echo "FINDING in $name: see build-fuzz/findings/$name/ and build-fuzz/$name.log"
  fi
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "build-fuzz/$name.log" | tail -1 || tail -2 "build-fuzz/$name.log"
done
exit $status
