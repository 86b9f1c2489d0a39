#!/bin/bash
# persist.sh: persistence side by side with redis-server 7.0.15 (issue 17's measurements). Both
# servers pinned to CPU 0 (HotKV --threads 1 --gc-idle no), one at a time; every client
# (hotkv-benchmark, redis-cli --pipe) on CPU 1. For each run, each server in turn (which goes first
# alternates from run to run):
#   1. strings: KEYS (1,000,000) SETs of 256 bytes (hotkv-benchmark --prefill), DBSIZE checked;
#      SAVE timed (the reply), then BGSAVE timed from the call until LASTSAVE changes (then INFO
#      must say rdb_bgsave_in_progress:0, rdb_saves one higher, rdb_last_bgsave_status:ok);
#   2. the server stopped and started again on its directory, the load timed from the exec until
#      PING answers PONG instead of -LOADING, DBSIZE checked; the file kept aside. SAVE, BGSAVE and
#      the load also report the server's CPU seconds (from /proc, Redis's reaped fork included:
#      it is reaped before LASTSAVE moves), the figure to read on a shared machine;
#   3. (strings only) memory under a SET load (pipeline 30, 50 connections, the KEYS keys
#      rewritten) across one BGSAVE, the first since the load: RSS right after the load, PSS of the
#      server and its children (Redis's fork) before, sampled every 100 ms during, and after, and
#      what INFO reports after (rdb_last_cow_size);
#   4. (strings only) GET latency at pipeline 1 (LAT_CLIENTS connections, LAT_KEYS other keys
#      lat:N) for DURATION without a snapshot, then with BGSAVEs back to back over the window
#      (under a second apart: LASTSAVE's second must move on);
#   then the same for collections: COLL (100,000) each of hashes, lists, sets and sorted sets of 10
#   elements of 16-64 bytes (generated once with awk, fed with redis-cli --pipe, errors: 0 checked).
#   Then large keys: one hash, list, set and sorted set of LARGE_N (1,000,000) elements of 16-40
#   bytes each (bh, bl, bs, bz; fed with redis-cli --pipe, 1,000 elements a command): SAVE,
#   BGSAVE and the load as above, then GET latency on other keys without and during BGSAVEs, which
#   is where a snapshot that serializes a big value while holding its shard shows.
#   After both servers: each loads the other's file (HotKV loading Redis's dump.rdb, Redis HotKV's).
#   5. SET throughput (pipeline 30, 50 connections, 256-byte values, KEYS keyspace, DURATION) on a
#      fresh server per mode: appendonly no, then yes with appendfsync no, everysec, always
#      (auto-aof-rewrite-percentage 0 on both, so no rewrite falls into a run); ops/s and server
#      CPU µs per SET, i.e. CPU-s per 1M (utime+stime+cutime+cstime from /proc: Redis's reaped
#      children count).
# Prints progress lines on stderr and, at the end, a Markdown table of medians with the range of
# HotKV/Redis ratios over the runs; the raw rows go to RAW (default $work/raw.tsv, kept if set).
# Env: RUNS (3) DURATION (5s) KEYS (1000000) COLL (100000) LARGE_N (1000000) LAT_CLIENTS (50)
#      LAT_KEYS (10000) RPORT (7280) HPORT (7281) AOF_MODES ("off no everysec always") SKIP ("": any
#      of strings coll large aof) RAW. 6-10 minutes at RUNS=1 on a loaded 2-CPU VM; about 2 GB of RAM, 2 GB of disk.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
RUNS=${RUNS:-3} DURATION=${DURATION:-5s} KEYS=${KEYS:-1000000} COLL=${COLL:-100000} LARGE_N=${LARGE_N:-1000000}
LAT_CLIENTS=${LAT_CLIENTS:-50} LAT_KEYS=${LAT_KEYS:-10000}
RPORT=${RPORT:-7280} HPORT=${HPORT:-7281} AOF_MODES=${AOF_MODES:-off no everysec always} SKIP=${SKIP:-}
for tool in redis-server redis-cli taskset go awk jq; do
  command -v "$tool" >/dev/null || { echo "persist.sh: $tool is missing" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "persist.sh: needs two CPUs" >&2; exit 1; }
work=$(mktemp -d)
raw=${RAW:-$work/raw.tsv}
: >"$raw"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
say() { printf '%s persist.sh: %s\n' "$(date -u +%T)" "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
say "building (redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), load average $(cut -d' ' -f1-3 /proc/loadavg))"
go build -o "$work/hotkv" ./src/cmd/hotkv
go build -o "$work/hkb" ./tools/hotkv-benchmark
skipped() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }

# start NAME DIR ARGS...: one server on CPU 0; sets pid and port. Returns once the process exists;
# ready waits for PONG.
start() {
  local name=$1 dir=$2; shift 2
  mkdir -p "$dir"
  if [ "$name" = redis ]; then
    port=$RPORT
    taskset -c 0 redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$dir" "$@" \
      >>"$work/redis.log" 2>&1 &
  else
    port=$HPORT
    taskset -c 0 "$work/hotkv" --port "$port" --bind 127.0.0.1 --save '' --dir "$dir" \
      --threads 1 --gc-idle no "$@" >>"$work/hotkv.log" 2>&1 &
  fi
  pid=$!; pids+=("$pid")
}
# ready: poll PING every 10 ms (up to 120 s) until PONG, not -LOADING or a refused connection.
ready() {
  local i
  for i in $(seq 12000); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "server on $port exited (see its log)"
    sleep 0.01
  done
  fail "server on $port not ready after 120 s"
}
stop() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
cli() { redis-cli -p "$port" "$@" | tr -d '\r'; }
info() { cli info "$1" | awk -F: -v f="$2" '$1 == f { print $2 }'; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }
dbsize_is() { local n; n=$(cli dbsize); [ "$n" = "$1" ] || fail "$2: DBSIZE $n, expected $1"; }
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$raw"; }   # metric run server value
# timed METRIC RUN NAME SECONDS KEYS: the seconds and the keys/s they make.
timed() {
  row "$1.s" "$2" "$3" "$4"
  row "$1.keys_per_s" "$2" "$3" "$(awk -v n="$5" -v s="$4" 'BEGIN { printf "%.0f", n / s }')"
}
cpu() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
# cpurow METRIC RUN NAME BEFORE: the server's CPU seconds since BEFORE ticks (0: since its start).
cpurow() { row "$1" "$2" "$3" "$(awk -v c=$(($(cpu "$pid") - $4)) -v t="$tck" 'BEGIN { printf "%.2f", c / t }')"; }

# bgsave: BGSAVE and wait for it to finish; prints seconds. The end is LASTSAVE moving on (polled
# every 10 ms; HotKV runs INFO holding every shard, LASTSAVE on the connection, so polling INFO
# would put barriers into the measured window), confirmed by one INFO: rdb_bgsave_in_progress:0,
# rdb_saves one higher, rdb_last_bgsave_status:ok. LASTSAVE counts seconds, so the BGSAVE starts
# in a second after the last save's.
bgsave() {
  local saves last t0 r out
  saves=$(info persistence rdb_saves)
  last=$(cli lastsave)
  while [ "$(date +%s)" -le "$last" ]; do sleep 0.05; done
  t0=$EPOCHREALTIME
  r=$(cli bgsave)
  [ "$r" = "Background saving started" ] || fail "BGSAVE answered: $r"
  while [ "$(cli lastsave)" = "$last" ]; do sleep 0.01; done
  r=$(since "$t0")
  out=$(cli info persistence)
  grep -qx 'rdb_bgsave_in_progress:0' <<<"$out" || fail "LASTSAVE moved while a BGSAVE is in progress"
  grep -qx "rdb_saves:$((saves + 1))" <<<"$out" || fail "rdb_saves is not $((saves + 1)) after the BGSAVE"
  grep -qx 'rdb_last_bgsave_status:ok' <<<"$out" || fail "BGSAVE failed: $(grep rdb_last_bgsave_status <<<"$out")"
  echo "$r"
}

# saves NAME SET RUN DIR COUNT: SAVE and BGSAVE on the filled server, then restart and time the load.
saves() {
  local name=$1 set=$2 run=$3 dir=$4 count=$5 t0 s r c0
  c0=$(cpu "$pid")
  t0=$EPOCHREALTIME
  r=$(cli save)
  [ "$r" = OK ] || fail "SAVE answered: $r"
  s=$(since "$t0")
  timed "$set.save" "$run" "$name" "$s" "$count"
  cpurow "$set.save.cpu_s" "$run" "$name" "$c0"
  say "$name $set: SAVE $s s"
  c0=$(cpu "$pid")
  s=$(bgsave)
  timed "$set.bgsave" "$run" "$name" "$s" "$count"
  cpurow "$set.bgsave.cpu_s" "$run" "$name" "$c0"
  say "$name $set: BGSAVE $s s"
  cp "$dir/dump.rdb" "$work/$name-$set.rdb"
  row "$set.rdb.MB" "$run" "$name" "$(stat -c %s "$dir/dump.rdb" | awk '{ printf "%.1f", $1 / 1e6 }')"
  stop
  t0=$EPOCHREALTIME
  start "$name" "$dir"
  ready
  s=$(since "$t0")
  dbsize_is "$count" "$name loading its $set file"
  timed "$set.load" "$run" "$name" "$s" "$count"
  cpurow "$set.load.cpu_s" "$run" "$name" 0
  say "$name $set: load at start $s s ($count keys)"
}

# latency NAME RUN [SET]: GET p99/p99.9 at pipeline 1 on lat:N keys, without and with BGSAVEs;
# rows are lat.* (lat.SET.* when SET is given).
latency() {
  local name=$1 run=$2 pre=lat${3:+.$3} b n=0
  taskset -c 1 "$work/hkb" --port "$port" --keys "$LAT_KEYS" --prefill --prefill-only --quiet \
    --prefill-command 'SET lat:__key__ __data__' >/dev/null
  for mode in idle bgsave; do
    taskset -c 1 "$work/hkb" --port "$port" --threads 1 --clients "$LAT_CLIENTS" --pipeline 1 \
      --keys "$LAT_KEYS" --duration "$DURATION" --quiet --command 'GET lat:__key__' --expect data \
      --json "$work/lat.json" >/dev/null &
    b=$!
    if [ $mode = bgsave ]; then
      sleep 0.2
      while kill -0 "$b" 2>/dev/null; do bgsave >/dev/null; n=$((n + 1)); done
    fi
    wait "$b" || fail "$name GET latency run ($mode)"
    for q in p99 p99.9; do
      row "$pre.$mode.$q.ms" "$run" "$name" "$(jq ".latency_us[\"$q\"]" "$work/lat.json" | awk '{ printf "%.2f", $1 / 1000 }')"
    done
    row "$pre.$mode.ops" "$run" "$name" "$(jq '.ops_per_sec | floor' "$work/lat.json")"
  done
  row "$pre.bgsaves" "$run" "$name" "$n"
  say "$name${3:+ $3}: GET latency idle p99 $(grep -P "^$pre.idle.p99.ms\t$run\t$name\t" "$raw" | cut -f4) ms," \
    "during $n BGSAVEs $(grep -P "^$pre.bgsave.p99.ms\t$run\t$name\t" "$raw" | cut -f4) ms"
}

# pss PID: kB of PSS of the process and its children (a forked Redis child).
pss() {
  local total=0 p v
  for p in "$1" $(cat "/proc/$1/task/"*/children 2>/dev/null); do
    v=$(awk '$1 == "Pss:" { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

# memory NAME RUN: RSS and PSS across one BGSAVE under a SET load.
memory() {
  local name=$1 run=$2 b before peak=0 v after s
  taskset -c 1 "$work/hkb" --port "$port" --threads 1 --clients 50 --pipeline 30 --keys "$KEYS" \
    --duration 300s --quiet --command 'SET key:__key__ __data__' >/dev/null &
  b=$!
  sleep 1
  before=$(pss "$pid")
  ( while :; do pss "$pid"; sleep 0.1; done ) >"$work/pss.txt" &
  local sampler=$!
  s=$(bgsave)
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  peak=$(sort -n "$work/pss.txt" | tail -1)
  sleep 1
  after=$(pss "$pid")
  kill "$b" 2>/dev/null || true; wait "$b" 2>/dev/null || true   # SIGTERM: background jobs ignore SIGINT
  row "mem.before.MB" "$run" "$name" "$((before / 1024))"
  row "mem.peak.MB" "$run" "$name" "$((peak / 1024))"
  row "mem.after.MB" "$run" "$name" "$((after / 1024))"
  row "mem.overhead.MB" "$run" "$name" "$(((peak - before) / 1024))"
  row "mem.last_cow.MB" "$run" "$name" "$(($(info persistence rdb_last_cow_size) / 1048576))"
  row "mem.bgsave_under_set.s" "$run" "$name" "$s"
  say "$name: memory under SETs across a BGSAVE ($s s): before $((before / 1024)) MB, peak" \
    "$((peak / 1024)) MB, after $((after / 1024)) MB, rdb_last_cow_size $(info persistence rdb_last_cow_size)"
}

# collections: COLL each of hashes h:N, lists l:N, sets s:N, sorted sets z:N of 10 elements of
# 16-64 bytes, as RESP for redis-cli --pipe (srand(1): the same file every time).
collfile=$work/coll.resp
make_coll() {
  awk -v n="$COLL" 'function cmd(c, k, i, j, e) {
      printf "*%d\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", (c == "HSET" || c == "ZADD") ? 22 : 12, length(c), c, length(k), k
      for (j = 0; j < 10; j++) {
        e = substr(i "." j "." pool[int(rand() * 1024)], 1, 16 + int(rand() * 49))
        if (c == "HSET") printf "$7\r\nfield:%d\r\n", j
        if (c == "ZADD") { s = sprintf("%.3f", rand() * 1000); printf "$%d\r\n%s\r\n", length(s), s }
        printf "$%d\r\n%s\r\n", length(e), e
      }
    }
    BEGIN {
      srand(1); a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
      for (p = 0; p < 1024; p++) { s = ""; for (c = 0; c < 64; c++) s = s substr(a, 1 + int(rand() * 64), 1); pool[p] = s }
      for (i = 0; i < n; i++) { cmd("HSET", "h:" i, i); cmd("RPUSH", "l:" i, i); cmd("SADD", "s:" i, i); cmd("ZADD", "z:" i, i) }
    }' >"$collfile"
}

# large: the four LARGE_N-element keys as RESP, 1,000 elements a command (srand(2)).
largefile=$work/large.resp
make_large() {
  awk -v n="$LARGE_N" 'function el(i) { return substr(i ":" pool[i % 1024], 1, 16 + i % 25) }
    BEGIN {
      srand(2); a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
      for (p = 0; p < 1024; p++) { s = ""; for (c = 0; c < 40; c++) s = s substr(a, 1 + int(rand() * 64), 1); pool[p] = s }
      split("HSET bh RPUSH bl SADD bs ZADD bz", t, " ")
      for (k = 1; k <= 8; k += 2) {
        c = t[k]; key = t[k + 1]; per = (c == "HSET" || c == "ZADD") ? 2 : 1
        for (i = 0; i < n; i += 1000) {
          m = (n - i < 1000) ? n - i : 1000
          printf "*%d\r\n$%d\r\n%s\r\n$2\r\n%s\r\n", 2 + per * m, length(c), c, key
          for (j = i; j < i + m; j++) {
            if (c == "HSET") { f = "f" j; printf "$%d\r\n%s\r\n", length(f), f }
            if (c == "ZADD") { sc = sprintf("%.3f", (j * 7919) % 1000003 / 3.0); printf "$%d\r\n%s\r\n", length(sc), sc }
            e = el(j); printf "$%d\r\n%s\r\n", length(e), e
          }
        }
      }
    }' >"$largefile"
}

fill() { # NAME SET
  local out
  if [ "$2" = large ]; then
    out=$(taskset -c 1 redis-cli -p "$port" --pipe <"$largefile" 2>&1 | tr -d '\r')
    grep -q 'errors: 0,' <<<"$out" || fail "$1: large fill: $out"
    dbsize_is 4 "$1 after the large fill"
    [ "$(cli hlen bh) $(cli llen bl) $(cli scard bs) $(cli zcard bz)" = "$LARGE_N $LARGE_N $LARGE_N $LARGE_N" ] \
      || fail "$1: a large key does not hold $LARGE_N elements"
  elif [ "$2" = strings ]; then
    taskset -c 1 "$work/hkb" --port "$port" --keys "$KEYS" --prefill --prefill-only --quiet >/dev/null \
      || fail "$1: string fill"
    dbsize_is "$KEYS" "$1 after the string fill"
  else
    out=$(taskset -c 1 redis-cli -p "$port" --pipe <"$collfile" 2>&1 | tr -d '\r')
    grep -q 'errors: 0, replies: '$((4 * COLL)) <<<"$out" || fail "$1: collections fill: $out"
    dbsize_is $((4 * COLL)) "$1 after the collections fill"
    [ "$(cli hlen h:7)$(cli llen l:7)$(cli scard s:7)$(cli zcard z:7)" = 10101010 ] \
      || fail "$1: a collection of the fill does not hold 10 elements"
  fi
}

persist_run() { # RUN
  local run=$1 order set name dir count t0 s
  if [ $((run % 2)) = 1 ]; then order="redis hotkv"; else order="hotkv redis"; fi
  for set in strings coll large; do
    skipped "$set" && continue
    case $set in strings) count=$KEYS ;; coll) count=$((4 * COLL)) ;; large) count=4 ;; esac
    for name in $order; do
      dir=$work/$name-$set
      rm -rf "$dir"
      start "$name" "$dir"; ready
      t0=$EPOCHREALTIME
      fill "$name" "$set"
      say "$name $set: filled $count keys in $(since "$t0") s"
      saves "$name" "$set" "$run" "$dir" "$count"
      if [ $set = strings ]; then
        row "mem.loaded.MB" "$run" "$name" "$(($(rss "$pid") / 1024))"
        memory "$name" "$run"
        latency "$name" "$run"
      fi
      [ $set = large ] && latency "$name" "$run" large
      stop
      rm -rf "$dir"
    done
    # Each server loads the other's file.
    for name in $order; do
      local other=redis; [ "$name" = redis ] && other=hotkv
      dir=$work/$name-cross
      rm -rf "$dir"; mkdir -p "$dir"
      cp "$work/$other-$set.rdb" "$dir/dump.rdb"
      t0=$EPOCHREALTIME
      start "$name" "$dir"; ready
      s=$(since "$t0")
      dbsize_is "$count" "$name loading $other's $set file"
      timed "$set.load_other" "$run" "$name" "$s" "$count"
      cpurow "$set.load_other.cpu_s" "$run" "$name" 0
      say "$name $set: loaded $other's file in $s s"
      stop
      rm -rf "$dir"
    done
  done
}

aof_run() { # RUN
  local run=$1 order mode name dir c0 c1 out ops args
  if [ $((run % 2)) = 1 ]; then order="redis hotkv"; else order="hotkv redis"; fi
  for mode in $AOF_MODES; do
    for name in $order; do
      dir=$work/$name-aof
      rm -rf "$dir"
      if [ "$mode" = off ]; then args=(--appendonly no)
      else args=(--appendonly yes --appendfsync "$mode" --auto-aof-rewrite-percentage 0); fi
      start "$name" "$dir" "${args[@]}"; ready
      c0=$(cpu "$pid")
      out=$(taskset -c 1 "$work/hkb" --port "$port" --threads 1 --clients 50 --pipeline 30 \
        --keys "$KEYS" --duration "$DURATION" --quiet --command 'SET key:__key__ __data__' --expect ok) \
        || fail "$name SET under appendonly $mode: $out"
      c1=$(cpu "$pid")
      ops=$(awk '$1 == "SET" { print $5 }' <<<"$out")
      row "aof.$mode.ops" "$run" "$name" "$ops"
      row "aof.$mode.cpu_us" "$run" "$name" \
        "$(awk -v c=$((c1 - c0)) -v t="$tck" -v n="$(awk '$1 == "SET" { print $4 }' <<<"$out")" \
          'BEGIN { printf "%.3f", (c / t) / n * 1e6 }')"
      [ "$mode" = off ] || [ -d "$dir/appendonlydir" ] || fail "$name: no appendonlydir under appendonly yes"
      say "$name: SET appendonly $mode: $ops ops/s"
      stop
      rm -rf "$dir"
    done
  done
}

if ! skipped coll; then
  say "generating $COLL each of hashes, lists, sets, sorted sets"
  make_coll
fi
if ! skipped large; then
  say "generating four keys of $LARGE_N elements"
  make_large
fi
for run in $(seq "$RUNS"); do
  say "run $run of $RUNS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  persist_run "$run"
  skipped aof || aof_run "$run"
done
say "done, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The table: per metric the medians and the range of per-run HotKV/Redis ratios.
awk -F'\t' '
  function fmt(x) { return x == int(x) ? sprintf("%d", x) : x >= 100 ? sprintf("%.0f", x) : x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x) }
  function med(s,   n, a, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { v[$1, $3] = v[$1, $3] " " $4; val[$1, $2, $3] = $4
    if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 }; runs[$1, $2] = 1 }
  END {
    print "| metric | Redis (median) | HotKV (median) | HotKV/Redis (range over runs) |"
    print "|---|---:|---:|---|"
    for (i = 1; i <= m; i++) {
      k = order[i]; lo = ""; hi = ""
      for (r = 1; r <= 100; r++) {
        if (!((k, r) in runs)) continue
        rv = val[k, r, "redis"]; hv = val[k, r, "hotkv"]
        if (rv + 0 == 0) continue
        q = hv / rv
        if (lo == "" || q < lo) lo = q
        if (hi == "" || q > hi) hi = q
      }
      rng = lo == "" ? "-" : (sprintf("%.2f", lo) == sprintf("%.2f", hi) ? sprintf("%.2f", lo) : sprintf("%.2f-%.2f", lo, hi))
      printf "| %s | %s | %s | %s |\n", k, fmt(med(v[k, "redis"])), fmt(med(v[k, "hotkv"])), rng
    }
  }' "$raw"
