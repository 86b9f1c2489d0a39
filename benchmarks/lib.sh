#!/bin/bash
# lib.sh: the preamble the side-by-side scripts share (families.sh, geo.sh, multi.sh, budgets.sh,
# scripting.sh); source it, do not run it. Sourcing it checks the tools, moves to the repository
# root, builds HotKV and hotkv-benchmark into a scratch directory ($work, removed on exit) and
# arranges for every server started through it to be stopped on exit, however the script ends.
# The caller sets RPORT and HPORT first. Then:
#   start_redis [flag ...]  redis-server on $RPORT pinned to CPU 0, no persistence; sets rpid
#   start_hotkv [flag ...]  HotKV on $HPORT pinned to CPU 0, one thread, no persistence, GC idle
#                           off (later flags win: --threads 2); HOTKV_PIN="" leaves it unpinned;
#                           sets hpid
#   stop_hotkv              stops the HotKV started last and waits for it
#   bench ARG ...           hotkv-benchmark pinned to CPU 1, one thread, --quiet
#   cpu PID                 the process's utime+stime in clock ticks ($tck a second)
#   server NAME             sets port and pid for NAME (redis or hotkv)
#   wait_port PORT          waits up to 10 s for PING to answer
set -euo pipefail
for tool in go redis-server redis-cli taskset python3 awk; do
  command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool is not installed" >&2; exit 1; }
done
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${RPORT:?set RPORT before sourcing lib.sh}" "${HPORT:?set HPORT before sourcing lib.sh}"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark
mkdir -p "$work/r" "$work/h"
tck=$(getconf CLK_TCK)
HOTKV_PIN=${HOTKV_PIN-0}

wait_port() {
  for _ in $(seq 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.05; done
  echo "$(basename "$0"): nothing answers on port $1" >&2
  exit 1
}

start_redis() {
  taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/r" "$@" \
    >"$work/r.log" 2>&1 &
  rpid=$!
  pids+=("$rpid")
  wait_port "$RPORT"
}

start_hotkv() {
  local pin=()
  [ -z "$HOTKV_PIN" ] || pin=(taskset -c "$HOTKV_PIN")
  "${pin[@]}" "$work/hotkv" --port "$HPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/h" \
    --threads 1 --gc-idle no "$@" >>"$work/h.log" 2>&1 &
  hpid=$!
  pids+=("$hpid")
  wait_port "$HPORT"
}

stop_hotkv() {
  kill "$hpid"
  wait "$hpid" 2>/dev/null || true
}

bench() { taskset -c 1 "$work/hotkv-benchmark" --threads 1 --quiet "$@"; }

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

server() {
  if [ "$1" = redis ]; then port=$RPORT pid=$rpid; else port=$HPORT pid=$hpid; fi
}
