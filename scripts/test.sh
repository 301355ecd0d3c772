#!/usr/bin/env bash
# The whole test suite: installs what is needed, builds everything (libraries,
# CLI, Python module, tests, benchmarks) in Release with warnings as errors,
# runs every test, then builds and runs the suite once more under
# AddressSanitizer + UndefinedBehaviorSanitizer.
#   bash scripts/test.sh            # both passes
#   NEARDUP_SKIP_SANITIZE=1 bash scripts/test.sh   # without the sanitizer pass
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

# Release is what users and packagers type (README), and GCC 12 at -O3 warns
# where -O2 does not, so the tests run on exactly the code users build and
# that build is checked for warnings in the same pass.
echo "== build (Release) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARDUP_WERROR=ON >/dev/null
ninja -C build -j"$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure -j"$jobs" --timeout 900)

if [ "${NEARDUP_SKIP_SANITIZE:-0}" != 1 ]; then
  # -g1: line tables only, enough for the sanitizers' stack traces (file and
  # line), and a good part of the build's time less than full debug info.
  echo "== build (ASan + UBSan) =="
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
    -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DNEARDUP_SANITIZE=ON -DNEARDUP_WERROR=ON \
    -DNEARDUP_BUILD_BENCH=OFF >/dev/null
  ninja -C build-asan -j"$jobs"
  echo "== tests (ASan + UBSan) =="
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 NEARDUP_SANITIZED=1 \
    ctest --output-on-failure -j"$jobs" --timeout 1800)
fi
