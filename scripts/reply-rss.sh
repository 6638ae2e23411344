#!/usr/bin/env bash
# reply-rss.sh: memory held by idle clients after a big reply, MyRedis against a
# real redis-server in the same run. Needs go, redis-server, redis-cli, bash.
#
# Stores one SIZE_MB value, then CLIENTS connections each GET it and stay
# connected, idle. Prints each server's RSS (VmRSS) after the SET, and with the
# idle clients connected after their GETs.
#
# Settings: SIZE_MB=50 CLIENTS=8 PORT_MY=7152 PORT_REDIS=7153 MYREDIS_BIN=...
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-50}
CLIENTS=${CLIENTS:-8}
PORT_MY=${PORT_MY:-7152}
PORT_REDIS=${PORT_REDIS:-7153}
BIN=$(mktemp -d)
trap 'kill $MY_PID $REDIS_PID 2>/dev/null || true; rm -rf "$BIN"' EXIT
MYREDIS_BIN=${MYREDIS_BIN:-}
if [ -z "$MYREDIS_BIN" ]; then
  go build -o "$BIN/myredis" ./cmd/myredis
  MYREDIS_BIN=$BIN/myredis
fi
"$MYREDIS_BIN" --port "$PORT_MY" >/dev/null 2>&1 &
MY_PID=$!
redis-server --port "$PORT_REDIS" --save '' --appendonly no >/dev/null 2>&1 &
REDIS_PID=$!
for p in "$PORT_MY" "$PORT_REDIS"; do
  until redis-cli -p "$p" PING >/dev/null 2>&1; do sleep 0.05; done
done

rss_mb() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

measure() { # port pid -> "rss_after_set rss_with_idle_clients"
  head -c $((SIZE_MB << 20)) /dev/zero | tr '\0' x | redis-cli -p "$1" -x SET big >/dev/null
  sleep 1
  local before
  before=$(rss_mb "$2")
  local fds=()
  for i in $(seq 1 "$CLIENTS"); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$1"
    fds+=("$fd")
    printf 'GET big\r\n' >&"$fd"
  done
  for fd in "${fds[@]}"; do
    head -c "$(( (SIZE_MB << 20) + $(printf '$%d\r\n\r\n' $((SIZE_MB << 20)) | wc -c) ))" <&"$fd" >/dev/null
  done
  sleep 2 # idle
  echo "$before $(rss_mb "$2")"
  for fd in "${fds[@]}"; do exec {fd}>&-; done
}

my=($(measure "$PORT_MY" "$MY_PID"))
redis=($(measure "$PORT_REDIS" "$REDIS_PID"))
printf "%-34s %10s %10s\n" "RSS (MB)" "MyRedis" "Redis"
printf "%-34s %10s %10s\n" "after SET of ${SIZE_MB} MB" "${my[0]}" "${redis[0]}"
printf "%-34s %10s %10s\n" "$CLIENTS idle clients after GET" "${my[1]}" "${redis[1]}"
