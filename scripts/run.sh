#!/usr/bin/env bash
# The whole waiting room on this machine: a store (MyRedis by default), three
# queue instances on 8081-8083 serving the queue "demo" (slot 100), and the
# demo target on 9000 with a simulated crowd so the line moves. Ctrl-C stops
# everything. `make run` builds first and then runs this.
#
#   STORE=redis scripts/run.sh     use a real redis-server instead of MyRedis
#   STORE=sentinel scripts/run.sh  the store replicated: a MyRedis master and two
#                                  replicas (REDIS_PORT, +1, +2) watched by three
#                                  redis-sentinel (26379-26381); the queue finds the
#                                  master through them and WAITs for one replica
#   CROWD=0 scripts/run.sh         no simulated visitors
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
STORE=${STORE:-myredis}
REDIS_PORT=${REDIS_PORT:-6379}
SENTINEL_PORT=${SENTINEL_PORT:-26379}
QUEUE_PORTS=(${QUEUE_PORTS:-8081 8082 8083})
TARGET_PORT=${TARGET_PORT:-9000}
SLOT=${SLOT:-100}
CROWD=${CROWD:-150}
ADMIN_TOKEN=${ADMIN_TOKEN:-dev-admin-token-dev-admin-token-dev}
QUEUE=demo

pids=()
stop() {
  local rc=$?
  trap - INT TERM EXIT
  echo
  echo "stopping..."
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped"
  exit "$rc"
}
trap stop INT TERM EXIT

# wait_port waits until something listens on 127.0.0.1:$1, giving up early
# if process $2 (when given) has exited.
wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

store_args=(--redis-url "redis://127.0.0.1:$REDIS_PORT/0")
case $STORE in
  myredis) "$BIN/myredis" --port "$REDIS_PORT" & ;;
  redis) redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --logfile '' & ;;
  sentinel)
    command -v redis-sentinel >/dev/null || { echo "STORE=sentinel needs redis-sentinel (apt-get install redis-sentinel)" >&2; exit 2; }
    ha=$(mktemp -d)
    sentinel_addrs=()
    for i in 0 1 2; do # the master, then two replicas; each has a config file for CONFIG REWRITE
      port=$((REDIS_PORT + i))
      mkdir -p "$ha/$port"
      { echo "port $port"; echo "dir $ha/$port"; echo "repl-diskless-sync-delay 0"
        [ "$i" -gt 0 ] && echo "replicaof 127.0.0.1 $REDIS_PORT"; } > "$ha/$port/myredis.conf"
      "$BIN/myredis" "$ha/$port/myredis.conf" &
      pids+=($!)
      wait_port "$port"
    done
    for i in 0 1 2; do
      port=$((SENTINEL_PORT + i))
      printf 'port %s\ndir %s\nsentinel monitor mymaster 127.0.0.1 %s 2\nsentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 10000\n' \
        "$port" "$ha" "$REDIS_PORT" > "$ha/sentinel-$port.conf"
      redis-sentinel "$ha/sentinel-$port.conf" --logfile "$ha/sentinel-$port.log" &
      pids+=($!)
      wait_port "$port"
      sentinel_addrs+=("127.0.0.1:$port")
    done
    store_args=(--redis-url "redis://127.0.0.1:$REDIS_PORT/0" --redis-sentinel mymaster
      --sentinel-addrs "$(IFS=,; echo "${sentinel_addrs[*]}")" --wait-replicas 1 --wait-timeout 100ms)
    echo "store: MyRedis master on $REDIS_PORT, replicas on $((REDIS_PORT + 1)) and $((REDIS_PORT + 2)), Sentinels on $SENTINEL_PORT-$((SENTINEL_PORT + 2)) (files in $ha)"
    ;;
  *) echo "STORE must be myredis, redis or sentinel" >&2; exit 2 ;;
esac
[ "$STORE" = sentinel ] || { pids+=($!); wait_port "$REDIS_PORT"; }

urls=()
queue_pids=()
for port in "${QUEUE_PORTS[@]}"; do
  # The simulated crowd runs on this machine too: each of its visits names its own
  # address in X-Forwarded-For (TEST-NET-3, never contacted), believed because
  # 127.0.0.1 is a trusted proxy here, so the crowd does not spend the per-IP join
  # budget of the person trying the page from this machine.
  "$BIN/queue" --dev --listen "127.0.0.1:$port" "${store_args[@]}" \
    --queue "$QUEUE" --slot "$SLOT" --admin-token "$ADMIN_TOKEN" \
    --target-url "http://127.0.0.1:$TARGET_PORT/checkout" --trusted-proxies 127.0.0.1/32 &
  pids+=($!)
  queue_pids+=($!)
  urls+=("http://127.0.0.1:$port")
done
for i in "${!QUEUE_PORTS[@]}"; do
  if ! wait_port "${QUEUE_PORTS[$i]}" "${queue_pids[$i]}"; then
    echo "a queue instance did not start (see its log above)." >&2
    [ "$STORE" = myredis ] && echo "If MyRedis lacks a command the queue needs, try: STORE=redis make run" >&2
    exit 1
  fi
done

queue_urls=$(IFS=,; echo "${urls[*]}")
"$BIN/demotarget" --listen "127.0.0.1:$TARGET_PORT" --queue-url "$queue_urls" --queue "$QUEUE" --crowd "$CROWD" --crowd-forwarded-for &
pids+=($!)
wait_port "$TARGET_PORT"

cat <<MSG

  The waiting room is up ($STORE on 127.0.0.1:$REDIS_PORT, slot $SLOT, $CROWD simulated visitors).

  Waiting room    ${urls[0]}/q/$QUEUE   (also ${urls[1]:-}/q/$QUEUE, ${urls[2]:-}/q/$QUEUE)
  Queue stats     ${urls[0]}/v1/queues/$QUEUE
  Metrics         ${urls[0]}/metrics
  Demo target     http://127.0.0.1:$TARGET_PORT/

  Change the slot on every instance:
    curl -X PUT -H 'Authorization: Bearer $ADMIN_TOKEN' -d '{"slot":20}' ${urls[0]}/v1/queues/$QUEUE

  Ctrl-C stops everything.

MSG

# Stop everything as soon as any process exits on its own.
wait -n || true
echo "a process exited; stopping the rest" >&2
