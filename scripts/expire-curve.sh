#!/usr/bin/env bash
# expire-curve.sh: how fast active expiry reclaims keys nobody reads again, MyRedis
# against a real redis-server in the same run. Needs go, redis-server, redis-cli.
#
# Loads N keys with SET k v PX TTL_MS into each server (redis-cli --pipe), then prints
# DBSIZE (keys still held, expired or not) after each of TIMES seconds, side by side.
#
# Settings: N=100000  TTL_MS=500  TIMES="1 2 5"  PORT_MY=7150 PORT_REDIS=7151
#           MYREDIS_ARGS="--hz 10"  EFFORT=1 (active-expire-effort, both servers)
#           MYREDIS_BIN=...  use this binary instead of building ./cmd/myredis
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
TTL_MS=${TTL_MS:-500}
TIMES=${TIMES:-"1 2 5"}
PORT_MY=${PORT_MY:-7150}
PORT_REDIS=${PORT_REDIS:-7151}
EFFORT=${EFFORT:-1}
BIN=$(mktemp -d)
trap 'kill $MY_PID $REDIS_PID 2>/dev/null || true; rm -rf "$BIN"' EXIT

MYREDIS_BIN=${MYREDIS_BIN:-}
if [ -z "$MYREDIS_BIN" ]; then
  go build -o "$BIN/myredis" ./cmd/myredis
  MYREDIS_BIN=$BIN/myredis
fi
effort_flag=()
if [ "$EFFORT" != 1 ]; then effort_flag=(--active-expire-effort "$EFFORT"); fi
"$MYREDIS_BIN" --port "$PORT_MY" "${effort_flag[@]}" ${MYREDIS_ARGS:-} >/dev/null 2>&1 &
MY_PID=$!
redis-server --port "$PORT_REDIS" --save '' --appendonly no --active-expire-effort "$EFFORT" >/dev/null 2>&1 &
REDIS_PID=$!
for p in "$PORT_MY" "$PORT_REDIS"; do
  until redis-cli -p "$p" PING >/dev/null 2>&1; do sleep 0.05; done
done

load() { # port
  awk -v n="$N" -v ttl="$TTL_MS" 'BEGIN { for (i = 0; i < n; i++) printf "*5\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n$2\r\nPX\r\n$%d\r\n%d\r\n", length("k" i), i, length(ttl ""), ttl }' |
    redis-cli -p "$1" --pipe >/dev/null
}

curve() { # port -> "t=1:keys t=2:keys ..."
  local out=""
  load "$1"
  local t0
  t0=$(date +%s.%N)
  for t in $TIMES; do
    sleep "$(echo "$t0 + $t - $(date +%s.%N)" | bc)"
    out+="$(redis-cli -p "$1" DBSIZE) "
  done
  echo "$out"
}

# one after the other, so the two servers do not share the CPU while they expire
my=($(curve "$PORT_MY"))
redis=($(curve "$PORT_REDIS"))
printf "%-8s %10s %10s %8s\n" "after" "MyRedis" "Redis" "ratio"
i=0
for t in $TIMES; do
  ratio=$(awk -v a="${my[$i]}" -v b="${redis[$i]}" 'BEGIN { if (b == 0) print (a == 0 ? "1.00" : "inf"); else printf "%.2f", a / b }')
  printf "%-8s %10s %10s %8s\n" "${t}s" "${my[$i]}" "${redis[$i]}" "$ratio"
  i=$((i + 1))
done
echo "(keys left of $N SET k v PX $TTL_MS; ratio = MyRedis / Redis)"
