#!/usr/bin/env bash
# Regenerates tests/data/golden_fingerprints.jsonl from tests/data/golden_input.jsonl
# with the neardup binary in build/. Fingerprints are stored by users: run this
# ONLY for a deliberate, documented format change (and say so in the changelog);
# tests/fingerprint/golden_test.cc fails whenever fingerprints drift.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${NEARDUP_BIN:-build/neardup}
in=tests/data/golden_input.jsonl
out=tests/data/golden_fingerprints.jsonl
: >"$out.tmp"

# golden CONFIG OPTIONS...: appends `neardup fingerprint OPTIONS` of every
# input as {config, id, fingerprint, features} lines.
golden() {
  local config=$1
  shift
  "$bin" fingerprint "$in" --quiet --threads 1 "$@" |
    CONFIG="$config" /usr/bin/python3 -c '
import json, os, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({"config": os.environ["CONFIG"], "id": r["id"],
                      "fingerprint": r["fingerprint"], "features": r["features"]},
                     ensure_ascii=False))' >>"$out.tmp"
}
for bits in 64 128; do
  for features in words chars:3; do
    for weights in uniform tf tfidf; do
      for hash in xxh3 md5; do
        config="bits=$bits features=$features weights=$weights hash=$hash"
        golden "$config" --bits "$bits" --features "$features" --weights "$weights" --hash "$hash"
      done
    done
  done
done
# The method presets that no bits/features/weights/hash combination above
# covers (improved, entropy weights and sentence features); appended so that
# the lines above stay byte-identical.
for method in improved esimhash sentence; do
  config="method=$method"
  golden "$config" --method "$method"
done
mv "$out.tmp" "$out"
echo "wrote $(wc -l <"$out") golden fingerprints to $out"
