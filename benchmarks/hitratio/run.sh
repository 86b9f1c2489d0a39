#!/usr/bin/env bash
# Hit ratios of redis-server 7.0.15 (allkeys-lru, allkeys-lfu) and HotKV (allkeys-lru,
# allkeys-lfu, allkeys-tinylfu) at the same maxmemory on Zipf traces (s = 0.8, 0.99, 1.2 over
# 1,000,000 keys) and a scan-polluted one, each request a GET and on a miss a SET of VALUE bytes
# (benchmarks/hitratio). One redis-server and one HotKV on loopback, pinned to CPU 0, the
# client on CPU 1; each run starts from FLUSHALL. Prints one RESULT line per run and writes them
# to $OUT.
#
#   bash benchmarks/hitratio/run.sh                      # everything (~40 min on an idle 2-core VM)
#   BUDGETS=25mb TRACES="zipf:0.99" bash benchmarks/hitratio/run.sh   # one cell (~2 min)
#   SIM=1 bash benchmarks/hitratio/run.sh                # the in-process models only (~3 min)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUDGETS=${BUDGETS:-"100mb 25mb"}
TRACES=${TRACES:-"zipf:0.8 zipf:0.99 zipf:1.2 scan:0.99"}
REQUESTS=${REQUESTS:-4000000}
WARMUP=${WARMUP:-1000000}
VALUE=${VALUE:-1000}
REDIS_PORT=${REDIS_PORT:-7130}
HOTKV_PORT=${HOTKV_PORT:-7131}
OUT=${OUT:-/tmp/hitratio-results.txt}
WORK=$(mktemp -d /tmp/hitratio.XXXXXX)
BIN=$WORK/hitratio
go build -o "$BIN" ./benchmarks/hitratio
: >"$OUT"

# capacity is the keys a budget holds in the models: measured keys at the budget on
# redis-server 7.0.15 with 1000-byte values (DBSIZE after a run), about 1,140 bytes a key.
capacity() { local v=${1^^}; echo $(( $(numfmt --from=iec "${v%B}") / 1140 )); }

if [[ ${SIM:-0} == 1 ]]; then
	for b in $BUDGETS; do
		for t in $TRACES; do
			"$BIN" -trace "${t%%:*}" -s "${t##*:}" -capacity "$(capacity "$b")" -requests "$REQUESTS" \
				-warmup "$WARMUP" 2>/dev/null | sed "s/^RESULT /RESULT budget=$b /" | tee -a "$OUT"
		done
	done
	exit 0
fi

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
go build -o "$WORK/hotkv" ./src/cmd/hotkv
taskset -c 0 redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
	--appendonly no --daemonize no >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
taskset -c 0 "$WORK/hotkv" --port "$HOTKV_PORT" --bind 127.0.0.1 --dir "$WORK" --save '' \
	--threads 1 >"$WORK/hotkv.log" 2>&1 &
PIDS+=($!)
for p in "$REDIS_PORT" "$HOTKV_PORT"; do
	for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.2; done
done

for b in $BUDGETS; do
	for t in $TRACES; do
		for run in "redis $REDIS_PORT allkeys-lru" "redis $REDIS_PORT allkeys-lfu" \
			"hotkv $HOTKV_PORT allkeys-lru" "hotkv $HOTKV_PORT allkeys-lfu" "hotkv $HOTKV_PORT allkeys-tinylfu"; do
			set -- $run
			echo "== $1 $3 maxmemory $b trace $t" >&2
			taskset -c 1 "$BIN" -addr "127.0.0.1:$2" -label "$1" -maxmemory "$b" -policy "$3" \
				-trace "${t%%:*}" -s "${t##*:}" -requests "$REQUESTS" -warmup "$WARMUP" -value "$VALUE" \
				2> >(awk 'NR % 10 == 0' >&2) | sed "s/^RESULT /RESULT budget=$b /" | tee -a "$OUT"
		done
	done
done
