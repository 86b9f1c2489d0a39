#!/usr/bin/env bash
# LLMCACHE.GET over a socket (issue 22): builds HotKV and benchmarks/aicache/net, starts one HotKV
# on 127.0.0.1:$PORT (cwd and dir under a temp directory, no saving), loads N entries of DIM
# dimensions and times exact hits, semantic hits and misses from one connection, then stops it.
#   bash benchmarks/aicache/run-net.sh                 # 100,000 x 512
#   N=20000 DIM=128 bash benchmarks/aicache/run-net.sh
#   bash benchmarks/aicache/run-net.sh -quant Q8 -noise 0.3 -dump /tmp/llm-q8.dump   # extra flags: net's
#   PERF=/tmp/get.perf bash benchmarks/aicache/run-net.sh -dump /tmp/llm-q8.dump    # perf record of the server
#   HOTKV=/tmp/hotkv-before bash benchmarks/aicache/run-net.sh ...                    # a prebuilt server
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-27200}
N=${N:-100000}
DIM=${DIM:-512}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aicache-net.XXXXXX")
PID=
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
if [[ -n ${HOTKV:-} ]]; then cp "$HOTKV" "$WORK/hotkv"; else go build -o "$WORK/hotkv" ./src/cmd/hotkv; fi
go build -o "$WORK/net" ./benchmarks/aicache/net
(cd "$WORK" && exec timeout 900 ./hotkv --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' >"$WORK/hotkv.log" 2>&1) &
PID=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
PERFPID=
if [[ -n ${PERF:-} ]]; then
	perf record -q -F 1999 -g -p "$(pgrep -P "$PID" -x hotkv)" -o "$PERF" 2>/dev/null &
	PERFPID=$!
fi
timeout 900 "$WORK/net" -addr "127.0.0.1:$PORT" -n "$N" -dim "$DIM" "$@"
if [[ -n $PERFPID ]]; then kill -INT "$PERFPID"; wait "$PERFPID" || true; fi
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
