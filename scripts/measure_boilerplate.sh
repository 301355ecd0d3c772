#!/usr/bin/env bash
# Reproduces doc/evaluation.md, "Boilerplate": `neardup dedup` of the Chinese
# man pages (zh_CN + zh_TW, --t2s, default k) with boilerplate removal off and
# at several thresholds; CN/TW same-page recall (same cluster), pairs between
# different pages, largest cluster.
#
#   scripts/measure_boilerplate.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ND="${1:-$ROOT/build}/neardup"
OUT="${2:-$ROOT/out/boilerplate}"
mkdir -p "$OUT"
run() {
  local name=$1
  shift
  mkdir -p "$OUT/$name"
  "$ND" dedup /usr/share/man/zh_CN /usr/share/man/zh_TW --t2s -q "$@" \
    -o "$OUT/$name/records.jsonl" --clusters-out "$OUT/$name/clusters.jsonl" \
    --pairs-out "$OUT/$name/pairs.jsonl"
  /usr/bin/python3 "$ROOT/scripts/manpages_summary.py" "$OUT/$name" "$*" 45
}
run off --boilerplate off
run off_k16 --boilerplate off -k 16
for n in 3 5 10 20 50; do run "lines$n" --boilerplate lines --boilerplate-min-docs "$n"; done
