#!/usr/bin/env bash
# The whole test suite: installs what is needed, builds, runs every test, then
# builds the installed targets in Release, and runs the suite once more under
# AddressSanitizer + UndefinedBehaviorSanitizer.
#   bash scripts/test.sh            # both passes
#   NEARDUP_SKIP_SANITIZE=1 bash scripts/test.sh   # without the sanitizer pass
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

echo "== build (RelWithDebInfo) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEARDUP_WERROR=ON >/dev/null
ninja -C build -j"$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure -j"$jobs" --timeout 900)

# What users and packagers type: a Release build of everything that is
# installed (libraries, CLI, Python module) must compile without warnings too
# (GCC 12 at -O3 warns where -O2 does not).
echo "== build (Release, installed targets only) =="
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEARDUP_WERROR=ON \
  -DNEARDUP_BUILD_TESTS=OFF -DNEARDUP_BUILD_BENCH=OFF >/dev/null
ninja -C build-release -j"$jobs"

if [ "${NEARDUP_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "== build (ASan + UBSan) =="
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
    -DNEARDUP_SANITIZE=ON -DNEARDUP_WERROR=ON -DNEARDUP_BUILD_BENCH=OFF >/dev/null
  ninja -C build-asan -j"$jobs"
  echo "== tests (ASan + UBSan) =="
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 NEARDUP_SANITIZED=1 \
    ctest --output-on-failure -j"$jobs" --timeout 1800)
fi
