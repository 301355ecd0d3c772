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
  /usr/bin/python3 - "$OUT/$name" "$*" <<'PY'
import json, sys
d, args = sys.argv[1], sys.argv[2]
ids = {r["id"]: r for r in map(json.loads, open(d + "/records.jsonl", encoding="utf-8"))}
pairs = [(i, i.replace("/zh_CN/", "/zh_TW/")) for i in ids if "/zh_CN/" in i]
pairs = [(a, b) for a, b in pairs if b in ids]
same = sum(ids[a]["cluster"] == ids[b]["cluster"] for a, b in pairs)
page = lambda i: i.split("/", 5)[-1]
reported = [json.loads(l) for l in open(d + "/pairs.jsonl", encoding="utf-8")]
cross = sum(page(p["a"]) != page(p["b"]) for p in reported)
sizes = [json.loads(l)["size"] for l in open(d + "/clusters.jsonl", encoding="utf-8")]
print(f"{args:45s} recall {same}/{len(pairs)} = {same / len(pairs):.3f}; "
      f"pairs {len(reported)}, between different pages {cross}; largest cluster {max(sizes, default=0)}")
PY
}
run off --boilerplate off
run off_k16 --boilerplate off -k 16
for n in 3 5 10 20 50; do run "lines$n" --boilerplate lines --boilerplate-min-docs "$n"; done
