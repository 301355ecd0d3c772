#!/usr/bin/env bash
# Scale benchmark of issue 10 (doc/benchmarks.md, "Scale: band join and
# end-to-end dedup"). Not a test: prints one row per run.
#
#   bash bench/scale_bench.sh BUILD_DIR WORK_DIR [selfjoin|e2e|all] [SIZES...]
#
# BUILD_DIR holds neardup and bench/neardup_band_join_bench (a RelWithDebInfo
# build); WORK_DIR receives the generated data (never commit it: ~2 GB at 1M).
# Data: sentences sampled (seeded) from ../shared/data/zh_thucnews1000.jsonl
# assembled into 800-1,500-character documents plus 10 % near copies with
# 5-15 % edits (band_join_bench.cc, `write` and `fingerprints`).
#
# selfjoin: the join engine alone (SimHashBandJoin, 128 bits, k = 24, recall
#   0.99) at 1M and 10M fingerprints: the first 100k real, the rest random with
#   10 % near copies (`synth`); time, CPU, bytes per document beyond the
#   fingerprints. Reference in the same run: the exact join (permuted tables)
#   and the banded one through Dedup at 100k real fingerprints.
# e2e: `neardup dedup --threads 2` on SIZES documents (default 100000 300000
#   1000000) for the default method (chars5u) and --method minhash: wall, CPU and peak RSS
#   from /usr/bin/time -v, phase seconds from --summary-json, and the recall and
#   precision of the planted near copies (bench/planted_recall.py).
# Every row carries the load average before the run (the machine is shared).
set -euo pipefail

build=${1:?usage: scale_bench.sh BUILD_DIR WORK_DIR [selfjoin|e2e|all] [SIZES...]}
work=${2:?usage: scale_bench.sh BUILD_DIR WORK_DIR [selfjoin|e2e|all] [SIZES...]}
what=${3:-all}
shift $(($# < 3 ? $# : 3))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 300000 1000000)
here=$(cd "$(dirname "$0")" && pwd)
bench=$(realpath "$build/bench/neardup_band_join_bench")
neardup=$(realpath "$build/neardup")
mkdir -p "$work"
cd "$work"

load() { cut -d' ' -f1-3 /proc/loadavg; }

# timed NAME CMD...: runs CMD under /usr/bin/time -v (NAME.time), prints its
# output and "wall, user+sys, peak RSS, load before".
timed() {
  local name=$1
  shift
  local before
  before=$(load)
  /usr/bin/time -v -o "$name.time" "$@"
  python3 - "$name.time" "$before" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def get(key):
    return re.search(re.escape(key) + r": (.*)", t).group(1).strip()
wall = get("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
cpu = float(get("User time (seconds)")) + float(get("System time (seconds)"))
rss = int(get("Maximum resident set size (kbytes)")) / 1024
print(f"  -> wall {secs:.1f} s, cpu {cpu:.1f} s, peak RSS {rss:.0f} MB, load before {sys.argv[2]}")
PY
}

if [ "$what" = selfjoin ] || [ "$what" = all ]; then
  [ -s fps100k.bin ] || "$bench" fingerprints 100000 fps100k.bin 2
  echo "== reference at 100k real fingerprints (exact vs banded, through Dedup, 2 threads)"
  timed join100k_exact "$bench" join fps100k.bin 100000 exact 2
  timed join100k_banded "$bench" join fps100k.bin 100000 banded 2
  for n in 1000000 10000000; do
    [ -s "fps$n.bin" ] || "$bench" synth "$n" fps100k.bin "fps$n.bin"
    echo "== self-join, $n fingerprints, 2 threads"
    timed "selfjoin$n" "$bench" selfjoin "fps$n.bin" "$n" 2
  done
fi

if [ "$what" = e2e ] || [ "$what" = all ]; then
  max=0
  for n in "${sizes[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
  # Document i does not depend on N: the smaller corpora are prefixes.
  [ -s "c$max.jsonl" ] || "$bench" write "$max" "c$max.jsonl"
  for n in "${sizes[@]}"; do
    [ -s "c$n.jsonl" ] || head -n "$n" "c$max.jsonl" >"c$n.jsonl"
    [ -s "truth$n.txt" ] || "$bench" truth "$n" "truth$n.txt"
  done
  for method in chars5u minhash; do  # the default method, then MinHash
    for n in "${sizes[@]}"; do
      echo "== neardup dedup, $n documents, --method $method, 2 threads"
      timed "dedup_${method}_$n" "$neardup" dedup "c$n.jsonl" --method "$method" --threads 2 \
        -o "out_${method}_$n.jsonl" --summary-json "summary_${method}_$n.json"
      python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("  ", s["seconds"], {k: s["join"].get(k) for k in ("algorithm","band_bits","bands","candidates","pairs_confirmed","recall_at_k","recall_at_threshold") if k in s["join"]}, "duplicates", s["duplicates"])' "summary_${method}_$n.json"
      echo "   $(python3 "$here/planted_recall.py" "truth$n.txt" "out_${method}_$n.jsonl")"
    done
  done
fi
