#!/bin/bash
# Cost of cluster mode: CPU-seconds per million GET/SET and bytes per key of one HotKV node in
# standalone mode and in cluster mode (a one-node cluster owning all 16384 slots, so every command
# passes the slot check and none is redirected). Runs HotKV at threads 1 on port 27470 and
# redis-benchmark against it; wrap it in flock /tmp/h/bench.lock on a shared machine.
#   BIN=path/to/hotkv N=1000000 P=16 RUNS=3 bash benchmarks/cluster_cost.sh
set -euo pipefail
BIN=${BIN:-./hotkv}
N=${N:-1000000}
P=${P:-16}
RUNS=${RUNS:-3}
PORT=${PORT:-27469} # outside the 27470-27499 the testfuzz cluster tests use
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for r in $(seq "$RUNS"); do
	for mode in standalone cluster; do
		dir=$(mktemp -d /tmp/hotkv-cluster-cost.XXXXXX)
		args=(--port $PORT --bind 127.0.0.1 --dir "$dir" --threads 1 --save '' --appendonly no)
		[ $mode = cluster ] && args+=(--cluster-enabled yes --cluster-config-file "$dir/nodes.conf")
		(cd "$dir" && exec timeout 600 "$BIN" "${args[@]}" >"$dir/log" 2>&1) &
		pid=$!
		for _ in $(seq 100); do redis-cli -p $PORT ping >/dev/null 2>&1 && break; sleep 0.05; done
		srv=$(pgrep -P $pid || echo $pid) # the timeout wrapper's child
		if [ $mode = cluster ]; then
			redis-cli -p $PORT cluster addslotsrange 0 16383 >/dev/null
			for _ in $(seq 100); do redis-cli -p $PORT cluster info | grep -q cluster_state:ok && break; sleep 0.05; done
		fi
		c0=$(cpu "$srv")
		redis-benchmark -p $PORT -t set,get -n "$N" -P "$P" -r 100000 -d 64 -q >/dev/null
		c1=$(cpu "$srv")
		keys=$(redis-cli -p $PORT dbsize)
		mem=$(redis-cli -p $PORT info memory | tr -d '\r' | awk -F: '/^used_memory:/{print $2}')
		awk -v m=$mode -v r=$r -v d=$((c1 - c0)) -v t=$TCK -v n=$N -v k=$keys -v b=$mem \
			'BEGIN{printf "%s run %d: %.3f CPU-s per million GET/SET, %d keys, %.1f bytes/key (used_memory)\n", m, r, d/t/(2*n/1e6), k, b/k}'
		kill "$srv" 2>/dev/null || true
		wait $pid 2>/dev/null || true
		rm -rf "$dir"
	done
done
