#!/usr/bin/env bash
# Side-by-side: GET and SET over TLS (and over plain TCP, for the cost of TLS itself) with
# redis-benchmark against redis-server and HotKV, at pipeline 1 and 30. Each server listens on
# a plain port and a tls-port with the same throwaway certificates (made here with openssl, in a
# temporary directory, deleted at exit), pinned to CPU 0 (HotKV --threads 1); redis-benchmark
# runs on CPU 1 with 50 connections. Each cell runs ROUNDS times, alternating the servers; the
# table gives the range of requests/s over the rounds, the range of HotKV/Redis ratios of rounds
# run back to back, and server CPU-seconds per million requests (median round).
#
# Usage: benchmarks/tls.sh            Env: ROUNDS (3), N1 (100000), N30 (1000000), SIZE (256),
#        KEYS (100000), PORTS base (27210: uses base..base+3)
# Run it alone: flock /tmp/h/bench.lock benchmarks/tls.sh (the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
N1=${N1:-100000}
N30=${N30:-1000000}
SIZE=${SIZE:-256}
KEYS=${KEYS:-100000}
BASE=${PORTS:-27210}
RPORT=$BASE RTLS=$((BASE + 1)) HPORT=$((BASE + 2)) HTLS=$((BASE + 3))

for tool in redis-server redis-benchmark redis-cli taskset openssl go; do
  command -v "$tool" >/dev/null || { echo "tls.sh: missing $tool" >&2; exit 2; }
done

out=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$out"; }
trap cleanup EXIT

# A throwaway CA and a server certificate for 127.0.0.1 (EC P-256, as TLS deployments use).
(
  cd "$out"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt \
    -days 1 -subj "/CN=tls.sh CA" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
    -subj "/CN=localhost" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >ext
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 \
    -extfile ext 2>/dev/null
)
tlsargs=(--tls-cert-file "$out/server.crt" --tls-key-file "$out/server.key" --tls-ca-cert-file "$out/ca.crt"
  --tls-auth-clients no)

echo "building hotkv..." >&2
go build -o "$out/hotkv" ./src/cmd/hotkv

wait_port() { for _ in $(seq 200); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

taskset -c 0 redis-server --port "$RPORT" --tls-port "$RTLS" "${tlsargs[@]}" --bind 127.0.0.1 --save '' \
  --appendonly no --dir "$out" >"$out/redis.log" 2>&1 &
pids+=($!); rpid=$!
taskset -c 0 "$out/hotkv" --port "$HPORT" --tls-port "$HTLS" "${tlsargs[@]}" --bind 127.0.0.1 --threads 1 \
  --save '' --appendonly no --dir "$out" >"$out/hotkv.log" 2>&1 &
pids+=($!); hpid=$!
wait_port "$RPORT"; wait_port "$HPORT"

hz=$(getconf CLK_TCK)
# run PID PORT TEST PIPELINE N TLS -> "rps cpu"
run() {
  local pid=$1 port=$2 t=$3 p=$4 n=$5 tls=$6 extra=()
  [ "$tls" = tls ] && extra=(--tls --cacert "$out/ca.crt")
  local before after line
  before=$(cpu_ticks "$pid")
  line=$(taskset -c 1 redis-benchmark -h 127.0.0.1 -p "$port" "${extra[@]}" -t "$t" -n "$n" -P "$p" -d "$SIZE" \
    -r "$KEYS" -c 50 --csv -q 2>/dev/null | grep -v '^"test"' | head -1)
  after=$(cpu_ticks "$pid")
  echo "$(echo "$line" | cut -d, -f2 | tr -d '"') $(awk -v a="$after" -v b="$before" -v hz="$hz" -v n="$n" 'BEGIN{printf "%.2f", (a-b)/hz/(n/1e6)}')"
}

range() { tr ' ' '\n' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END{ if (lo==hi) print lo; else print lo "–" hi }'; }
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

rows=()
for tls in tls plain; do
  for p in 1 30; do
    n=$N1; [ "$p" = 30 ] && n=$N30
    for t in set get; do
      rr=() hr=() ratios=() rc=() hc=()
      rp=$RPORT hp=$HPORT; [ "$tls" = tls ] && rp=$RTLS hp=$HTLS
      for round in $(seq "$ROUNDS"); do
        echo "round $round: $t -P $p over $tls ..." >&2
        read -r r rcpu < <(run "$rpid" "$rp" "$t" "$p" "$n" "$tls")
        read -r h hcpu < <(run "$hpid" "$hp" "$t" "$p" "$n" "$tls")
        rr+=("$r"); hr+=("$h"); rc+=("$rcpu"); hc+=("$hcpu")
        ratios+=("$(awk -v h="$h" -v r="$r" 'BEGIN{ if (r>0) printf "%.2f", h/r; else print 0}')")
      done
      rows+=("| $t | $p | $tls | $(echo "${rr[*]}" | range) | $(echo "${hr[*]}" | range) | $(echo "${ratios[*]}" | range) | $(echo "${rc[*]}" | median) | $(echo "${hc[*]}" | median) |")
    done
  done
done

echo
echo "redis-benchmark -c 50 -d $SIZE -r $KEYS, -n $N1 at -P 1 and $N30 at -P 30, $ROUNDS rounds; servers pinned to CPU 0 (HotKV --threads 1), generator on CPU 1; TLS 1.3, EC P-256 certificate, no client certificates; $(date -u +%F) $(uname -m) $(nproc) cores"
echo
echo "| test | pipeline | transport | Redis 7.0.15 req/s | HotKV req/s | HotKV/Redis | Redis CPU-s/1M | HotKV CPU-s/1M |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
