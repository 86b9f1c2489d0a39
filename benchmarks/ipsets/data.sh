#!/usr/bin/env bash
# Writes the data of the IP-set benchmarks, loader measurements and oracle tests into
# benchmarks/ipsets/data/ (git-ignored: libloc's database is CC BY-SA 4.0, Tor's geoip is derived from
# it). Installs the Debian packages it needs when missing (as root, through apt-get).
#
#   bash benchmarks/ipsets/data.sh            # ~10 s, 310 MB; HOSTS=1000000 SEED=1 QUERIES=200000 DATA=<folder> by default
#   ONLY=oracles bash benchmarks/ipsets/data.sh   # what testfuzz's oracle test reads (CI): drop, libloc, us4, their queries
#
# Files (one entry a line unless said otherwise):
#   drop.txt            location list-networks-by-flags --drop (CIDRs)
#   libloc.txt          every network of `location dump`, "prefix CC" ("--" without a country)
#   libloc4.txt, libloc6.txt   the same split by family; us4.txt: the US IPv4 networks
#   libloc4-zadd.resp   ZADD libloc4 <last address> "<prefix CC>" for Redis
#   tor4.txt, tor6.txt  Tor's geoip and geoip6 ranges as "lo-hi CC"
#   tor4-zadd.resp      ZADD geo <hi> "lo,hi,CC" for Redis; tor4-queries.txt / tor4-ints.txt the same
#                       200k queries (half inside a range) dotted and as integers
#   hosts.txt           HOSTS distinct seeded IPv4 hosts; hosts-queries.txt (half hits)
#   hosts-sadd.resp, hosts-ipset.resp   SADD hosts <ip> / IPSET.ADD hosts <ip> for redis-cli --pipe
#   drop-queries.txt, us4-queries.txt   half inside a network, plus every network's bounds and neighbours
#   counts.txt          the line counts of all of the above
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${DATA:-$here/data}
HOSTS=${HOSTS:-1000000}
SEED=${SEED:-1}
QUERIES=${QUERIES:-200000}

need=()
command -v location >/dev/null || need+=(location)
[ -f /usr/share/libloc-location/location.db ] || need+=(libloc-database)
[ -f /usr/share/tor/geoip ] || need+=(tor-geoipdb)
command -v grepcidr >/dev/null || need+=(grepcidr)
command -v iprange >/dev/null || need+=(iprange)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y "${need[@]}" >/dev/null || { apt-get update >/dev/null && apt-get install -y "${need[@]}" >/dev/null; }
  else
    sudo apt-get install -y "${need[@]}" >/dev/null
  fi
fi

mkdir -p "$out"
cd "$out"
location list-networks-by-flags --drop >drop.txt
# `location dump` prints blocks of "key: value" lines separated by blank lines; a network's block
# starts with "net:" and may hold "country:".
location dump 2>/dev/null | awk '
  function flush() { if (net != "") print net, (cc == "" ? "--" : cc); net = ""; cc = "" }
  /^net:/ { flush(); net = $2; next }
  /^country:/ { if (net != "") cc = $2; next }
  /^$/ { flush() }
  END { flush() }' >libloc.txt
grep -v ':' libloc.txt >libloc4.txt || true
grep ':' libloc.txt >libloc6.txt || true
awk '$2 == "US" { print $1 }' libloc4.txt >us4.txt

gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
(cd "$root" && go build -o "$gen/gen" ./benchmarks/ipsets/gen)
if [ "${ONLY:-}" = oracles ]; then
  "$gen/gen" -nets drop.txt -name drop -queries "$QUERIES" -seed "$SEED" -out .
  "$gen/gen" -nets us4.txt -name us4 -queries "$QUERIES" -seed "$SEED" -out .
  wc -l drop.txt libloc.txt us4.txt drop-queries.txt us4-queries.txt
  exit 0
fi
"$gen/gen" -zadd libloc4.txt -name libloc4 -out .
"$gen/gen" -ranges /usr/share/tor/geoip -queries "$QUERIES" -seed "$SEED" -out .
grep -v '^#' /usr/share/tor/geoip6 | awk -F, 'NF == 3 { print $1 "-" $2, $3 }' >tor6.txt
"$gen/gen" -hosts "$HOSTS" -queries "$QUERIES" -seed "$SEED" -out .
"$gen/gen" -nets drop.txt -name drop -queries "$QUERIES" -seed "$SEED" -out .
"$gen/gen" -nets us4.txt -name us4 -queries "$QUERIES" -seed "$SEED" -out .
awk '{ printf "*3\r\n$4\r\nSADD\r\n$5\r\nhosts\r\n$%d\r\n%s\r\n", length($1), $1 }' hosts.txt >hosts-sadd.resp
awk '{ printf "*3\r\n$9\r\nIPSET.ADD\r\n$5\r\nhosts\r\n$%d\r\n%s\r\n", length($1), $1 }' hosts.txt >hosts-ipset.resp
wc -l drop.txt libloc.txt libloc4.txt libloc6.txt us4.txt tor4.txt tor6.txt hosts.txt hosts-queries.txt \
  tor4-queries.txt drop-queries.txt us4-queries.txt | tee counts.txt
