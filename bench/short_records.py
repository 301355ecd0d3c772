#!/usr/bin/env python3
"""Writes the short-record corpus of issue 27 (doc/benchmarks.md, "Short
records"): N one-line records `<word> <word> <line number>`, the words drawn
(seeded) from a dozen common Chinese and English ones. Titles, queries,
product names and log lines look like this: few distinct features, most
records near-identical to thousands of others.

    python3 bench/short_records.py N [SEED] > records.txt
    neardup dedup records.txt --input-format lines ...

Not data for the repository: generate it in a work directory.
"""
import random
import sys

WORDS = ["市场", "经济", "北京", "中国", "发展", "公司",
         "the", "of", "and", "market", "news", "data"]


def main():
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    out = sys.stdout
    choice = rng.choice
    lines = []
    for i in range(n):
        lines.append(f"{choice(WORDS)} {choice(WORDS)} {i}\n")
        if len(lines) >= 65536:
            out.write("".join(lines))
            lines.clear()
    out.write("".join(lines))


if __name__ == "__main__":
    main()
