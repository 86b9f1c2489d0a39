#!/bin/bash
# vector.sh: HotKV's HNSW index (ds/vector) beside hnswlib on Fashion-MNIST (issue 20). Installs
# Debian's dataset-fashion-mnist and python3-hnswlib, then on the same vectors and machine:
# HotKV (benchmarks/vector, `vector run`: exact truth, then FP32/Q8/BIN builds, EF sweep, threads,
# deletion, memory) and hnswlib (benchmarks/vector/hnswlib_bench.py), and writes the table and the
# recall/QPS plot to benchmarks/results/DATE-CPU-vector.{md,svg}.
# Env: N (60000 base vectors) NQ (10000 queries) QUANTS (noquant,q8,bin) OUT (results prefix)
#      REPEAT (3: each QPS is the best of REPEAT runs; 1 and 2 threads alternate)
#      CPUPROFILE (file: CPU profile of HotKV's cosine FP32 searches)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-60000} NQ=${NQ:-10000} QUANTS=${QUANTS:-noquant,q8,bin}
if ! dpkg -s dataset-fashion-mnist python3-hnswlib >/dev/null 2>&1; then
  apt-get install -y dataset-fashion-mnist python3-hnswlib >/dev/null
fi
data=$(dpkg -L dataset-fashion-mnist | grep 'train-images-idx3-ubyte.gz$' | xargs dirname)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/ [0-9]*-Core.*//; s/(R)//g; s/ Processor//' | tr 'A-Z ' 'a-z-' | sed 's/-*$//')
OUT=${OUT:-benchmarks/results/$(date -u +%F)-${cpu:-cpu}-$(nproc)cpu-vector}
work=$(mktemp -d /tmp/hotkv-vector.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/vector" ./benchmarks/vector
prof=()
[ -n "${CPUPROFILE:-}" ] && prof=(-cpuprofile "$CPUPROFILE")
"$work/vector" run -data "$data" -work "$work" -n "$N" -nq "$NQ" -quants "$QUANTS" -repeat "${REPEAT:-3}" "${prof[@]}"
REPEAT=${REPEAT:-3} /usr/bin/python3 benchmarks/vector/hnswlib_bench.py "$work"
"$work/vector" report -work "$work" -out "$OUT" \
  -note "Machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) vCPUs, shared with other work while measured; $(date -u '+%F %H:%M') UTC."
echo "wrote $OUT.md $OUT.svg"
