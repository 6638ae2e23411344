#!/usr/bin/env bash
# compat-tcl.sh: Redis 7.0.15's own test suite against MyRedis, unit by unit.
# Needs: go, tclsh (Debian: tcl), redis-cli, and the suite (REDIS_TESTS).
#
# For each unit it starts a fresh MyRedis on a free loopback port (a failed test can leave
# a server unusable: a script left looping, a client blocked), runs the unit through the
# suite's run-units.sh (external-server mode, the flags in its README), stops the server,
# and prints a table: unit, tests passed, tests failed, Redis 7.0.15's passes with the same
# flags (REFERENCE.md), the committed minimum (the ratchet) and the seconds the unit took.
#
# Settings (environment):
#   REDIS_TESTS=dir        the suite (default: ../shared/redis-tests from the repository root);
#                          absent: the script says so and exits 0 (nothing to measure)
#   UNITS="type/zset ..."  units to run (default: every unit of the ratchet file)
#   RATCHET=1              fail (exit 1) when a unit passes fewer tests than the ratchet file
#                          says (a missing suite or tclsh still only skips, with a message)
#   RATCHET_FILE=file      default: scripts/compat-tcl-ratchet.txt ("unit passes" per line)
#   UNIT_TIMEOUT=300       seconds per unit; a unit that takes longer is stopped (runtest and
#                          the server killed) and counted with what passed until then
#   MYREDIS_BIN=path       use this binary instead of building ./cmd/myredis
#   MYREDIS_ARGS="..."     extra MyRedis flags
#   TCL_LOGS=dir           keep each unit's log (runtest output) and server log there
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
suite=${REDIS_TESTS:-$root/../shared/redis-tests}
ratchet_file=${RATCHET_FILE:-$root/scripts/compat-tcl-ratchet.txt}
unit_timeout=${UNIT_TIMEOUT:-300}
ratchet=${RATCHET:-0}

log() { printf '%s\n' "$*" >&2; }

missing() {
	log "compat-tcl: SKIPPED, nothing measured: $1"
	exit 0
}

[[ -x $suite/run-units.sh ]] || missing "Redis's test suite not found at $suite (set REDIS_TESTS)"
command -v tclsh >/dev/null || missing "tclsh not found (apt-get install tcl)"
command -v redis-cli >/dev/null || missing "redis-cli not found (apt-get install redis-tools)"
suite=$(cd "$suite" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compat-tcl.XXXXXX")
logs=${TCL_LOGS:-$tmp/logs}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
server_pid=
cleanup() {
	stop_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z ${MYREDIS_BIN:-} ]]; then
	(cd "$root" && go build -o "$tmp/myredis" ./cmd/myredis) || exit 1
	MYREDIS_BIN=$tmp/myredis
fi

# units: UNITS, or the first column of the ratchet file
if [[ -n ${UNITS:-} ]]; then
	read -r -a units <<<"$UNITS"
else
	mapfile -t units < <(awk '!/^#/ && NF { print $1 }' "$ratchet_file")
fi

ratchet_min() { awk -v u="$1" '$1 == u { print $2 }' "$ratchet_file" | head -1; }
reference() { awk -v u="$1" '$1 == "|" && $2 == u { print $4 }' "$suite/REFERENCE.md" | head -1; }

# free_port: a port below the kernel's ephemeral range that no socket uses.
free_port() {
	local p low
	low=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range)
	while :; do
		p=$((10000 + RANDOM % (low - 10000)))
		if ! ss -Hatn "( sport = :$p or dport = :$p )" | grep -q .; then
			echo "$p"
			return
		fi
	done
}

# start_server UNIT: a fresh MyRedis in its own directory; sets port and server_pid.
start_server() {
	local dir=$tmp/run-${1//\//_} i
	mkdir -p "$dir"
	port=$(free_port)
	# shellcheck disable=SC2086 # MYREDIS_ARGS is a word list
	(cd "$dir" && exec "$MYREDIS_BIN" --port "$port" --dir "$dir" ${MYREDIS_ARGS:-}) \
		>"$logs/${1//\//_}.server.log" 2>&1 &
	server_pid=$!
	for i in $(seq 100); do
		kill -0 "$server_pid" 2>/dev/null || return 1
		[[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && return 0
		sleep 0.1
	done
	return 1
}

stop_server() {
	[[ -n $server_pid ]] || return 0
	kill "$server_pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=
}

rows=()
failed_units=()
total_ok=0 total_err=0 total_ref=0
start_all=$SECONDS
for u in "${units[@]}"; do
	start=$SECONDS
	note=
	if ! start_server "$u"; then
		note="server did not start"
		ok=0 err=0
	else
		# run-units.sh runs the unit under timeout(1); the unit's test client may
		# outlive a killed runtest, blocked on the server: stopping the server frees it.
		out=$(TCL_LOGS=$logs TCL_UNIT_TIMEOUT=$unit_timeout "$suite/run-units.sh" 127.0.0.1 "$port" "$u" 2>&1)
		# runtest's own listening port (21079 and up) can be taken by another run of the
		# suite on the machine between its check and its bind: try again, once
		if grep -q "couldn't open socket: address already in use" "$logs/${u//\//_}.log" 2>/dev/null; then
			sleep 2
			out=$(TCL_LOGS=$logs TCL_UNIT_TIMEOUT=$unit_timeout "$suite/run-units.sh" 127.0.0.1 "$port" "$u" 2>&1)
		fi
		line=$(grep -E "^$u ok=" <<<"$out" | tail -1)
		ok=$(sed -E 's/.* ok=([0-9]+).*/\1/' <<<"$line")
		err=$(sed -E 's/.* err=([0-9]+).*/\1/' <<<"$line")
		[[ -n $ok ]] || ok=0 err=0 note="no result"
		if ! kill -0 "$server_pid" 2>/dev/null; then
			note="server died"
		elif ((SECONDS - start >= unit_timeout)); then
			note="timeout ${unit_timeout}s"
		elif ! grep -q 'All tests passed\|following tests failed' "$logs/${u//\//_}.log" 2>/dev/null; then
			note="${note:-unit stopped early}"
		fi
		stop_server
	fi
	ref=$(reference "$u")
	min=$(ratchet_min "$u")
	if [[ -n $min ]] && ((ok < min)); then
		note="${note:+$note; }below ratchet"
		failed_units+=("$u")
	fi
	rows+=("$(printf '%-18s %7s %7s %10s %8s %6s  %s' "$u" "$ok" "$err" "${ref:--}" "${min:--}" $((SECONDS - start)) "$note")")
	total_ok=$((total_ok + ok)) total_err=$((total_err + err)) total_ref=$((total_ref + ${ref:-0}))
	log "compat-tcl: $u ok=$ok err=$err ref=${ref:--} ${note}"
done

printf '%-18s %7s %7s %10s %8s %6s  %s\n' unit passed failed "Redis 7.0" ratchet secs note
for r in "${rows[@]}"; do printf '%s\n' "$r"; done
printf '%-18s %7s %7s %10s %8s %6s\n' total "$total_ok" "$total_err" "$total_ref" "" $((SECONDS - start_all))
echo "logs: $logs$([[ -z ${TCL_LOGS:-} ]] && echo ' (removed on exit; set TCL_LOGS to keep them)')"

if [[ $ratchet == 1 && ${#failed_units[@]} -gt 0 ]]; then
	log "compat-tcl: FAIL: below the committed count ($ratchet_file): ${failed_units[*]}"
	exit 1
fi
exit 0
