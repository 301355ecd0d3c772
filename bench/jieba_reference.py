#!/usr/bin/python3
# Copyright 2026 The neardup Authors.
#
# The python3-jieba side of neardup's segmenter checks and benchmarks. Run it
# with Debian's /usr/bin/python3 (which has python3-jieba installed).
#
#   jieba_reference.py dump IN.jsonl OUT.jsonl [--topk K] [--user-dict F]... [--no-hmm]
#       For each input line {"text": ...} writes {"cut": jieba.lcut(text),
#       "tags": extract_tags(text, topK=K, withWeight=True)} (K = 20 default;
#       0 = all). Floats are written with repr (exact round trip).
#   jieba_reference.py bench IN.jsonl [--mb N]
#       Times jieba.lcut, jieba.posseg.lcut and extract_tags(topK=20) over the
#       documents' "text" fields, repeated whole until they reach N MB (default
#       50, the same rule as neardup_segment_bench's NEARDUP_BENCH_MB), and
#       prints MB/s (1 MB = 10^6 bytes of UTF-8; CPU time of this process, as
#       Google Benchmark reports for neardup) for each. posseg.lcut is the
#       reference for "segmentation with POS" although its algorithm differs
#       (it runs its own HMM tagger).
import argparse
import hashlib
import json
import logging
import sys
import time

import jieba
import jieba.analyse
import jieba.posseg

jieba.setLogLevel(logging.WARNING)


def dump(args):
    jieba.initialize()
    for path in args.user_dict or []:
        jieba.load_userdict(path)
    with open(args.input, encoding="utf-8") as fin, open(args.output, "w", encoding="utf-8") as fout:
        for line in fin:
            text = json.loads(line)["text"]
            cut = jieba.lcut(text, HMM=not args.no_hmm)
            tags = jieba.analyse.extract_tags(text, topK=args.topk, withWeight=True)
            fout.write(json.dumps({"cut": cut, "tags": [[w, x] for w, x in tags]},
                                  ensure_ascii=False) + "\n")


def simhash64_tfidf20(text):
    """Seed 001/002's SimHash in Python: extract_tags top 20, each keyword's
    64-bit hash (the first 8 bytes of its MD5, as the simhash package does),
    +w / -w per bit, sign. The reference for neardup's fingerprint speed."""
    v = [0.0] * 64
    for word, weight in jieba.analyse.extract_tags(text, topK=20, withWeight=True):
        h = int.from_bytes(hashlib.md5(word.encode("utf-8")).digest()[:8], "big")
        for j in range(64):
            v[j] += weight if (h >> j) & 1 else -weight
    return sum(1 << j for j in range(64) if v[j] > 0)


def bench(args):
    with open(args.text, encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f if line.strip()]
    target = int(args.mb * 1e6)
    corpus, size = [], 0
    while True:
        for d in docs:
            corpus.append(d)
            size += len(d.encode("utf-8"))
        if size >= target:
            break
    jieba.initialize()
    jieba.posseg.lcut("预热")
    jieba.analyse.extract_tags("预热", topK=20)
    mb = size / 1e6
    print("text %.1f MB, %d documents" % (mb, len(corpus)))
    for name, fn in (("fingerprint64_tfidf20", simhash64_tfidf20),
                     ("cut", lambda t: jieba.lcut(t)),
                     ("cut_with_pos(posseg)", lambda t: jieba.posseg.lcut(t)),
                     ("extract_top20", lambda t: jieba.analyse.extract_tags(t, topK=20, withWeight=True))):
        t0 = time.process_time()
        for d in corpus:
            fn(d)
        dt = time.process_time() - t0
        print("python3-jieba %-22s %8.3f MB/s  (%.1f s)" % (name, mb / dt, dt))
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("input")
    d.add_argument("output")
    d.add_argument("--topk", type=int, default=20)
    d.add_argument("--user-dict", action="append")
    d.add_argument("--no-hmm", action="store_true")
    b = sub.add_parser("bench")
    b.add_argument("text")
    b.add_argument("--mb", type=float, default=50)
    args = p.parse_args()
    dump(args) if args.cmd == "dump" else bench(args)


if __name__ == "__main__":
    main()
