#!/usr/bin/env bash
# Copyright 2026 The neardup Authors.
#
# Dedup rate and ingest speed of the store's chunkers on two corpora:
#   versions: scripts/make_versions.py on zh_thucnews1000.jsonl (V = 5, 5 % edits)
#   man:      the zh_CN man pages (/usr/share/man/zh_CN/**, gunzipped to text)
# Prints a Markdown table (one row per corpus x chunker x compression).
#
#   bench/store_compare.sh [BUILD_DIR] [WORK_DIR]
#
# Env: CHUNKERS (default below), THRESHOLDS (simhash near-threshold sweep),
#      JSONL (input of the versions corpus), VERSIONS, EDIT_RATE, SEED,
#      REPEAT (ingest runs per row; the fastest is reported).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
WORK="${2:-$(mktemp -d /tmp/neardup_store_bench.XXXXXX)}"
NEARDUP="$BUILD/neardup"
JSONL="${JSONL:-$ROOT/../shared/data/zh_thucnews1000.jsonl}"
[ -f "$JSONL" ] || JSONL=/work/shared/data/zh_thucnews1000.jsonl
VERSIONS="${VERSIONS:-5}"
EDIT_RATE="${EDIT_RATE:-0.05}"
SEED="${SEED:-1}"
CHUNKERS="${CHUNKERS:-simhash exact-paragraph fsp:4096 fsp:1024 cdc:4096 cdc:1024}"
THRESHOLDS="${THRESHOLDS:-3 8 16 24 32}"
REPEAT="${REPEAT:-1}"

mkdir -p "$WORK"
echo "work dir: $WORK" >&2

# Corpus 1: versions of real news articles.
if [ ! -d "$WORK/versions" ]; then
  python3 "$ROOT/scripts/make_versions.py" --input "$JSONL" --out "$WORK/versions" \
    --versions "$VERSIONS" --edit-rate "$EDIT_RATE" --seed "$SEED" >&2
fi
# Corpus 2: zh_CN man pages as text (roff source, decompressed).
if [ ! -d "$WORK/man" ]; then
  mkdir -p "$WORK/man"
  find /usr/share/man/zh_CN -type f -name '*.gz' | sort | while read -r f; do
    rel="${f#/usr/share/man/zh_CN/}"
    zcat "$f" > "$WORK/man/${rel//\//_}.txt" || rm -f "$WORK/man/${rel//\//_}.txt"
  done
fi

# run CORPUS_NAME DIR CHUNKER [extra add flags...]
# Ingests REPEAT times into a fresh store and reports the fastest wall time and
# the CPU time (user + sys) of that run: the machines here are shared, so
# wall time includes waiting for the CPU and the disk.
run() {
  local name="$1" dir="$2" chunker="$3"
  shift 3
  local store="$WORK/store_${name}_${chunker//:/_}_$$.db"
  local best_wall="" best_cpu=""
  for _ in $(seq "$REPEAT"); do
    rm -f "$store" "$store-wal" "$store-shm"
    local timing
    timing=$( { /usr/bin/time -f "%e %U %S" bash -c \
      'find "$1" -type f -name "*.txt" | sort | xargs "$2" store add --store "$3" --chunker "$4" "${@:5}" > /dev/null' \
      _ "$dir" "$NEARDUP" "$store" "$chunker" "$@" ; } 2>&1 | tail -1)
    read -r wall user sys <<< "$timing"
    local cpu
    cpu=$(python3 -c "print(float('$user') + float('$sys'))")
    if [ -z "$best_wall" ] || python3 -c "import sys; sys.exit(0 if $wall < $best_wall else 1)"; then
      best_wall=$wall
      best_cpu=$cpu
    fi
  done
  "$NEARDUP" store verify --store "$store" > /dev/null
  local json
  json=$("$NEARDUP" store stats --store "$store" --json)
  python3 - "$name" "$chunker" "$*" "$best_wall" "$best_cpu" "$json" <<'PY'
import json, sys
name, chunker, flags, wall, cpu, js = sys.argv[1:]
s = json.loads(js)
mb = s["bytes_in"] / 1e6
print("| %s | %s | %s | %d | %.2f | %.2f | %.2f%% | %.2f | %.2f | %.1f | %.1f |" % (
    name, chunker, flags or "-", s["files"], mb, s["bytes_out"] / 1e6,
    100 * s["dedup_rate"], s["stored_bytes"] / 1e6, s["db_bytes"] / 1e6,
    mb / max(float(wall), 1e-3), mb / max(float(cpu), 1e-3)))
PY
  rm -f "$store" "$store-wal" "$store-shm"
}

echo "| corpus | chunker | flags | files | MB in | MB out | dedup rate | MB stored | db MB | MB/s (wall) | MB/s (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
# --no-sync: no fsync per file, so the MB/s column shows the chunker and
# SQLite work rather than the disk's fsync latency (rows with "-" fsync once
# per file, the default).
for corpus in versions man; do
  for c in $CHUNKERS; do
    run "$corpus" "$WORK/$corpus" "$c" --no-sync
    run "$corpus" "$WORK/$corpus" "$c" --no-sync --no-compress
  done
  run "$corpus" "$WORK/$corpus" simhash
  run "$corpus" "$WORK/$corpus" cdc:1024
done
for corpus in versions man; do
  for t in $THRESHOLDS; do
    run "$corpus" "$WORK/$corpus" simhash --no-sync --near-threshold "$t"
  done
  run "$corpus" "$WORK/$corpus" simhash --no-sync --feature-hash xxh3
done
