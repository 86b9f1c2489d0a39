#!/usr/bin/env bash
# Profiles HotKV's server side of the vector-net VSIM benchmark (issue 20): starts
# benchmarks/vector-net/pprofserver (hotkv with net/http/pprof) on 127.0.0.1:$PORT, loads vector-net's
# data, then for each client count in $CLIENTS runs VSIM for $DURATION while it takes a CPU profile,
# and the mutex and block profiles' growth over the same window, into $OUT/{cpu,mutex,block}-C.pb.gz;
# prints `go tool pprof -top` heads. Wrap it in flock (benchmarks on a shared machine).
#
#   PORT=21510 OUT=/tmp/prof CLIENTS=8,100 bash benchmarks/vector-net/profile.sh
#   SERVER_GODEBUG=asyncpreemptoff=1 ...   # GODEBUG for the server only
#   SERVER_CPUS=0 CLIENT_CPUS=1 THREADS=1 ... # server and client each on its own CPU (taskset)
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-27351}
PPROF=${PPROF:-127.0.0.1:$((PORT + 1))}
N=${N:-20000}
DIM=${DIM:-128}
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-8,100}
THREADS=${THREADS:-2}
OUT=${OUT:-$(mktemp -d /tmp/vector-prof.XXXXXX)}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/vector-prof-run.XXXXXX)
PID=
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
# cpu_ticks: user+system clock ticks of a process and its threads.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$(pgrep -P "$1" pprofserver || echo "$1")/stat"; }
go build -o "$WORK/pprofserver" ./benchmarks/vector-net/pprofserver
go build -o "$WORK/vector-net" ./benchmarks/vector-net
(cd "$WORK" && exec env ${SERVER_GODEBUG:+GODEBUG=$SERVER_GODEBUG} ${SERVER_CPUS:+taskset -c $SERVER_CPUS} timeout 900 ./pprofserver -pprof "$PPROF" -mutexfrac 10 -blockrate 10000 -- \
	--port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --threads "$THREADS" >"$WORK/hotkv.log" 2>&1) &
PID=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.2; done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, HotKV --threads $THREADS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/vector-net" -addr "127.0.0.1:$PORT" -n "$N" -dim "$DIM" -clients 1 -duration 1s -memn 0 -keep | grep RESULT
for c in ${CLIENTS//,/ }; do
	/usr/bin/time -f "RESULT client_cpu_s=%U+%S" ${CLIENT_CPUS:+taskset -c $CLIENT_CPUS} "$WORK/vector-net" -addr "127.0.0.1:$PORT" \
		-search-only -clients "$c" -duration "$((DURATION + 2))s" 2>&1 | grep RESULT &
	vn=$!
	sleep 1
	s0=$(cpu_ticks "$PID")
	curl -s "http://$PPROF/debug/pprof/mutex" >"$WORK/m0"
	curl -s "http://$PPROF/debug/pprof/block" >"$WORK/b0"
	curl -s "http://$PPROF/debug/pprof/profile?seconds=$DURATION" >"$OUT/cpu-$c.pb.gz"
	echo "RESULT server_cpu_s=$(( $(cpu_ticks "$PID") - s0 ))/$(getconf CLK_TCK) over the ${DURATION}s profile"
	curl -s "http://$PPROF/debug/pprof/mutex" >"$WORK/m1"
	curl -s "http://$PPROF/debug/pprof/block" >"$WORK/b1"
	wait "$vn"
	go tool pprof -proto -base "$WORK/m0" "$WORK/m1" >"$OUT/mutex-$c.pb.gz" 2>/dev/null
	go tool pprof -proto -base "$WORK/b0" "$WORK/b1" >"$OUT/block-$c.pb.gz" 2>/dev/null
	for p in cpu mutex block; do
		echo "## $p, $c clients"
		go tool pprof -top -nodecount=25 "$OUT/$p-$c.pb.gz" 2>/dev/null | sed -n '1,32p'
	done
done
echo "# profiles in $OUT; load average $(cut -d' ' -f1-3 /proc/loadavg)"
