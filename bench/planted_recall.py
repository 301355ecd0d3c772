#!/usr/bin/env python3
# Copyright 2026 The neardup Authors.
#
# Recall and precision of `neardup dedup` on the corpus of
# `neardup_band_join_bench write N` against its planted copies
# (`neardup_band_join_bench truth N pairs.txt`). Recall: the share of planted
# (copy, source) pairs that the output puts in one cluster. Precision: of the
# pairs of documents that share an output cluster, the share that are in one
# planted family (connected by planted copies). Not a test: prints one line.
#
#   bench/planted_recall.py pairs.txt dedup_output.jsonl
import collections
import itertools
import json
import sys


def main():
    truth_path, output_path = sys.argv[1], sys.argv[2]
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    planted = []
    with open(truth_path) as f:
        for line in f:
            a, b = line.split()
            planted.append((a, b))
            parent[find(a)] = find(b)
    cluster = {}
    with open(output_path) as f:
        for line in f:
            r = json.loads(line)
            cluster[r["id"]] = r["cluster"]
    planted = [(a, b) for a, b in planted if a in cluster and b in cluster]
    found = sum(1 for a, b in planted if cluster[a] == cluster[b])
    members = collections.defaultdict(list)
    for doc, c in cluster.items():
        members[c].append(doc)
    together = right = 0
    for docs in members.values():
        for a, b in itertools.combinations(docs, 2):
            together += 1
            right += find(a) == find(b)
    recall = found / len(planted) if planted else 1.0
    precision = right / together if together else 1.0
    print(f"planted pairs {len(planted)}, in one cluster {found}: recall {recall:.4f}; "
          f"pairs sharing a cluster {together}, in one planted family {right}: "
          f"precision {precision:.4f}")


if __name__ == "__main__":
    main()
