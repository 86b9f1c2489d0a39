#!/usr/bin/env bash
# Side-by-side benchmark of HotKV and redis-server 7.0.15 with hotkv-benchmark, one command.
#
# Both servers run on loopback with the same settings (no persistence), each pinned to CPU 0; the
# generator is pinned to CPU 1. Runs alternate between the servers, and which one goes first
# alternates from pair to pair (Redis then HotKV, HotKV then Redis, ...), so that a noisy neighbour
# or a warm cache favours neither; the report takes medians and gives the range. Server CPU time is
# utime+stime of every thread from /proc/PID/stat, sampled just before and after each run.
#
# Every reply is checked against what its template expects (hotkv-benchmark --expect: a GET must
# return the bytes the prefill wrote, a SISMEMBER 1, ...), and every prefill by DBSIZE and the
# collections' sizes, again before each run; a failed check fails that run, and any failed run makes
# run.sh exit 1 once the report is written.
#
# Usage: benchmarks/run.sh [--quick] [--big] [--proof] [--only SECTIONS]
#   (default)  sections throughput (the twelve commands), scaling (HotKV --threads 1 vs 2, on both
#              CPUs and, coordination only, both on CPU 0), latency (pipeline 1), pubsub (PUBLISH to
#              0, 1 and 100 subscribers, SET with keyspace notifications and a pattern subscriber,
#              at pipeline 30 and 1), throughput-batch (throughput again with redis-server under
#              chrt -b 0, SCHED_BATCH), collections (ten list/set/hash/zset commands on prefilled
#              collections), memory (used_memory and RSS after loading six datasets), growing (the
#              twelve commands one after another on one pair of servers that keep everything, at
#              1,000,000 and 5,000,000 prefilled keys) and smallcoll (bytes per key of 1,000,000
#              lists, sets, hashes and sorted sets of 1, 2, 5 and 20 elements, built one per command)
#   --big      p99.9 latency with BIG_KEYS (5,000,000) keys loaded (takes longer)
#   --proof    hotkv-benchmark vs redis-benchmark, both on CPU 1, against redis-server on CPU 0
#   --only     any of throughput scaling latency pubsub throughput-batch collections memory growing
#              smallcoll big proof, e.g. --only "memory"
#   --only ipsets  IP sets against Redis SETs and ZSETs (benchmarks/ipsets/bench.sh, its own report; ~6 min)
#   --only families  issue 15's bitmap, HLL, geo and stream rows and memory rows (benchmarks/families.sh; ~4 min)
#   --quick    small key range, short runs, one run each: a smoke test of the whole harness (3 minutes)
# Env: KEYS (1000000) DURATION (5s) RUNS (3) PIPELINE (30) SIZE (256) CLIENTS (50) COMMANDS (all twelve)
#      BATCH_COMMANDS (COMMANDS: throughput-batch's)
#      SCALE_COMMANDS (SET GET MGET) LAT_COMMANDS (GET SET) BIG_KEYS (5000000) PROOF_REQUESTS (3000000)
#      COLL_COMMANDS (all ten) COLL_KEYS (1000) POP_REQUESTS (2000000) MEM_MEMBERS (1000000)
#      MEM_DATASETS (all six) MEM_SETTLE (150, seconds; 0 skips the settled measurement)
#      PUBSUB_SUBSCRIBERS (0 1 100) PUBSUB_PIPELINES (PIPELINE and 1) PUBSUB_KEA (1; 0 skips the SET rows)
#      RESULTS (benchmarks/results) MACHINE (from the CPU model) RPORT/HPORT/H2PORT/H3PORT (16379/16380/16381/16382)
#      MPORT (16390: the memory section uses MPORT..MPORT+11)
#      GROW_KEYS (1000000 5000000) GROW_RUNS (RUNS) GROW_COMMANDS (COMMANDS) GPORT (16410, and GPORT+1)
#      SMALL_KEYS (1000000) SMALL_TYPES (list set hash zset) SMALL_COUNTS (1 2 5 20) SMALL_SIZES (16 256)
#      SMALL_CONNS (4) SMALL_WAIT (5, seconds before the second sample; 0 skips it) SPORT (16420, and SPORT+1)
#      KEEP=1 keeps the raw results (manifest, metadata, one JSON per run) in the temporary directory
#      EXTRA_CONF (none) options given to every server, Redis and HotKV alike, e.g.
#        "--maxmemory 100mb --maxmemory-policy allkeys-lru"; REFILL=1 then loads the prefill again
#        before a run that finds keys missing (evicted by an earlier command's writes), instead of
#        failing it; SUFFIX is added to the report's name
set -euo pipefail
cd "$(dirname "$0")/.."

default_sections="throughput scaling latency pubsub throughput-batch collections memory growing smallcoll"
sections=$default_sections
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --big) sections="big" ;;
    --proof) sections="proof" ;;
    --only) sections="${2:?--only needs a list}"; shift ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# The ipsets section is a script of its own (own data, servers and Markdown tables).
if [ "$sections" = ipsets ]; then exec bash benchmarks/ipsets/bench.sh; fi
if [ "$sections" = families ]; then exec bash benchmarks/families.sh; fi

if [ "$quick" = 1 ]; then
  : "${KEYS:=10000}" "${DURATION:=1s}" "${RUNS:=1}" "${BIG_KEYS:=20000}" "${PROOF_REQUESTS:=200000}"
  : "${COLL_KEYS:=100}" "${POP_REQUESTS:=100000}" "${MEM_MEMBERS:=20000}" "${MEM_SETTLE:=0}"
  : "${GROW_KEYS:=20000}" "${SMALL_KEYS:=2000}" "${SMALL_WAIT:=0}"
fi
KEYS=${KEYS:-1000000}
DURATION=${DURATION:-5s}
RUNS=${RUNS:-3}
PIPELINE=${PIPELINE:-30}
SIZE=${SIZE:-256}
CLIENTS=${CLIENTS:-50}
COMMANDS=${COMMANDS:-SET GET MGET SETNX APPEND INCR LPUSH RPUSH SADD HSET MSET PING}
BATCH_COMMANDS=${BATCH_COMMANDS:-$COMMANDS}
SCALE_COMMANDS=${SCALE_COMMANDS:-SET GET MGET}
LAT_COMMANDS=${LAT_COMMANDS:-GET SET}
BIG_KEYS=${BIG_KEYS:-5000000}
PROOF_REQUESTS=${PROOF_REQUESTS:-3000000}
COLL_COMMANDS=${COLL_COMMANDS:-LPUSH RPUSH LPOP SADD SISMEMBER HSET HGET ZADD ZRANGE ZSCORE}
COLL_KEYS=${COLL_KEYS:-1000}
POP_REQUESTS=${POP_REQUESTS:-2000000}
MEM_MEMBERS=${MEM_MEMBERS:-1000000}
MEM_DATASETS=${MEM_DATASETS:-intset intset-random strset hash zset smallhash}
MEM_SETTLE=${MEM_SETTLE:-150}
PUBSUB_SUBSCRIBERS=${PUBSUB_SUBSCRIBERS:-0 1 100}
PUBSUB_PIPELINES=${PUBSUB_PIPELINES:-$PIPELINE 1}
PUBSUB_KEA=${PUBSUB_KEA:-1}
RESULTS=${RESULTS:-benchmarks/results}
RPORT=${RPORT:-16379}
HPORT=${HPORT:-16380}
H2PORT=${H2PORT:-16381}
H3PORT=${H3PORT:-16382}
MPORT=${MPORT:-16390}
GROW_KEYS=${GROW_KEYS:-1000000 5000000}
GROW_RUNS=${GROW_RUNS:-$RUNS}
GROW_COMMANDS=${GROW_COMMANDS:-$COMMANDS}
GPORT=${GPORT:-16410}
SMALL_KEYS=${SMALL_KEYS:-1000000}
SMALL_TYPES=${SMALL_TYPES:-list set hash zset}
SMALL_COUNTS=${SMALL_COUNTS:-1 2 5 20}
SMALL_SIZES=${SMALL_SIZES:-16 256}
SMALL_CONNS=${SMALL_CONNS:-4}
SMALL_WAIT=${SMALL_WAIT:-5}
SPORT=${SPORT:-16420}
EXTRA_CONF=${EXTRA_CONF:-}
REFILL=${REFILL:-0}
SUFFIX=${SUFFIX:-}

# --- tools: report what is missing, install nothing ---------------------------------------------
missing=()
need=(redis-server redis-cli taskset go awk)
case " $sections " in *" proof "*) need+=(redis-benchmark) ;; esac
case " $sections " in *" throughput-batch "*) need+=(chrt) ;; esac
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
memtable=$work/memory.tsv
growtable=$work/growing.tsv
smalltable=$work/smallcoll.tsv
: >"$manifest"
: >"$memtable"
: >"$growtable"
: >"$smalltable"

echo "building hotkv and hotkv-benchmark..." >&2
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hotkv-benchmark" ./tools/hotkv-benchmark
go build -o "$work/report" ./benchmarks/report
go build -o "$work/fill" ./benchmarks/fill
go build -o "$work/subs" ./benchmarks/subs

# --- servers -------------------------------------------------------------------------------------
# start_server NAME PORT CPUS [extra hotkv args]: starts redis (NAME redis*) or hotkv pinned to CPUS and
# records its PID in the variable pid_NAME. redisbatch is redis-server under SCHED_BATCH (chrt -b 0),
# the policy HotKV's sched-batch (default yes) gives its own threads.
start_server() {
  local name=$1 port=$2 cpus=$3; shift 3
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: port $port is taken by another process; choose others with RPORT/HPORT/H2PORT/H3PORT" >&2
    exit 1
  fi
  mkdir -p "$work/data-$name"
  if [[ $name == redis* ]]; then
    local sched=()
    [ "$name" = redisbatch ] && sched=(chrt -b 0)
    # shellcheck disable=SC2086
    taskset -c "$cpus" "${sched[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/data-$name" $EXTRA_CONF >"$work/$name.log" 2>&1 &
  else
    # shellcheck disable=SC2086
    taskset -c "$cpus" "$work/hotkv" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/data-$name" "$@" $EXTRA_CONF >"$work/$name.log" 2>&1 &
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

# stop_server NAME: stops it and forgets its PID, so the exit trap never signals a recycled PID and
# a later section starts it again.
stop_server() {
  local name=$1 pidvar="pid_$1" p keep=()
  [ -n "${!pidvar:-}" ] || return 0
  kill "${!pidvar}" 2>/dev/null || true
  wait "${!pidvar}" 2>/dev/null || true
  for p in "${pids[@]}"; do [ "$p" = "${!pidvar}" ] || keep+=("$p"); done
  pids=("${keep[@]}")
  unset "pid_$name"
}

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kb() { awk '/^VmRSS:/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK)

# sched_policy PID: the scheduling policy of each of the process's threads, read off the running
# process (the "policy" field of /proc/PID/task/*/sched), e.g. "SCHED_BATCH (5 threads)".
sched_policy() {
  cat /proc/"$1"/task/*/sched 2>/dev/null | awk '$1 == "policy" { n[$3]++ } END {
    name[0] = "SCHED_OTHER"; name[1] = "SCHED_FIFO"; name[2] = "SCHED_RR"; name[3] = "SCHED_BATCH"
    name[5] = "SCHED_IDLE"; name[6] = "SCHED_DEADLINE"
    for (p in n) {
      s = ((p in name) ? name[p] : "policy " p) " (" n[p] " thread" (n[p] == 1 ? "" : "s") ")"
      out = out (out == "" ? "" : ", ") s
    }
    print (out == "" ? "unknown" : out)
  }'
}

# dbsize PORT: the server's key count, empty if it does not answer.
dbsize() { redis-cli -p "$1" dbsize 2>/dev/null | tr -d '\r' || true; }

# Checks of what a server holds. bad_of[NAME] is why NAME's data is not what its prefill meant to
# load: every run on NAME fails with it until NAME is launched again. base_of[NAME] is the DBSIZE
# every run on NAME starts from.
declare -A bad_of base_of
# check_failed NAME MESSAGE: says it loudly and fails NAME's runs.
check_failed() {
  echo "run.sh: CHECK FAILED on $1: $2" >&2
  bad_of[$1]=$2
}
# check_dbsize NAME PORT WANT WHEN: fails NAME's runs unless DBSIZE is WANT.
check_dbsize() {
  local have
  have=$(dbsize "$2")
  [ "$have" = "$3" ] || check_failed "$1" "DBSIZE is ${have:-no answer} $4, want $3"
}

# gen CPUS ARGS...: the generator, pinned.
gen() {
  local cpus=$1; shift
  taskset -c "$cpus" "$work/hotkv-benchmark" --clients "$CLIENTS" --data-size "$SIZE" "$@"
}

# prefill NAME PORT KEYS [progress]: loads key:0..KEYS-1 (every SET answered +OK), checks that the
# server holds exactly those KEYS keys, and records the server's RSS and its threads' scheduling
# policy. With progress, the generator's line a second shows how far it got.
prefill() {
  local name=$1 port=$2 keys=$3 pidvar="pid_$1" quiet=(--quiet)
  [ "${4:-}" = progress ] && quiet=()
  echo "prefilling $name with $keys keys..." >&2
  gen 1 --port "$port" --keys "$keys" --prefill-only --prefill-expect ok "${quiet[@]}" >/dev/null ||
    check_failed "$name" "the prefill failed"
  base_of[$name]=$keys
  check_dbsize "$name" "$port" "$keys" "after the prefill"
  echo "rss.$name=$(rss_kb "${!pidvar}")" >>"$meta"
  echo "sched.$name=$(sched_policy "${!pidvar}")" >>"$meta"
}

# The twelve commands. Commands that grow values or collections (and INCR's counters) write their
# own keys, which are deleted after each run so memory stays bounded and every run starts from the
# same state: the prefilled keys, DBSIZE = KEYS.
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

# template_expect CMD: what every reply to CMD's template must be (hotkv-benchmark --expect). Every
# key:N holds the generator's __data__ (the prefill's, SET's and MSET's value), so GET and MGET must
# return exactly those bytes; SETNX finds every key there.
template_expect() {
  case "$1" in
    SET|MSET) echo ok ;;
    GET) echo data ;;
    MGET) echo array:8:data ;;
    SETNX) echo int:0 ;;
    APPEND) echo "int:>=$SIZE" ;;
    INCR|LPUSH|RPUSH) echo "int:>=1" ;;
    SADD|HSET) echo int:0..1 ;;
    PING) echo simple:PONG ;;
    *) echo "run.sh: no expectation for $1" >&2; exit 2 ;;
  esac
}

scratch_prefix() {
  case "$1" in
    APPEND) echo append ;; INCR) echo counter ;; LPUSH|RPUSH) echo list ;; SADD) echo set ;; HSET) echo hash ;;
  esac
}

# The collections section. Every type has COLL_KEYS keys of COLL_KEYS members each (cset:N holds
# element:0.., chash:N field:0.. with SIZE-byte values, czset:N member:0.. with random scores), so
# that a template's __key__s, which all draw from [0, COLL_KEYS), always name an existing key and
# an existing member: SISMEMBER, HGET and ZSCORE always hit. Writes go to copies made for the run
# (wset, whash, wzset: the same shapes) or to new lists (wlist), deleted after it; their members
# new:A:B draw twice, so nearly every SADD, HSET and ZADD inserts. LPOP pops from lists (plist)
# filled before each run with enough elements for all of its POP_REQUESTS requests.
coll_template() {
  local new='new:__key__:__key__'
  case "$1" in
    LPUSH) echo "LPUSH wlist:__key__ __data__" ;;
    RPUSH) echo "RPUSH wlist:__key__ __data__" ;;
    LPOP) echo "LPOP plist:__key__" ;;
    SADD) echo "SADD wset:__key__ $new" ;;
    SISMEMBER) echo "SISMEMBER cset:__key__ element:__key__" ;;
    HSET) echo "HSET whash:__key__ $new __data__" ;;
    HGET) echo "HGET chash:__key__ field:__key__" ;;
    ZADD) echo "ZADD wzset:__key__ __key__ $new" ;;
    ZRANGE) echo "ZRANGE czset:__key__ 0 9" ;;
    ZSCORE) echo "ZSCORE czset:__key__ member:__key__" ;;
    *) echo "run.sh: no collections template for $1" >&2; exit 2 ;;
  esac
}

# coll_expect CMD: what every reply to CMD's collections template must be. The reads always hit:
# SISMEMBER answers 1, HGET a SIZE-byte value, ZSCORE a score, ZRANGE 0 9 ten members (fewer only
# when the sets are smaller); LPOP's lists never run dry.
coll_expect() {
  case "$1" in
    LPUSH|RPUSH) echo "int:>=1" ;;
    LPOP|HGET) echo "bulk:$SIZE" ;;
    SADD|HSET|ZADD) echo int:0..1 ;;
    SISMEMBER) echo int:1 ;;
    ZRANGE) echo "array:$((COLL_KEYS < 10 ? COLL_KEYS : 10)):bulk" ;;
    ZSCORE) echo double ;;
    *) echo "run.sh: no collections expectation for $1" >&2; exit 2 ;;
  esac
}

coll_scratch() {
  case "$1" in LPUSH|RPUSH) echo wlist ;; LPOP) echo plist ;; SADD) echo wset ;; HSET) echo whash ;; ZADD) echo wzset ;; esac
}

# pop_length is how long each list must be for LPOP: its POP_REQUESTS requests pick among COLL_KEYS
# lists uniformly, so one list is popped m = POP_REQUESTS/COLL_KEYS times on average with a
# standard deviation below sqrt(m) (binomial); m + 7*sqrt(m) + 10 leaves a list empty with
# probability under 1e-11. check_run counts what is left anyway and fails the run if a list ran dry.
pop_length() {
  awk -v r="$POP_REQUESTS" -v c="$COLL_KEYS" 'BEGIN { m = r / c; printf "%d\n", m + 7 * sqrt(m) + 10 }'
}

# fill_data PORT DATASET KEY MEMBERS [fill args]: loads COLL_KEYS keys KEY:N of MEMBERS members.
fill_data() {
  local port=$1 dataset=$2 key=$3 members=$4; shift 4
  taskset -c 1 "$work/fill" -port "$port" -dataset "$dataset" -key "$key" -n "$COLL_KEYS" \
    -members "$members" -size "$SIZE" "$@"
}

# del_keys PORT PREFIX N: deletes PREFIX:0..N-1.
del_keys() {
  gen 1 --port "$1" --keys "$3" --prefill-only --prefill-command "DEL $2:__key__" --prefill-expect int:0..1 \
    --quiet >/dev/null
}

# prefill_coll NAME PORT: the collections every read template touches, checked (DBSIZE, and the
# size of every set, hash and sorted set), then the server's RSS and scheduling policy.
prefill_coll() {
  local name=$1 port=$2 pidvar="pid_$1" t
  echo "prefilling $name with $COLL_KEYS sets, hashes and sorted sets of $COLL_KEYS members..." >&2
  base_of[$name]=$((3 * COLL_KEYS))
  for t in sets:cset hashes:chash zsets:czset; do
    fill_data "$port" "${t%%:*}" "${t#*:}" "$COLL_KEYS" >/dev/null || check_failed "$name" "loading ${t#*:}:* failed"
    fill_data "$port" "${t%%:*}" "${t#*:}" "$COLL_KEYS" -check -quiet 2>"$work/check.err" ||
      check_failed "$name" "after the prefill $(tail -1 "$work/check.err")"
  done
  check_dbsize "$name" "$port" "${base_of[$name]}" "after the prefill"
  echo "rss.$name=$(rss_kb "${!pidvar}")" >>"$meta"
  echo "sched.$name=$(sched_policy "${!pidvar}")" >>"$meta"
}

# The pubsub section. A row is PUBLISH to a channel with N subscribers (PUBSUB_SUBSCRIBERS), or SET
# on the prefilled keys with notify-keyspace-events KEA and one pattern subscriber on __key*__:*,
# at a pipeline of PUBSUB_PIPELINES. pubsub_row sets what measure and its hooks need: ps_tpl and
# ps_expect (the template and what every reply must be: PUBLISH answers its subscriber count),
# ps_subs subscriber connections on ps_target (a channel, or with ps_mode pattern a pattern) and
# ps_per, the messages each subscriber must receive per request (a SET under KEA raises two: the
# keyspace and the keyevent notification).
ps_channel=bench:channel
ps_pattern='__key*__:*'
ps_kea_flags=AKE # how both servers spell KEA back (CONFIG GET)
ps_tpl="" ps_expect="" ps_subs=0 ps_mode=channel ps_target="" ps_per=1 ps_kea=0
subs_pid="" subs_status=0 subs_cpu=-1

# pubsub_row KIND N: KIND publish (N subscribers) or kea (one pattern subscriber).
pubsub_row() {
  if [ "$1" = kea ]; then
    ps_tpl='SET key:__key__ __data__' ps_expect=ok ps_subs=1 ps_mode=pattern ps_target=$ps_pattern ps_per=2 ps_kea=1
  else
    ps_tpl="PUBLISH $ps_channel __data__" ps_expect="int:$2" ps_subs=$2 ps_mode=channel ps_target=$ps_channel ps_per=1 ps_kea=0
  fi
}

# pubsub_label KIND N PIPELINE: the row's name in the report.
pubsub_label() {
  if [ "$1" = kea ]; then
    echo "SET with KEA, 1 pattern subscriber -P $3"
  else
    echo "PUBLISH to $2 subscriber$([ "$2" = 1 ] || echo s) -P $3"
  fi
}

# subs_count PORT: how many subscribers the server counts on the row's channel (PUBSUB NUMSUB) or
# patterns (PUBSUB NUMPAT); empty if it does not answer.
subs_count() {
  if [ "$ps_mode" = pattern ]; then
    redis-cli -p "$1" pubsub numpat 2>/dev/null | tr -d '\r' || true
  else
    redis-cli -p "$1" pubsub numsub "$ps_channel" 2>/dev/null | tr -d '\r' | tail -1 || true
  fi
}

# subs_start PORT: starts ps_subs subscribers on CPU 1, beside the generator (the server keeps CPU 0
# to itself), and waits until they are subscribed and the server counts every one of them.
subs_start() {
  local port=$1 target=(-channel "$ps_target") have
  [ "$ps_mode" = pattern ] && target=(-pattern "$ps_target")
  rm -f "$work/subs.ready"
  taskset -c 1 "$work/subs" -port "$port" -n "$ps_subs" "${target[@]}" -ready "$work/subs.ready" \
    >"$work/subs.out" 2>"$work/subs.err" &
  subs_pid=$!
  pids+=("$subs_pid")
  for _ in $(seq 300); do
    [ -e "$work/subs.ready" ] && break
    kill -0 "$subs_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ ! -e "$work/subs.ready" ]; then
    subs_stop
    echo "the $ps_subs subscribers did not subscribe: $(tail -1 "$work/subs.err")" >&2
    return 1
  fi
  have=$(subs_count "$port")
  if [ "$have" != "$ps_subs" ]; then
    subs_stop
    echo "with $ps_subs subscribers connected the server counts ${have:-no answer}" >&2
    return 1
  fi
}

# subs_stop: stops the subscribers, if any run: on SIGTERM they drain what is on its way (up to
# the reply to a PING each sends), print their counts and exit; their status is in subs_status.
subs_stop() {
  [ -n "$subs_pid" ] || return 0
  local p keep=()
  kill -TERM "$subs_pid" 2>/dev/null || true
  subs_status=0
  wait "$subs_pid" 2>/dev/null || subs_status=$?
  for p in "${pids[@]}"; do [ "$p" = "$subs_pid" ] || keep+=("$p"); done
  pids=("${keep[@]}")
  subs_pid=""
}

# subs_field NAME: a value of the subscribers' output.
subs_field() { awk -v k="$1" '$1 == k { print $2; exit }' "$work/subs.out" 2>/dev/null; }

# subs_check PORT JSON: after a run, the server must still count every subscriber (none was cut off
# at client-output-buffer-limit pubsub), and each must have received at least ps_per messages for
# every request the generator completed. Sets subs_cpu, the subscribers' CPU seconds.
subs_check() {
  local port=$1 json=$2 have ops got lost
  have=$(subs_count "$port")
  subs_stop
  subs_cpu=$(subs_field cpu_seconds)
  subs_cpu=${subs_cpu:--1}
  lost=$(subs_field lost) got=$(subs_field messages_min)
  ops=$(grep -o '"ops": *[0-9]*' "$json" | head -1 | grep -o '[0-9]*$' || true)
  if [ "$have" != "$ps_subs" ]; then
    echo "after the run the server counts ${have:-no answer} of the $ps_subs subscribers (one was disconnected)" >&2
    return 1
  fi
  if [ "$subs_status" != 0 ] || [ "${lost:-x}" != 0 ] || [ "$(subs_field subscribers)" != "$ps_subs" ]; then
    echo "the subscribers failed: $(grep -m1 -e '^subs: connection' -e FAILED "$work/subs.err" || tail -1 "$work/subs.err")" >&2
    return 1
  fi
  if [ -z "$ops" ] || [ -z "$got" ] || [ "$got" -lt $((ops * ps_per)) ]; then
    echo "a subscriber received ${got:-nothing} messages for ${ops:-?} requests, want at least $((${ops:-0} * ps_per)) ($ps_per per request)" >&2
    return 1
  fi
}

# set_notify NAME VALUE WANT: CONFIG SET notify-keyspace-events VALUE on NAME; fails unless CONFIG
# GET then says WANT (how the server spells VALUE back: KEA is AKE).
set_notify() {
  local name=$1 value=$2 want=$3 have
  redis-cli -p "${port_of[$name]}" config set notify-keyspace-events "$value" >/dev/null 2>&1 || true
  have=$(redis-cli -p "${port_of[$name]}" config get notify-keyspace-events 2>/dev/null | tr -d '\r' | sed -n 2p || true)
  [ "$have" = "$want" ] || { echo "notify-keyspace-events is '${have}' on $name after CONFIG SET '$value', want '$want'" >&2; return 1; }
}

# prepare_run SECTION NAME PORT CMD: checks that the server holds what its prefill loaded (DBSIZE),
# then makes the data a run starts from on the server about to be measured, checked too.
prepare_run() {
  local section=$1 name=$2 port=$3 cmd=$4 prefix have
  have=$(dbsize "$port")
  if [ "$REFILL" = 1 ] && [ "$have" != "${base_of[$name]}" ] && [[ $section == throughput* ]]; then
    # Keys an earlier run's writes evicted (EXTRA_CONF's maxmemory): load them again, checked.
    echo "  refill: DBSIZE $have, want ${base_of[$name]}" >&2
    echo "refill.$name.$cmd.$run=$have" >>"$meta"
    gen 1 --port "$port" --keys "${base_of[$name]}" --prefill-only --prefill-expect ok --quiet >/dev/null || return 1
    have=$(dbsize "$port")
  fi
  if [ "$have" != "${base_of[$name]}" ]; then
    echo "DBSIZE is ${have:-no answer} before the run, want ${base_of[$name]}" >&2
    return 1
  fi
  if [ "$section" = pubsub ]; then
    # KEA rows: set again if a restart lost it; other rows: notifications off.
    if [ "$ps_kea" = 1 ]; then
      set_notify "$name" KEA "$ps_kea_flags" || return 1
    else
      set_notify "$name" "" "" || return 1
    fi
    if [ "$ps_subs" = 0 ]; then
      have=$(subs_count "$port")
      [ "$have" = 0 ] || { echo "the server counts ${have:-no answer} subscribers before the run, want 0" >&2; return 1; }
      return 0
    fi
    subs_start "$port"
    return
  fi
  [ "$section" = collections ] || return 0
  prefix=$(coll_scratch "$cmd")
  [ -n "$prefix" ] && del_keys "$port" "$prefix" "$COLL_KEYS"
  local set=()
  case "$cmd" in
    LPOP) set=(lists plist "$(pop_length)") ;;
    SADD) set=(sets wset "$COLL_KEYS") ;;
    HSET) set=(hashes whash "$COLL_KEYS") ;;
    ZADD) set=(zsets wzset "$COLL_KEYS") ;;
    *) return 0 ;;
  esac
  fill_data "$port" "${set[@]}" -quiet && fill_data "$port" "${set[@]}" -check -quiet
}

# check_run SECTION PORT CMD JSON NAME: whether the run measured what it meant to (LPOP: no list ran
# dry; pubsub: every subscriber still there, and each received every message; growing: DBSIZE grew
# as the command can make it).
check_run() {
  if [[ $1 == growing:* ]]; then
    grow_check "$2" "$3" "$4" "$5"
    return
  fi
  if [ "$1" = pubsub ]; then
    [ "$ps_subs" = 0 ] || subs_check "$2" "$4"
    return
  fi
  [ "$1" = collections ] && [ "$3" = LPOP ] || return 0
  fill_data "$2" lists plist 1 -check -at-least -quiet
}

# cleanup_run SECTION PORT CMD: deletes what the run wrote.
cleanup_run() {
  local section=$1 port=$2 cmd=$3 prefix n=$KEYS
  [[ $section != growing* ]] || return 0 # growing data is kept: that is the point
  if [ "$section" = collections ]; then
    prefix=$(coll_scratch "$cmd") n=$COLL_KEYS
  else
    prefix=$(scratch_prefix "$cmd")
  fi
  [ -z "$prefix" ] || del_keys "$port" "$prefix" "$n" || echo "  cleanup of $prefix:* failed" >&2
}

# fail_json FILE MESSAGE: a result file that says why a run failed, in the generator's JSON shape.
fail_json() {
  printf '{"error": "%s"}\n' "$(printf '%s' "$2" | tr -d '"\\' | tr '\n\t' '  ')" >"$1"
}

# measure SECTION NAME PORT CMD RUN GENCPUS ARGS...: one measured run; appends a manifest line
# (section, server, command, run, result JSON, server CPU seconds, generator exit status, the
# subscribers' CPU seconds or -1).
measure() {
  local section=$1 name=$2 port=$3 cmd=$4 run=$5 gcpus=$6; shift 6
  local pidvar="pid_$name" json="$work/$section-$name-${cmd//[^A-Za-z0-9]/_}-$run.json" status=0 tpl expect
  subs_cpu=-1
  if [[ $section == growing* ]]; then
    # Growing data cannot be rebuilt in the middle of the sequence: the round fails from here on.
    kill -0 "${!pidvar}" 2>/dev/null || [ -n "${bad_of[$name]:-}" ] ||
      check_failed "$name" "the server died before $cmd; the data it grew is lost"
  elif ! kill -0 "${!pidvar}" 2>/dev/null; then
    echo "run.sh: $name is not running; restarting it" >&2
    restart "$name"
  fi
  echo "[$section] $cmd on $name, run $run" >&2
  if [ "$section" = collections ]; then
    tpl=$(coll_template "$cmd") expect=$(coll_expect "$cmd")
  elif [ "$section" = pubsub ]; then
    tpl=$ps_tpl expect=$ps_expect
  elif [[ $section == growing:* ]]; then
    tpl=$(grow_template "$cmd") expect=$(grow_expect "$cmd")
  else
    tpl=$(template "$cmd") expect=$(template_expect "$cmd")
  fi
  local before=0 after=0
  if [ -n "${bad_of[$name]:-}" ]; then
    status=1
    fail_json "$json" "${bad_of[$name]}"
    echo "$name: ${bad_of[$name]}" >"$work/last.err"
  elif ! prepare_run "$section" "$name" "$port" "$cmd" 2>"$work/last.err"; then
    status=1
    fail_json "$json" "preparing the run failed: $(tail -1 "$work/last.err")"
  else
    before=$(cpu_ticks "${!pidvar}")
    gen "$gcpus" --port "$port" --command "$tpl" --expect "$expect" --json "$json" --quiet "$@" \
      >"$work/last.out" 2>"$work/last.err" || status=$?
    after=$(cpu_ticks "${!pidvar}")
    if [ "$status" = 0 ] && ! check_run "$section" "$port" "$cmd" "$json" "$name" 2>"$work/last.err"; then
      status=1
      fail_json "$json" "$(tail -1 "$work/last.err")"
    fi
  fi
  subs_stop # after a failed run: the subscribers' counts no longer matter
  [ "$status" = 0 ] || echo "  failed: $(tail -c 300 "$work/last.err")" >&2
  local cpu
  cpu=$(awk -v a="$after" -v b="$before" -v hz="$hz" 'BEGIN{printf "%.3f", (a-b)/hz}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$section" "$name" "$cmd" "$run" "$json" "$cpu" "$status" "$subs_cpu" >>"$manifest"
  # A crashed server is restarted (and refilled) by the next run; there is nothing to delete.
  if kill -0 "${!pidvar}" 2>/dev/null; then
    cleanup_run "$section" "$port" "$cmd"
  fi
}

# Server definitions: name -> port, CPUs, key count, extra args, the function that prefills it
# (NAME PORT KEYS); restart brings one back after a crash.
declare -A port_of cpus_of args_of keys_of filler_of
define() { port_of[$1]=$2; cpus_of[$1]=$3; keys_of[$1]=$4; args_of[$1]=${5:-}; filler_of[$1]=${6:-prefill}; }
launch() {
  unset "bad_of[$1]"
  # shellcheck disable=SC2086
  start_server "$1" "${port_of[$1]}" "${cpus_of[$1]}" ${args_of[$1]}
  "${filler_of[$1]}" "$1" "${port_of[$1]}" "${keys_of[$1]}"
}
restart() { stop_server "$1"; launch "$1"; }

# --- sections ------------------------------------------------------------------------------------
# pair_order I A B: "A B" for an even I, "B A" for an odd one. The sections number their pairs of
# runs, so which server goes first alternates from pair to pair (and so from command to command
# when RUNS is 1).
pair_order() { if [ $(($1 % 2)) = 0 ]; then echo "$2 $3"; else echo "$3 $2"; fi; }

# throughput SECTION REDIS COMMANDS...: REDIS (redis, or redisbatch under SCHED_BATCH) against HotKV.
throughput() {
  local section=$1 redis=$2 pair=0 cmd run name; shift 2
  for cmd in "$@"; do
    for run in $(seq "$RUNS"); do
      for name in $(pair_order "$pair" "$redis" hotkv); do
        measure "$section" "$name" "${port_of[$name]}" "$cmd" "$run" 1 --threads 1 --pipeline "$PIPELINE" \
          --keys "$KEYS" --duration "$DURATION"
      done
      pair=$((pair + 1))
    done
  done
}

# HotKV with one thread on CPU 0 against HotKV with two threads on both CPUs; the generator shares
# them with the same number of connections. What matters is CPU-seconds per million requests.
# Then coordination only: two threads on CPU 0 against one, the generator alone on CPU 1, so that
# no core is shared with the generator and what remains is the cost of running two pollers.
scaling() {
  local args=(--pipeline "$PIPELINE" --keys "$KEYS" --duration "$DURATION") pair=0 cmd run step
  for cmd in $SCALE_COMMANDS; do
    for run in $(seq "$RUNS"); do
      # The four runs of a pair, in reverse order every other pair.
      local steps=(s1 s2 c1 c2)
      [ $((pair % 2)) = 0 ] || steps=(c2 c1 s2 s1)
      for step in "${steps[@]}"; do
        case "$step" in
          s1) measure scaling hotkv "${port_of[hotkv]}" "$cmd" "$run" 1 --threads 1 "${args[@]}" ;;
          s2) measure scaling hotkv2 "${port_of[hotkv2]}" "$cmd" "$run" 0,1 --threads 2 --clients $((CLIENTS / 2)) "${args[@]}" ;;
          c1) measure coordination hotkv "${port_of[hotkv]}" "$cmd" "$run" 1 --threads 1 "${args[@]}" ;;
          c2) measure coordination hotkv2c "${port_of[hotkv2c]}" "$cmd" "$run" 1 --threads 1 "${args[@]}" ;;
        esac
      done
      pair=$((pair + 1))
    done
  done
}

# latency SECTION REDIS HOTKV: pipeline 1.
latency() {
  local section=$1 pair=0 cmd run name
  for cmd in $LAT_COMMANDS; do
    for run in $(seq "$RUNS"); do
      for name in $(pair_order "$pair" "$2" "$3"); do
        measure "$section" "$name" "${port_of[$name]}" "$cmd" "$run" 1 --threads 1 --pipeline 1 \
          --keys "${keys_of[$name]}" --duration "$DURATION"
      done
      pair=$((pair + 1))
    done
  done
}

# pubsub: PUBLISH to PUBSUB_SUBSCRIBERS subscribers at each pipeline of PUBSUB_PIPELINES, then SET
# with notify-keyspace-events KEA and one pattern subscriber (CONFIG SET on both servers before those
# rows, reset after them), Redis and HotKV alternating as in throughput. A subscribers' program on
# CPU 1 (with the generator) reads everything each row publishes.
pubsub() {
  local pair=0 p n
  for p in $PUBSUB_PIPELINES; do
    for n in $PUBSUB_SUBSCRIBERS; do
      pubsub_row publish "$n"
      pubsub_runs "$(pubsub_label publish "$n" "$p")" "$p"
    done
  done
  [ "$PUBSUB_KEA" = 1 ] || return 0
  pubsub_row kea 1
  set_notify redis KEA "$ps_kea_flags" || true # checked again before every run
  set_notify hotkv KEA "$ps_kea_flags" || true
  for p in $PUBSUB_PIPELINES; do
    pubsub_runs "$(pubsub_label kea 1 "$p")" "$p"
  done
  # Later sections must not run with notifications on.
  set_notify redis "" "" || check_failed redis "notify-keyspace-events could not be reset after the pubsub section"
  set_notify hotkv "" "" || check_failed hotkv "notify-keyspace-events could not be reset after the pubsub section"
}

# pubsub_runs LABEL PIPELINE: RUNS pairs of runs of the row pubsub_row set; pair (pubsub's) numbers them.
pubsub_runs() {
  local run name
  for run in $(seq "$RUNS"); do
    for name in $(pair_order "$pair" redis hotkv); do
      measure pubsub "$name" "${port_of[$name]}" "$1" "$run" 1 --threads 1 --pipeline "$2" \
        --keys "$KEYS" --duration "$DURATION"
    done
    pair=$((pair + 1))
  done
}

# The ten collection commands, Redis and HotKV alternating as in throughput. LPOP runs POP_REQUESTS
# requests instead of DURATION: its lists must hold every element it pops, so its request count
# has to be known before the run (about 4 s at 500,000 pops/s).
collections() {
  local how pair=0 cmd run name
  for cmd in $COLL_COMMANDS; do
    how=(--duration "$DURATION")
    [ "$cmd" = LPOP ] && how=(--requests "$POP_REQUESTS")
    for run in $(seq "$RUNS"); do
      for name in $(pair_order "$pair" rediscoll hotkvcoll); do
        measure collections "$name" "${port_of[$name]}" "$cmd" "$run" 1 --threads 1 --pipeline "$PIPELINE" \
          --keys "$COLL_KEYS" "${how[@]}"
      done
      pair=$((pair + 1))
    done
  done
}

# --- memory --------------------------------------------------------------------------------------
# For each dataset a fresh Redis and a fresh HotKV (--threads 1, as everywhere), loaded one at a
# time by fill on CPU 1 and measured three times: empty, right after the load ("loaded"), and once
# every HotKV has run a garbage collection after its load ("settled"): until then HotKV's
# used_memory still counts the garbage of loading (buffers outgrown while collections grew), which
# Redis frees at once. With no allocation after the load, Go's next collection is the one it forces
# two minutes after the previous, so the servers of all datasets stay up and share that wait.
# HotKV runs with GODEBUG=gctrace=1, which only logs a line per collection: the harness's signal.
declare -A memv
used_memory() { redis-cli -p "$1" info memory 2>/dev/null | awk -F: '/^used_memory:/{print $2+0}' || true; }
gc_count() { grep -c '^gc [0-9]' "$work/$1.log" || true; }

# mem_sample NAME PORT WHEN: records used_memory and VmRSS (bytes) of one server.
mem_sample() {
  local pidvar="pid_$1"
  memv[$1.$3.used]=$(used_memory "$2")
  memv[$1.$3.rss]=$(($(rss_kb "${!pidvar}") * 1024))
}

memory() {
  local ds i=0 side name port t0 servers=()
  for ds in $MEM_DATASETS; do
    for side in redis hotkv; do
      name=${side}mem$i port=$((MPORT + 2 * i))
      [ "$side" = hotkv ] && port=$((port + 1))
      GODEBUG=gctrace=1 start_server "$name" "$port" 0 --threads 1
      servers+=("$name")
      memv[$name.port]=$port memv[$name.ds]=$ds memv[$name.side]=$side memv[$name.error]=""
      mem_sample "$name" "$port" empty
      echo "[memory] loading $ds into $side" >&2
      t0=$(date +%s.%N)
      if ! taskset -c 1 "$work/fill" -port "$port" -dataset "$ds" -n "$MEM_MEMBERS" 2>&1 | tee "$work/fill.err" >&2; then
        memv[$name.error]="$(tail -1 "$work/fill.err")"
      elif ! taskset -c 1 "$work/fill" -port "$port" -dataset "$ds" -n "$MEM_MEMBERS" -check -quiet 2>"$work/fill.err"; then
        memv[$name.error]="after the load $(tail -1 "$work/fill.err")"
        echo "run.sh: CHECK FAILED on $name: ${memv[$name.error]}" >&2
      fi
      memv[$name.seconds]=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')
      mem_sample "$name" "$port" loaded
      memv[$name.gcs]=$(gc_count "$name")
    done
    i=$((i + 1))
  done
  mem_settle "${servers[@]}"
  for name in "${servers[@]}"; do
    if [ "$MEM_SETTLE" -gt 0 ]; then
      mem_sample "$name" "${memv[$name.port]}" settled
    else
      memv[$name.settled.used]=-1 memv[$name.settled.rss]=-1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${memv[$name.ds]}" "${memv[$name.side]}" "$MEM_MEMBERS" \
      "${memv[$name.empty.used]}" "${memv[$name.empty.rss]}" "${memv[$name.loaded.used]}" "${memv[$name.loaded.rss]}" \
      "${memv[$name.settled.used]}" "${memv[$name.settled.rss]}" "${memv[$name.seconds]}" "${memv[$name.error]}" >>"$memtable"
    stop_server "$name"
  done
}

# mem_settle NAMES...: waits until every HotKV among them logged a collection after its load, at
# most MEM_SETTLE seconds, then two more so that the sweeper has freed what it found dead.
mem_settle() {
  [ "$MEM_SETTLE" -gt 0 ] || return 0
  local deadline=$((SECONDS + MEM_SETTLE)) name waiting
  echo "[memory] waiting for HotKV's garbage collections (at most ${MEM_SETTLE}s)" >&2
  while :; do
    waiting=0
    for name in "$@"; do
      [ "${memv[$name.side]}" = hotkv ] || continue
      [ "$(gc_count "$name")" -gt "${memv[$name.gcs]}" ] || waiting=$((waiting + 1))
    done
    [ "$waiting" = 0 ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "run.sh: $waiting HotKV servers collected no garbage within ${MEM_SETTLE}s; measuring anyway" >&2
      break
    fi
    sleep 1
  done
  sleep 2
}

# --- growing data --------------------------------------------------------------------------------
# The twelve commands one after another on one pair of servers that keep everything, as users run
# them: no cleanup between commands, so lists, sets, hashes, appended strings and counters pile up
# on top of the prefilled keys. For each key count of GROW_KEYS and each of GROW_RUNS rounds: a fresh
# redis-server and a fresh HotKV (--threads 1), both on CPU 0, prefilled with that many keys; every
# command runs on both (the generator on CPU 1), which goes first alternating from command to command
# and from round to round; after each, used_memory, VmRSS and DBSIZE of that server go to the growing
# table. At the largest key count, GET at pipeline 1 follows the twelve, with everything still loaded.
# LPUSH, RPUSH and SADD send GROW's 256 random bytes per element (__rand__: the issue's members and
# elements), so sets and lists grow by every request instead of repeating a few members.
grow_template() {
  case "$1" in
    LPUSH) echo "LPUSH list:__key__ __rand__" ;;
    RPUSH) echo "RPUSH list:__key__ __rand__" ;;
    SADD) echo "SADD set:__key__ __rand__" ;;
    *) template "$1" ;;
  esac
}

# grow_expect CMD: as the throughput section's, but a random 256-byte member is always new: SADD 1.
grow_expect() {
  case "$1" in
    SADD) echo int:1 ;;
    *) template_expect "$1" ;;
  esac
}

# grow_creates CMD: whether CMD's template can create keys (the others only touch the prefilled ones).
grow_creates() {
  case "$1" in APPEND|INCR|LPUSH|RPUSH|SADD|HSET) return 0 ;; *) return 1 ;; esac
}

# grow_check PORT CMD JSON NAME: DBSIZE never falls below what it was before the command, nor below
# the prefill; a command that creates keys adds at most one per request it completed, the others none.
grow_check() {
  local port=$1 cmd=$2 json=$3 name=$4 have was=${base_of[$4]} ops
  have=$(dbsize "$port")
  ops=$(grep -o '"ops": *[0-9]*' "$json" | head -1 | grep -o '[0-9]*$' || true)
  ops=${ops:-0}
  if [ -z "$have" ]; then
    echo "DBSIZE has no answer after $cmd" >&2
    return 1
  fi
  if [ "$have" -lt "$was" ]; then
    echo "DBSIZE fell from $was to $have during $cmd" >&2
    return 1
  fi
  if [ "$have" -lt "${keys_of[$name]}" ]; then
    echo "DBSIZE is $have after $cmd, below the ${keys_of[$name]} keys prefilled" >&2
    return 1
  fi
  if grow_creates "$cmd"; then
    [ "$have" -le $((was + ops)) ] && return 0
    echo "DBSIZE grew from $was to $have during $cmd, more than its $ops requests can create" >&2
    return 1
  fi
  [ "$have" = "$was" ] && return 0
  echo "DBSIZE went from $was to $have during $cmd, which creates no keys" >&2
  return 1
}

# grow_prefill NAME PORT KEYS: prefill with a progress line a second (5,000,000 keys take a while).
grow_prefill() { prefill "$1" "$2" "$3" progress; }

# grow_sample NAME KEYS ROUND STEP: appends DBSIZE, used_memory and VmRSS (bytes) of NAME after STEP
# (prefill or a command) to the growing table, and makes that DBSIZE the one the next command starts
# from (a failed command's growth is not held against the next).
grow_sample() {
  local name=$1 pidvar="pid_$1" port=${port_of[$1]} have used rss=""
  have=$(dbsize "$port") used=$(used_memory "$port")
  kill -0 "${!pidvar}" 2>/dev/null && rss=$(($(rss_kb "${!pidvar}") * 1024))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$name" "$4" "$have" "$used" "$rss" >>"$growtable"
  [ -z "$have" ] || base_of[$name]=$have
}

growing() {
  local keys round i cmd name largest
  largest=$(printf '%s\n' $GROW_KEYS | sort -n | tail -1)
  for keys in $GROW_KEYS; do
    define redisgrow "$GPORT" 0 "$keys" "" grow_prefill
    define hotkvgrow "$((GPORT + 1))" 0 "$keys" "--threads 1 $NO_IDLE_GC" grow_prefill
    for round in $(seq "$GROW_RUNS"); do
      echo "[growing] $keys keys, round $round of $GROW_RUNS" >&2
      launch redisgrow
      launch hotkvgrow
      grow_sample redisgrow "$keys" "$round" prefill
      grow_sample hotkvgrow "$keys" "$round" prefill
      i=0
      for cmd in $GROW_COMMANDS; do
        for name in $(pair_order $((i + round)) redisgrow hotkvgrow); do
          measure "growing:$keys" "$name" "${port_of[$name]}" "$cmd" "$round" 1 --threads 1 --pipeline "$PIPELINE" \
            --keys "$keys" --duration "$DURATION"
          grow_sample "$name" "$keys" "$round" "$cmd"
        done
        i=$((i + 1))
      done
      if [ "$keys" = "$largest" ]; then
        for name in $(pair_order "$round" redisgrow hotkvgrow); do
          measure "growing-latency:$keys" "$name" "${port_of[$name]}" GET "$round" 1 --threads 1 --pipeline 1 \
            --keys "$keys" --duration "$DURATION"
        done
      fi
      stop_server redisgrow
      stop_server hotkvgrow
    done
  done
}

# --- small collections ---------------------------------------------------------------------------
# SMALL_KEYS lists, sets, hashes and sorted sets (list:N, set:N, hash:N, zset:N) of each of
# SMALL_COUNTS elements of each of SMALL_SIZES bytes, built one element per command by fill (RPUSH,
# SADD, HSET with fields f:0.. and size-byte values, ZADD with a random score) over SMALL_CONNS
# connections, every reply checked, then every key's size (fill -check) and DBSIZE. Each row loads
# into a fresh Redis, then into a fresh HotKV (which goes first alternates from row to row), one at a
# time, so that at most one server holds a row's gigabytes. used_memory and VmRSS are sampled empty,
# right after the load and, unless SMALL_WAIT is 0, SMALL_WAIT seconds later: HotKV's used_memory
# counts the load's garbage until its next collection (waiting for that, as the memory section does,
# would take minutes a row), Redis's is freed at once.
smallcoll() {
  local type count size side row=0
  for type in $SMALL_TYPES; do
    for count in $SMALL_COUNTS; do
      for size in $SMALL_SIZES; do
        for side in $(pair_order "$row" redis hotkv); do
          small_row "$type" "$count" "$size" "$side"
        done
        row=$((row + 1))
      done
    done
  done
}

# small_row TYPE COUNT SIZE SIDE: one load into a fresh server, one line of the small table.
small_row() {
  local type=$1 count=$2 size=$3 side=$4 name=${4}small port=$SPORT t0 err="" enc args=()
  [ "$side" = hotkv ] && port=$((SPORT + 1)) args=(--threads 1)
  start_server "$name" "$port" 0 "${args[@]}"
  mem_sample "$name" "$port" empty
  echo "[smallcoll] $SMALL_KEYS keys $type:N of $count $size-byte elements into $side" >&2
  local fill=(taskset -c 1 "$work/fill" -port "$port" -dataset "small-$type" -key "$type" -n "$SMALL_KEYS"
    -members "$count" -size "$size")
  t0=$(date +%s.%N)
  if ! "${fill[@]}" -conns "$SMALL_CONNS" -quiet 2>"$work/fill.err"; then
    err="$(tail -1 "$work/fill.err")"
  elif ! "${fill[@]}" -check -quiet 2>"$work/fill.err"; then
    err="after the load $(tail -1 "$work/fill.err")"
  elif [ "$(dbsize "$port")" != "$SMALL_KEYS" ]; then
    err="DBSIZE is $(dbsize "$port") after the load, want $SMALL_KEYS"
  fi
  memv[$name.seconds]=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')
  [ -z "$err" ] || echo "run.sh: CHECK FAILED on $name: $err" >&2
  mem_sample "$name" "$port" loaded
  enc=$(redis-cli -p "$port" object encoding "$type:0" 2>/dev/null | tr -d '\r' | tr -s ' \t' '_' || true)
  case "$enc" in *ERR*|"") enc=unknown ;; esac
  memv[$name.later.used]=-1 memv[$name.later.rss]=-1
  if [ "$SMALL_WAIT" -gt 0 ]; then
    sleep "$SMALL_WAIT"
    mem_sample "$name" "$port" later
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$type" "$count" "$size" "$side" "$SMALL_KEYS" \
    "${memv[$name.empty.used]}" "${memv[$name.empty.rss]}" "${memv[$name.loaded.used]}" "${memv[$name.loaded.rss]}" \
    "${memv[$name.later.used]}" "${memv[$name.later.rss]}" "${memv[$name.seconds]}" "$enc" "$err" >>"$smalltable"
  stop_server "$name"
}

# proof: the same redis-server loaded by redis-benchmark and by hotkv-benchmark, each on CPU 1. Keys
# are redis-benchmark's own (key:%012d), prefilled, so both read the same values.
proof() {
  local tool test cmd p run pair=0
  gen 1 --port "${port_of[redis]}" --keys "$KEYS" --key-width 12 --prefill-only --prefill-expect ok --quiet >/dev/null
  check_dbsize redis "${port_of[redis]}" "$KEYS" "after the prefill"
  for p in "$PIPELINE" 1; do
    for cmd in PING GET; do
      for run in $(seq "$RUNS"); do
        for tool in $(pair_order "$pair" redis-benchmark hotkv-benchmark); do
          proof_run "$tool" "$cmd" "$p" "$run"
        done
        pair=$((pair + 1))
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
  if [ -n "${bad_of[redis]:-}" ]; then
    fail_json "$json" "${bad_of[redis]}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' proof "$tool" "$cmd -P $p" "$run" "$json" -1 1 >>"$manifest"
    return 0
  fi
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
    local template="PING" expect=simple:PONG status=0
    [ "$cmd" = GET ] && template="GET key:__key__" expect=data
    gen 1 --port "${port_of[redis]}" --keys "$KEYS" --key-width 12 --pipeline "$p" --requests "$n" \
      --command "$template" --expect "$expect" --json "$json" --quiet >/dev/null || status=$?
    t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
    # Replace the generator's self-measured CPU by the same outside measurement redis-benchmark gets.
    local cpu
    cpu=$(awk -v a="$t1" -v b="$t0" -v hz="$hz" 'BEGIN{print (a-b)/hz}')
    sed -i "s/\"generator_cpu_seconds\": [0-9.e+-]*/\"generator_cpu_seconds\": $cpu/" "$json"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' proof "$tool" "$cmd -P $p" "$run" "$json" -1 "$status" >>"$manifest"
    return 0
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
  echo "coll_keys=$COLL_KEYS"
  echo "pop_requests=$POP_REQUESTS"
  echo "mem_members=$MEM_MEMBERS"
  echo "mem_settle=$MEM_SETTLE"
  echo "grow_keys=$GROW_KEYS"
  echo "grow_runs=$GROW_RUNS"
  echo "small_keys=$SMALL_KEYS"
  echo "small_conns=$SMALL_CONNS"
  echo "small_wait=$SMALL_WAIT"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "extra_conf=$EXTRA_CONF"
} >"$meta"

# The servers whose CPU time is measured run without gc-idle: a HotKV left idle while the other
# server runs would collect then, outside its own measured window, and look cheaper than it is.
# The memory and smallcoll sections keep it (what they measure is memory a user's idle server holds).
NO_IDLE_GC="--gc-idle no"
define redis "$RPORT" 0 "$KEYS"
define redisbatch "$RPORT" 0 "$KEYS"
define hotkv "$HPORT" 0 "$KEYS" "--threads 1 $NO_IDLE_GC"
define hotkv2 "$H2PORT" 0,1 "$KEYS" "--threads 2 $NO_IDLE_GC"
define hotkv2c "$H3PORT" 0 "$KEYS" "--threads 2 $NO_IDLE_GC"
define rediscoll "$RPORT" 0 "$COLL_KEYS" "" prefill_coll
define hotkvcoll "$HPORT" 0 "$COLL_KEYS" "--threads 1 $NO_IDLE_GC" prefill_coll
for section in $sections; do
  case "$section" in
    throughput)
      [ -n "${pid_redis:-}" ] || launch redis; [ -n "${pid_hotkv:-}" ] || launch hotkv
      # shellcheck disable=SC2086
      throughput throughput redis $COMMANDS ;;
    throughput-batch)
      # redis-server under SCHED_BATCH on the port of redis: stop that one (a later section restarts it).
      stop_server redis
      [ -n "${pid_hotkv:-}" ] || launch hotkv
      launch redisbatch
      # shellcheck disable=SC2086
      throughput throughput-batch redisbatch $BATCH_COMMANDS
      stop_server redisbatch ;;
    scaling)
      [ -n "${pid_hotkv:-}" ] || launch hotkv
      launch hotkv2; launch hotkv2c; scaling; stop_server hotkv2; stop_server hotkv2c ;;
    latency) [ -n "${pid_redis:-}" ] || launch redis; [ -n "${pid_hotkv:-}" ] || launch hotkv; latency latency redis hotkv ;;
    pubsub) [ -n "${pid_redis:-}" ] || launch redis; [ -n "${pid_hotkv:-}" ] || launch hotkv; pubsub ;;
    big)
      define redisbig "$RPORT" 0 "$BIG_KEYS"
      define hotkvbig "$HPORT" 0 "$BIG_KEYS" "--threads 1 $NO_IDLE_GC"
      launch redisbig; launch hotkvbig; latency big redisbig hotkvbig
      stop_server redisbig; stop_server hotkvbig ;;
    collections)
      # Their own servers, on the ports of redis and hotkv: stop those (a later section restarts them).
      stop_server redis; stop_server hotkv
      launch rediscoll; launch hotkvcoll; collections
      stop_server rediscoll; stop_server hotkvcoll ;;
    memory) memory ;;
    growing) growing ;;
    smallcoll) smallcoll ;;
    proof) unset "bad_of[redis]"; start_server redis "$RPORT" 0; proof ;;
    ipsets) bash benchmarks/ipsets/bench.sh ;;
    *) echo "run.sh: unknown section $section" >&2; exit 2 ;;
  esac
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"

machine=${MACHINE:-$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-$//')-$(nproc)cpu}
name="$(date -u +%F)-$machine"
# A run of other sections than the default names them, so it never overwrites the main report.
[ "$sections" = "$default_sections" ] || name="$name-$(echo $sections | tr ' ' '-')"
[ "$quick" = 1 ] && name="$name-quick"
[ -z "$SUFFIX" ] || name="$name-$SUFFIX"
mkdir -p "$RESULTS"
# The report exits 3 when a run or a load failed (it lists them on stderr): the harness fails too.
rstatus=0
"$work/report" -manifest "$manifest" -meta "$meta" -memory "$memtable" -growing "$growtable" -smallcoll "$smalltable" \
  -md "$RESULTS/$name.md" -png "$RESULTS/$name.png" ||
  rstatus=$?
echo "wrote $RESULTS/$name.md" >&2
if [ "$rstatus" = 3 ]; then
  echo "run.sh: FAILED: some runs failed (listed above, marked failed in the report)" >&2
  exit 1
fi
exit "$rstatus"
