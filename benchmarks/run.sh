#!/usr/bin/env bash
# Side-by-side benchmark of HotKV and redis-server 7.0.15 with hotkv-benchmark, one command.
#
# Both servers run on loopback with the same settings (no persistence), each pinned to CPU 0; the
# generator is pinned to CPU 1. Runs alternate between the servers (Redis run 1, HotKV run 1, Redis
# run 2, ...) so that a noisy neighbour hurts both alike; the report takes medians. Server CPU time is
# utime+stime of every thread from /proc/PID/stat, sampled just before and after each run.
#
# Usage: benchmarks/run.sh [--quick] [--big] [--proof] [--only SECTIONS]
#   (default)  throughput of the twelve commands, HotKV --threads 1 vs 2, pipeline-1 latency
#   --big      p99.9 latency with BIG_KEYS (5,000,000) keys loaded (takes longer)
#   --proof    hotkv-benchmark vs redis-benchmark, both on CPU 1, against redis-server on CPU 0
#   --quick    small key range, short runs, one run each: a smoke test of the whole harness in a minute
# Env: KEYS (1000000) DURATION (5s) RUNS (3) PIPELINE (30) SIZE (256) CLIENTS (50) COMMANDS (all twelve)
#      SCALE_COMMANDS (SET GET) LAT_COMMANDS (GET SET) BIG_KEYS (5000000) PROOF_REQUESTS (3000000)
#      RESULTS (benchmarks/results) MACHINE (from the CPU model) RPORT/HPORT/H2PORT (16379/16380/16381)
#      KEEP=1 keeps the raw results (manifest, metadata, one JSON per run) in the temporary directory
set -euo pipefail
cd "$(dirname "$0")/.."

sections="throughput scaling latency"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --big) sections="big" ;;
    --proof) sections="proof" ;;
    --only) sections="${2:?--only needs a list}"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$quick" = 1 ]; then
  : "${KEYS:=10000}" "${DURATION:=1s}" "${RUNS:=1}" "${BIG_KEYS:=20000}" "${PROOF_REQUESTS:=200000}"
fi
KEYS=${KEYS:-1000000}
DURATION=${DURATION:-5s}
RUNS=${RUNS:-3}
PIPELINE=${PIPELINE:-30}
SIZE=${SIZE:-256}
CLIENTS=${CLIENTS:-50}
COMMANDS=${COMMANDS:-SET GET MGET SETNX APPEND INCR LPUSH RPUSH SADD HSET MSET PING}
SCALE_COMMANDS=${SCALE_COMMANDS:-SET GET}
LAT_COMMANDS=${LAT_COMMANDS:-GET SET}
BIG_KEYS=${BIG_KEYS:-5000000}
PROOF_REQUESTS=${PROOF_REQUESTS:-3000000}
RESULTS=${RESULTS:-benchmarks/results}
RPORT=${RPORT:-16379}
HPORT=${HPORT:-16380}
H2PORT=${H2PORT:-16381}

# --- tools: report what is missing, install nothing ---------------------------------------------
missing=()
need=(redis-server redis-cli taskset go awk)
case " $sections " in *" proof "*) need+=(redis-benchmark) ;; esac
for tool in "${need[@]}"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: missing ${missing[*]}; install them first (Debian: apt-get install redis-server redis-tools util-linux golang)" >&2
  exit 2
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "run.sh: needs at least 2 CPUs (server on CPU 0, generator on CPU 1)" >&2
  exit 2
fi
redis_version=$(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p')
[ "$redis_version" = "7.0.15" ] || echo "run.sh: warning: redis-server is $redis_version, the reference is 7.0.15" >&2

work=$(mktemp -d /tmp/hotkv-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "raw results kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
manifest=$work/manifest.tsv
meta=$work/meta.txt
: >"$manifest"

echo "building hotkv and hotkv-benchmark..." >&2
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark
go build -o "$work/report" ./benchmarks/report

# --- servers -------------------------------------------------------------------------------------
# start_server NAME PORT CPUS [extra hotkv args]: starts redis (NAME redis*) or hotkv pinned to CPUS and
# records its PID in the variable pid_NAME.
start_server() {
  local name=$1 port=$2 cpus=$3; shift 3
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: port $port is taken by another process; choose others with RPORT/HPORT/H2PORT" >&2
    exit 1
  fi
  mkdir -p "$work/data-$name"
  if [[ $name == redis* ]]; then
    taskset -c "$cpus" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/data-$name" >"$work/$name.log" 2>&1 &
  else
    taskset -c "$cpus" "$work/hotkv" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/data-$name" "$@" >"$work/$name.log" 2>&1 &
  fi
  local pid=$!
  pids+=("$pid")
  printf -v "pid_$name" %s "$pid"
  for _ in $(seq 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "run.sh: $name on port $port did not start:" >&2
  tail -5 "$work/$name.log" >&2
  exit 1
}

# stop_server NAME: stops it and forgets its PID, so the exit trap never signals a recycled PID.
stop_server() {
  local name=$1 pidvar="pid_$1" p keep=()
  kill "${!pidvar}" 2>/dev/null || true
  wait "${!pidvar}" 2>/dev/null || true
  for p in "${pids[@]}"; do [ "$p" = "${!pidvar}" ] || keep+=("$p"); done
  pids=("${keep[@]}")
}

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

# gen CPUS ARGS...: the generator, pinned.
gen() {
  local cpus=$1; shift
  taskset -c "$cpus" "$work/hotkv-benchmark" --clients "$CLIENTS" --data-size "$SIZE" "$@"
}

# prefill NAME PORT KEYS: loads key:0..KEYS-1 and records the server's RSS afterwards.
prefill() {
  local name=$1 port=$2 keys=$3 pidvar="pid_$1"
  echo "prefilling $name with $keys keys..." >&2
  gen 1 --port "$port" --keys "$keys" --prefill-only --quiet >/dev/null
  echo "rss.$name=$(rss_kb "${!pidvar}")" >>"$meta"
}

# The twelve commands. Commands that grow values or collections write their own keys, which are
# deleted after each run so memory stays bounded and every run starts from the same state.
template() {
  local k='key:__key__' d='__data__'
  case "$1" in
    SET) echo "SET $k $d" ;;
    GET) echo "GET $k" ;;
    MGET) echo "MGET $k $k $k $k $k $k $k $k" ;;
    SETNX) echo "SETNX $k $d" ;;
    APPEND) echo "APPEND append:__key__ $d" ;;
    INCR) echo "INCR counter:__key__" ;;
    LPUSH) echo "LPUSH list:__key__ $d" ;;
    RPUSH) echo "RPUSH list:__key__ $d" ;;
    SADD) echo "SADD set:__key__ element:__key__" ;;
    HSET) echo "HSET hash:__key__ element:__key__ $d" ;;
    MSET) echo "MSET $k $d $k $d $k $d $k $d" ;;
    PING) echo "PING" ;;
    *) echo "run.sh: no template for $1" >&2; exit 2 ;;
  esac
}

scratch_prefix() {
  case "$1" in APPEND) echo append ;; LPUSH|RPUSH) echo list ;; SADD) echo set ;; HSET) echo hash ;; esac
}

# measure SECTION NAME PORT CMD RUN GENCPUS ARGS...: one measured run; appends a manifest line
# (section, server, command, run, result JSON, server CPU seconds, generator exit status).
measure() {
  local section=$1 name=$2 port=$3 cmd=$4 run=$5 gcpus=$6; shift 6
  local pidvar="pid_$name" json="$work/$section-$name-$cmd-$run.json" status=0
  if ! kill -0 "${!pidvar}" 2>/dev/null; then
    echo "run.sh: $name is not running; restarting it" >&2
    restart "$name"
  fi
  echo "[$section] $cmd on $name, run $run" >&2
  local before after
  before=$(cpu_ticks "${!pidvar}")
  gen "$gcpus" --port "$port" --command "$(template "$cmd")" --json "$json" --quiet "$@" \
    >"$work/last.out" 2>"$work/last.err" || status=$?
  after=$(cpu_ticks "${!pidvar}")
  [ "$status" = 0 ] || echo "  failed: $(tail -c 300 "$work/last.err")" >&2
  local cpu
  cpu=$(awk -v a="$after" -v b="$before" -v hz="$hz" 'BEGIN{printf "%.3f", (a-b)/hz}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$section" "$name" "$cmd" "$run" "$json" "$cpu" "$status" >>"$manifest"
  local prefix
  prefix=$(scratch_prefix "$cmd")
  if [ -n "$prefix" ] && [ "$status" = 0 ]; then
    gen "$gcpus" --port "$port" --keys "$KEYS" --prefill-only --prefill-command "DEL $prefix:__key__" \
      --quiet >/dev/null 2>&1 || echo "  cleanup of $prefix:* failed" >&2
  fi
}

# Server definitions: name -> port, CPUs, extra args, key count; restart brings one back after a crash.
declare -A port_of cpus_of args_of keys_of
define() { port_of[$1]=$2; cpus_of[$1]=$3; keys_of[$1]=$4; args_of[$1]=${5:-}; }
launch() {
  # shellcheck disable=SC2086
  start_server "$1" "${port_of[$1]}" "${cpus_of[$1]}" ${args_of[$1]}
  prefill "$1" "${port_of[$1]}" "${keys_of[$1]}"
}
restart() { stop_server "$1"; launch "$1"; }

# --- sections ------------------------------------------------------------------------------------
throughput() {
  for cmd in $COMMANDS; do
    for run in $(seq "$RUNS"); do
      for name in redis hotkv; do
        measure throughput "$name" "${port_of[$name]}" "$cmd" "$run" 1 --threads 1 --pipeline "$PIPELINE" \
          --keys "$KEYS" --duration "$DURATION"
      done
    done
  done
}

# HotKV with one thread on CPU 0 against HotKV with two threads on both CPUs; the generator shares
# them with the same number of connections. What matters is CPU-seconds per million requests.
scaling() {
  for cmd in $SCALE_COMMANDS; do
    for run in $(seq "$RUNS"); do
      measure scaling hotkv "${port_of[hotkv]}" "$cmd" "$run" 1 --threads 1 --pipeline "$PIPELINE" \
        --keys "$KEYS" --duration "$DURATION"
      measure scaling hotkv2 "${port_of[hotkv2]}" "$cmd" "$run" 0,1 --threads 2 --clients $((CLIENTS / 2)) \
        --pipeline "$PIPELINE" --keys "$KEYS" --duration "$DURATION"
    done
  done
}

latency() {
  local section=$1
  for cmd in $LAT_COMMANDS; do
    for run in $(seq "$RUNS"); do
      for name in "${@:2}"; do
        measure "$section" "$name" "${port_of[$name]}" "$cmd" "$run" 1 --threads 1 --pipeline 1 \
          --keys "${keys_of[$name]}" --duration "$DURATION"
      done
    done
  done
}

# proof: the same redis-server loaded by redis-benchmark and by hotkv-benchmark, each on CPU 1. Keys
# are redis-benchmark's own (key:%012d), prefilled, so both read the same values.
proof() {
  local tool test cmd p run
  gen 1 --port "${port_of[redis]}" --keys "$KEYS" --key-width 12 --prefill-only --quiet >/dev/null
  for p in "$PIPELINE" 1; do
    for cmd in PING GET; do
      for run in $(seq "$RUNS"); do
        for tool in redis-benchmark hotkv-benchmark; do
          proof_run "$tool" "$cmd" "$p" "$run"
        done
      done
    done
  done
}

# proof_run TOOL CMD PIPELINE RUN: times one generator process (its user+system CPU) and writes its
# result in hotkv-benchmark's JSON shape.
proof_run() {
  local tool=$1 cmd=$2 p=$3 run=$4 json="$work/proof-$1-$2-P$3-$4.json" n=$PROOF_REQUESTS t0 t1
  [ "$p" = 1 ] && n=$((PROOF_REQUESTS / 10))
  echo "[proof] $tool $cmd -P $p, run $run" >&2
  t0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  if [ "$tool" = redis-benchmark ]; then
    local t=get
    [ "$cmd" = PING ] && t=ping_mbulk
    local line
    line=$(taskset -c 1 redis-benchmark -p "${port_of[redis]}" -t "$t" -n "$n" -P "$p" -c "$CLIENTS" \
      -d "$SIZE" -r "$KEYS" --csv 2>/dev/null | tail -1)
    t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
    echo "$line" | tr -d '"' | awk -F, -v n="$n" -v cpu="$(awk -v a="$t1" -v b="$t0" -v hz="$hz" 'BEGIN{print (a-b)/hz}')" \
      '{printf "{\"ops\": %d, \"seconds\": %f, \"ops_per_sec\": %s, \"generator_cpu_seconds\": %s, \"latency_us\": {\"p50\": %f, \"p99\": %f}}\n", n, n/$2, $2, cpu, $5*1000, $7*1000}' >"$json"
  else
    local template="PING"
    [ "$cmd" = GET ] && template="GET key:__key__"
    gen 1 --port "${port_of[redis]}" --keys "$KEYS" --key-width 12 --pipeline "$p" --requests "$n" \
      --command "$template" --json "$json" --quiet >/dev/null
    t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
    # Replace the generator's self-measured CPU by the same outside measurement redis-benchmark gets.
    local cpu
    cpu=$(awk -v a="$t1" -v b="$t0" -v hz="$hz" 'BEGIN{print (a-b)/hz}')
    sed -i "s/\"generator_cpu_seconds\": [0-9.e+-]*/\"generator_cpu_seconds\": $cpu/" "$json"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' proof "$tool" "$cmd -P $p" "$run" "$json" -1 0 >>"$manifest"
}

# --- main ----------------------------------------------------------------------------------------
{
  echo "date=$(date -u +%F)"
  echo "kernel=$(uname -sr)"
  echo "cpu=$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "cpus=$(nproc)"
  echo "redis=$redis_version"
  echo "go=$(go env GOVERSION)"
  echo "hotkv_commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo +dirty)"
  echo "keys=$KEYS"
  echo "big_keys=$BIG_KEYS"
  echo "duration=$DURATION"
  echo "runs=$RUNS"
  echo "proof_requests=$PROOF_REQUESTS"
  echo "pipeline=$PIPELINE"
  echo "size=$SIZE"
  echo "clients=$CLIENTS"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$meta"

define redis "$RPORT" 0 "$KEYS"
define hotkv "$HPORT" 0 "$KEYS" "--threads 1"
define hotkv2 "$H2PORT" 0,1 "$KEYS" "--threads 2"
for section in $sections; do
  case "$section" in
    throughput) [ -n "${pid_redis:-}" ] || launch redis; [ -n "${pid_hotkv:-}" ] || launch hotkv; throughput ;;
    scaling) [ -n "${pid_hotkv:-}" ] || launch hotkv; launch hotkv2; scaling; stop_server hotkv2 ;;
    latency) [ -n "${pid_redis:-}" ] || launch redis; [ -n "${pid_hotkv:-}" ] || launch hotkv; latency latency redis hotkv ;;
    big)
      define redisbig "$RPORT" 0 "$BIG_KEYS"
      define hotkvbig "$HPORT" 0 "$BIG_KEYS" "--threads 1"
      launch redisbig; launch hotkvbig; latency big redisbig hotkvbig
      stop_server redisbig; stop_server hotkvbig ;;
    proof) start_server redis "$RPORT" 0; proof ;;
    *) echo "run.sh: unknown section $section" >&2; exit 2 ;;
  esac
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"

machine=${MACHINE:-$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-$//')-$(nproc)cpu}
name="$(date -u +%F)-$machine"
case " $sections " in *" big "*) name="$name-big" ;; *" proof "*) name="$name-proof" ;; esac
[ "$quick" = 1 ] && name="$name-quick"
mkdir -p "$RESULTS"
"$work/report" -manifest "$manifest" -meta "$meta" -md "$RESULTS/$name.md" -png "$RESULTS/$name.png"
echo "wrote $RESULTS/$name.md" >&2
