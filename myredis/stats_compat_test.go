// Needs redis-server (skips without it): INFO commandstats and errorstats after
// the same commands on MyRedis and on redis-server.
package myredis_test

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

func TestCompatInfoStats(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	cmds := [][]string{
		{"SET", "s", "1"}, {"GET", "s"}, {"GET", "s", "x"}, {"INCR", "s"}, {"SET", "str", "abc"}, {"INCR", "str"},
		{"ZADD", "str", "1", "a"}, {"ZADD", "z", "x", "a"}, {"ZADD", "z", "1", "a"}, {"NOSUCH", "cmd"},
		{"CONFIG", "NOSUCH"}, {"CONFIG", "GET"}, {"CONFIG", "GET", "hz"}, {"CONFIG", "SET", "timeout", "x"},
		{"MULTI"}, {"SET", "a"}, {"GET", "s"}, {"EXEC"},
		{"MULTI"}, {"INCR", "str"}, {"GET", "s"}, {"EXEC"},
		{"SHUTDOWN", "bogus"}, {"EXPIRE", "s", "x"}, {"HSET", "h", "f"}, {"HGET", "h", "f"},
		{"ZPOPMIN", "z"}, {"BZPOPMIN", "z", "0.01"}, {"PING"}, {"HGET", "str", "x"}, {"GET", "z"},
		{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"}, {"EVAL", "return redis.call('incr', 'str')", "0"},
		{"EVAL", "return redis.pcall('incr', 'str')", "0"}, {"EVAL", "return 1", "0"},
	}
	stats := func(addr string) (string, string) {
		c := redistest.Dial(t, addr)
		c.Do("CONFIG", "RESETSTAT")
		for _, args := range cmds {
			c.Do(args...)
		}
		cmdstats := c.Do("INFO", "commandstats")
		errstats := c.Do("INFO", "errorstats")
		return normaliseStats(cmdstats), normaliseStats(errstats)
	}
	wantCmd, wantErr := stats(real)
	gotCmd, gotErr := stats(mine)
	if wantCmd != gotCmd {
		t.Errorf("INFO commandstats:\n redis:   %s\n myredis: %s", wantCmd, gotCmd)
	}
	if wantErr != gotErr {
		t.Errorf("INFO errorstats:\n redis:   %s\n myredis: %s", wantErr, gotErr)
	}
}

var usecRe = regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)

// normaliseStats keeps an INFO section's lines without timings, sorted, leaving
// out the INFO and CONFIG RESETSTAT calls themselves.
func normaliseStats(reply string) string {
	var lines []string
	for _, l := range strings.Split(reply, "\r\n") {
		if strings.Contains(l, ":") && !strings.HasPrefix(l, "cmdstat_info:") && !strings.HasPrefix(l, "cmdstat_config|resetstat:") {
			lines = append(lines, usecRe.ReplaceAllString(l, ""))
		}
	}
	sort.Strings(lines) // Redis lists them in hash order
	return strings.Join(lines, " ")
}

// infoExtras are the fields MyRedis adds to Redis's INFO sections (README):
// the server section's myredis, go_version and executor_workers, and the AOF's
// group commit figures.
var infoExtras = map[string]bool{
	"myredis": true, "go_version": true, "executor_workers": true,
	"aof_fsyncs": true, "aof_group_commits": true, "aof_group_commit_replies": true,
}

// infoNames lists each section's field names in their order.
func infoNames(reply string) map[string][]string {
	out := map[string][]string{}
	sec := ""
	for _, l := range strings.Split(reply, "\r\n") {
		if h, ok := strings.CutPrefix(l, "# "); ok {
			sec = strings.ToLower(h)
			continue
		}
		if name, _, ok := strings.Cut(l, ":"); ok && !infoExtras[name] {
			out[sec] = append(out[sec], name)
		}
	}
	return out
}

// TestCompatInfoFieldOrder: the server, clients, persistence, stats,
// replication and cpu sections have redis-server's fields in its order (MyRedis's
// own extras left aside), with the AOF off and on, so that a client reading INFO
// (redis_exporter, redis-cli --stat) finds what it finds in Redis.
func TestCompatInfoFieldOrder(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	for _, args := range [][]string{nil, {"--appendonly", "yes"}} {
		t.Run(strings.Join(append([]string{"default"}, args...), " "), func(t *testing.T) {
			real, mine := startPair(t, append([]string{"--dir", t.TempDir()}, args...)...)
			want := infoNames(redistest.Dial(t, real).Do("INFO", "everything"))
			got := infoNames(redistest.Dial(t, mine).Do("INFO", "everything"))
			for _, sec := range []string{"server", "clients", "persistence", "stats", "replication", "cpu"} {
				if len(want[sec]) == 0 {
					t.Fatalf("redis-server's INFO has no %s section", sec)
				}
				if w, g := strings.Join(want[sec], " "), strings.Join(got[sec], " "); w != g {
					t.Errorf("INFO %s fields:\n redis:   %s\n myredis: %s", sec, w, g)
				}
			}
		})
	}
}

// TestCompatInfoCountersAfterResetstat: right after CONFIG RESETSTAT the
// counters Redis resets read the same on both servers: connections, commands,
// bytes and reads and writes of the INFO request itself, the expiry and
// eviction figures, sync counts and the rest of resetServerStats's list.
func TestCompatInfoCountersAfterResetstat(t *testing.T) {
	real, mine := startPair(t, "--dir", t.TempDir())
	fields := []string{
		"total_connections_received", "total_commands_processed", "total_net_input_bytes",
		"total_net_output_bytes", "total_net_repl_input_bytes", "total_net_repl_output_bytes",
		"rejected_connections", "sync_full", "sync_partial_ok", "sync_partial_err", "expired_keys",
		"expired_stale_perc", "expired_time_cap_reached_count", "expire_cycle_cpu_milliseconds",
		"evicted_keys", "evicted_clients", "total_eviction_exceeded_time", "current_eviction_exceeded_time",
		"keyspace_hits", "keyspace_misses", "unexpected_error_replies", "total_error_replies",
		"total_reads_processed", "total_writes_processed", "rdb_saves", "aof_rewrites",
		"current_save_keys_processed", "current_save_keys_total", "current_fork_perc",
	}
	results := make([]map[string]string, 2)
	for i, addr := range []string{real, mine} {
		c := redistest.Dial(t, addr)
		other := redistest.Dial(t, addr)
		for _, args := range [][]string{{"SET", "k", "v", "PX", "1"}, {"GET", "nope"}, {"NOSUCH"}, {"SAVE"}} {
			c.Do(args...)
		}
		other.Do("PING")
		c.Do("CONFIG", "RESETSTAT")
		results[i] = infoFields(t, c.Do("INFO", "everything"))
	}
	for _, f := range fields {
		if want, got := results[0][f], results[1][f]; want != got || want == "" {
			t.Errorf("after CONFIG RESETSTAT, INFO %s: redis %q, myredis %q", f, want, got)
		}
	}
}

// TestCompatReplicationBytes: what a master counts as replication output is
// what its replica counts as replication input, byte for byte, between MyRedis
// and redis-server both ways: the RDB of a full sync and then the stream (the
// +FULLRESYNC line and the handshake are counted by neither, as in Redis).
func TestCompatReplicationBytes(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	check := func(t *testing.T, master, replica string) {
		t.Helper()
		mc := redistest.Dial(t, master)
		for i := range 20 {
			mc.Do("SET", "key"+strconv.Itoa(i), strings.Repeat("v", i*50))
		}
		h, p := replHostPort(t, master)
		redistest.Dial(t, replica).Do("REPLICAOF", h, p)
		for _, round := range []string{"full sync", "stream"} {
			waitSynced(t, master, replica)
			var out, in string
			for range 3 { // a PING of the stream may fall between the two reads
				out = infoField(t, master, "stats", "total_net_repl_output_bytes")
				in = infoField(t, replica, "stats", "total_net_repl_input_bytes")
				if out == in {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if out != in || out == "0" || out == "" {
				t.Errorf("%s: master's total_net_repl_output_bytes %q, replica's total_net_repl_input_bytes %q", round, out, in)
			}
			mc.Do("SET", "after", strings.Repeat("x", 1000))
			mc.Do("INCR", "n")
		}
	}
	t.Run("myredis master, redis-server replica", func(t *testing.T) {
		master := myRedisMaster(t)
		check(t, master, redistest.StartRealRedis(t))
	})
	t.Run("redis-server master, myredis replica", func(t *testing.T) {
		master := redistest.StartRealRedis(t, "--repl-diskless-sync-delay", "0")
		_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
		check(t, master, replica)
	})
}

// TestCompatRDBLoadKeys: DEBUG RELOAD counts the keys it loaded and those it
// left out because they expired since the save, as redis-server counts them.
func TestCompatRDBLoadKeys(t *testing.T) {
	real, mine := startPair(t, "--enable-debug-command", "yes", "--dir", t.TempDir())
	results := make([]map[string]string, 2)
	for i, addr := range []string{real, mine} {
		c := redistest.Dial(t, addr)
		for k := range 5 {
			c.Do("SET", "plain"+strconv.Itoa(k), "v")
		}
		for k := range 3 {
			c.Do("SET", "short"+strconv.Itoa(k), "v", "PX", "100")
		}
		if r := c.Do("SAVE"); r != ok {
			t.Fatalf("SAVE: %q", r)
		}
		time.Sleep(200 * time.Millisecond)
		if r := c.Do("DEBUG", "RELOAD", "NOSAVE"); r != ok {
			t.Fatalf("DEBUG RELOAD NOSAVE: %q", r)
		}
		results[i] = infoFields(t, c.Do("INFO", "persistence"))
	}
	for _, f := range []string{"rdb_last_load_keys_loaded", "rdb_last_load_keys_expired"} {
		if want, got := results[0][f], results[1][f]; want != got || want == "0" {
			t.Errorf("INFO %s: redis %q, myredis %q", f, want, got)
		}
	}
}
