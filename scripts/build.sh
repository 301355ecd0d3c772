#!/usr/bin/env bash
# Configures and builds neardup into build/ (Release with debug info).
# Usage: scripts/build.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEARDUP_WERROR=ON "$@" >/dev/null
ninja -C build -j"$(nproc)"
