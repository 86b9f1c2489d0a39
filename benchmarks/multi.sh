#!/bin/bash
# multi.sh: the MULTI/SET/INCR/EXEC row side by side with redis-server (issue 16). Both servers
# pinned to CPU 0, hotkv-benchmark to CPU 1 (1 thread, 50 connections, 256-byte values, 100,000
# keys), each connection sending MULTI, SET key:__key__, INCR n:__key__, EXEC in order
# (--in-order): --pipeline 4 is one transaction a round trip, 120 is 30. Server CPU is read from
# /proc before and after each run. Not in run.sh's default sections: it takes about a minute.
# Env: RUNS (1) DURATION (5s) RPORT (7101) HPORT (7102)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-7101} HPORT=${HPORT:-7102}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark
mkdir -p "$work/r" "$work/h"
taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/r" >"$work/r.log" 2>&1 &
rpid=$!; pids+=("$rpid")
taskset -c 0 "$work/hotkv" --port "$HPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/h" \
  --threads 1 --gc-idle no >"$work/h.log" 2>&1 &
hpid=$!; pids+=("$hpid")
for port in "$RPORT" "$HPORT"; do
  for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
printf '%-8s %-9s %12s %16s\n' server pipeline "tx/s" "CPU-s per 1M tx"
for run in $(seq "$RUNS"); do
  for p in 4 120; do
    for name in redis hotkv; do
      if [ $name = redis ]; then port=$RPORT pid=$rpid; else port=$HPORT pid=$hpid; fi
      before=$(cpu "$pid")
      out=$(taskset -c 1 "$work/hotkv-benchmark" --port "$port" --threads 1 --clients 50 --keys 100000 \
        --duration "$DURATION" --pipeline "$p" --quiet --in-order \
        --command MULTI --expect ok --command 'SET key:__key__ __data__' --expect simple:QUEUED \
        --command 'INCR n:__key__' --expect simple:QUEUED --command EXEC --expect array:2)
      after=$(cpu "$pid")
      echo "$out" | awk -v n=$name -v p=$p -v c=$((after - before)) -v t="$tck" '
        $1 == "EXEC" { printf "%-8s %-9s %12d %16.2f\n", n, p, $3, (c / t) / ($2 / 1e6) }'
    done
  done
done
