#!/usr/bin/env python3
"""Judges the pairs between different man pages that `neardup dedup` reports
(doc/evaluation.md, "Man pages"): does a pair share only boilerplate?

  /usr/bin/python3 scripts/manpages_cross_pairs.py PAIRS.jsonl [NORMALIZE]

Reads the text of every page of /usr/share/man/zh_CN and zh_TW through
`neardup segment --normalize nfkc,tw2sp2` (the text dedup fingerprints with
--t2s), and for each reported pair of two different page names (zh_CN/x and
zh_TW/x are one page name):

  template line   a line (canonical: trimmed, white space collapsed) found in
                  3 or more page names: text the pair shares with other pages
  J_full          exact character 5-gram Jaccard of the two pages
  J_own           the same after the template lines are removed from both:
                  the page-specific text

  boilerplate-only   J_own < 0.2 and J_full >= 0.2: what they share is template
  unrelated          J_full < 0.2: they share little at all (a fingerprint
                     false positive, not boilerplate)
  near-duplicate     J_own >= 0.2: the page-specific text itself is alike

Prints one line per pair and the counts."""
import collections
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEARDUP_BIN", os.path.join(ROOT, "build", "neardup"))


def page(doc_id):
    return doc_id.split("/zh_CN/")[-1].split("/zh_TW/")[-1]


def canonical(line):
    return re.sub(r"\s+", " ", line).strip()


def grams(text, n=5):
    return {text[i:i + n] for i in range(max(1, len(text) - n + 1))}


def jaccard(a, b):
    return len(a & b) / len(a | b) if a or b else 1.0


def main():
    pairs_path = sys.argv[1]
    normalize = sys.argv[2] if len(sys.argv) > 2 else "nfkc,tw2sp2"
    out = subprocess.run([BIN, "segment", "/usr/share/man/zh_CN", "/usr/share/man/zh_TW", "-q",
                          "--normalize", normalize], check=True, capture_output=True, text=True)
    text = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        text[r["id"]] = "".join(r["tokens"])
    pages_of = collections.defaultdict(set)
    for doc_id, t in text.items():
        for line in t.split("\n"):
            c = canonical(line)
            if c:
                pages_of[c].add(page(doc_id))

    def own(doc_id):
        return "\n".join(l for l in text[doc_id].split("\n")
                         if len(pages_of.get(canonical(l), ())) < 3)

    counts = collections.Counter()
    for line in open(pairs_path, encoding="utf-8"):
        p = json.loads(line)
        a, b = p["a"], p["b"]
        if page(a) == page(b):
            continue
        j_full = jaccard(grams(text[a]), grams(text[b]))
        j_own = jaccard(grams(own(a)), grams(own(b)))
        if j_own >= 0.2:
            kind = "near-duplicate"
        elif j_full < 0.2:
            kind = "unrelated"
        else:
            kind = "boilerplate-only"
        counts[kind] += 1
        short = lambda i: i.split("/man/")[-1]
        print(f"{short(a)} ~ {short(b)}: distance {p.get('distance')}, J_full {j_full:.3f}, "
              f"J_own {j_own:.3f}: {kind}")
    total = sum(counts.values())
    print(f"cross-page pairs: {total}; " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          (f"; boilerplate-only share {counts['boilerplate-only'] / total:.3f}" if total else ""))


if __name__ == "__main__":
    main()
