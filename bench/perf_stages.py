#!/usr/bin/env python3
# Copyright 2026 The neardup Authors.
#
# The CPU of a `neardup dedup` profile by stage: perf's self time per symbol
# (`perf report --no-children --sort sym`), bucketed by the stage the symbol
# belongs to, times the run's CPU seconds. Not a test: prints one row per
# stage (doc/benchmarks.md, "1M documents end to end").
#
#   perf record -g -o perf.data neardup dedup c1000000.jsonl --threads 2 -q -o /dev/null
#   bench/perf_stages.py perf.data CPU_SECONDS
import re
import subprocess
import sys

# (stage, symbol pattern): the first match wins.
STAGES = [
    ("boilerplate line keys (count + strip)",
     r"CanonicalInto|LineKey|LineCounter|LineStats|DocumentLineKeys|BoilerplateFilter|"
     r"XXH3_hashLong|PlainRun|__memchr"),
    ("fingerprint (fused pass)", r"FusedPass|UnitSimHasher|FlushBlock|GramSet|CodePointCount"),
    ("Jaccard sketch", r"MakeJaccardSketch"),
    ("band join", r"SimHashBandJoin|PackKeys|SortWords|MergeUnique|IdPair|BandJoin|VerifyBucket|BucketPairs"),
    ("verification of pairs", r"SketchJaccard|Verif"),
    ("clustering", r"[Cc]luster|UnionFind"),
    ("reading the JSON input", r"FastJsonLine|CjkBlocks|Reader|_copy_to_iter|utf8|filemap|ReadPass"),
    ("output", r"nlohmann|serializer|JsonLine|ToHex"),
    ("malloc, free, memcpy", r"malloc|free|memmove|memcpy|memset"),
]


def main():
    data, cpu = sys.argv[1], float(sys.argv[2])
    report = subprocess.run(
        ["perf", "report", "-i", data, "--no-children", "--sort", "sym", "-g", "none", "--stdio",
         "--percent-limit", "0"], capture_output=True, text=True, check=True).stdout
    shares = {}
    for line in report.splitlines():
        m = re.match(r"\s+([0-9.]+)%\s+\[.\]\s+(.*)", line)
        if not m:
            continue
        share, symbol = float(m.group(1)), m.group(2)
        stage = next((name for name, pattern in STAGES if re.search(pattern, symbol)), "other")
        shares[stage] = shares.get(stage, 0) + share
    for name in [s for s, _ in STAGES] + ["other"]:
        share = shares.get(name, 0)
        print(f"| {name} | {share:.1f} % | {cpu * share / 100:.1f} s |")


if __name__ == "__main__":
    main()
