#!/usr/bin/env bash
# compare-redis.sh: MyRedis against a real redis-server, side by side, in the same run.
# Needs: go, redis-server, redis-benchmark, redis-cli (apt-get install redis-server redis-tools).
#
# Both servers run at once on free loopback ports; every measurement is taken against one
# and then the other, the order alternating between repetitions, and the table shows the
# median requests/s of each and the ratio MyRedis/Redis (1.00 = as fast as Redis). The
# benchmark client shares the machine's cores with the server it measures, for both.
#
# Besides requests/s the table shows each server's CPU time per request (user + system,
# from /proc/PID/stat), which other load on the machine disturbs much less.
#
# Sections (each a function below; skipped with a note when MyRedis lacks the commands):
#   core    PING, SET, GET, INCR                      (redis-benchmark -t)
#   zset    ZADD ZSCORE ZRANK ZRANGE ZREMRANGEBYSCORE ZPOPMIN on a preloaded set,
#           plus memory per member of the preloaded set
#   sets    SADD, SPOP (redis-benchmark -t, -r 1000000), plus memory per member of a
#           set of SET_SIZE members
#   script  EVALSHA of ZCARD + ZPOPMIN + ZADD
#   multi   MULTI / INCR / EXEC                       (scripts/respload)
#   lists   LPUSH RPUSH LPOP RPOP LRANGE_100 LRANGE_600   (redis-benchmark's tests), plus
#           memory per element of a list of LIST_SIZE elements
#   aof     SET and ZADD with appendonly yes, appendfsync everysec and always
#
# Settings (environment):
#   N=200000          requests per test          REPS=3        repetitions (medians)
#   N_PIPE=$N         requests per test when -P > 1 (longer runs are steadier)
#   CLIENTS=50        connections                PIPELINES="1 16"  -P values
#   SECTIONS="core zset sets lists script multi aof"   ZSET_SIZE=1000000 preloaded members
#   SET_SIZE=1000000  members of the set whose memory is measured
#   AOF_N=$N          requests per AOF test      AOF_POLICIES="everysec always"
#   MYREDIS_BIN=...   use this binary instead of building ./cmd/myredis
#   LIST_SIZE=1000000 elements of the list whose memory is measured
#   MYREDIS_ENV="GOMAXPROCS=1"   environment for MyRedis only
#   MYREDIS_ARGS="..."           extra MyRedis flags
#   PROFILE=dir       write MyRedis CPU profiles (MYREDIS_CPUPROFILE) into dir
#   RESULTS=file      also keep the raw measurements (section test P server rep rps)
#   REDIS_SERVER=...  the reference server (default redis-server); another MyRedis build
#                     works too, for an A/B of two MyRedis variants; RD_LABEL names it
#
# Quick run:  N=20000 REPS=1 SECTIONS=core scripts/compare-redis.sh
set -euo pipefail

N=${N:-200000}
REPS=${REPS:-3}
CLIENTS=${CLIENTS:-50}
PIPELINES=${PIPELINES:-"1 16"}
SECTIONS=${SECTIONS:-"core zset sets lists script multi aof"}
ZSET_SIZE=${ZSET_SIZE:-1000000}
SET_SIZE=${SET_SIZE:-1000000}
AOF_N=${AOF_N:-$N}
AOF_POLICIES=${AOF_POLICIES:-"everysec always"}
MYREDIS_ENV=${MYREDIS_ENV:-}
LIST_SIZE=${LIST_SIZE:-1000000}
MYREDIS_ARGS=${MYREDIS_ARGS:-}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
MY_LABEL=${MY_LABEL:-MyRedis}
RD_LABEL=${RD_LABEL:-Redis}

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-redis.XXXXXX")
results=$tmp/results
: >"$results"
pids=()

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	done
	if [[ -n ${RESULTS:-} ]]; then cp "$results" "$RESULTS"; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

for tool in "$REDIS_SERVER" redis-benchmark redis-cli; do
	command -v "$tool" >/dev/null || { log "compare-redis: $tool not found (apt-get install redis-server redis-tools)"; exit 1; }
done

if [[ -z ${MYREDIS_BIN:-} ]]; then
	(cd "$root" && go build -o "$tmp/myredis" ./cmd/myredis)
	MYREDIS_BIN=$tmp/myredis
fi
(cd "$root" && go build -o "$tmp/respload" ./scripts/respload)

# ---------------------------------------------------------------- servers

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

wait_ready() { # port pid
	local i
	for i in $(seq 100); do
		kill -0 "$2" 2>/dev/null || return 1
		[[ $(redis-cli -p "$1" ping 2>/dev/null) == PONG ]] && return 0
		sleep 0.1
	done
	return 1
}

profile_seq=0

# start_pair [myredis flags...] -- [redis-server flags...]
# sets MY_PORT MY_PID RD_PORT RD_PID; each server runs in its own directory.
start_pair() {
	local my=() rd=()
	while (($#)) && [[ $1 != -- ]]; do my+=("$1"); shift; done
	(($#)) && shift
	rd=("$@")
	local dir=$tmp/run$((++profile_seq))
	mkdir -p "$dir/myredis" "$dir/redis"
	local penv=()
	if [[ -n ${PROFILE:-} ]]; then
		mkdir -p "$PROFILE"
		penv=("MYREDIS_CPUPROFILE=$(cd "$PROFILE" && pwd)/myredis-$profile_seq.pprof")
	fi

	MY_PORT=$(free_port)
	# shellcheck disable=SC2086 # MYREDIS_ENV and MYREDIS_ARGS are word lists
	(cd "$dir/myredis" && exec env $MYREDIS_ENV "${penv[@]}" "$MYREDIS_BIN" --port "$MY_PORT" \
		--dir "$dir/myredis" "${my[@]}" $MYREDIS_ARGS) >"$dir/myredis.log" 2>&1 &
	MY_PID=$!
	pids+=("$MY_PID")
	wait_ready "$MY_PORT" "$MY_PID" || { log "myredis did not start:"; cat "$dir/myredis.log" >&2; return 1; }

	RD_PORT=$(free_port)
	"$REDIS_SERVER" --port "$RD_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$dir/redis" "${rd[@]}" >"$dir/redis.log" 2>&1 &
	RD_PID=$!
	pids+=("$RD_PID")
	wait_ready "$RD_PORT" "$RD_PID" || { log "redis-server did not start:"; cat "$dir/redis.log" >&2; return 1; }
}

stop_pair() {
	local pid
	for pid in "$MY_PID" "$RD_PID"; do
		redis-cli -p "$([[ $pid == "$MY_PID" ]] && echo "$MY_PORT" || echo "$RD_PORT")" shutdown nosave >/dev/null 2>&1 || true
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	local keep=()
	for pid in "${pids[@]}"; do
		[[ $pid == "$MY_PID" || $pid == "$RD_PID" ]] || keep+=("$pid")
	done
	pids=("${keep[@]}")
}

# supports PORT CMD ARGS...: false when the server answers "unknown command".
supports() {
	local port=$1
	shift
	! redis-cli -p "$port" "$@" 2>&1 | grep -qi 'unknown command'
}

# servers_in_order REP: "my rd" on odd repetitions, "rd my" on even ones.
servers_in_order() { if (($1 % 2)); then echo "my rd"; else echo "rd my"; fi; }
port_of() { if [[ $1 == my ]]; then echo "$MY_PORT"; else echo "$RD_PORT"; fi; }

# ---------------------------------------------------------------- measuring

# cpu_ticks PID: user + system clock ticks the process has used so far.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
pid_of() { if [[ $1 == my ]]; then echo "$MY_PID"; else echo "$RD_PID"; fi; }
hz=$(getconf CLK_TCK)

# measure SECTION SERVER REP P N LABEL CMD...: runs CMD (a client printing "test,rps"
# CSV after a header line, as redis-benchmark --csv does) against SERVER and records
# requests/s and the server's CPU time per request. LABEL names the row ("-": the
# client's own test name).
measure() {
	local section=$1 server=$2 rep=$3 p=$4 n=$5 label=$6
	shift 6
	local out err=$tmp/client.err t0 t1 pid
	pid=$(pid_of "$server")
	t0=$(cpu_ticks "$pid")
	out=$("$@" 2>"$err")
	t1=$(cpu_ticks "$pid")
	if grep -qiE 'error|warn' "$err"; then
		log "$1 ($server, $section): $(head -3 "$err")"
	fi
	tr -d '"' <<<"$out" | awk -F, -v OFS='\t' -v section="$section" -v server="$server" \
		-v rep="$rep" -v p="$p" -v n="$n" -v label="$label" -v ticks=$((t1 - t0)) -v hz="$hz" '
		NR > 1 && $2 != "" {
			print section, (label == "-" ? $1 : label), p, server, rep, $2, sprintf("%.2f", ticks * 1e6 / hz / n)
		}' >>"$results"
}

# n_for P: requests per test at pipeline P.
n_for() { if (($1 > 1)); then echo "${N_PIPE:-$N}"; else echo "$N"; fi; }

# bench SECTION SERVER REP P LABEL [-n N] [redis-benchmark args...]
bench() {
	local section=$1 server=$2 rep=$3 p=$4 label=$5 n
	shift 5
	n=$(n_for "$p")
	if [[ ${1:-} == -n ]]; then n=$2; shift 2; fi
	measure "$section" "$server" "$rep" "$p" "$n" "$label" \
		redis-benchmark -p "$(port_of "$server")" -c "$CLIENTS" -n "$n" -P "$p" --csv "$@"
}

# respload_bench SECTION SERVER REP P LABEL COMMAND...
respload_bench() {
	local section=$1 server=$2 rep=$3 p=$4 label=$5 n
	shift 5
	n=$(n_for "$p")
	measure "$section" "$server" "$rep" "$p" "$n" "$label" \
		"$tmp/respload" -p "$(port_of "$server")" -c "$CLIENTS" -n "$n" -P "$p" "$@"
}

# pair FN SECTION REP P LABEL ARGS...: FN (bench or respload_bench) against both
# servers back to back, MyRedis first on odd repetitions and Redis first on even ones,
# so that the two figures of one ratio are taken as close together as possible.
pair() {
	local fn=$1 section=$2 rep=$3 p=$4 label=$5 server
	shift 5
	for server in $(servers_in_order "$rep"); do
		"$fn" "$section" "$server" "$rep" "$p" "$label" "$@"
	done
}

# ---------------------------------------------------------------- sections

section_core() {
	local rep p test
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			for test in ping_mbulk set get incr; do
				pair bench core "$rep" "$p" - -t "$test"
			done
		done
	done
}

# zset_preload PORT KEY COUNT: COUNT members "mem:<12 digits>" (16 bytes) scored 0..COUNT-1,
# the same names redis-benchmark's -r produces, loaded with redis-cli --pipe.
zset_preload() {
	local file=$tmp/zset-$2-$3.resp
	if [[ ! -f $file ]]; then
		awk -v n="$3" -v key="$2" 'BEGIN {
			for (i = 0; i < n; i += 1000) {
				m = (n - i < 1000) ? n - i : 1000
				printf "*%d\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n", 2 + 2 * m, length(key), key
				for (j = i; j < i + m; j++) {
					s = sprintf("%d", j); mem = sprintf("mem:%012d", j)
					printf "$%d\r\n%s\r\n$%d\r\n%s\r\n", length(s), s, length(mem), mem
				}
			}
		}' >"$file"
	fi
	redis-cli -p "$1" del "$2" >/dev/null
	local out
	out=$(redis-cli -p "$1" --pipe <"$file" 2>&1)
	grep -q 'errors: 0' <<<"$out" || { log "preload of $2 failed: $out"; return 1; }
}

# memory_of SERVER: "used_memory rss_bytes"
memory_of() {
	local port pid used
	port=$(port_of "$1")
	if [[ $1 == my ]]; then pid=$MY_PID; else pid=$RD_PID; fi
	used=$(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')
	echo "$used $(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$pid/status")"
}

section_zset() {
	if ! supports "$MY_PORT" zcard zbench || ! supports "$MY_PORT" zpopmin zbench; then
		log "zset: skipped, MyRedis does not know the sorted-set commands yet"
		return
	fi
	local rep server p before after r=$ZSET_SIZE
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			for server in my rd; do
				redis-cli -p "$(port_of "$server")" flushall >/dev/null
				before=$(memory_of "$server")
				zset_preload "$(port_of "$server")" zbench "$ZSET_SIZE"
				if ((rep == 1)) && [[ $p == "${PIPELINES%% *}" ]]; then
					after=$(memory_of "$server")
					echo "$server $before $after" >>"$tmp/memory"
				fi
			done
			pair bench zset "$rep" "$p" ZADD -r "$r" zadd zbench __rand_int__ mem:__rand_int__
			pair bench zset "$rep" "$p" ZSCORE -r "$r" zscore zbench mem:__rand_int__
			pair bench zset "$rep" "$p" ZRANK -r "$r" zrank zbench mem:__rand_int__
			pair bench zset "$rep" "$p" "ZRANGE 0 9" zrange zbench 0 9
			# reclaim as the waiting room does: everything below a moving bound
			pair bench zset "$rep" "$p" ZREMRANGEBYSCORE -r 1000 zremrangebyscore zbench -inf __rand_int__
			pair bench zset "$rep" "$p" ZPOPMIN zpopmin zbench
		done
	done
}

# set_preload PORT KEY COUNT: COUNT members "element:<12 digits>" (20 bytes), the names
# redis-benchmark's SADD test uses with -r, loaded with redis-cli --pipe.
set_preload() {
	local file=$tmp/set-$2-$3.resp
	if [[ ! -f $file ]]; then
		awk -v n="$3" -v key="$2" 'BEGIN {
			for (i = 0; i < n; i += 1000) {
				m = (n - i < 1000) ? n - i : 1000
				printf "*%d\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n", 2 + m, length(key), key
				for (j = i; j < i + m; j++) {
					mem = sprintf("element:%012d", j)
					printf "$%d\r\n%s\r\n", length(mem), mem
				}
			}
		}' >"$file"
	fi
	redis-cli -p "$1" del "$2" >/dev/null
	local out
	out=$(redis-cli -p "$1" --pipe <"$file" 2>&1)
	grep -q 'errors: 0' <<<"$out" || { log "preload of $2 failed: $out"; return 1; }
}

section_sets() {
	if ! supports "$MY_PORT" scard sbench || ! supports "$MY_PORT" spop sbench; then
		log "sets: skipped, MyRedis does not know the set commands yet"
		return
	fi
	local rep p server before after
	for server in my rd; do
		redis-cli -p "$(port_of "$server")" flushall >/dev/null
		before=$(memory_of "$server")
		set_preload "$(port_of "$server")" sbench "$SET_SIZE"
		after=$(memory_of "$server")
		echo "$server $before $after" >>"$tmp/memory-sets"
		redis-cli -p "$(port_of "$server")" flushall >/dev/null
	done
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			for server in my rd; do redis-cli -p "$(port_of "$server")" del myset >/dev/null; done
			# SADD grows myset with random members; SPOP then pops them (and, once
			# it is empty, answers nil, as it does in redis-benchmark's own run)
			pair bench sets "$rep" "$p" - -r 1000000 -t sadd
			pair bench sets "$rep" "$p" - -r 1000000 -t spop
		done
	done
}

section_script() {
	local body="local n = redis.call('ZCARD', KEYS[1])
local m = redis.call('ZPOPMIN', KEYS[1])
redis.call('ZADD', KEYS[1], m[2], m[1])
return n"
	if ! supports "$MY_PORT" script load "return 1" || ! supports "$MY_PORT" zcard zscript; then
		log "script: skipped, MyRedis does not know SCRIPT/EVALSHA or the sorted-set commands yet"
		return
	fi
	local sha sha2 rep p
	sha=$(redis-cli -p "$MY_PORT" script load "$body")
	sha2=$(redis-cli -p "$RD_PORT" script load "$body")
	[[ $sha == "$sha2" ]] || { log "script: SCRIPT LOAD gave $sha on MyRedis, $sha2 on Redis"; return 1; }
	zset_preload "$MY_PORT" zscript 1000
	zset_preload "$RD_PORT" zscript 1000
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			pair bench script "$rep" "$p" "EVALSHA zcard+zpopmin+zadd" evalsha "$sha" 1 zscript
		done
	done
}

section_multi() {
	if ! supports "$MY_PORT" multi; then
		log "multi: skipped, MyRedis does not know MULTI yet"
		return
	fi
	redis-cli -p "$MY_PORT" discard >/dev/null 2>&1 || true
	local rep p
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			pair respload_bench multi "$rep" "$p" "MULTI/INCR/EXEC" MULTI "INCR counter" EXEC
		done
	done
}

# list_preload PORT KEY COUNT SIZE: RPUSH COUNT elements of SIZE bytes ("mem:" and digits,
# as the sorted set's members; "x"s when SIZE < 8) in batches of 1000, with redis-cli --pipe.
list_preload() {
	local file=$tmp/list-$2-$3-$4.resp
	if [[ ! -f $file ]]; then
		awk -v n="$3" -v key="$2" -v size="$4" 'BEGIN {
			for (i = 0; i < n; i += 1000) {
				m = (n - i < 1000) ? n - i : 1000
				printf "*%d\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n", 2 + m, length(key), key
				for (j = i; j < i + m; j++) {
					if (size < 8) { e = substr("xxxxxxx", 1, size) } else { e = sprintf("mem:%0" (size - 4) "d", j) }
					printf "$%d\r\n%s\r\n", length(e), e
				}
			}
		}' >"$file"
	fi
	redis-cli -p "$1" del "$2" >/dev/null
	local out
	out=$(redis-cli -p "$1" --pipe <"$file" 2>&1)
	grep -q 'errors: 0' <<<"$out" || { log "preload of $2 failed: $out"; return 1; }
}

# section_lists: redis-benchmark's list tests. LPUSH and RPUSH grow "mylist" by N each,
# LPOP and RPOP take them back, so no pop meets an empty list; the LRANGE tests read a
# list of 600 three-byte elements as redis-benchmark's own LRANGE tests do. Memory: a
# list of LIST_SIZE 16-byte elements, used_memory and RSS added by loading it.
section_lists() {
	if ! supports "$MY_PORT" llen lbench || ! supports "$MY_PORT" lrange lbench 0 1; then
		log "lists: skipped, MyRedis does not know the list commands yet"
		return
	fi
	local rep server p before after test
	for server in my rd; do
		redis-cli -p "$(port_of "$server")" flushall >/dev/null
		before=$(memory_of "$server")
		list_preload "$(port_of "$server")" lmem "$LIST_SIZE" 16
		after=$(memory_of "$server")
		echo "$server $before $after" >>"$tmp/list-memory"
		redis-cli -p "$(port_of "$server")" del lmem >/dev/null
	done
	for rep in $(seq "$REPS"); do
		for p in $PIPELINES; do
			for server in my rd; do redis-cli -p "$(port_of "$server")" del mylist >/dev/null; done
			for test in lpush rpush lpop rpop; do
				pair bench lists "$rep" "$p" - -t "$test"
			done
			for server in my rd; do list_preload "$(port_of "$server")" lrange600 600 3; done
			pair bench lists "$rep" "$p" "LRANGE_100 (first 100 elements)" lrange lrange600 0 99
			pair bench lists "$rep" "$p" "LRANGE_600 (first 600 elements)" lrange lrange600 0 599
		done
	done
}

section_aof() {
	local policy rep p
	for policy in $AOF_POLICIES; do
		start_pair --appendonly yes --appendfsync "$policy" -- --appendonly yes --appendfsync "$policy"
		if ! redis-cli -p "$MY_PORT" info persistence | grep -q '^aof_enabled:1'; then
			log "aof: skipped, MyRedis does not report aof_enabled:1 with --appendonly yes"
			stop_pair
			return
		fi
		local zadd=0
		supports "$MY_PORT" zcard zaof && zadd=1
		for rep in $(seq "$REPS"); do
			for p in $PIPELINES; do
				pair bench "aof-$policy" "$rep" "$p" - -n "$AOF_N" -t set
				if ((zadd)); then
					pair bench "aof-$policy" "$rep" "$p" ZADD -n "$AOF_N" -r 1000000 \
						zadd zaof __rand_int__ mem:__rand_int__
				fi
			done
		done
		stop_pair
	done
}

# ---------------------------------------------------------------- report

report() {
	awk -F'\t' -v myl="$MY_LABEL" -v rdl="$RD_LABEL" '
	{
		key = $1 "\t" $2 "\t" $3
		if (!(key in seen)) { seen[key] = 1; order[++rows] = key }
		v[key, $4, ++cnt[key, $4]] = $6
		byrep[key, $4, $5] = $6
		v[key, $4 "cpu", ++cnt[key, $4 "cpu"]] = $7
	}
	function median(key, s,   n, i, j, a, t) {
		n = cnt[key, s]
		for (i = 1; i <= n; i++) a[i] = v[key, s, i]
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		printf "| section | test | -P | %s req/s | %s req/s | ratio of medians | median ratio | ratio in each run | %s CPU µs/req | %s CPU µs/req |\n", myl, rdl, myl, rdl
		printf "|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n"
		for (r = 1; r <= rows; r++) {
			key = order[r]; split(key, f, "\t")
			my = median(key, "my"); rd = median(key, "rd")
			runs = ""; nr = 0
			for (rep = 1; rep <= 1000; rep++)
				if ((key, "my", rep) in byrep && (key, "rd", rep) in byrep && byrep[key, "rd", rep] > 0) {
					ratio = byrep[key, "my", rep] / byrep[key, "rd", rep]
					runs = runs (runs == "" ? "" : " ") sprintf("%.2f", ratio)
					v[key, "ratio", ++nr] = ratio
				}
			cnt[key, "ratio"] = nr
			printf "| %s | %s | %s | %.0f | %.0f | %.2f | **%.2f** | %s | %.2f | %.2f |\n", f[1], f[2], f[3], my, rd,
				(rd > 0 ? my / rd : 0), (nr ? median(key, "ratio") : 0), runs, median(key, "mycpu"), median(key, "rdcpu")
		}
	}' "$results"
	if [[ -f $tmp/list-memory ]]; then
		echo
		echo "List of $LIST_SIZE elements (16 bytes each): memory added by the preload"
		echo
		echo "| server | used_memory bytes/element | RSS bytes/element |"
		echo "|---|---:|---:|"
		awk -v n="$LIST_SIZE" '{
			name = ($1 == "my") ? "MyRedis" : "Redis"
			printf "| %s | %.1f | %.1f |\n", name, ($4 - $2) / n, ($5 - $3) / n }' "$tmp/list-memory"
	fi
	if [[ -f $tmp/memory ]]; then
		echo
		echo "Sorted set of $ZSET_SIZE members (16-byte names): memory added by the preload"
		echo
		echo "| server | used_memory bytes/member | RSS bytes/member |"
		echo "|---|---:|---:|"
		awk -v n="$ZSET_SIZE" '{
			name = ($1 == "my") ? "MyRedis" : "Redis"
			printf "| %s | %.1f | %.1f |\n", name, ($4 - $2) / n, ($5 - $3) / n }' "$tmp/memory"
	fi
	if [[ -f $tmp/memory-sets ]]; then
		echo
		echo "Set of $SET_SIZE members (20-byte names): memory added by the preload"
		echo
		echo "| server | used_memory bytes/member | RSS bytes/member |"
		echo "|---|---:|---:|"
		awk -v n="$SET_SIZE" '{
			name = ($1 == "my") ? "MyRedis" : "Redis"
			printf "| %s | %.1f | %.1f |\n", name, ($4 - $2) / n, ($5 - $3) / n }' "$tmp/memory-sets"
	fi
}

# ---------------------------------------------------------------- main

log "compare-redis: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), reference $("$REDIS_SERVER" --version 2>/dev/null | awk '{ print $3 }' || true), $(go version | awk '{ print $3 }')"
log "compare-redis: N=$N REPS=$REPS CLIENTS=$CLIENTS PIPELINES=\"$PIPELINES\" SECTIONS=\"$SECTIONS\" MYREDIS_ENV=\"$MYREDIS_ENV\""

need_pair=0
for s in $SECTIONS; do [[ $s == aof ]] || need_pair=1; done
((need_pair)) && start_pair
for s in $SECTIONS; do
	case $s in
	core | zset | sets | script | multi) log "section $s"; "section_$s" ;;
	aof) ((need_pair)) && stop_pair; need_pair=0; log "section aof"; section_aof ;;
	lists) log "section lists"; section_lists ;;
	*) log "unknown section $s"; exit 2 ;;
	esac
done
((need_pair)) && stop_pair

report
