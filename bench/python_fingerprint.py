#!/usr/bin/python3
"""neardup.fingerprint_batch from Python against `neardup fingerprint` (the CLI)
over the same JSONL corpus at the same thread count, in one run.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_fingerprint.py \\
        build/neardup ../shared/data/zh_thucnews1000.jsonl [--threads 1 2] [--repeat 5]

MB/s are of the documents' text (UTF-8 bytes). The CLI's time is the whole
process (start, JSON parsing, output to /dev/null); the method's pipeline is
built in both. Python is timed twice: fingerprint_batch alone on texts already
in memory (its pipeline built by a warm-up call), and json-loading the file
plus fingerprint_batch plus building the method's pipeline from scratch in a
fresh process (what a user's script does end to end). Best of --repeat runs,
by wall-clock time and by CPU time (all threads; on a shared machine the CPU
figures are the steadier ones).
"""

import argparse
import json
import resource
import subprocess
import sys
import time

import neardup


def _cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best(fn, repeat):
    """(best wall seconds, best CPU seconds) of `repeat` runs; CPU counts every
    thread of this process and of the children it waited for."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return min(walls), min(cpus)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cli")
    p.add_argument("corpus")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--methods", nargs="+", default=["chars5", "tfidf"])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--copies", type=int, default=5,
                   help="the corpus this many times over (CLI: the file named as many times), "
                        "so that process start and the pipeline's loading weigh less")
    args = p.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f] * args.copies
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print("corpus: %s x %d, %d documents, %.2f MB of text"
          % (args.corpus, args.copies, len(texts), mb))
    print("MB/s per wall second (per CPU second)")
    print("| method | threads | CLI | fingerprint_batch | ratio wall (CPU) | Python end to end |")
    print("|---|---|---|---|---|---|")
    end_to_end = (
        "import json, sys, neardup\n"
        "texts = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')]"
        " * int(sys.argv[4])\n"
        "neardup.fingerprint_batch(texts, method=sys.argv[2], threads=int(sys.argv[3]))\n")
    for method in args.methods:
        neardup.fingerprint_batch(texts[:1], method=method)  # builds the pipeline
        for threads in args.threads:
            cli = best(lambda: subprocess.run(
                [args.cli, "fingerprint", "--quiet", "--method", method, "--threads",
                 str(threads), *[args.corpus] * args.copies, "-o", "/dev/null"], check=True),
                       args.repeat)
            py = best(lambda: neardup.fingerprint_batch(texts, method=method, threads=threads),
                      args.repeat)
            e2e = best(lambda: subprocess.run(
                [sys.executable, "-c", end_to_end, args.corpus, method, str(threads),
                 str(args.copies)],
                check=True), args.repeat)
            print("| %s | %d | %.1f (%.1f) | %.1f (%.1f) | %.2f (%.2f) | %.1f (%.1f) |"
                  % (method, threads, mb / cli[0], mb / cli[1], mb / py[0], mb / py[1],
                     cli[0] / py[0], cli[1] / py[1], mb / e2e[0], mb / e2e[1]))


if __name__ == "__main__":
    main()
