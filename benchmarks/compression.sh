#!/bin/bash
# compression.sh: value-compression's measurements (issue 17 item 5) side by side with
# redis-server 7.0.15. Each server in turn on CPU 0 (HotKV --threads 1 with value-compression no,
# lz4, zstd; Redis), the client (benchmarks/compression) on CPU 1:
#   1. KEYS (1,000,000) SETs of SIZE (2048) bytes of JSON-like text (4096 distinct values, one per
#      key in turn), pipeline 30 over 8 connections; the fill's wall time;
#   2. used_memory (INFO memory) and RSS (VmRSS) after a second's rest, per key; HotKV's
#      value_compressed_keys and value_compression_saved_bytes;
#   3. GET then SET of random keys (same values) for DURATION, pipeline 30, 8 connections: ops/s
#      and the server's CPU µs per command (utime+stime from /proc, the figure to read on a shared
#      machine).
# Prints one Markdown table row per server. Env: KEYS SIZE DURATION (5s) RPORT (7220) HPORT (7221).
# About 3 GB of RAM at the defaults; 5-10 minutes on a loaded 2-CPU VM.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
KEYS=${KEYS:-1000000} SIZE=${SIZE:-2048} DURATION=${DURATION:-5s}
RPORT=${RPORT:-7220} HPORT=${HPORT:-7221}
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
say() { printf '%s compression.sh: %s\n' "$(date -u +%T)" "$*" >&2; }
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/cb" ./benchmarks/compression
cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; } # clock ticks
tick=$(getconf CLK_TCK)
info() { redis-cli -p "$port" INFO "$1" | tr -d '\r' | awk -F: -v k="$2" '$1==k{print $2}'; }

run() { # name
  local name=$1 dir="$work/$1"
  mkdir -p "$dir"
  case $name in
  redis) port=$RPORT
    taskset -c 0 redis-server --port "$port" --dir "$dir" --save "" --appendonly no >"$dir/log" 2>&1 &
    ;;
  *) port=$HPORT
    taskset -c 0 "$work/hotkv" --port "$port" --dir "$dir" --save "" --appendonly no --threads 1 \
      --value-compression "${name#hotkv-}" >"$dir/log" 2>&1 &
    ;;
  esac
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
  local t0 t1 c0 c1 c2
  t0=$(date +%s.%N)
  taskset -c 1 "$work/cb" -addr "127.0.0.1:$port" -mode fill -keys "$KEYS" -size "$SIZE"
  t1=$(date +%s.%N)
  [ "$(redis-cli -p "$port" DBSIZE)" = "$KEYS" ] || { say "$name: DBSIZE is not $KEYS"; exit 1; }
  sleep 1
  local used rss packed saved
  used=$(info memory used_memory)
  rss=$(awk '/VmRSS/{print $2*1024}' "/proc/$pid/status")
  packed=$(info stats value_compressed_keys); saved=$(info stats value_compression_saved_bytes)
  c0=$(cpu)
  local get set
  get=$(taskset -c 1 "$work/cb" -addr "127.0.0.1:$port" -mode get -keys "$KEYS" -size "$SIZE" -duration "$DURATION")
  c1=$(cpu)
  set=$(taskset -c 1 "$work/cb" -addr "127.0.0.1:$port" -mode set -keys "$KEYS" -size "$SIZE" -duration "$DURATION")
  c2=$(cpu)
  local secs=${DURATION%s}
  awk -v n="$name" -v k="$KEYS" -v u="$used" -v r="$rss" -v f="$(echo "$t1 - $t0" | bc)" \
    -v g="$get" -v s="$set" -v cg="$((c1 - c0))" -v cs="$((c2 - c1))" -v t="$tick" -v d="$secs" \
    -v p="${packed:--}" -v sv="${saved:--}" \
    'BEGIN{printf "| %s | %.1f | %.0f | %.0f | %s | %s | %.0f | %.2f | %.0f | %.2f |\n", n, f, u/k, r/k, p, sv, g, cg/t*1e6/(g*d), s, cs/t*1e6/(s*d)}'
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  rm -rf "$dir"
}

say "load average $(cut -d' ' -f1-3 /proc/loadavg); $KEYS keys of $SIZE bytes"
echo "| server | fill s | used_memory B/key | RSS B/key | packed keys | saved bytes | GET ops/s | GET CPU µs/op | SET ops/s | SET CPU µs/op |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for s in ${SERVERS:-hotkv-no hotkv-lz4 hotkv-zstd redis}; do
  say "$s"
  run "$s"
done
say "done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
