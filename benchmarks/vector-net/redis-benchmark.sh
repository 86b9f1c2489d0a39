#!/bin/bash
# benchmarks/vector-net/redis-benchmark.sh: one HotKV on 127.0.0.1:$PORT (default 27351; under /tmp), 20,000 128-d
# vectors loaded by vector-net -keep, then redis-benchmark VSIM vnet ELE e1 COUNT 10 at -c 8 and
# -c 100, twice: the server side of the client-count comparison without a Go client. Run it
# under flock /tmp/h/bench.lock on a shared machine.
set -e
PORT=${PORT:-27351}
W=$(mktemp -d /tmp/v2rb.XXXXXX)
cd "$(dirname "$0")/../.."
go build -o $W/hotkv ./src/cmd/hotkv
go build -o $W/vn ./benchmarks/vector-net
(cd $W && exec timeout 300 ./hotkv --port $PORT --bind 127.0.0.1 --dir $W --save '' --threads 2 > $W/log 2>&1) &
P=$!
for _ in $(seq 50); do redis-cli -p $PORT ping >/dev/null 2>&1 && break; sleep 0.2; done
timeout 120 $W/vn -addr 127.0.0.1:$PORT -n 20000 -dim 128 -clients 1 -duration 100ms -memn 0 -keep | grep load
for c in 8 100 8 100; do
  echo "clients $c: $(redis-benchmark -p $PORT -c $c -n 30000 -q VSIM vnet ELE e1 COUNT 10 2>&1 | tr '\r' '\n' | tail -1)"
done
kill $P; rm -rf $W
