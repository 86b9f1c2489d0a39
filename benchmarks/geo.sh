#!/bin/bash
# geo.sh: the GEOADD and GEOSEARCH BYRADIUS rows side by side with redis-server (issue 15). Both
# servers pinned to CPU 0, hotkv-benchmark to CPU 1 (1 thread, 50 connections, pipeline 30). GEOADD
# adds points on a one-degree patch to one key (members m:0 … m:99999, coordinates 13.<key>
# 37.<key> from two independent key draws). GEOSEARCH searches a key both servers were given the
# same 100,000 random points of that patch (redis-cli --pipe): 1 km around a random point of it
# (about 25 points), nearest 10 first. Server CPU is read from /proc before and after each run. Not in run.sh's
# default sections.
# Env: RUNS (1) DURATION (5s) RPORT (7171) HPORT (7172)
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-7171} HPORT=${HPORT:-7172}
. "$(dirname "$0")/lib.sh"
start_redis
start_hotkv
awk 'BEGIN { srand(15); for (i = 0; i < 100000; i += 100) {
    printf "*302\r\n$6\r\nGEOADD\r\n$6\r\ngeofix\r\n"
    for (j = i; j < i + 100; j++) {
      lon = sprintf("%.6f", 13 + rand()); lat = sprintf("%.6f", 37 + rand()); m = "p" j
      printf "$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(lon), lon, length(lat), lat, length(m), m
    } } }' >"$work/fill.resp"
for port in "$RPORT" "$HPORT"; do redis-cli -p "$port" --pipe <"$work/fill.resp" >/dev/null; done
row() { # name, command, expect
  for name in redis hotkv; do
    server $name
    before=$(cpu "$pid")
    out=$(bench --port "$port" --clients 50 --keys 100000 --duration "$DURATION" --pipeline 30 \
      --command "$2" --expect "$3")
    after=$(cpu "$pid")
    echo "$out" | awk -v n=$name -v r="$1" -v cmd="${2%% *}" -v c=$((after - before)) -v t="$tck" '
      $1 == cmd { printf "%-20s %-8s %12d %18.2f\n", r, n, $(NF-5), (c / t) / ($(NF-6) / 1e6) }'
  done
}
printf '%-20s %-8s %12s %18s\n' row server "ops/s" "CPU-s per 1M ops"
for run in $(seq "$RUNS"); do
  row GEOADD 'GEOADD geo 13.__key__ 37.__key__ m:__key__' int
  row GEOSEARCH-BYRADIUS 'GEOSEARCH geofix FROMLONLAT 13.__key__ 37.__key__ BYRADIUS 1 km ASC COUNT 10' any
done
