#!/bin/bash
# scripting.sh: EVALSHA of return redis.call('INCR', KEYS[1]) side by side with redis-server
# (issue 16). Both servers pinned to CPU 0, hotkv-benchmark to CPU 1 (1 thread, 50 connections,
# 100,000 keys): --pipeline 1 and 30, ratios HotKV/Redis of ops/s and of server CPU per 1M calls
# (read from /proc before and after each run). Then HotKV with --threads 2 against --threads 1,
# unpinned, EVALSHA on random keys (disjoint enough: 100,000 keys over 32 shards): on a 2-core
# machine the load generator takes one of the two cores, so this row shows the cost of the second
# thread more than its gain; BenchmarkEvalParallel in src/command measures the scaling without
# the network. Not in run.sh's default sections.
# Env: RUNS (1) DURATION (5s) RPORT (7510) HPORT (7511)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-7510} HPORT=${HPORT:-7511}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark
mkdir -p "$work/r" "$work/h"
body="return redis.call('INCR', KEYS[1])"
wait_port() { for _ in $(seq 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.05; done; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
bench() { # port pid pipeline pin -> "ops cpu-s-per-1M"
  local before after out
  before=$(cpu "$2")
  out=$($4 "$work/hotkv-benchmark" --port "$1" --threads 1 --clients 50 --keys 100000 \
    --duration "$DURATION" --pipeline "$3" --quiet --command "EVALSHA $sha 1 n:__key__" --expect 'int:>=1')
  after=$(cpu "$2")
  echo "$out" | awk -v c=$((after - before)) -v t="$tck" '$1 == "EVALSHA" { printf "%d %.2f\n", $6, (c / t) / ($5 / 1e6) }'
}
taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/r" >"$work/r.log" 2>&1 &
rpid=$!; pids+=("$rpid")
taskset -c 0 "$work/hotkv" --port "$HPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/h" \
  --threads 1 --gc-idle no >"$work/h.log" 2>&1 &
hpid=$!; pids+=("$hpid")
wait_port "$RPORT"; wait_port "$HPORT"
sha=$(redis-cli -p "$RPORT" script load "$body")
[ "$(redis-cli -p "$HPORT" script load "$body")" = "$sha" ]
printf '%-8s %-9s %12s %16s %10s %10s\n' run pipeline "Redis ops/s" "HotKV ops/s" "ops ratio" "CPU ratio"
for run in $(seq "$RUNS"); do
  for p in 1 30; do
    read -r rops rcpu < <(bench "$RPORT" "$rpid" "$p" "taskset -c 1")
    read -r hops hcpu < <(bench "$HPORT" "$hpid" "$p" "taskset -c 1")
    awk -v r=$run -v p=$p -v ro="$rops" -v ho="$hops" -v rc="$rcpu" -v hc="$hcpu" \
      'BEGIN { printf "%-8s %-9s %12d %16d %10.2f %10.2f\n", r, p, ro, ho, ho / ro, hc / rc }'
  done
done
kill "$hpid"; wait "$hpid" 2>/dev/null || true
printf '%-8s %-9s %12s\n' threads pipeline "HotKV ops/s"
for threads in 1 2; do
  "$work/hotkv" --port "$HPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/h" \
    --threads "$threads" --gc-idle no >"$work/h$threads.log" 2>&1 &
  tpid=$!; pids+=("$tpid")
  wait_port "$HPORT"
  redis-cli -p "$HPORT" script load "$body" >/dev/null
  read -r tops _ < <(bench "$HPORT" "$tpid" 30 "")
  printf '%-8s %-9s %12d\n' "$threads" 30 "$tops"
  kill "$tpid"; wait "$tpid" 2>/dev/null || true
done
