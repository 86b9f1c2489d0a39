#!/bin/bash
# Replication cost side by side (issue 23): SET throughput of a primary with 0, 1 and 2 replicas,
# HotKV (HotKV replicas) against redis-server 7.0.15 (Redis replicas), and the drop each pays.
# Usage: RUNS=3 N=300000 bash benchmarks/repl.sh   (wrap in flock /tmp/h/bench.lock on shared hosts)
# Ports BASE..BASE+2 (BASE=27430 by default); everything under a temporary dir; every process ended by its PID.
set -euo pipefail
RUNS=${RUNS:-3}; N=${N:-300000}; P=${P:-16}; C=${C:-50}; BASE=${BASE:-27430}
p0=$BASE p1=$((BASE + 1)) p2=$((BASE + 2))
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/repl-bench.XXXXXX)
go build -o "$tmp/hotkv" "$root/src/cmd/hotkv"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

start() { # kind port [replicaof-port]
	local kind=$1 port=$2 of=${3:-} d="$tmp/$1-$2"; mkdir -p "$d"
	local args=(--port "$port" --bind 127.0.0.1 --save "" --dir "$d" --repl-diskless-sync-delay 0)
	[ -n "$of" ] && args+=(--replicaof 127.0.0.1 "$of")
	if [ "$kind" = hotkv ]; then "$tmp/hotkv" "${args[@]}" --threads 1 >"$d/log" 2>&1 &
	else redis-server "${args[@]}" --daemonize no --logfile "$d/log" & fi
	pids+=($!)
	for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.05; done
	echo "cannot start $kind on $port" >&2; exit 1
}
stopall() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
rate() { redis-benchmark -p "$1" -t set -n "$N" -P "$P" -c "$C" -r 100000 -d 64 -q 2>/dev/null | tr '\r' '\n' | awk '/requests per second/{print $2}'; }
synced() { # primary replicas...
	local p=$1; shift
	for _ in $(seq 200); do
		local po; po=$(redis-cli -p "$p" info replication | awk -F: '/^master_repl_offset/{print $2}' | tr -d '\r')
		local ok=1
		for rp in "$@"; do
			[ "$(redis-cli -p "$rp" info replication | awk -F: '/^slave_repl_offset/{print $2}' | tr -d '\r')" = "$po" ] || ok=0
		done
		[ $ok = 1 ] && return; sleep 0.1
	done
}

echo "| run | server | 0 replicas req/s | 1 replica | 2 replicas | drop 1 | drop 2 |"
echo "|---|---|---:|---:|---:|---:|---:|"
for run in $(seq "$RUNS"); do
	for kind in hotkv redis; do
		r=()
		start "$kind" $p0; r+=("$(rate $p0)"); stopall
		start "$kind" $p0; start "$kind" $p1 $p0; synced $p0 $p1; r+=("$(rate $p0)"); stopall
		start "$kind" $p0; start "$kind" $p1 $p0; start "$kind" $p2 $p0; synced $p0 $p1 $p2
		r+=("$(rate $p0)"); stopall
		awk -v run="$run" -v k="$kind" -v a="${r[0]}" -v b="${r[1]}" -v c="${r[2]}" \
			'BEGIN{printf "| %s | %s | %.0f | %.0f | %.0f | %.1f%% | %.1f%% |\n", run, k, a, b, c, 100*(1-b/a), 100*(1-c/a)}'
	done
done
