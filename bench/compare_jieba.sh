#!/bin/sh
# Copyright 2026 The neardup Authors.
#
# Segmentation, keyword and fingerprint throughput of neardup vs python3-jieba
# (with a Python SimHash over extract_tags, as seeds 001/002) on the same text:
# THUCNews (../shared/data/zh_thucnews1000.jsonl) repeated to at least MB
# megabytes (default 50, the issue's requirement; pass e.g. 5 for a quick run).
# Builds nothing: expects an existing build of neardup_segment_bench.
#
#   bench/compare_jieba.sh [MB] [BUILD_DIR]      # defaults: 50 build
set -eu
MB=${1:-50}
BUILD=${2:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${NEARDUP_SHARED_DATA:-$ROOT/../shared/data}/zh_thucnews1000.jsonl
BENCH=$BUILD/bench/neardup_segment_bench
[ -f "$DATA" ] || { echo "compare_jieba: $DATA is absent" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "compare_jieba: build $BENCH first (ninja -C $BUILD neardup_segment_bench)" >&2; exit 1; }
/usr/bin/python3 -c 'import jieba' 2>/dev/null || { echo "compare_jieba: /usr/bin/python3 cannot import jieba (apt-get install python3-jieba)" >&2; exit 1; }

TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "== neardup ($MB MB, single thread)"
NEARDUP_BENCH_MB=$MB "$BENCH" --benchmark_filter='BM_(Cut|CutWithPos|ExtractTop20|Fingerprint64Tfidf20/0)$' \
  --benchmark_min_time=1 --benchmark_format=csv 2>/dev/null > "$TMP/neardup.csv"
awk -F, '/^"BM_/ { gsub(/"/, "", $1); printf "neardup       %-22s %8.3f MB/s\n", $1, $6 / 1e6 }' "$TMP/neardup.csv" | tee "$TMP/neardup.txt"
echo "== python3-jieba ($MB MB)"
/usr/bin/python3 "$ROOT/bench/jieba_reference.py" bench "$DATA" --mb "$MB" | tee "$TMP/python.txt"
echo "== ratio (neardup / python3-jieba)"
for pair in "BM_Cut cut" "BM_CutWithPos cut_with_pos(posseg)" "BM_ExtractTop20 extract_top20" \
    "BM_Fingerprint64Tfidf20/0 fingerprint64_tfidf20"; do
  set -- $pair
  n=$(awk -v k="$1" '$2 == k { print $3 }' "$TMP/neardup.txt")
  p=$(awk -v k="$2" '$2 == k { print $3 }' "$TMP/python.txt")
  awk -v a="$n" -v b="$p" -v k="$1" 'BEGIN { printf "%-16s neardup %8.3f MB/s  python %7.3f MB/s  ratio %6.1fx\n", k, a, b, a / b }'
done
