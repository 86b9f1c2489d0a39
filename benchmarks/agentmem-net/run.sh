#!/usr/bin/env bash
# MEM.SEARCH over the network (issue 22): builds HotKV and benchmarks/agentmem-net, starts one
# HotKV on 127.0.0.1:$PORT (cwd and dir under a temp directory, no saving), loads N memories of DIM
# dimensions over 100 users and measures MEM.SEARCH K 10 with a USER filter (1%) and without, then
# stops it. HotKV-only (Redis has no MEM.*). Run it under `flock /tmp/h/bench.lock` on a shared box.
#
#   bash benchmarks/agentmem-net/run.sh                       # 100,000 x 384-d, 1 and 8 clients, 5 s a step
#   N=20000 DURATION=2s CLIENTS=1 bash benchmarks/agentmem-net/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-27250}
N=${N:-100000}
DIM=${DIM:-384}
DURATION=${DURATION:-5s}
CLIENTS=${CLIENTS:-1,8}
THREADS=${THREADS:-2}
WORK=$(mktemp -d /tmp/agentmem-net.XXXXXX)
PID=
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
go build -o "$WORK/hotkv" ./src/cmd/hotkv
go build -o "$WORK/agentmem-net" ./benchmarks/agentmem-net
(cd "$WORK" && exec timeout 900 ./hotkv --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
	--threads "$THREADS" >"$WORK/hotkv.log" 2>&1) &
PID=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, HotKV --threads $THREADS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 900 "$WORK/agentmem-net" -addr "127.0.0.1:$PORT" -n "$N" -dim "$DIM" -duration "$DURATION" -clients "$CLIENTS"
