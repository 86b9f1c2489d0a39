#!/bin/bash
# families.sh: issue 15's rows side by side with redis-server 7.0.15 (run.sh --only families runs
# it). Both servers pinned to CPU 0 (HotKV --threads 1), hotkv-benchmark to CPU 1 (1 thread, 50
# connections, pipeline 30); server CPU (utime+stime) is read from /proc before and after each run,
# and the rows alternate which server goes first. The data, the same on both servers:
#   PFADD        1,000,000 keys hll:N (the prefill gives each one element); adds a random 16-byte element
#   PFCOUNT      the same keys, one key and three keys a call
#   SETBIT, GETBIT, BITCOUNT  10,000 keys bm:N of up to 1,250 bytes (the prefill sets bit 9999), offsets
#                in [0, 10000): with 1M keys and offsets that wide the bitmaps would take gigabytes
#   GEOADD       points on a one-degree patch into one key (members m:0 … m:99999)
#   GEOSEARCH    1 km around a random point of a key of 100,000 random points of that patch, ASC COUNT 10
#   XADD         * IDs into 100 streams xs:N, one 16-byte field
#   XRANGE       - + COUNT 10 on 1,000 streams xr:N of 100 entries (three fields)
#   XREADGROUP   COUNT 1 > from 10 streams xg:N of 110,000 entries, group g, consumers cN, 1,000,000
#                calls (each delivers one entry: the PEL grows as in a queue nobody acks)
# and two memory rows: used_memory per stream entry (1,000,000 entries of three fields in one
# stream), and per sparse bitmap (100 keys with one bit set at a random offset below 2^27).
# Env: RUNS (2) DURATION (4s) RPORT (35171) HPORT (35172) OUT (a file that gets a copy of the output);
# QUICK=1 is a smoke test (RUNS 1, DURATION 0.3s, the HLL keys, stream entries and XREADGROUP
# calls a hundredth; its figures mean nothing).
RUNS=${RUNS:-2} DURATION=${DURATION:-4s} RPORT=${RPORT:-35171} HPORT=${HPORT:-35172}
HLL_KEYS=1000000 XG=110000 XG_CALLS=1000000 XMEM=1000000
if [ "${QUICK:-0}" = 1 ]; then RUNS=1 DURATION=0.3s HLL_KEYS=10000 XG=1100 XG_CALLS=10000 XMEM=10000; fi
. "$(dirname "$0")/lib.sh"
if [ -n "${OUT:-}" ]; then exec > >(tee "$OUT"); fi
echo "# $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
start_redis
start_hotkv
pipe() { for port in "$RPORT" "$HPORT"; do redis-cli -p "$port" --pipe <"$1" >/dev/null; done; }
# Prefills.
for port in "$RPORT" "$HPORT"; do
  bench --port "$port" --keys "$HLL_KEYS" --prefill-only --prefill --prefill-command 'PFADD hll:__key__ e__key__' --prefill-expect int:1 >/dev/null
  bench --port "$port" --keys 10000 --prefill-only --prefill --prefill-command 'SETBIT bm:__key__ 9999 1' --prefill-expect int:0 >/dev/null
done
awk 'BEGIN { srand(15); for (i = 0; i < 100000; i += 100) {
    printf "*302\r\n$6\r\nGEOADD\r\n$6\r\ngeofix\r\n"
    for (j = i; j < i + 100; j++) {
      lon = sprintf("%.6f", 13 + rand()); lat = sprintf("%.6f", 37 + rand()); m = "p" j
      printf "$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(lon), lon, length(lat), lat, length(m), m
    } } }' >"$work/geo.resp"
pipe "$work/geo.resp"
awk 'BEGIN { for (k = 0; k < 1000; k++) for (i = 1; i <= 100; i++) {
    key = "xr:" k; id = i "-1"
    printf "*9\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$1\r\na\r\n$4\r\nval1\r\n$1\r\nb\r\n$4\r\nval2\r\n$1\r\nc\r\n$2\r\n%02d\r\n", length(key), key, length(id), id, i % 100 } }' >"$work/xr.resp"
pipe "$work/xr.resp"
awk -v n="$XG" 'BEGIN { for (k = 0; k < 10; k++) { for (i = 1; i <= n; i++) {
    key = "xg:" k; id = i "-1"
    printf "*5\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$1\r\nf\r\n", length(key), key, length(id), id
    printf "$%d\r\n%s\r\n", length(i), i }
    printf "*5\r\n$6\r\nXGROUP\r\n$6\r\nCREATE\r\n$%d\r\n%s\r\n$1\r\ng\r\n$1\r\n0\r\n", length(key), key } }' >"$work/xg.resp"
pipe "$work/xg.resp"
# one NAME SERVER ARGS...: one run against SERVER; prints name, server, ops/s, CPU-s per 1M ops.
one() {
  local r=$1 name=$2 port pid; shift 2
  server "$name"
  local before after
  before=$(cpu "$pid")
  bench --port "$port" --clients 50 --pipeline 30 --json "$work/out.json" "$@" >/dev/null
  after=$(cpu "$pid")
  python3 - "$work/out.json" "$r" "$name" $((after - before)) "$tck" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
if j.get("error"):
    sys.exit("%s %s: %s" % (sys.argv[2], sys.argv[3], j["error"]))
n, ops = j["ops"], j["ops_per_sec"]
cpu = int(sys.argv[4]) / int(sys.argv[5])
print("%-22s %-6s %12.0f %18.3f" % (sys.argv[2], sys.argv[3], ops, cpu / (n / 1e6)))
PY
}
row() { # NAME ARGS...: one run on each server, the first alternating from run to run
  local r=$1; shift
  if [ $((run % 2)) = 1 ]; then one "$r" redis "$@"; one "$r" hotkv "$@"; else one "$r" hotkv "$@"; one "$r" redis "$@"; fi
}
printf '%-22s %-6s %12s %18s\n' row server "ops/s" "CPU-s per 1M ops"
for run in $(seq "$RUNS"); do
  row PFADD --keys "$HLL_KEYS" --data-size 16 --duration "$DURATION" --command 'PFADD hll:__key__ __rand__' --expect int:0..1
  row PFCOUNT-1 --keys "$HLL_KEYS" --duration "$DURATION" --command 'PFCOUNT hll:__key__' --expect int
  row PFCOUNT-3 --keys "$HLL_KEYS" --duration "$DURATION" --command 'PFCOUNT hll:__key__ hll:__key__ hll:__key__' --expect int
  row SETBIT --keys 10000 --duration "$DURATION" --command 'SETBIT bm:__key__ __key__ 1' --expect int:0..1
  row GETBIT --keys 10000 --duration "$DURATION" --command 'GETBIT bm:__key__ __key__' --expect int:0..1
  row BITCOUNT --keys 10000 --duration "$DURATION" --command 'BITCOUNT bm:__key__' --expect int
  row GEOADD --keys 100000 --duration "$DURATION" --command 'GEOADD geo 13.__key__ 37.__key__ m:__key__' --expect int:0..1
  row GEOSEARCH-BYRADIUS --keys 100000 --duration "$DURATION" --command 'GEOSEARCH geofix FROMLONLAT 13.__key__ 37.__key__ BYRADIUS 1 km ASC COUNT 10' --expect any
  row XADD --keys 100 --data-size 16 --duration "$DURATION" --command 'XADD xs:__key__ * f __data__' --expect bulk
  row XRANGE-COUNT-10 --keys 1000 --duration "$DURATION" --command 'XRANGE xr:__key__ - + COUNT 10' --expect array:10
  [ "$run" -gt 1 ] || row XREADGROUP --keys 10 --requests "$XG_CALLS" --command 'XREADGROUP GROUP g c__key__ COUNT 1 STREAMS xg:__key__ >' --expect any
done
# Memory rows: used_memory before and after.
used() { redis-cli -p "$1" info memory | awk -F: '$1 == "used_memory" { print $2 + 0 }'; }
awk -v n="$XMEM" 'BEGIN { for (i = 1; i <= n; i++) {
    id = i "-1"
    printf "*9\r\n$4\r\nXADD\r\n$5\r\nxmem1\r\n$%d\r\n%s\r\n$1\r\na\r\n$4\r\nval1\r\n$1\r\nb\r\n$%d\r\n%d\r\n$1\r\nc\r\n$5\r\nhello\r\n", length(id), id, length(i), i } }' >"$work/xmem.resp"
awk 'BEGIN { srand(27); for (i = 0; i < 100; i++) { off = int(rand() * 134217728); key = "sparse:" i
    printf "*4\r\n$6\r\nSETBIT\r\n$%d\r\n%s\r\n$%d\r\n%d\r\n$1\r\n1\r\n", length(key), key, length(off), off } }' >"$work/sparse.resp"
for name in redis hotkv; do
  if [ $name = redis ]; then port=$RPORT; else port=$HPORT; fi
  b=$(used "$port"); redis-cli -p "$port" --pipe <"$work/xmem.resp" >/dev/null; a=$(used "$port")
  printf '%-22s %-6s %12s %18.1f\n' "memory/stream-entry" "$name" "-" "$(echo "($a - $b) / $XMEM" | bc -l)"
  b=$(used "$port"); redis-cli -p "$port" --pipe <"$work/sparse.resp" >/dev/null; a=$(used "$port")
  printf '%-22s %-6s %12s %18.1f\n' "memory/sparse-bitmap" "$name" "-" "$(echo "($a - $b) / 100" | bc -l)"
  redis-cli -p "$port" del xmem1 >/dev/null
  for i in $(seq 0 99); do echo "DEL sparse:$i"; done | redis-cli -p "$port" >/dev/null
done
echo "# end load $(cut -d' ' -f1-3 /proc/loadavg)"
