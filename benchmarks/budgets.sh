#!/bin/bash
# budgets.sh: BUDGET.TAKE pipelined against a Redis Lua equivalent (issue 22, item 4). Both
# servers pinned to CPU 0, hotkv-benchmark to CPU 1 (1 thread, 50 connections, --pipeline 30,
# 1,000 budgets): ops/s and server CPU-seconds per 1M calls (from /proc before and after), for
#   one key:   BUDGET.TAKE 1 b:__key__             vs EVALSHA <bucket> 1 b:__key__ 1
#   a chain:   BUDGET.TAKE 1 tenant b:__key__      vs EVALSHA <bucket> 2 tenant b:__key__ 1
# The Lua script is a plain token bucket in a hash (avail, at, limit, period, cap; Lua doubles,
# redis.call('TIME')), checking every key before it writes any (all or nothing), as TAKE does.
# Budgets are large enough never to deny. Results: benchmarks/results/2026-12-02-budgets.md.
# Env: RUNS (1) DURATION (5s) RPORT (27310) HPORT (27311)
RUNS=${RUNS:-1} DURATION=${DURATION:-5s} RPORT=${RPORT:-27310} HPORT=${HPORT:-27311}
. "$(dirname "$0")/lib.sh"
lua='
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1e6 + tonumber(t[2])
local n = tonumber(ARGV[1])
local av = {}
local least = -1
for i, k in ipairs(KEYS) do
  local s = redis.call("HMGET", k, "avail", "at", "limit", "period", "cap")
  if not s[1] then return redis.error_reply("ERR no such budget key") end
  local a = math.min(tonumber(s[5]), tonumber(s[1]) + (now - tonumber(s[2])) * tonumber(s[3]) / tonumber(s[4]))
  if a < n then return {0, math.floor(a), 0} end
  av[i] = a - n
  if least < 0 or av[i] < least then least = av[i] end
end
for i, k in ipairs(KEYS) do redis.call("HSET", k, "avail", av[i], "at", now) end
return {1, math.floor(least), -1}'
take() { # port pid command -> "ops cpu-s-per-1M"
  local before after out
  before=$(cpu "$2")
  out=$(bench --port "$1" --clients 50 --keys 1000 --duration "$DURATION" --pipeline 30 \
    --command "$3" --expect 'array:3')
  after=$(cpu "$2")
  echo "$out" | awk -v c=$((after - before)) -v t="$tck" \
    '$1 == "EVALSHA" || $1 == "BUDGET.TAKE" { printf "%d %.2f\n", $(NF-5), (c / t) / ($(NF-6) / 1e6); exit }'
}
start_redis
start_hotkv
sha=$(redis-cli -p "$RPORT" script load "$lua")
big=1000000000000000
{
  echo "HSET tenant avail $big at 0 limit $big period 1000000 cap $big"
  for i in $(seq 0 999); do echo "HSET b:$i avail $big at 0 limit $big period 1000000 cap $big"; done
} | redis-cli -p "$RPORT" >/dev/null
{
  echo "BUDGET.SET tenant LIMIT $big PER 1s"
  for i in $(seq 0 999); do echo "BUDGET.SET b:$i LIMIT $big PER 1s"; done
} | redis-cli -p "$HPORT" >/dev/null
printf '%-5s %-6s %12s %12s %10s %10s %10s\n' run keys "Redis ops/s" "HotKV ops/s" "ops ratio" "Redis CPU" "HotKV CPU"
for run in $(seq "$RUNS"); do
  for chain in 1 2; do
    if [ "$chain" = 1 ]; then
      rc="EVALSHA $sha 1 b:__key__ 1"; hc="BUDGET.TAKE 1 b:__key__"
    else
      rc="EVALSHA $sha 2 tenant b:__key__ 1"; hc="BUDGET.TAKE 1 tenant b:__key__"
    fi
    read -r rops rcpu < <(take "$RPORT" "$rpid" "$rc")
    read -r hops hcpu < <(take "$HPORT" "$hpid" "$hc")
    awk -v r="$run" -v k="$chain" -v ro="$rops" -v ho="$hops" -v rc="$rcpu" -v hc="$hcpu" \
      'BEGIN { printf "%-5s %-6s %12d %12d %10.2f %10.2f %10.2f\n", r, k, ro, ho, ho / ro, rc, hc }'
  done
done
