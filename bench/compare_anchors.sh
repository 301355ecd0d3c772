#!/bin/sh
# Copyright 2026 The neardup Authors.
#
# neardup against the C++ anchors, in one process on the same text
# (bench/anchors/compare_anchors.cc): cppjieba (segmentation, POS, keywords
# top 20), yanyiwu/simhash (64-bit tfidf SimHash top 20), faiss
# IndexBinaryMultiHash (k = 3 over 1M 64-bit codes; from Debian's
# libfaiss-dev, skipped when absent), plus the default chars5u fingerprint (no anchor).
# Interleaved rounds, one thread, median MB/s and median of per-round ratios
# (CPU time; the machine may be shared, so absolute MB/s are noisy and the
# ratios are what counts). The anchors come from ../shared/anchors (or
# $NEARDUP_ANCHORS); without them the script says so and exits 0.
#
#   bench/compare_anchors.sh [ROUNDS] [BUILD_DIR] [MB]      # defaults: 5 build 0 (the corpus once)
set -eu
ROUNDS=${1:-5}
BUILD=${2:-build}
MB=${3:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ANCHORS=${NEARDUP_ANCHORS:-$ROOT/../shared/anchors}
DATA=${NEARDUP_SHARED_DATA:-$ROOT/../shared/data}/zh_thucnews1000.jsonl
JIEBA=${NEARDUP_JIEBA_DIR:-/usr/lib/python3/dist-packages/jieba}
if [ ! -f "$ANCHORS/cppjieba/include/cppjieba/Jieba.hpp" ] || [ ! -d "$ANCHORS/limonp/include" ] ||
   [ ! -f "$ANCHORS/simhash/include/simhash/Simhasher.hpp" ]; then
  echo "compare_anchors: the anchors are absent ($ANCHORS: cppjieba, limonp, simhash); nothing to compare"
  exit 0
fi
[ -f "$DATA" ] || { echo "compare_anchors: $DATA is absent" >&2; exit 1; }
[ -f "$JIEBA/dict.txt" ] || { echo "compare_anchors: python3-jieba's data is absent ($JIEBA)" >&2; exit 1; }
ANCHORS=$(cd "$ANCHORS" && pwd)
cmake -S "$ROOT" -B "$BUILD" -DNEARDUP_ANCHORS_DIR="$ANCHORS" >/dev/null
grep -q NEARDUP_HAVE_FAISS "$BUILD/build.ninja" ||
  echo "compare_anchors: faiss not found (apt-get install libfaiss-dev): no index anchor"
nice ninja -C "$BUILD" neardup_compare_anchors >/dev/null
OMP_NUM_THREADS=1 "$BUILD/bench/neardup_compare_anchors" --anchors "$ANCHORS" --jieba "$JIEBA" \
  --corpus "$DATA" --rounds "$ROUNDS" --mb "$MB"
