#!/usr/bin/env bash
# JSONL in, near duplicates out: keeps the first copy of each group of near
# duplicates and writes the kept input lines, byte for byte, to unique.jsonl.
#   bash examples/jsonl_dedup.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-out/examples}
mkdir -p "$out"
neardup dedup "$here/news.jsonl" -o "$out/records.jsonl" --unique-out "$out/unique.jsonl" \
  --duplicates-out "$out/duplicates.jsonl"
ids() { sed 's/^{"id":"\([^"]*\)".*/\1/' "$1" | paste -sd' '; }
echo "kept ($out/unique.jsonl): $(ids "$out/unique.jsonl")"
echo "near duplicates ($out/duplicates.jsonl): $(ids "$out/duplicates.jsonl")"
