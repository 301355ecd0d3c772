#!/usr/bin/env python3
# Copyright 2026 The neardup Authors.
"""Makes a "versions" corpus for measuring the dedup store.

From a JSONL file of real documents (one JSON object per line with a "text"
field) it writes, for each document, V files: version 0 is the document as it
is; version k (k >= 1) is version k-1 with small random edits. The edits of one
version change about --edit-rate of its characters (default 5 %), mixing
sentence operations (insert a sentence taken from another document, delete a
sentence, replace one by a sentence of another document) with character
operations (insert, delete or replace one character).

Deterministic: the same input, options and --seed give the same files.
Standard library only.

  python3 scripts/make_versions.py --input data.jsonl --out /tmp/versions \
      --versions 5 --edit-rate 0.05 --seed 1 [--limit 1000]

Files: OUT/dNNNN_vK.txt (UTF-8, no trailing newline added).
"""

import argparse
import json
import os
import random
import re
import sys

# A sentence ends after a run of 。？！?! or a line break, with closing quotes.
_SENTENCE = re.compile(r"[^。？！?!\n]*(?:[。？！?!\n]+[”’」』）)\]]*|$)")


def split_sentences(text):
    return [s for s in _SENTENCE.findall(text) if s]


def edit_once(text, rng, donor_sentences, rate):
    """Returns `text` with edits touching about rate * len(text) characters."""
    budget = max(1, int(round(len(text) * rate)))
    sentences = split_sentences(text)
    changed = 0
    guard = 0
    while changed < budget and guard < 10000:
        guard += 1
        op = rng.random()
        if op < 0.5 and sentences:
            kind = rng.choice(("insert", "delete", "replace"))
            i = rng.randrange(len(sentences))
            if kind == "insert" and donor_sentences:
                new = rng.choice(donor_sentences)
                sentences.insert(i, new)
                changed += len(new)
            elif kind == "delete" and len(sentences) > 1:
                changed += len(sentences[i])
                del sentences[i]
            elif donor_sentences:
                new = rng.choice(donor_sentences)
                changed += max(len(new), len(sentences[i]))
                sentences[i] = new
        elif sentences:
            i = rng.randrange(len(sentences))
            s = sentences[i]
            pos = rng.randrange(len(s) + 1)
            char = rng.choice(text) if text else "字"
            kind = rng.choice(("insert", "delete", "replace"))
            if kind == "insert" or not s:
                s = s[:pos] + char + s[pos:]
            elif kind == "delete":
                pos = min(pos, len(s) - 1)
                s = s[:pos] + s[pos + 1:]
            else:
                pos = min(pos, len(s) - 1)
                s = s[:pos] + char + s[pos + 1:]
            sentences[i] = s
            changed += 1
        else:
            break
    return "".join(sentences)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="JSONL with a 'text' field")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--versions", type=int, default=5, help="files per document (V), >= 1")
    ap.add_argument("--edit-rate", type=float, default=0.05,
                    help="share of characters edited per version")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N documents")
    args = ap.parse_args(argv)
    if args.versions < 1 or not 0 <= args.edit_rate <= 1:
        ap.error("--versions must be >= 1 and --edit-rate in [0, 1]")

    docs = []
    bad = 0
    with open(args.input, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                text = json.loads(line)["text"]
            except (ValueError, KeyError, TypeError):
                bad += 1
                continue
            if isinstance(text, str) and text:
                docs.append(text)
            if args.limit and len(docs) >= args.limit:
                break
    if not docs:
        sys.exit("make_versions: no documents with a 'text' field in " + args.input)

    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for d, text in enumerate(docs):
        donor = split_sentences(docs[(d + 1) % len(docs)]) if len(docs) > 1 else []
        version = text
        for v in range(args.versions):
            if v > 0:
                version = edit_once(version, rng, donor, args.edit_rate)
            path = os.path.join(args.out, "d%04d_v%d.txt" % (d, v))
            with open(path, "w", encoding="utf-8", newline="") as out:
                out.write(version)
            total += len(version.encode("utf-8"))
    print("make_versions: %d documents x %d versions, %d bytes, %d bad lines -> %s"
          % (len(docs), args.versions, total, bad, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
