#!/usr/bin/env bash
# IP sets side by side with redis-server 7.0.15 (issue 21): the `ipsets` section of benchmarks/run.sh
# (bash benchmarks/run.sh --only ipsets runs this script).
#
# Both servers are pinned to CPU 0 (HotKV --threads 1), the generator and the loaders to CPU 1; both
# hold the same data from benchmarks/ipsets/data.sh (run first if missing). Every lookup row runs
# RUNS times per server, alternating which goes first; a row gives the median ops/s, the range, and
# the server's CPU seconds per million operations (utime+stime from /proc/PID/stat around the run).
#
#   lookups  CONTAINS vs SISMEMBER on 1M hosts (half hits); MATCH vs ZRANGEBYSCORE geo <int> +inf
#            LIMIT 0 1 on Tor's IPv4 ranges; MCONTAINS of 100 vs SMISMEMBER of 100
#   loader   1M hosts through redis-cli --pipe (IPSET.ADD into HotKV vs SADD into Redis); libloc's
#            IPv4 prefixes through hotkv-load (IPSET.ADD LABEL into HotKV, one line per command and
#            --entries 100, vs ZADD into Redis, also redis-cli --pipe of the ZADDs)
#   probe    a probe client's latency (pipeline 1, one connection) during a 4-connection hotkv-load
#   refresh  4 readers of key live (pipeline 1) while 5 loads of 200k-entry lists are RENAMEd over
#            it (hotkv-load --replace): the slowest RENAME and the readers' p50/p99/p99.9
#   memory   used_memory per entry of the loaded keys
#
# Usage: bash benchmarks/ipsets/bench.sh   (~6 min)
# Env: RUNS (3) DURATION (5s) PIPELINE (30) CLIENTS (50) PARTS ("lookups loader probe refresh memory")
#      REFRESH_FOR (25s: how long the refresh readers run, longer than the 5 loads)
#      IPORT (27160: Redis; HotKV on IPORT+1) OUT (file for the Markdown tables; default stdout only)
#      HOTKV_BIN (a built hotkv to use instead of building ./src/cmd/hotkv)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${DATA:-$here/data}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
PIPELINE=${PIPELINE:-30}
CLIENTS=${CLIENTS:-50}
PARTS=${PARTS:-lookups loader probe refresh memory}
REFRESH_FOR=${REFRESH_FOR:-25s}
IPORT=${IPORT:-27160}
RP=$IPORT
HP=$((IPORT + 1))

[ -f "$data/counts.txt" ] || bash "$here/data.sh"
for tool in redis-server redis-cli taskset python3 go; do
  command -v "$tool" >/dev/null || { echo "bench.sh: missing $tool" >&2; exit 2; }
done
work=$(mktemp -d /tmp/hotkv-ipsets.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "building..." >&2
if [ -n "${HOTKV_BIN:-}" ]; then cp "$HOTKV_BIN" "$work/hotkv"; else (cd "$root" && go build -o "$work/hotkv" ./src/cmd/hotkv); fi
(cd "$root" && go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark &&
  go build -o "$work/hotkv-load" ./tools/hotkv-load)

start() { # start NAME PORT
  mkdir -p "$work/d-$1"
  if [ "$1" = redis ]; then
    taskset -c 0 redis-server --port "$2" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/d-$1" >"$work/$1.log" 2>&1 &
  else
    taskset -c 0 "$work/hotkv" --port "$2" --bind 127.0.0.1 --save '' --appendonly no --threads 1 --gc-idle no \
      --dir "$work/d-$1" >"$work/$1.log" 2>&1 &
  fi
  local pid=$!
  pids+=("$pid")
  printf -v "pid_$1" %s "$pid"
  for _ in $(seq 200); do
    redis-cli -p "$2" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "bench.sh: $1 did not start" >&2
  tail -5 "$work/$1.log" >&2
  exit 1
}
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'; }
out() { if [ -n "${OUT:-}" ]; then echo "$@" | tee -a "$OUT"; else echo "$@"; fi; }
[ -z "${OUT:-}" ] || : >"$OUT"

start redis "$RP"
start hotkv "$HP"
out "Machine: $(nproc) CPUs ($(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)); load at start $(cut -d' ' -f1-3 /proc/loadavg);"
hk="HotKV built from the working tree at $(cd "$root" && git rev-parse --short HEAD)"
[ -z "${HOTKV_BIN:-}" ] || hk="HotKV $HOTKV_BIN"
out "redis-server $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p'), $hk; RUNS=$RUNS DURATION=$DURATION PIPELINE=$PIPELINE CLIENTS=$CLIENTS"
out ""

# pipe NAME PORT FILE KEY: loads FILE through redis-cli --pipe into a fresh KEY, prints the seconds
# and fails unless redis-cli reports 0 errors.
pipe() {
  redis-cli -p "$2" del "$4" >/dev/null
  sleep 0.5 # let a lazy free of the old value finish
  local t0 t1 res
  t0=$(date +%s.%N)
  res=$(taskset -c 1 redis-cli -p "$2" --pipe <"$3" | tail -1)
  t1=$(date +%s.%N)
  case "$res" in "errors: 0,"*) ;; *) echo "bench.sh: $1 --pipe of $3: $res" >&2; exit 1 ;; esac
  python3 -c "print('%.3f' % ($t1 - $t0))"
}
# hload NAME PORT KEY ARGS...: hotkv-load into a fresh KEY, prints the seconds (its own report).
hload() {
  local port=$2 key=$3; shift 3
  redis-cli -p "$port" del "$key" >/dev/null
  sleep 0.5
  taskset -c 1 "$work/hotkv-load" -q -p "$port" "$@" 2>"$work/hload.err" || { cat "$work/hload.err" >&2; exit 1; }
  sed -n 's/.* in \([0-9.]*\)s .*/\1/p' "$work/hload.err"
}
stats() { # numbers... -> "median (min-max)", integers above 1000 without decimals
  python3 -c 'import sys,statistics as s
v = sorted(float(x) for x in sys.argv[1:])
f = "%.0f" if v[0] >= 1000 else "%.3f"
print((f + " (" + f + "-" + f + ")") % (s.median(v), v[0], v[-1]))' "$@"
}
ratio() { python3 -c 'import sys; print("%.2fx" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
median() { python3 -c 'import sys,statistics as s; print(s.median(float(x) for x in sys.argv[1:]))' "$@"; }

load_all() {
  echo "loading..." >&2
  pipe redis "$RP" "$data/hosts-sadd.resp" hosts >/dev/null
  pipe hotkv "$HP" "$data/hosts-ipset.resp" hosts >/dev/null
  pipe redis "$RP" "$data/tor4-zadd.resp" geo >/dev/null
  hload hotkv "$HP" geo --key geo "$data/tor4.txt" >/dev/null
  [ "$(redis-cli -p "$RP" scard hosts)" = "$(redis-cli -p "$HP" ipset.card hosts)" ] || { echo "bench.sh: hosts differ" >&2; exit 1; }
  [ "$(redis-cli -p "$RP" zcard geo)" = "$(redis-cli -p "$HP" ipset.card geo)" ] || { echo "bench.sh: geo differs" >&2; exit 1; }
}

# measure NAME PORT LINES TEMPLATE: one run; prints "ops_per_sec cpu_s_per_M"
measure() {
  local name=$1 port=$2 lines=$3 tpl=$4 pidvar="pid_$1" a b
  a=$(ticks "${!pidvar}")
  taskset -c 1 "$work/hotkv-benchmark" --port "$port" --quiet --clients "$CLIENTS" --pipeline "$PIPELINE" \
    --duration "$DURATION" --lines "$lines" --command "$tpl" --expect any --json "$work/r.json" >/dev/null
  b=$(ticks "${!pidvar}")
  python3 - "$work/r.json" "$((b - a))" "$hz" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if r.get("error"):
    sys.exit("run failed: " + r["error"])
ops = r["ops"]
cpu = int(sys.argv[2]) / int(sys.argv[3])
print("%.0f %.3f" % (r["ops_per_sec"], cpu / ops * 1e6))
PY
}

# row LABEL GOAL RLINES RTPL HLINES HTPL
row() {
  local label=$1 goal=$2 rl=$3 rt=$4 hl=$5 ht=$6 i r h rops=() hops=() rcpu=() hcpu=()
  for i in $(seq "$RUNS"); do
    echo "[$label] run $i" >&2
    if [ $((i % 2)) = 1 ]; then
      r=$(measure redis "$RP" "$rl" "$rt"); h=$(measure hotkv "$HP" "$hl" "$ht")
    else
      h=$(measure hotkv "$HP" "$hl" "$ht"); r=$(measure redis "$RP" "$rl" "$rt")
    fi
    rops+=("${r% *}"); rcpu+=("${r#* }"); hops+=("${h% *}"); hcpu+=("${h#* }")
  done
  local ratio ratios=()
  for i in $(seq 0 $((RUNS - 1))); do ratios+=("$(python3 -c "print(${hops[$i]} / ${rops[$i]})")"); done
  out "| $label | $(stats "${rops[@]}") | $(stats "${hops[@]}") | $(stats "${ratios[@]}") | $goal | $(stats "${rcpu[@]}") | $(stats "${hcpu[@]}") |"
}

lookups() {
  local hundred_r hundred_h i
  out "### Lookups (ops/s; CPU-s per M ops of the server)"
  out ""
  out "| row | Redis ops/s | HotKV ops/s | HotKV/Redis | goal | Redis CPU-s/M | HotKV CPU-s/M |"
  out "|---|---|---|---|---|---|---|"
  row "IPSET.CONTAINS vs SISMEMBER, 1M hosts" "≥1.5x" "$data/hosts-queries.txt" "SISMEMBER hosts __line__" \
    "$data/hosts-queries.txt" "IPSET.CONTAINS hosts __line__"
  row "IPSET.MATCH vs ZRANGEBYSCORE geo ip +inf LIMIT 0 1, $(wc -l <"$data/tor4.txt") ranges" "≥2x" "$data/tor4-ints.txt" \
    "ZRANGEBYSCORE geo __line__ +inf LIMIT 0 1" "$data/tor4-queries.txt" "IPSET.MATCH geo __line__"
  hundred_r="SMISMEMBER hosts"; hundred_h="IPSET.MCONTAINS hosts"
  for i in $(seq 100); do hundred_r+=" __line__"; hundred_h+=" __line__"; done
  row "IPSET.MCONTAINS of 100 vs SMISMEMBER of 100" "≥2x" "$data/hosts-queries.txt" "$hundred_r" "$data/hosts-queries.txt" "$hundred_h"
  out ""
}

loader() {
  local i rs=() hs=() rz=() rzp=() hz4=() hz4b=()
  for i in $(seq "$RUNS"); do
    echo "[loader] run $i" >&2
    rs+=("$(pipe redis "$RP" "$data/hosts-sadd.resp" hosts)")
    hs+=("$(pipe hotkv "$HP" "$data/hosts-ipset.resp" hosts)")
    rz+=("$(hload redis "$RP" libloc4 "$data/libloc4-zadd.resp")")
    rzp+=("$(pipe redis "$RP" "$data/libloc4-zadd.resp" libloc4)")
    hz4+=("$(hload hotkv "$HP" libloc4 --key libloc4 "$data/libloc4.txt")")
    hz4b+=("$(hload hotkv "$HP" libloc4 --key libloc4 --entries 100 "$data/libloc4.txt")")
  done
  [ "$(redis-cli -p "$HP" ipset.card hosts)" = "$(wc -l <"$data/hosts.txt")" ] || { echo "bench.sh: HotKV hosts incomplete" >&2; exit 1; }
  [ "$(redis-cli -p "$HP" ipset.card libloc4)" = "$(redis-cli -p "$RP" zcard libloc4)" ] || { echo "bench.sh: libloc4 differs" >&2; exit 1; }
  out "### Loading (seconds, median (min-max) of $RUNS)"
  out ""
  out "| load | Redis | HotKV | HotKV/Redis time | goal |"
  out "|---|---|---|---|---|"
  out "| $(wc -l <"$data/hosts.txt") hosts, redis-cli --pipe: SADD vs IPSET.ADD, 0 errors | $(stats "${rs[@]}") | $(stats "${hs[@]}") | $(ratio "$(median "${hs[@]}")" "$(median "${rs[@]}")") | ≤1.0x |"
  out "| $(wc -l <"$data/libloc4.txt") libloc v4 prefixes, hotkv-load: ZADD vs IPSET.ADD LABEL | $(stats "${rz[@]}") | $(stats "${hz4[@]}") | $(ratio "$(median "${hz4[@]}")" "$(median "${rz[@]}")") | ≤1.0x |"
  out "| the same, hotkv-load --entries 100 (IPSET.ADD … LABELS of 100 lines) | $(stats "${rz[@]}") | $(stats "${hz4b[@]}") | $(ratio "$(median "${hz4b[@]}")" "$(median "${rz[@]}")") | ≤1.0x |"
  out "| the same ZADDs through redis-cli --pipe | $(stats "${rzp[@]}") | | $(ratio "$(median "${hz4[@]}")" "$(median "${rzp[@]}")") | |"
  out ""
}

# probe NAME PORT ARGS...: p50/p99/p99.9 (ms) of one pipeline-1 connection sending EXISTS probe while
# hotkv-load -c 4 loads ARGS.
probe_one() {
  local name=$1 port=$2 key=$3; shift 3
  redis-cli -p "$port" del "$key" >/dev/null
  sleep 0.5
  taskset -c 1 "$work/hotkv-load" -q -c 4 -p "$port" "$@" 2>"$work/probe-load.err" &
  local lp=$!
  sleep 0.2
  taskset -c 1 "$work/hotkv-benchmark" --port "$port" --quiet --clients 1 --pipeline 1 --duration 1s \
    --command "EXISTS probe" --expect int:0 --json "$work/p.json" >/dev/null
  local still=0
  kill -0 "$lp" 2>/dev/null && still=1
  wait "$lp" || { cat "$work/probe-load.err" >&2; exit 1; }
  [ "$still" = 1 ] || echo "bench.sh: warning: the $name load ended before the probe did" >&2
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["latency_us"]; print("%.3f %.3f %.3f" % (l["p50"]/1e3, l["p99"]/1e3, l["p99.9"]/1e3))' "$work/p.json"
}
probe() {
  local i r h rp=() hp=()
  for i in $(seq "$RUNS"); do
    echo "[probe] run $i" >&2
    r=$(probe_one redis "$RP" libloc4 "$data/libloc4-zadd.resp")
    h=$(probe_one hotkv "$HP" libloc4 --key libloc4 "$data/libloc4.txt")
    rp+=("$(echo "$r" | cut -d' ' -f2)"); hp+=("$(echo "$h" | cut -d' ' -f2)")
    echo "  redis p50/p99/p99.9 $r  hotkv $h" >&2
  done
  out "### A probe client during a 4-connection load of the libloc v4 prefixes"
  out ""
  out "| | Redis (ZADD load) | HotKV (IPSET.ADD load) | goal |"
  out "|---|---|---|---|"
  out "| probe p99 ms (EXISTS, pipeline 1), median (min-max) of $RUNS | $(stats "${rp[@]}") | $(stats "${hp[@]}") | HotKV ≤ Redis |"
  out ""
}

# refresh_one NAME PORT READTPL LOADARGS...: 4 reader connections (pipeline 1) loop READTPL on key
# live while 5 staging loads, alternately of lists A and B, are RENAMEd over live by hotkv-load
# --replace; prints "max-rename-ms p50 p99 p99.9" (reader latencies in ms).
refresh_one() {
  local name=$1 port=$2 tpl=$3; shift 3
  redis-cli -p "$port" del live >/dev/null
  taskset -c 1 "$work/hotkv-load" -q -p "$port" --replace live "$@" "$work/listA.txt" 2>/dev/null
  taskset -c 1 "$work/hotkv-benchmark" --port "$port" --quiet --clients 4 --pipeline 1 --duration "$REFRESH_FOR" \
    --lines "$data/hosts-queries.txt" --command "$tpl" --expect any --json "$work/rf.json" >/dev/null &
  local bp=$! i l ms=() t
  sleep 0.5
  for i in 1 2 3 4 5; do
    l=$work/listB.txt; [ $((i % 2)) = 0 ] && l=$work/listA.txt
    taskset -c 1 "$work/hotkv-load" -q -p "$port" --replace live "$@" "$l" 2>"$work/rf.err" || { cat "$work/rf.err" >&2; exit 1; }
    t=$(sed -n 's/.*RENAMEd .* in \([0-9.]*\) ms.*/\1/p' "$work/rf.err")
    [ -n "$t" ] || { echo "bench.sh: no RENAME time: $(cat "$work/rf.err")" >&2; exit 1; }
    ms+=("$t")
  done
  kill -0 "$bp" 2>/dev/null || echo "bench.sh: warning: the $name readers ended before the loads did" >&2
  wait "$bp"
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["latency_us"]; print("%s %.3f %.3f %.3f" % (max(sys.argv[2:], key=float), l["p50"]/1e3, l["p99"]/1e3, l["p99.9"]/1e3))' "$work/rf.json" "${ms[@]}"
  echo "  $name RENAME ms: ${ms[*]}" >&2
}
refresh() {
  # lists A and B: 190k hosts and 10k labelled libloc prefixes each, disjoint (odd and even lines)
  { head -n 380000 "$data/hosts.txt" | awk 'NR % 2'; head -n 20000 "$data/libloc4.txt" | awk 'NR % 2'; } >"$work/listA.txt"
  { head -n 380000 "$data/hosts.txt" | awk 'NR % 2 == 0'; head -n 20000 "$data/libloc4.txt" | awk 'NR % 2 == 0'; } >"$work/listB.txt"
  local hundred_r="SMISMEMBER live" hundred_h="IPSET.MCONTAINS live" i r h rr=() hh=()
  for i in $(seq 100); do hundred_r+=" __line__"; hundred_h+=" __line__"; done
  for i in $(seq "$RUNS"); do
    echo "[refresh] run $i" >&2
    r=$(refresh_one redis "$RP" "$hundred_r" --format ip --cmd 'SADD {key} {entry}')
    h=$(refresh_one hotkv "$HP" "$hundred_h" --key live)
    rr+=("$r"); hh+=("$h")
  done
  col() { local k=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$k"; done; }
  out "### Refresh: 4 readers (MCONTAINS / SMISMEMBER of 100, pipeline 1) while 5 staging loads of $(wc -l <"$work/listA.txt")-entry lists are RENAMEd over the live key"
  out ""
  out "| median (min-max) of $RUNS runs | Redis (SET, SADD) | HotKV (IP set) | goal |"
  out "|---|---|---|---|"
  # shellcheck disable=SC2046
  out "| slowest RENAME of 5, ms (hotkv-load --replace: write to reply) | $(stats $(col 1 "${rr[@]}")) | $(stats $(col 1 "${hh[@]}")) | ≤1 ms |"
  # shellcheck disable=SC2046
  out "| reader p50 / p99 ms | $(stats $(col 2 "${rr[@]}")) / $(stats $(col 3 "${rr[@]}")) | $(stats $(col 2 "${hh[@]}")) / $(stats $(col 3 "${hh[@]}")) | |"
  # shellcheck disable=SC2046
  out "| reader p99.9 ms | $(stats $(col 4 "${rr[@]}")) | $(stats $(col 4 "${hh[@]}")) | ≤5 ms |"
  out ""
}

memory() {
  out "### Memory (used_memory delta per entry)"
  out ""
  out "| data | Redis | HotKV | goal |"
  out "|---|---|---|---|"
  local pair
  for pair in "hosts:$data/hosts-sadd.resp:$data/hosts-ipset.resp:≤12 B" "libloc4:$data/libloc4-zadd.resp:$data/libloc4.txt:≤40 B (labelled v4)"; do
    IFS=: read -r key rfile hfile goal <<<"$pair"
    redis-cli -p "$RP" flushall >/dev/null; redis-cli -p "$HP" flushall >/dev/null; sleep 1
    local r0 h0 r1 h1 n
    r0=$(used "$RP"); h0=$(used "$HP")
    pipe redis "$RP" "$rfile" "$key" >/dev/null
    if [ "$key" = hosts ]; then pipe hotkv "$HP" "$hfile" "$key" >/dev/null; else hload hotkv "$HP" "$key" --key "$key" "$hfile" >/dev/null; fi
    sleep 1
    r1=$(used "$RP"); h1=$(used "$HP")
    n=$(redis-cli -p "$HP" ipset.card "$key")
    out "| $key ($n entries) | $(python3 -c "print('%.1f' % (($r1 - $r0) / $n))") B | $(python3 -c "print('%.1f' % (($h1 - $h0) / $n))") B | $goal |"
  done
  out ""
}

for part in $PARTS; do
  case "$part" in
    lookups) load_all; lookups ;;
    loader) loader ;;
    probe) probe ;;
    refresh) refresh ;;
    memory) memory ;;
    *) echo "bench.sh: unknown part $part" >&2; exit 2 ;;
  esac
done
out "Load at end $(cut -d' ' -f1-3 /proc/loadavg)."
