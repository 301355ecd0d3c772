#!/usr/bin/env bash
# Simplified and Traditional Chinese copies of the same text are near
# duplicates only after Traditional-to-Simplified conversion (--t2s, OpenCC):
# the same corpus deduplicated without and with it.
#   bash examples/chinese_t2s.sh [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-out/examples}
mkdir -p "$out"
for t2s in "" --t2s; do
  neardup dedup "$here/zh_t2s.jsonl" -q ${t2s:+"$t2s"} --unique-out "$out/unique${t2s}.jsonl" \
    -o /dev/null
  echo "${t2s:-without --t2s}: $(wc -l <"$out/unique${t2s}.jsonl") of 5 kept:" \
    "$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$out/unique${t2s}.jsonl" | paste -sd' ')"
done
