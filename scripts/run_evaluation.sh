#!/usr/bin/env bash
# Reproduces every run of doc/evaluation.md: `neardup eval docs` on THUCNews
# (>= 800 characters and all), BBC, the feature/weight ablations, and
# `neardup eval pairs` on PAWS-X and LCQMC.
#
#   scripts/run_evaluation.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR defaults to build/ (configure and build it first, see README.md);
# OUT_DIR to out/evaluation/. The data is read from ../shared/data beside the
# repository, or from $NEARDUP_SHARED_DATA. One thread each, so that docs/s is
# single-core fingerprinting throughput.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
OUT="${2:-$ROOT/out/evaluation}"
DATA="${NEARDUP_SHARED_DATA:-$ROOT/../shared/data}"
ND="$BUILD/neardup"
THREADS="${THREADS:-1}"
SEED="${SEED:-1}"

if [ ! -x "$ND" ]; then
  echo "run_evaluation.sh: $ND not found; build first (cmake -S . -B build -G Ninja && ninja -C build)" >&2
  exit 1
fi
if [ ! -f "$DATA/zh_thucnews1000.jsonl" ]; then
  echo "run_evaluation.sh: no evaluation data in $DATA (set NEARDUP_SHARED_DATA)" >&2
  exit 1
fi
mkdir -p "$OUT"

run() {
  echo "+ $*" >&2
  /usr/bin/time -f "  %e s, %M KB" "$@"
}

# 1. THUCNews, documents of >= 800 characters (seed 003's filter), all methods.
run "$ND" eval docs --corpus "$DATA/zh_thucnews1000.jsonl" --min-chars 800 \
  --edits 5,10,15,20 --bits 64,128 --methods all --seed "$SEED" --threads "$THREADS" \
  --report "$OUT/thuc800" --write-dataset "$OUT/thuc800/dataset"

# 2. THUCNews, every document.
run "$ND" eval docs --corpus "$DATA/zh_thucnews1000.jsonl" \
  --edits 5,10,15,20 --bits 64,128 --methods all --seed "$SEED" --threads "$THREADS" \
  --report "$OUT/thuc_all"

# 3. BBC News (English; 98 exact duplicate bodies are natural duplicates).
run "$ND" eval docs --corpus "$DATA/en_bbc2225.jsonl" \
  --edits 5,10,15,20 --bits 64,128 --methods all --seed "$SEED" --threads "$THREADS" \
  --report "$OUT/bbc"

# 4. Ablation at T = 10 % on THUCNews >= 800: character n-gram length, weights, top-K.
run "$ND" eval docs --corpus "$DATA/zh_thucnews1000.jsonl" --min-chars 800 \
  --edits 10,20 --bits 64,128 --methods none --seed "$SEED" --threads "$THREADS" \
  --custom c1tf=chars:1/tf/0 --custom c2tf=chars:2/tf/0 --custom c3tf=chars:3/tf/0 \
  --custom c4tf=chars:4/tf/0 --custom c5tf=chars:5/tf/0 --custom c3uni=chars:3/uniform/0 \
  --custom c2uni=chars:2/uniform/0 --custom c4uni=chars:4/uniform/0 \
  --custom wtf=words/tf/0 --custom wuni=words/uniform/0 \
  --custom w10=words/tfidf/10 --custom w20=words/tfidf/20 --custom w50=words/tfidf/50 \
  --custom w100=words/tfidf/100 --custom wall=words/tfidf/0 \
  --report "$OUT/ablation"

# 4b. The same on BBC (English): character n-gram length and weights.
run "$ND" eval docs --corpus "$DATA/en_bbc2225.jsonl" \
  --edits 10 --bits 64,128 --methods none --seed "$SEED" --threads "$THREADS" \
  --custom c3uni=chars:3/uniform/0 --custom c5tf=chars:5/tf/0 --custom c5uni=chars:5/uniform/0 \
  --custom wuni=words/uniform/0 --custom wall=words/tfidf/0 \
  --report "$OUT/ablation_bbc"

# 5. Labelled pairs.
run "$ND" eval pairs "$DATA/zh_pairs/pawsx_zh_test_2k.tsv" --bits 64,128 --methods all \
  --threads "$THREADS" --report "$OUT/pawsx"
run "$ND" eval pairs "$DATA/zh_pairs/lcqmc_test.tsv" --bits 64,128 --methods all \
  --threads "$THREADS" --report "$OUT/lcqmc"

echo "run_evaluation.sh: reports in $OUT/{thuc800,thuc_all,bbc,ablation,ablation_bbc,pawsx,lcqmc}/report.md" >&2
