#!/usr/bin/env bash
# Vector-set searches over the network (issue 20): builds HotKV and benchmarks/vector-net, starts
# one HotKV on 127.0.0.1:$PORT (cwd and dir under a temp directory, no saving), runs vector-net
# against it (load, recall@10 vs TRUTH, VSIM COUNT 10 from 1, 8, 32 and 100 clients, memory per
# element per quantization) and stops it. Redis 7.0.15 has no vector sets, so there is no Redis
# side here; point vector-net -addr at a Redis 8 to get one.
#
#   bash benchmarks/vector-net/run.sh                   # 20,000 generated 128-d vectors, 5 s a step
#   N=60000 MNIST=1 bash benchmarks/vector-net/run.sh   # Fashion-MNIST (dataset-fashion-mnist)
#   THREADS=2 DURATION=3s CLIENTS=1,8 bash benchmarks/vector-net/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-27350}
N=${N:-20000}
DIM=${DIM:-128}
DURATION=${DURATION:-5s}
CLIENTS=${CLIENTS:-1,8,32,100}
THREADS=${THREADS:-2}
MEMN=${MEMN:-5000}
WORK=$(mktemp -d /tmp/vector-net.XXXXXX)
PID=
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
go build -o "$WORK/hotkv" ./src/cmd/hotkv
go build -o "$WORK/vector-net" ./benchmarks/vector-net
extra=()
if [[ ${MNIST:-0} == 1 ]]; then
	f=$(dpkg -L dataset-fashion-mnist 2>/dev/null | grep 'train-images-idx3-ubyte.gz$' | head -1)
	[[ -n $f ]] || { echo "dataset-fashion-mnist is not installed (benchmarks/vector.sh installs it)" >&2; exit 1; }
	extra=(-mnist "$f")
fi
(cd "$WORK" && exec timeout 900 ./hotkv --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
	--threads "$THREADS" >"$WORK/hotkv.log" 2>&1) &
PID=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, HotKV --threads $THREADS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 900 "$WORK/vector-net" -addr "127.0.0.1:$PORT" -n "$N" -dim "$DIM" -duration "$DURATION" \
	-clients "$CLIENTS" -memn "$MEMN" "${extra[@]}"
