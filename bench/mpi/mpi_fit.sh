#!/bin/bash
# Issue 30's memory fit: peak RSS per rank of neardup-mpi at P = 1, 2, 4 on
# N = 1M and 2M documents, against neardup dedup in the same run (doc/
# distributed.md, "Memory per rank"; doc/benchmarks.md). Two parts:
#
#   bench/mpi/mpi_fit.sh join BUILD            # the join alone, synthetic fingerprints:
#       neardup_mpi_dedup_bench N 10 128 1 bandkeys|sorted (the band-key join
#       against the band-range join it replaced), N = 1M, 2M, P = 1, 2, 4
#   bench/mpi/mpi_fit.sh text NEW_MPI OLD_MPI NEARDUP [SIZES]
#       neardup-mpi (two builds) and neardup dedup on N x 1M documents of
#       24 words drawn from the BBC articles' words (a near copy, one word
#       changed, of every tenth), 16 files under ${TMPDIR:-/tmp}/neardup_mpi_fit;
#       -o only, -k 10, 1 thread per rank; the records compared with dedup's.
#       OLD_MPI "-": the new build alone. MPI_FLAGS (environment): more
#       neardup-mpi options for both builds, e.g. MPI_FLAGS="--band-join keys"
#       (the default, auto, joins band ranges where the distinct fingerprints
#       fit the node: every rank holds them all, a whole-corpus term by
#       design). Each run also prints the stage where rank 0's peak was set
#       (report.json's peak_rss_kb_rank_0, builds that have it).
#
# Run under nice on a shared machine; RSS is the figure (from the bench's
# getrusage, or /usr/bin/time around each rank), CPU is rough.
set -euo pipefail
export OMPI_MCA_btl_vader_single_copy_mechanism=none
root=$(cd "$(dirname "$0")/../.." && pwd)
mpirun=(mpirun --allow-run-as-root --oversubscribe)
case ${1:-} in
join)
  bench=$(realpath "$2/bench/neardup_mpi_dedup_bench")
  for n in 1000000 2000000; do
    for p in 1 2 4; do
      for layout in bandkeys sorted; do
        echo "=== N=$n P=$p layout=$layout load $(cut -d' ' -f1-3 /proc/loadavg)"
        "${mpirun[@]}" -np $p "$bench" $n 10 128 1 $layout
      done
    done
  done
  ;;
text)
  new=$(realpath "$2"); old=$3; [ "$old" = - ] || old=$(realpath "$old"); dedup=$(realpath "$4")
  read -r -a extra <<< "${MPI_FLAGS:-}"
  versions=(new); [ "$old" = - ] || versions+=(old)
  corpus=${TMPDIR:-/tmp}/neardup_mpi_fit
  mkdir -p "$corpus"
  for n in ${5:-1 2}; do
    if [ ! -f "$corpus/m$n-15.jsonl" ]; then
      python3 - "$root/../shared/data/en_bbc2225.jsonl" $((n * 1000000)) "$corpus/m$n" <<'PY'
import json, random, sys
source, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(30)
vocab = sorted({w for l in open(source) for w in json.loads(l)['text'].split()})
files = [open(f'{out}-{f:02d}.jsonl', 'w') for f in range(16)]
i = 0
while i < n:
    words = [rng.choice(vocab) for _ in range(24)]
    files[(i * 16) // n].write(json.dumps({'id': f'd{i}', 'text': ' '.join(words)}) + '\n')
    i += 1
    if i % 10 == 0 and i < n:
        words[rng.randrange(24)] = rng.choice(vocab)
        files[(i * 16) // n].write(json.dumps({'id': f'd{i}', 'text': ' '.join(words)}) + '\n')
        i += 1
for f in files:
    f.close()
PY
    fi
    run=$(mktemp -d)
    echo "=== N=${n}M dedup load $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "dedup: peak RSS %M KB, user %U s, sys %S s" "$dedup" dedup "$corpus/m$n"-*.jsonl \
      -k 10 --threads 1 -q -o "$run/dedup.jsonl" 2>&1 | tail -1
    for p in 1 2 4; do
      for v in "${versions[@]}"; do
        bin=$new; [ $v = old ] && bin=$old
        rm -rf "$run/work" "$run/mpi.jsonl"
        echo "=== N=${n}M P=$p $v load $(cut -d' ' -f1-3 /proc/loadavg)"
        "${mpirun[@]}" -np $p sh -c '/usr/bin/time -o "$0/rss.$OMPI_COMM_WORLD_RANK" -f "%M %U %S" "$@"' \
          "$run" "$bin" dedup "$corpus/m$n"-*.jsonl --work-dir "$run/work" -k 10 --threads 1 -q \
          -o "$run/mpi.jsonl" ${extra[@]+"${extra[@]}"}
        for r in $(seq 0 $((p - 1))); do
          read -r kb u s < "$run/rss.$r"
          echo "rank $r: peak RSS $kb KB, user $u s, sys $s s"
        done
        cmp -s "$run/mpi.jsonl" "$run/dedup.jsonl" && echo "records identical to dedup" || echo "RECORDS DIFFER"
        python3 -c 'import json, sys
peaks = [(s["peak_rss_kb_rank_0"], s["stage"]) for s in json.load(open(sys.argv[1]))["stages"]
         if "peak_rss_kb_rank_0" in s]
# The first stage that reached the peak set it.
if peaks: print("rank 0 peak set in stage", next(n for kb, n in peaks if kb == max(peaks)[0]))' \
          "$run/work/report.json"
      done
    done
    rm -rf "$run"
  done
  ;;
*)
  echo "usage: $0 join BUILD | text NEW_MPI OLD_MPI NEARDUP [SIZES]" >&2
  exit 2
  ;;
esac
