#!/bin/bash
# vector.sh: HotKV's HNSW index (ds/vector) beside hnswlib on Fashion-MNIST (issue 20). Installs
# Debian's dataset-fashion-mnist and python3-hnswlib, then on the same vectors and machine:
# HotKV (benchmarks/vector, `vector run`: exact truth, then FP32/Q8/BIN builds, EF sweep, threads,
# deletion, memory) and hnswlib (benchmarks/vector/hnswlib_bench.py), and writes the table and the
# recall/QPS plot to benchmarks/results/DATE-CPU-vector.{md,svg}.
# Each engine x metric x quantization runs as its own step under $LOCK (flock; unset: no lock), so a
# shared machine's other benchmarks interleave between steps rather than wait for the whole run.
# Env: N (60000 base vectors) NQ (10000 queries) QUANTS (noquant,q8,bin) OUT (results prefix)
#      REPEAT (3: each QPS is the best of REPEAT runs; 1 and 2 threads alternate) LOCK (lock file)
#      WORK (keep vectors, truth and JSON there; default a temporary directory, removed)
#      CPUPROFILE (file: CPU profile of HotKV's cosine FP32 searches)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-60000} NQ=${NQ:-10000} QUANTS=${QUANTS:-noquant,q8,bin} REPEAT=${REPEAT:-3}
if ! dpkg -s dataset-fashion-mnist python3-hnswlib >/dev/null 2>&1; then
  apt-get install -y dataset-fashion-mnist python3-hnswlib >/dev/null
fi
data=$(dpkg -L dataset-fashion-mnist | grep 'train-images-idx3-ubyte.gz$' | xargs dirname)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/ [0-9]*-Core.*//; s/(R)//g; s/ Processor//' | tr 'A-Z ' 'a-z-' | sed 's/-*$//')
OUT=${OUT:-benchmarks/results/$(date -u +%F)-${cpu:-cpu}-$(nproc)cpu-vector}
if [ -n "${WORK:-}" ]; then
  work=$WORK; mkdir -p "$work"
else
  work=$(mktemp -d /tmp/hotkv-vector.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
locked() { if [ -n "${LOCK:-}" ]; then flock "$LOCK" "$@"; else "$@"; fi; }
go build -o "$work/vector" ./benchmarks/vector
prof=()
[ -n "${CPUPROFILE:-}" ] && prof=(-cpuprofile "$CPUPROFILE")
rm -f "$work/hotkv.json" "$work/hnswlib.json"
for metric in cosine l2; do
  for q in ${QUANTS//,/ }; do
    locked "$work/vector" run -data "$data" -work "$work" -n "$N" -nq "$NQ" -metrics "$metric" -quants "$q" \
      -repeat "$REPEAT" "${prof[@]}"
  done
  REPEAT=$REPEAT locked /usr/bin/python3 benchmarks/vector/hnswlib_bench.py "$work" "$metric"
done
"$work/vector" report -work "$work" -out "$OUT" \
  -note "Machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) vCPUs, shared with other work while measured (load average $(cut -d' ' -f1-3 /proc/loadavg) at the end); $(date -u '+%F %H:%M') UTC."
echo "wrote $OUT.md $OUT.svg"
