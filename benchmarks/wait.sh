#!/bin/bash
# wait.sh: SET then WAIT 1 1000, 2,000 rounds on one pipelined connection (redis-cli --pipe;
# each WAIT waits for its SET to be acknowledged), against a primary with one replica of the
# same server, for each binary given (default: HotKV built here, then redis-server).
# Env: PORT (32300; the replica on PORT+1) ROUNDS (2000)
# Usage: bash benchmarks/wait.sh [BINARY ...]
set -euo pipefail
PORT=${PORT:-32300} ROUNDS=${ROUNDS:-2000}
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  go build -o /tmp/hotkv-wait-bench ./src/cmd/hotkv
  bins=(/tmp/hotkv-wait-bench "$(command -v redis-server)")
fi
for bin in "${bins[@]}"; do
  d=$(mktemp -d)
  mkdir -p "$d/r"
  "$bin" --port "$PORT" --bind 127.0.0.1 --save "" --dir "$d" --loglevel warning >/dev/null 2>&1 &
  p1=$!
  "$bin" --port $((PORT + 1)) --bind 127.0.0.1 --save "" --dir "$d/r" --loglevel warning \
    --replicaof 127.0.0.1 "$PORT" >/dev/null 2>&1 &
  p2=$!
  for _ in $(seq 100); do
    redis-cli -p "$PORT" info replication 2>/dev/null | grep -q 'slave0:.*state=online' && break
    sleep 0.1
  done
  for i in $(seq "$ROUNDS"); do printf 'SET k%d v\r\nWAIT 1 1000\r\n' "$i"; done >"$d/cmds"
  s=$(date +%s.%N)
  redis-cli -p "$PORT" --pipe <"$d/cmds" >"$d/out" 2>&1
  e=$(date +%s.%N)
  awk -v b="$(basename "$bin")" -v s="$s" -v e="$e" -v n="$ROUNDS" -v r="$(tail -1 "$d/out")" \
    'BEGIN { printf "%-20s %8.3f s  %8.0f SET+WAIT rounds/s  (%s)\n", b, e - s, n / (e - s), r }'
  kill "$p1" "$p2"
  wait "$p1" "$p2" 2>/dev/null || true
  rm -rf "$d"
done
