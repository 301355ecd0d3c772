#!/bin/bash
# Peak RSS of every rank of neardup-mpi and the bytes each stage moved, on a
# corpus of near copies of the BBC articles (../shared/data/en_bbc2225.jsonl:
# COPIES copies of each, every copy after the first with 1 word in 30
# replaced, shuffled into 16 files), or with COPIES = dN: N distinct
# documents of 150 words drawn from the articles' words, and a near copy of
# every twentieth (5 % duplicates).
#
#   bench/mpi/mpi_rss.sh NEARDUP_MPI COPIES P [dedup options...]
#   bench/mpi/mpi_rss.sh build/neardup-mpi 24 4 --method minhash
#   bench/mpi/mpi_rss.sh build/neardup-mpi d100000 4 --method minhash
#
# Prints one line per rank (peak RSS, from /usr/bin/time) and report.json's
# stages (seconds, bytes moved, counts). The corpus is made once under
# ${TMPDIR:-/tmp}/neardup_mpi_rss_COPIES.
set -euo pipefail
bin=$(realpath "$1")
copies=$2
ranks=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${TMPDIR:-/tmp}/neardup_mpi_rss_$copies
if [ ! -f "$corpus/part-15.jsonl" ]; then
  mkdir -p "$corpus"
  python3 - "$root/../shared/data/en_bbc2225.jsonl" "$copies" "$corpus" <<'PY'
import json, random, sys
source, copies, out = sys.argv[1], sys.argv[2], sys.argv[3]
rng = random.Random(14)
docs = [json.loads(l) for l in open(source)]
lines = []
if copies.startswith('d'):
    vocabulary = sorted({w for d in docs for w in d['text'].split()})
    for i in range(int(copies[1:])):
        words = [rng.choice(vocabulary) for _ in range(150)]
        lines.append(json.dumps({'id': f'd{i}', 'text': ' '.join(words)}))
        if i % 20 == 0:
            for _ in range(5):
                words[rng.randrange(len(words))] = rng.choice(vocabulary)
            lines.append(json.dumps({'id': f'd{i}c', 'text': ' '.join(words)}))
    copies = '0'
for c in range(int(copies)):
    for d in docs:
        words = d['text'].split()
        if c > 0:
            for _ in range(max(1, len(words) // 30)):
                words[rng.randrange(len(words))] = rng.choice(['alpha', 'beta', 'gamma', 'delta'])
        lines.append(json.dumps({'id': f"{d['id']}-{c}", 'text': ' '.join(words)}))
rng.shuffle(lines)
for f in range(16):
    with open(f'{out}/part-{f:02d}.jsonl', 'w') as o:
        for l in lines[f::16]:
            o.write(l + '\n')
PY
fi
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun --allow-run-as-root --oversubscribe -np "$ranks" sh -c \
  '/usr/bin/time -o "$0/rss.$OMPI_COMM_WORLD_RANK" -f "%M %e %U" "$@"' "$run" \
  "$bin" dedup "$corpus"/part-*.jsonl --work-dir "$run/work" --threads 1 -q \
  -o "$run/records.jsonl" --unique-out "$run/unique.jsonl" "$@"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 0 $((ranks - 1))); do
  read -r kb wall user < "$run/rss.$r"
  echo "rank $r: peak RSS $((kb / 1024)) MB, wall $wall s, user $user s"
done
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("documents", r["documents"], "ranks", r["ranks"])
for s in r["stages"]:
    extra = {k: v for k, v in s.items() if k not in ("stage", "seconds", "bytes_moved")}
    print("%-12s %8.3f s %14s B  %s" % (s["stage"], s["seconds"], format(s["bytes_moved"], ","), extra))
' "$run/work/report.json"
