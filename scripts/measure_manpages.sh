#!/usr/bin/env bash
# Reproduces doc/evaluation.md, "Man pages": `neardup dedup` of the Chinese
# man pages (zh_CN + zh_TW, --t2s) at the defaults and at the settings
# compared there; per run CN/TW same-page recall (same cluster), reported
# pairs, pairs between different pages and how many of them share only
# boilerplate (scripts/manpages_cross_pairs.py), largest cluster.
#
#   scripts/measure_manpages.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ND="${1:-$ROOT/build}/neardup"
OUT="${2:-$ROOT/out/manpages_eval}"
mkdir -p "$OUT"
run() {
  local name=$1
  shift
  mkdir -p "$OUT/$name"
  "$ND" dedup /usr/share/man/zh_CN /usr/share/man/zh_TW -q "$@" \
    -o "$OUT/$name/records.jsonl" --clusters-out "$OUT/$name/clusters.jsonl" \
    --pairs-out "$OUT/$name/pairs.jsonl"
  /usr/bin/python3 "$ROOT/scripts/manpages_summary.py" "$OUT/$name" "$*" 60
  NEARDUP_BIN="$ND" /usr/bin/python3 "$ROOT/scripts/manpages_cross_pairs.py" "$OUT/$name/pairs.jsonl" | tail -1
}
run default --t2s
run n3 --t2s --boilerplate-min-docs 3
run center --t2s --cluster center
run chars5u --t2s --method chars5u
run uniform_k24 --t2s --method chars5,weights=uniform
run tw2sp_once --normalize nfkc,tw2sp
run tw2sp_once_center --normalize nfkc,tw2sp --cluster center
