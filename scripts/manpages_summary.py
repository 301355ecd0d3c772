#!/usr/bin/env python3
"""One line on a man-page dedup run: CN/TW same-page recall, reported pairs,
pairs between different pages and the largest cluster.

  manpages_summary.py OUT_DIR LABEL [LABEL_WIDTH]

OUT_DIR holds the run's records.jsonl, pairs.jsonl and clusters.jsonl
(scripts/measure_manpages.sh, scripts/measure_boilerplate.sh)."""
import json
import sys

d, args = sys.argv[1], sys.argv[2]
width = int(sys.argv[3]) if len(sys.argv) > 3 else 45
ids = {r["id"]: r for r in map(json.loads, open(d + "/records.jsonl", encoding="utf-8"))}
pairs = [(i, i.replace("/zh_CN/", "/zh_TW/")) for i in ids if "/zh_CN/" in i]
pairs = [(a, b) for a, b in pairs if b in ids]
same = sum(ids[a]["cluster"] == ids[b]["cluster"] for a, b in pairs)


def page(i):
    return i.split("/", 5)[-1]


reported = [json.loads(l) for l in open(d + "/pairs.jsonl", encoding="utf-8")]
cross = sum(page(p["a"]) != page(p["b"]) for p in reported)
sizes = [json.loads(l)["size"] for l in open(d + "/clusters.jsonl", encoding="utf-8")]
print(f"{args:{width}s} recall {same}/{len(pairs)} = {same / len(pairs):.3f}; "
      f"pairs {len(reported)}, between different pages {cross}; largest cluster {max(sizes, default=0)}")
