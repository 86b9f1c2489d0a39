#!/bin/bash
# multi.sh: the MULTI/SET/INCR/EXEC row side by side with redis-server (issue 16). Both servers
# pinned to CPU 0, hotkv-benchmark to CPU 1 (1 thread, 50 connections, 256-byte values, 100,000
# keys), each connection sending MULTI, SET key:__key__, INCR n:__key__, EXEC in order
# (--in-order): --pipeline 4 is one transaction a round trip, 120 is 30. Server CPU is read from
# /proc before and after each run. Not in run.sh's default sections: it takes about a minute.
# Env: RUNS (1) DURATION (5s) RPORT (7101) HPORT (7102)
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-7101} HPORT=${HPORT:-7102}
. "$(dirname "$0")/lib.sh"
start_redis
start_hotkv
printf '%-8s %-9s %12s %16s\n' server pipeline "tx/s" "CPU-s per 1M tx"
for run in $(seq "$RUNS"); do
  for p in 4 120; do
    for name in redis hotkv; do
      server $name
      before=$(cpu "$pid")
      out=$(bench --port "$port" --clients 50 --keys 100000 --duration "$DURATION" --pipeline "$p" --in-order \
        --command MULTI --expect ok --command 'SET key:__key__ __data__' --expect simple:QUEUED \
        --command 'INCR n:__key__' --expect simple:QUEUED --command EXEC --expect array:2)
      after=$(cpu "$pid")
      echo "$out" | awk -v n=$name -v p=$p -v c=$((after - before)) -v t="$tck" '
        $1 == "EXEC" { printf "%-8s %-9s %12d %16.2f\n", n, p, $3, (c / t) / ($2 / 1e6) }'
    done
  done
done
