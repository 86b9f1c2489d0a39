#!/bin/bash
# Replication cost side by side (issue 23): SET throughput of a primary with 0, 1 and 2 replicas,
# HotKV (HotKV replicas) against redis-server 7.0.15 (Redis replicas), the drop each pays, and the
# CPU-seconds per million SETs the primary and each replica spend (utime+stime from /proc/PID/stat
# around the load; CPU moves less with a shared machine's load than req/s does).
# Usage: RUNS=3 N=1000000 bash benchmarks/repl.sh   (wrap in flock /tmp/h/bench.lock on shared hosts)
# Ports BASE..BASE+2 (BASE=27430 by default); everything under a temporary dir; every process ended by its PID.
set -euo pipefail
RUNS=${RUNS:-3}; N=${N:-1000000}; P=${P:-16}; C=${C:-50}; BASE=${BASE:-27430}
p0=$BASE p1=$((BASE + 1)) p2=$((BASE + 2))
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/repl-bench.XXXXXX)
if [ -n "${BIN:-}" ]; then cp "$BIN" "$tmp/hotkv"; else go build -o "$tmp/hotkv" "$root/src/cmd/hotkv"; fi # BIN: a prebuilt binary (a before/after pair)
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
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
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

# measure: req/s of the SET load on the primary (pids[0]), then the primary's CPU-s per million
# SETs and the replicas' mean, as "req/s primary-cpu replica-cpu".
measure() {
	local before=() after=() i rps
	for i in "${!pids[@]}"; do before+=("$(cpu "${pids[$i]}")"); done
	rps=$(rate $p0)
	[ ${#pids[@]} -gt 1 ] && synced $p0 "${@}"
	for i in "${!pids[@]}"; do after+=("$(cpu "${pids[$i]}")"); done
	local rep=0
	for ((i = 1; i < ${#pids[@]}; i++)); do rep=$((rep + after[i] - before[i])); done
	awk -v r="$rps" -v p=$((after[0] - before[0])) -v q=$rep -v k=$((${#pids[@]} - 1)) -v t="$TCK" -v n="$N" \
		'BEGIN{m=n/1e6; printf "%s %.2f %s\n", r, p/t/m, (k ? sprintf("%.2f", q/k/t/m) : "-")}'
}

echo "| run | server | load | 0 replicas req/s | 1 replica | 2 replicas | drop 1 | drop 2 | primary CPU-s/M 0/1/2 | replica CPU-s/M 1/2 |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|---|"
for run in $(seq "$RUNS"); do
	for kind in hotkv redis; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		start "$kind" $p0; read -r a pa _ <<<"$(measure)"; stopall
		start "$kind" $p0; start "$kind" $p1 $p0; synced $p0 $p1; read -r b pb rb <<<"$(measure $p1)"; stopall
		start "$kind" $p0; start "$kind" $p1 $p0; start "$kind" $p2 $p0; synced $p0 $p1 $p2
		read -r c pc rc <<<"$(measure $p1 $p2)"; stopall
		awk -v run="$run" -v k="$kind" -v l="$load" -v a="$a" -v b="$b" -v c="$c" -v cpu="$pa / $pb / $pc" -v rcpu="$rb / $rc" \
			'BEGIN{printf "| %s | %s | %s | %.0f | %.0f | %.0f | %.1f%% | %.1f%% | %s | %s |\n", run, k, l, a, b, c, 100*(1-b/a), 100*(1-c/a), cpu, rcpu}'
	done
done
