package myredis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// INFO's counters move with their causes and CONFIG RESETSTAT zeroes them.

func infoNum(t *testing.T, f map[string]string, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(f[name], 64)
	if err != nil {
		t.Fatalf("INFO %s = %q, not a number", name, f[name])
	}
	return v
}

// TestInfoReadsWritesProcessed: each request read and each reply written
// counts, and CONFIG RESETSTAT leaves only its own reply and the INFO request.
func TestInfoReadsWritesProcessed(t *testing.T) {
	c, _, _ := start(t)
	before := infoFields(t, c.Do("INFO", "stats"))
	for range 20 {
		mustDo(t, c, simple("PONG"), "PING")
	}
	after := infoFields(t, c.Do("INFO", "stats"))
	for _, name := range []string{"total_reads_processed", "total_writes_processed"} {
		if d := infoNum(t, after, name) - infoNum(t, before, name); d < 21 {
			t.Errorf("%s grew by %v after 21 requests (20 PINGs and an INFO)", name, d)
		}
	}
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	f := infoFields(t, c.Do("INFO", "stats"))
	for name, want := range map[string]string{
		"total_reads_processed": "1", "total_writes_processed": "1", // the INFO read, the RESETSTAT reply written
		"total_net_output_bytes": "5", "total_connections_received": "0", "total_commands_processed": "1",
	} {
		if f[name] != want {
			t.Errorf("after CONFIG RESETSTAT, %s = %q, want %q", name, f[name], want)
		}
	}
}

// TestInfoActiveExpiryStats: the active expiry cycle that reclaims many keys
// raises the stale-keys estimate and its run time; RESETSTAT zeroes them.
func TestInfoActiveExpiryStats(t *testing.T) {
	c, clk, _ := start(t)
	const n = 50000
	mustDo(t, c, null, "EVAL", "for i = 1, "+strconv.Itoa(n)+" do redis.call('set', 'k'..i, 'v', 'px', 100) end", "0")
	clk.Advance(time.Second)
	eventually(t, 10*time.Second, "active expiry of every key", func() bool { return c.Do("DBSIZE") == num(0) })
	f := infoFields(t, c.Do("INFO", "stats"))
	if f["expired_keys"] != strconv.Itoa(n) {
		t.Fatalf("expired_keys = %q, want %d", f["expired_keys"], n)
	}
	if infoNum(t, f, "expired_stale_perc") <= 0 {
		t.Errorf("expired_stale_perc = %q after the cycles found every sampled key expired", f["expired_stale_perc"])
	}
	if infoNum(t, f, "expire_cycle_cpu_milliseconds") <= 0 {
		t.Errorf("expire_cycle_cpu_milliseconds = %q after deleting %d keys", f["expire_cycle_cpu_milliseconds"], n)
	}
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	f = infoFields(t, c.Do("INFO", "stats"))
	for name, want := range map[string]string{"expired_stale_perc": "0.00", "expired_time_cap_reached_count": "0",
		"expire_cycle_cpu_milliseconds": "0", "expired_keys": "0"} {
		if f[name] != want {
			t.Errorf("after CONFIG RESETSTAT, %s = %q, want %q", name, f[name], want)
		}
	}
}

// TestInfoEvictionExceededTime: the time spent over maxmemory with nothing to
// evict is current while it lasts and added to the total when it ends.
func TestInfoEvictionExceededTime(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "1")
	if r := c.Do("SET", "k", "v"); !strings.HasPrefix(r, "-OOM") {
		t.Fatalf("SET over maxmemory with noeviction: %q", r)
	}
	time.Sleep(30 * time.Millisecond)
	f := infoFields(t, c.Do("INFO", "stats"))
	cur, total := infoNum(t, f, "current_eviction_exceeded_time"), infoNum(t, f, "total_eviction_exceeded_time")
	if cur < 30 || total < cur {
		t.Errorf("over maxmemory for 30 ms: current %v ms, total %v ms", cur, total)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "100gb") // the test process's heap is shared by every in-process server
	mustDo(t, c, simple("PONG"), "PING")                    // an eviction pass that finds memory within the limit
	f = infoFields(t, c.Do("INFO", "stats"))
	if f["current_eviction_exceeded_time"] != "0" || infoNum(t, f, "total_eviction_exceeded_time") < 30 {
		t.Errorf("back under maxmemory: current %q ms, total %q ms", f["current_eviction_exceeded_time"], f["total_eviction_exceeded_time"])
	}
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	if f = infoFields(t, c.Do("INFO", "stats")); f["total_eviction_exceeded_time"] != "0" {
		t.Errorf("after CONFIG RESETSTAT, total_eviction_exceeded_time = %q", f["total_eviction_exceeded_time"])
	}
}

// TestInfoLoadKeys: DEBUG RELOAD and a restart count the keys an RDB load
// stored and those it left out because they had expired.
func TestInfoLoadKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := myredis.DefaultConfig()
	for name, val := range map[string]string{"enable-debug-command": "yes", "dir": dir} {
		require.NoError(t, cfg.Set(name, val))
	}
	clk := newFakeClock()
	_, addr := redistest.StartMyRedisConfig(t, cfg, myredis.WithClock(clk))
	c := redistest.Dial(t, addr)
	f := infoFields(t, c.Do("INFO", "persistence"))
	if f["rdb_last_load_keys_loaded"] != "0" || f["rdb_last_load_keys_expired"] != "0" {
		t.Fatalf("no load yet: loaded %q, expired %q", f["rdb_last_load_keys_loaded"], f["rdb_last_load_keys_expired"])
	}
	for i := range 5 {
		mustDo(t, c, ok, "SET", "plain"+strconv.Itoa(i), "v")
	}
	for i := range 3 {
		mustDo(t, c, ok, "SET", "ttl"+strconv.Itoa(i), "v", "EX", "10")
	}
	mustDo(t, c, ok, "DEBUG", "RELOAD")
	f = infoFields(t, c.Do("INFO", "persistence"))
	if f["rdb_last_load_keys_loaded"] != "8" || f["rdb_last_load_keys_expired"] != "0" {
		t.Errorf("DEBUG RELOAD of 8 live keys: loaded %q, expired %q", f["rdb_last_load_keys_loaded"], f["rdb_last_load_keys_expired"])
	}
	clk.Advance(20 * time.Second)
	mustDo(t, c, ok, "DEBUG", "RELOAD", "NOSAVE") // the file's 3 TTL keys have expired since
	f = infoFields(t, c.Do("INFO", "persistence"))
	if f["rdb_last_load_keys_loaded"] != "5" || f["rdb_last_load_keys_expired"] != "3" {
		t.Errorf("DEBUG RELOAD NOSAVE after the TTLs: loaded %q, expired %q", f["rdb_last_load_keys_loaded"], f["rdb_last_load_keys_expired"])
	}
	mustDo(t, c, ok, "CONFIG", "RESETSTAT") // Redis keeps these
	if g := infoFields(t, c.Do("INFO", "persistence")); g["rdb_last_load_keys_loaded"] != "5" {
		t.Errorf("after CONFIG RESETSTAT, rdb_last_load_keys_loaded = %q, want 5 as Redis keeps it", g["rdb_last_load_keys_loaded"])
	}

	// a restart on the same directory loads dump.rdb
	mustDo(t, c, ok, "SET", "more", "v")
	mustDo(t, c, ok, "SAVE")
	later := newFakeClock()
	later.Advance(20 * time.Second)
	_, addr2 := redistest.StartMyRedisConfig(t, cfg, myredis.WithClock(later))
	f = infoFields(t, redistest.Dial(t, addr2).Do("INFO", "persistence"))
	if f["rdb_last_load_keys_loaded"] != "6" || f["rdb_last_load_keys_expired"] != "0" {
		t.Errorf("restart: loaded %q, expired %q, want 6 and 0", f["rdb_last_load_keys_loaded"], f["rdb_last_load_keys_expired"])
	}
}

// TestInfoReplicationTraffic: a replica's sync and stream count as replication
// bytes on both sides, within the totals; the replication rates become
// non-zero under a stream of writes; an error the replica meets applying the
// master's stream counts in unexpected_error_replies.
func TestInfoReplicationTraffic(t *testing.T) {
	master := myRedisMaster(t)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	mc, rc := redistest.Dial(t, master), redistest.Dial(t, replica)
	var raw [5000]byte
	rand.Read(raw[:])
	big := hex.EncodeToString(raw[:]) // 10 kB the RDB's LZF hardly compresses
	for i := range 50 {
		mustDo(t, mc, ok, "SET", "before"+strconv.Itoa(i), big)
	}
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(context.Background(), "REPLICAOF", h, p).Err())
	waitSynced(t, master, replica)
	ms, rs := infoFields(t, mc.Do("INFO", "stats")), infoFields(t, rc.Do("INFO", "stats"))
	out, in := infoNum(t, ms, "total_net_repl_output_bytes"), infoNum(t, rs, "total_net_repl_input_bytes")
	if out < 50*5000 || in < 50*5000 { // at least the random bytes' worth
		t.Errorf("after a full sync of 500 kB: master's repl output %v, replica's repl input %v", out, in)
	}
	if infoNum(t, ms, "total_net_output_bytes") < out || infoNum(t, rs, "total_net_input_bytes") < in {
		t.Errorf("the totals leave replication out: master %q < %v or replica %q < %v",
			ms["total_net_output_bytes"], out, rs["total_net_input_bytes"], in)
	}
	if ms["total_net_repl_input_bytes"] != "0" || rs["total_net_repl_output_bytes"] != "0" {
		t.Errorf("master's repl input %q, replica's repl output %q, want 0", ms["total_net_repl_input_bytes"], rs["total_net_repl_output_bytes"])
	}

	// the stream: bytes and rates
	reads := infoNum(t, rs, "total_reads_processed")
	deadline := time.Now().Add(10 * time.Second)
	for {
		for i := range 20 {
			mustDo(t, mc, ok, "SET", "after"+strconv.Itoa(i), big)
		}
		ms, rs = infoFields(t, mc.Do("INFO", "stats")), infoFields(t, rc.Do("INFO", "stats"))
		if infoNum(t, ms, "instantaneous_output_repl_kbps") > 0 && infoNum(t, rs, "instantaneous_input_repl_kbps") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replication rates still zero after 10 s of writes: master %q, replica %q",
				ms["instantaneous_output_repl_kbps"], rs["instantaneous_input_repl_kbps"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	if infoNum(t, ms, "total_net_repl_output_bytes") < out+20*10000 || infoNum(t, rs, "total_net_repl_input_bytes") < in+20*10000 {
		t.Errorf("the stream of 200 kB did not count: master %q, replica %q", ms["total_net_repl_output_bytes"], rs["total_net_repl_input_bytes"])
	}
	if infoNum(t, rs, "total_reads_processed") <= reads {
		t.Errorf("the replica's reads of the stream did not count: %v -> %q", reads, rs["total_reads_processed"])
	}

	// a writable replica whose key changed type fails the master's INCR
	mustDo(t, mc, ok, "SET", "n", "1")
	waitSynced(t, master, replica)
	mustDo(t, rc, ok, "CONFIG", "SET", "replica-read-only", "no")
	mustDo(t, rc, num(1), "DEL", "n")
	mustDo(t, rc, num(1), "RPUSH", "n", "a")
	mustDo(t, mc, num(2), "INCR", "n")
	waitSynced(t, master, replica)
	if got := infoFields(t, rc.Do("INFO", "stats"))["unexpected_error_replies"]; got != "1" {
		t.Errorf("replica's unexpected_error_replies = %q after a failed INCR from its master", got)
	}
	mustDo(t, mc, ok, "CONFIG", "RESETSTAT")
	if f := infoFields(t, mc.Do("INFO", "stats")); infoNum(t, f, "total_net_repl_output_bytes") >= 1000 { // a PING of the stream may follow
		t.Errorf("after CONFIG RESETSTAT, master's total_net_repl_output_bytes = %q", f["total_net_repl_output_bytes"])
	}
}

// TestInfoSaveProgress: a BGSAVE slowed by rdb-key-save-delay shows the keys
// there were and how many are written, and nothing once it is done.
func TestInfoSaveProgress(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "100gb") // the test process's heap is shared by every in-process server
	mustDo(t, c, null, "EVAL", "for i = 1, 200 do redis.call('set', 'k'..i, 'v') end", "0")
	mustDo(t, c, ok, "CONFIG", "SET", "rdb-key-save-delay", "5000") // 5 ms a key: the save takes a second
	mustDo(t, c, simple("Background saving started"), "BGSAVE")
	var f map[string]string
	eventually(t, 5*time.Second, "the first key saved", func() bool {
		f = infoFields(t, c.Do("INFO", "persistence"))
		return infoNum(t, f, "current_save_keys_processed") > 0
	})
	if f["current_save_keys_total"] != "200" || infoNum(t, f, "current_save_keys_processed") > 200 || infoNum(t, f, "current_fork_perc") <= 0 {
		t.Errorf("during the BGSAVE: total %q, processed %q, perc %q", f["current_save_keys_total"],
			f["current_save_keys_processed"], f["current_fork_perc"])
	}
	eventually(t, 10*time.Second, "the end of the BGSAVE", func() bool {
		return infoFields(t, c.Do("INFO", "persistence"))["rdb_bgsave_in_progress"] == "0"
	})
	f = infoFields(t, c.Do("INFO", "persistence"))
	if f["current_save_keys_total"] != "0" || f["current_save_keys_processed"] != "0" || f["current_fork_perc"] != "0.00" {
		t.Errorf("after the BGSAVE: total %q, processed %q, perc %q", f["current_save_keys_total"],
			f["current_save_keys_processed"], f["current_fork_perc"])
	}
}
