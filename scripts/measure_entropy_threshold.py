#!/usr/bin/env python3
"""Measures E-SimHash's weight threshold W_t (doc/methods.md).

For every document of a JSONL corpus (default: THUCNews 1000) makes a 1%-edited
copy (random code point substitutions, deletions and insertions, seed 1), then
fingerprints originals and copies with `neardup fingerprint --method esimhash
--entropy-threshold W` for each W and reports, per W: the mean Hamming distance
of (original, edit) pairs, of unrelated pairs (each document with its next 10),
the share of edited pairs within k = 10 (the preset's k), the share of
unrelated pairs within k = 10, and the best single-threshold balanced accuracy.

usage: measure_entropy_threshold.py [--bin build/neardup] [--corpus FILE] [W ...]
"""
import argparse
import json
import os
import random
import subprocess
import tempfile


def edit(text, share, rng):
    chars = list(text)
    for _ in range(max(1, int(len(chars) * share))):
        if not chars:
            break
        pos = rng.randrange(len(chars))
        donor = chars[rng.randrange(len(chars))]
        op = rng.randrange(3)
        if op == 0:
            chars[pos] = donor
        elif op == 1:
            del chars[pos]
        else:
            chars.insert(pos, donor)
    return "".join(chars)


def fingerprints(binary, path, extra):
    out = subprocess.run([binary, "fingerprint", path, "-q", "--method", "esimhash"] + extra,
                         check=True, capture_output=True, text=True).stdout
    return {r["id"]: int(r["fingerprint"], 16) for r in map(json.loads, out.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/neardup")
    ap.add_argument("--corpus", default="/work/shared/data/zh_thucnews1000.jsonl")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("thresholds", nargs="*", type=float,
                    default=[0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 90.0])
    args = ap.parse_args()
    rng = random.Random(1)
    docs = [json.loads(l) for l in open(args.corpus, encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"id": d["id"], "text": d["text"]}, ensure_ascii=False) + "\n")
                f.write(json.dumps({"id": d["id"] + "#e", "text": edit(d["text"], 0.01, rng)},
                                   ensure_ascii=False) + "\n")
        print("W_t\tmean_edit\tmean_unrel\tedit<=k\tunrel<=k\tbest_bal_acc")
        for w in args.thresholds:
            fp = fingerprints(args.bin, path, ["--entropy-threshold", str(w)])
            ids = [d["id"] for d in docs]
            near = [bin(fp[i] ^ fp[i + "#e"]).count("1") for i in ids]
            far = [bin(fp[ids[i]] ^ fp[ids[j]]).count("1")
                   for i in range(len(ids)) for j in range(i + 1, min(len(ids), i + 11))]
            best = max((sum(d <= t for d in near) / len(near) +
                        sum(d > t for d in far) / len(far)) / 2 for t in range(129))
            print(f"{w:g}\t{sum(near)/len(near):.2f}\t{sum(far)/len(far):.2f}\t"
                  f"{sum(d <= args.k for d in near)/len(near):.3f}\t"
                  f"{sum(d <= args.k for d in far)/len(far):.4f}\t{best:.4f}")


if __name__ == "__main__":
    main()
