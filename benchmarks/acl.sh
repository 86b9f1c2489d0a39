#!/usr/bin/env bash
# Side-by-side: the cost of ACL checks. redis-benchmark GET and SET at pipeline 30 against
# redis-server 7.0.15 and HotKV, each as the default user and as a user with key patterns and
# command rules ("%R~other:* ~key:* -@all +get +set +ping +config|get"). Servers pinned to CPU 0
# (HotKV --threads 1), redis-benchmark to CPU 1; RUNS runs of each cell, the order alternating.
# Prints requests/s (median, range) and the ratios restricted/default and HotKV/Redis.
#
# Usage: benchmarks/acl.sh [requests per run, default 2000000]
# Env:   RUNS (3), PIPELINE (30), SIZE (256), KEYS (1000000), RPORT (27110), HPORT (27111)
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-2000000}
RUNS=${RUNS:-3}
PIPELINE=${PIPELINE:-30}
SIZE=${SIZE:-256}
KEYS=${KEYS:-1000000}
RPORT=${RPORT:-27110}
HPORT=${HPORT:-27111}
USER_RULES="on >benchpw %R~other:* ~key:* resetchannels -@all +get +set +ping +config|get"

for tool in redis-server redis-benchmark redis-cli taskset go; do
  command -v "$tool" >/dev/null || { echo "acl.sh: missing $tool" >&2; exit 2; }
done
out=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$out"; }
trap cleanup EXIT

echo "building hotkv..." >&2
go build -o "$out/hotkv" ./src/cmd/hotkv
wait_port() { for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }
(cd "$out" && exec taskset -c 0 redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$out" >"$out/redis.log" 2>&1) &
pids+=($!)
(cd "$out" && exec taskset -c 0 "$out/hotkv" --port "$HPORT" --bind 127.0.0.1 --threads 1 --save '' --appendonly no --dir "$out" >"$out/hotkv.log" 2>&1) &
pids+=($!)
wait_port "$RPORT"; wait_port "$HPORT"
for port in "$RPORT" "$HPORT"; do
  # shellcheck disable=SC2086
  [ "$(redis-cli -p "$port" ACL SETUSER bench $USER_RULES)" = OK ] || { echo "ACL SETUSER failed on $port" >&2; exit 1; }
  # a restricted GET must pass, a key outside the patterns must not
  [ "$(redis-cli -p "$port" --user bench --pass benchpw GET key:1 2>/dev/null)" = "" ] || true
  redis-cli -p "$port" --user bench --pass benchpw GET nokey 2>/dev/null | grep -q NOPERM || { echo "restricted user not restricted on $port" >&2; exit 1; }
done

declare -A res
run() { # port user test
  local auth=()
  [ "$2" = bench ] && auth=(--user bench -a benchpw)
  taskset -c 1 redis-benchmark -p "$1" "${auth[@]}" -t "$3" -n "$N" -P "$PIPELINE" -d "$SIZE" -r "$KEYS" -c 50 --csv -q 2>/dev/null |
    grep -v '^"test"' | head -1 | cut -d, -f2 | tr -d '"'
}
for i in $(seq "$RUNS"); do
  order="$RPORT $HPORT"; [ $((i % 2)) = 0 ] && order="$HPORT $RPORT"
  for t in set get; do
    for port in $order; do
      for user in default bench; do
        v=$(run "$port" "$user" "$t")
        echo "run $i $t port $port $user: $v" >&2
        res[$port,$user,$t]="${res[$port,$user,$t]:-} $v"
      done
    done
  done
done

stat() { echo "$1" | tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {printf "%.0f %.0f %.0f", a[int((NR+1)/2)], a[1], a[NR]}'; }
ratios() { # list-a list-b: median, min, max of a_i/b_i over runs i
  paste <(echo "$1" | tr ' ' '\n' | grep -v '^$') <(echo "$2" | tr ' ' '\n' | grep -v '^$') |
    awk '{print $1/$2}' | sort -g | awk '{a[NR]=$1} END {printf "%.3f (%.3f-%.3f)", a[int((NR+1)/2)], a[1], a[NR]}'
}
echo
echo "redis-benchmark -P $PIPELINE -d $SIZE -r $KEYS -n $N -c 50, $RUNS runs; servers on CPU 0 (HotKV --threads 1), generator on CPU 1; $(date -u +%F) $(nproc) cores (shared machine)"
echo
echo "| test | server | default req/s (median, range) | restricted req/s | restricted/default |"
echo "|---|---|---:|---:|---:|"
for t in set get; do
  for port in "$RPORT" "$HPORT"; do
    name=Redis; [ "$port" = "$HPORT" ] && name=HotKV
    read -r dm dl dh <<<"$(stat "${res[$port,default,$t]}")"
    read -r bm bl bh <<<"$(stat "${res[$port,bench,$t]}")"
    echo "| $t | $name | $dm ($dl-$dh) | $bm ($bl-$bh) | $(ratios "${res[$port,bench,$t]}" "${res[$port,default,$t]}") |"
  done
done
echo
echo "| test | HotKV/Redis, default user | HotKV/Redis, restricted user |"
echo "|---|---:|---:|"
for t in set get; do
  echo "| $t | $(ratios "${res[$HPORT,default,$t]}" "${res[$RPORT,default,$t]}") | $(ratios "${res[$HPORT,bench,$t]}" "${res[$RPORT,bench,$t]}") |"
done
