#!/usr/bin/env bash
# Side-by-side: redis-benchmark against redis-server and HotKV on loopback, same settings.
# Each server is pinned to CPU 0 (HotKV with --threads 1), redis-benchmark to CPU 1.
# Prints a Markdown table of requests/s, the HotKV/Redis ratio, and server CPU-seconds per
# million requests (utime+stime from /proc/PID/stat, all threads).
#
# Usage: benchmarks/redis-benchmark.sh [requests per test, default 1000000]
# Env:   TESTS (redis-benchmark -t list), PIPELINE (30), SIZE (256), KEYS (1000000), HOTKV_THREADS (1)
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-1000000}
TESTS=${TESTS:-ping_mbulk,set,get,incr,mset}
PIPELINE=${PIPELINE:-30}
SIZE=${SIZE:-256}
KEYS=${KEYS:-1000000}
THREADS=${HOTKV_THREADS:-1}
RPORT=${RPORT:-16379}
HPORT=${HPORT:-16380}

missing=()
for tool in redis-server redis-benchmark redis-cli taskset go; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "redis-benchmark.sh: missing ${missing[*]} (apt-get install redis-server redis-tools util-linux)" >&2
  exit 2
fi

out=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$out"; }
trap cleanup EXIT

echo "building hotkv..." >&2
go build -o "$out/hotkv" ./src/cmd/hotkv

wait_port() { for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$out" >"$out/redis.log" 2>&1 &
pids+=($!); rpid=$!
taskset -c 0 "$out/hotkv" --port "$HPORT" --threads "$THREADS" --save '' --appendonly no --dir "$out" >"$out/hotkv.log" 2>&1 &
pids+=($!); hpid=$!
wait_port "$RPORT"; wait_port "$HPORT"

hz=$(getconf CLK_TCK)
declare -A rps cpu names
for port in "$RPORT" "$HPORT"; do
  pid=$rpid; [ "$port" = "$HPORT" ] && pid=$hpid
  for t in ${TESTS//,/ }; do
    echo "running $t against port $port ..." >&2
    before=$(cpu_ticks "$pid")
    line=$(taskset -c 1 redis-benchmark -p "$port" -t "$t" -n "$N" -P "$PIPELINE" -d "$SIZE" -r "$KEYS" -c 50 --csv -q 2>/dev/null | grep -v '^"test"' | head -1)
    after=$(cpu_ticks "$pid")
    val=$(echo "$line" | cut -d, -f2 | tr -d '"')
    name=$(echo "$line" | cut -d, -f1 | tr -d '"' | cut -d' ' -f1)
    rps[$port,$t]=$val
    cpu[$port,$t]=$(awk -v a="$after" -v b="$before" -v hz="$hz" -v n="$N" 'BEGIN{printf "%.2f", (a-b)/hz/(n/1e6)}')
    names[$t]=$name
  done
done

echo
echo "redis-benchmark -P $PIPELINE -d $SIZE -r $KEYS -n $N -c 50; servers pinned to CPU 0 (HotKV --threads $THREADS), generator on CPU 1; $(date -u +%F) $(uname -m) $(nproc) cores"
echo
echo "| test | Redis 7.0.15 req/s | HotKV req/s | HotKV/Redis | Redis CPU-s per 1M | HotKV CPU-s per 1M |"
echo "|---|---:|---:|---:|---:|---:|"
for t in ${TESTS//,/ }; do
  r=${rps[$RPORT,$t]}; h=${rps[$HPORT,$t]}
  ratio=$(awk -v h="$h" -v r="$r" 'BEGIN{ if (r>0) printf "%.2f", h/r; else print "n/a"}')
  echo "| ${names[$t]:-$t} | $r | $h | $ratio | ${cpu[$RPORT,$t]} | ${cpu[$HPORT,$t]} |"
done
