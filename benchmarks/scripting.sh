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
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-7510} HPORT=${HPORT:-7511}
. "$(dirname "$0")/lib.sh"
body="return redis.call('INCR', KEYS[1])"
evalsha() { # port pid pipeline pin -> "ops cpu-s-per-1M" (pin: a taskset prefix, or empty)
  local before after out
  before=$(cpu "$2")
  out=$($4 "$work/hotkv-benchmark" --port "$1" --threads 1 --clients 50 --keys 100000 \
    --duration "$DURATION" --pipeline "$3" --quiet --command "EVALSHA $sha 1 n:__key__" --expect 'int:>=1')
  after=$(cpu "$2")
  echo "$out" | awk -v c=$((after - before)) -v t="$tck" '$1 == "EVALSHA" { printf "%d %.2f\n", $6, (c / t) / ($5 / 1e6) }'
}
start_redis
start_hotkv
sha=$(redis-cli -p "$RPORT" script load "$body")
[ "$(redis-cli -p "$HPORT" script load "$body")" = "$sha" ]
printf '%-8s %-9s %12s %16s %10s %10s\n' run pipeline "Redis ops/s" "HotKV ops/s" "ops ratio" "CPU ratio"
for run in $(seq "$RUNS"); do
  for p in 1 30; do
    read -r rops rcpu < <(evalsha "$RPORT" "$rpid" "$p" "taskset -c 1")
    read -r hops hcpu < <(evalsha "$HPORT" "$hpid" "$p" "taskset -c 1")
    awk -v r=$run -v p=$p -v ro="$rops" -v ho="$hops" -v rc="$rcpu" -v hc="$hcpu" \
      'BEGIN { printf "%-8s %-9s %12d %16d %10.2f %10.2f\n", r, p, ro, ho, ho / ro, hc / rc }'
  done
done
stop_hotkv
printf '%-8s %-9s %12s\n' threads pipeline "HotKV ops/s"
for threads in 1 2; do
  HOTKV_PIN="" start_hotkv --threads "$threads"
  redis-cli -p "$HPORT" script load "$body" >/dev/null
  read -r tops _ < <(evalsha "$HPORT" "$hpid" 30 "")
  printf '%-8s %-9s %12d\n' "$threads" 30 "$tops"
  stop_hotkv
done
