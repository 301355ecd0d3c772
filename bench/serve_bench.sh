#!/usr/bin/env bash
# POST /v1/check throughput and p50/p99 latency of `neardup serve` on
# loopback, at concurrency 1, 8 and 64, with ~2 KB documents (the default
# method) and with fingerprints, against an index of N random fingerprints;
# plus the index's open time and peak RSS (`neardup index stats`).
#
#   bash bench/serve_bench.sh BUILD_DIR [N] [SECONDS] [WORK_DIR]
#
# MODES (environment, default all four): which of "fingerprints sync",
# "fingerprints no-sync", "documents sync", "fpbatch no-sync" to run;
# "fpbatch" sends BATCH (default 32) fingerprints per request. These modes
# send the same 20,000 fingerprint bodies (1,000 documents) in turn: after
# the first pass every check finds its earlier copy and adds nothing.
# "new-fingerprints:B" and "new-documents:B" (e.g. MODES="new-fingerprints:32
# no-sync,new-documents:1 sync") send B new items a request, each checked and
# added (serve_load --new-*: random fingerprints, documents mixed afresh from
# ~70-character fragments of the data); "added" in the results is the share
# of items added.
#
# FRESH_INDEX=1 (environment): each mode serves a fresh copy of the built
# index (WORK_DIR/run/), so that modes and builds compared in turn start
# from the same index instead of the adds of the runs before.
#
# SERVE_FLAGS (environment): more flags for `neardup serve`, e.g. --preload.
#
# CONCURRENCY (environment, default "1 8 64"): the client counts of each mode.
#
# WORK_DIR (optional) keeps the generated index between runs (built when
# WORK_DIR/i.idx is missing; each run's checks add to it).
#
# Documents come from ../shared/data/zh_thucnews1000.jsonl (cut to 700
# characters, ~2 KB of UTF-8). Results: JSON lines on standard output, with
# the server's CPU time per item (server_cpu_us_per_item), its context
# switches per item (all threads) and the index file's queries per search
# batch (searches_per_batch, from /metrics).
set -euo pipefail
BUILD=${1:?build directory}
N=${2:-1000000}
SECONDS_PER_RUN=${3:-5}
NEARDUP=${NEARDUP:-$BUILD/neardup}  # NEARDUP=... to compare another build
LOAD=$BUILD/bench/neardup_serve_load
DATA=$(dirname "$0")/../../shared/data/zh_thucnews1000.jsonl
if [ -n "${4:-}" ]; then
  WORK=$4
  mkdir -p "$WORK"
  trap 'kill $SERVER 2>/dev/null || true' EXIT
else
  WORK=$(mktemp -d)
  trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
fi
SERVER=

[ -e "$WORK/i.idx" ] || python3 - "$N" "$WORK" "$DATA" <<'PY'
import json, random, sys
n, work, data = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(1)
with open(f"{work}/index.jsonl", "w") as f:
    for i in range(n):
        f.write('{"id":"i%d","fingerprint":"%032x"}\n' % (i, rng.getrandbits(128)))
with open(f"{work}/fp_bodies.jsonl", "w") as f:
    for i in range(20000):
        f.write('{"fingerprints":[{"id":"ID","fingerprint":"%032x"}]}\n' % rng.getrandbits(128))
with open(f"{work}/doc_bodies.jsonl", "w") as f, open(data, encoding="utf-8") as d:
    for line in d:
        text = json.loads(line)["text"][:700]
        f.write(json.dumps({"documents": [{"id": "ID", "text": text}]}, ensure_ascii=False) + "\n")
PY
# Fragments of the documents for serve_load --new-documents: ~70 characters
# each, as JSON strings.
[ -e "$WORK/fragments.jsonl" ] || python3 - "$WORK" "$DATA" <<'PY'
import json, sys
work, data = sys.argv[1], sys.argv[2]
with open(f"{work}/fragments.jsonl", "w") as f, open(data, encoding="utf-8") as d:
    for line in d:
        text = json.loads(line)["text"]
        for at in range(0, len(text) - 69, 70):
            f.write(json.dumps(text[at:at + 70], ensure_ascii=False) + "\n")
PY
if [ ! -e "$WORK/i.idx" ]; then
  echo "building an index of $N fingerprints" >&2
  /usr/bin/time -f '{"build_s": %e, "build_max_rss_kb": %M}' \
    "$NEARDUP" index build --fingerprints "$WORK/index.jsonl" -o "$WORK/i.idx" -q
fi
BATCH=${BATCH:-32}
[ -e "$WORK/fp_batch$BATCH.jsonl" ] || python3 - "$WORK" "$BATCH" <<'PY'
import random, sys
work, batch = sys.argv[1], int(sys.argv[2])
rng = random.Random(2)
with open(f"{work}/fp_batch{batch}.jsonl", "w") as f:
    for i in range(2000):
        items = ",".join('{"id":"ID","fingerprint":"%032x"}' % rng.getrandbits(128)
                         for _ in range(batch))
        f.write('{"fingerprints":[%s]}\n' % items)
PY
ls -l "$WORK/i.idx" "$WORK/i.idx.ids" >&2
for run in 1 2 3; do
  /usr/bin/time -f '{"open_and_stats_s": %e, "max_rss_kb": %M}' \
    "$NEARDUP" index stats "$WORK/i.idx" --json > /dev/null
done

serve() {  # serve [flags...]: starts the server, sets PORT; exits when it does not start
  rm -f "$WORK/serve.out"
  local index=$WORK/i.idx
  if [ "${FRESH_INDEX:-0}" = 1 ]; then
    rm -rf "$WORK/run"
    mkdir "$WORK/run"
    cp "$WORK"/i.idx "$WORK"/i.idx.ids* "$WORK/run/"
    index=$WORK/run/i.idx
  fi
  "$NEARDUP" serve --index "$index" --port 0 "$@" > "$WORK/serve.out" 2> "$WORK/serve.err" &
  SERVER=$!
  # Up to 120 s: on a loaded machine loading the method's dictionaries
  # (documents) can take far longer than on an idle one.
  local started=$(date +%s.%N)
  for _ in $(seq 2400); do
    grep -q http "$WORK/serve.out" 2>/dev/null && break
    kill -0 $SERVER 2>/dev/null || break
    sleep 0.05
  done
  PORT=$(sed -n 's/.*http:[^ ]*:\([0-9][0-9]*\)$/\1/p' "$WORK/serve.out" 2>/dev/null)
  if [ -z "$PORT" ]; then
    # Without this check a server that failed to start (or was still loading)
    # made every request of the run fail to connect (port 0).
    echo "serve_bench: the server did not start (flags: $*):" >&2
    tail -5 "$WORK/serve.err" >&2
    exit 1
  fi
  echo "server listening on $PORT after $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" >&2
}

switches() {  # the server's context switches so far, all threads
  cat /proc/$SERVER/task/*/status 2>/dev/null |
    awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
searches() {  # "CALLS BATCHES": the index file's searches so far (/metrics)
  python3 - "$PORT" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics").read().decode()
v = {l.split()[0]: l.split()[1] for l in text.splitlines() if l and l[0] != "#"}
print(v.get("neardup_index_file_searches_total", 0), v.get("neardup_index_file_search_batches_total", 0))
PY
}

MODES=${MODES:-fingerprints sync,fingerprints no-sync,documents sync,fpbatch no-sync}
IFS=, read -r -a modes <<< "$MODES"
for mode in "${modes[@]}"; do
  set -- $mode
  flags=()
  [ "$2" = no-sync ] && flags=(--no-sync)
  # shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
  serve --threads 64 "${flags[@]}" ${SERVE_FLAGS:-}
  load_args=("$WORK/fp_bodies.jsonl")
  [ "$1" = documents ] && load_args=("$WORK/doc_bodies.jsonl")
  [ "$1" = fpbatch ] && load_args=("$WORK/fp_batch$BATCH.jsonl")
  case $1 in
    new-fingerprints:*) load_args=(--new-fingerprints "${1#*:}") ;;
    new-documents:*) load_args=(--new-documents "${1#*:}" "$WORK/fragments.jsonl") ;;
  esac
  for c in ${CONCURRENCY:-1 8 64}; do
    # The server's CPU time (utime + stime, clock ticks) around the run: CPU
    # per request, which the machine's other load does not inflate as much
    # as it does the throughput; and the load average at the end.
    # Also its context switches (every thread's, voluntary and not) and the
    # index file's searches and their batches (/metrics): queries a batch.
    cpu0=$(awk '{print $14 + $15}' /proc/$SERVER/stat)
    cs0=$(switches)
    m0=$(searches)
    result=$("$LOAD" "$PORT" "$c" "$SECONDS_PER_RUN" "${load_args[@]}" || true)
    cpu1=$(awk '{print $14 + $15}' /proc/$SERVER/stat)
    cs1=$(switches)
    m1=$(searches)
    python3 - "$1" "$2" "$N" "$result" "$cpu0" "$cpu1" "$(getconf CLK_TCK)" "$cs0" "$cs1" \
      "$m0" "$m1" <<'PY'
import json, os, sys
mode, log, n, result, cpu0, cpu1, tck, cs0, cs1, m0, m1 = sys.argv[1:]
r = json.loads(result)
cpu = (float(cpu1) - float(cpu0)) / float(tck)
items = max(r["items_per_second"] * r["seconds"], 1)
out = {"input": mode, "log": log, "n": int(n)}
out.update(r)
out["server_cpu_s"] = round(cpu, 2)
out["server_cpu_us_per_request"] = round(1e6 * cpu / max(r["requests"], 1), 1)
out["server_cpu_us_per_item"] = round(1e6 * cpu / items, 1)
out["server_switches_per_item"] = round((int(cs1) - int(cs0)) / items, 2)
(calls0, batches0), (calls1, batches1) = (map(int, m.split()) for m in (m0, m1))
if batches1 > batches0:
    out["searches_per_batch"] = round((calls1 - calls0) / (batches1 - batches0), 2)
out["load1"] = os.getloadavg()[0]
print(json.dumps(out))
PY
  done
  kill -TERM $SERVER; wait $SERVER || true
done
