#!/usr/bin/env python3
"""Measures neardup dedup on Debian's manpages-zh: zh_CN/<path> and zh_TW/<path>
are the same page in two scripts, a real labelled cross-script test.

  /usr/bin/python3 scripts/manpages_eval.py [neardup dedup options...]

Runs `neardup dedup /usr/share/man/zh_CN /usr/share/man/zh_TW OPTIONS
--pairs-out ...` and prints: how many CN/TW page pairs are within k (pair
recall) and in one cluster (cluster recall), the cluster size distribution,
and clusters that join different pages (which may be true near duplicates:
aliases, or pages translated from one template)."""
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEARDUP_BIN", os.path.join(ROOT, "build", "neardup"))
MAN = "/usr/share/man"


def page(doc_id):
    # /usr/share/man/zh_CN/man1/ls.1.gz -> man1/ls.1.gz
    return doc_id.split("/zh_CN/")[-1].split("/zh_TW/")[-1]


def main():
    opts = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        records, pairs = os.path.join(tmp, "r.jsonl"), os.path.join(tmp, "p.jsonl")
        cmd = [BIN, "dedup", MAN + "/zh_CN", MAN + "/zh_TW", "-q", "-o", records,
               "--pairs-out", pairs] + opts
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        recs = [json.loads(l) for l in open(records, encoding="utf-8")]
        prs = [json.loads(l) for l in open(pairs, encoding="utf-8")]
    ids = {r["id"] for r in recs}
    truth = {(i, i.replace("/zh_CN/", "/zh_TW/")) for i in ids
             if "/zh_CN/" in i and i.replace("/zh_CN/", "/zh_TW/") in ids}
    within = {(p["a"], p["b"]) for p in prs} | {(p["b"], p["a"]) for p in prs}
    cluster = {r["id"]: r["cluster"] for r in recs}
    pair_hits = sum(1 for t in truth if t in within)
    cluster_hits = sum(1 for a, b in truth if cluster[a] == cluster[b])
    other = sum(1 for p in prs if page(p["a"]) != page(p["b"]))
    sizes = collections.Counter(collections.Counter(cluster.values()).values())
    members = collections.defaultdict(set)
    for r in recs:
        members[r["cluster"]].add(page(r["id"]))
    mixed = sum(1 for m in members.values() if len(m) > 1)
    print(f"options: {' '.join(opts) or '(defaults)'}")
    print(f"documents: {len(recs)}; CN/TW page pairs: {len(truth)}")
    print(f"pair recall (CN/TW within k): {pair_hits}/{len(truth)} = {pair_hits / len(truth):.3f}")
    print(f"cluster recall (CN/TW in one cluster): {cluster_hits}/{len(truth)} = "
          f"{cluster_hits / len(truth):.3f}")
    print(f"pairs within k: {len(prs)}, of which between different pages: {other}")
    print(f"clusters joining different pages: {mixed}")
    print("cluster sizes: " + ", ".join(f"{s}: {n}" for s, n in sorted(sizes.items())))


if __name__ == "__main__":
    main()
