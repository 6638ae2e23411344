package myredis_test

// BGREWRITEAOF with appendonly no, and INFO persistence's rewrite fields, as
// redis-server 7.0.15 shows them (compared by hand: Redis writes the data as at
// the command to a new AOF base file; MyRedis to its one AOF file).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

func startInDir(t *testing.T, dir string, args ...string) *redistest.Conn {
	t.Helper()
	cfg, err := myredis.ParseArgs(append([]string{"--dir", dir}, args...))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	return redistest.Dial(t, addr)
}

// persistence is INFO persistence as a map.
func persistence(t *testing.T, c *redistest.Conn) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(c.Do("INFO", "persistence"), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// waitRewriteDone polls until no AOF rewrite runs or is scheduled.
func waitRewriteDone(t *testing.T, c *redistest.Conn) map[string]string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p := persistence(t, c)
		if p["aof_rewrite_in_progress"] == "0" && p["aof_rewrite_scheduled"] == "0" {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF rewrite did not end in 60s: %v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantFields(t *testing.T, p map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if p[k] != v {
			t.Errorf("INFO persistence %s: %q, want %q", k, p[k], v)
		}
	}
}

func TestBgrewriteaofWithAppendonlyOff(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble "+preamble, func(t *testing.T) {
			dir := t.TempDir()
			c := startInDir(t, dir, "--aof-use-rdb-preamble", preamble)
			wantFields(t, persistence(t, c), map[string]string{"aof_enabled": "0", "aof_rewrites": "0",
				"aof_last_rewrite_time_sec": "-1", "aof_rewrite_in_progress": "0", "aof_rewrite_scheduled": "0",
				"aof_last_bgrewrite_status": "ok", "aof_rewrites_consecutive_failures": "0"})
			mustDo(t, c, ok, "SET", "s", "v")
			mustDo(t, c, ":2\r\n", "RPUSH", "l", "a", "b")
			mustDo(t, c, ":1\r\n", "EXPIRE", "s", "1000")
			mustDo(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
			p := waitRewriteDone(t, c)
			wantFields(t, p, map[string]string{"aof_enabled": "0", "aof_rewrites": "1", "aof_last_rewrite_time_sec": "0",
				"aof_last_bgrewrite_status": "ok", "aof_current_rewrite_time_sec": "-1"})
			if _, ok := p["aof_current_size"]; ok {
				t.Error("INFO shows aof_current_size with the AOF off (Redis does not)")
			}
			if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); err != nil {
				t.Fatalf("no AOF file after BGREWRITEAOF: %v", err)
			}
			mustDo(t, c, ok, "SET", "after", "1") // not in the file: the AOF is off
			c.Close()

			// the file is the data as at BGREWRITEAOF: appendonly yes loads it
			c2 := startInDir(t, dir, "--appendonly", "yes")
			mustDo(t, c2, redistest.Bulk("v"), "GET", "s")
			mustDo(t, c2, redistest.Bulks("a", "b"), "LRANGE", "l", "0", "-1")
			if ttl := c2.Do("TTL", "s"); ttl == ":-1\r\n" || ttl == ":-2\r\n" {
				t.Errorf("TTL after the reload: %q", ttl)
			}
			mustDo(t, c2, ":0\r\n", "EXISTS", "after")
		})
	}
}

// Inside MULTI BGREWRITEAOF is scheduled and runs after EXEC, AOF off too.
func TestBgrewriteaofScheduledAppendonlyOff(t *testing.T) {
	dir := t.TempDir()
	c := startInDir(t, dir)
	mustDo(t, c, ok, "SET", "k", "v")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, "+QUEUED\r\n", "BGREWRITEAOF")
	mustDo(t, c, "*1\r\n+Background append only file rewriting scheduled\r\n", "EXEC")
	wantFields(t, waitRewriteDone(t, c), map[string]string{"aof_rewrites": "1", "aof_last_bgrewrite_status": "ok"})
	if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); err != nil {
		t.Fatalf("no AOF file after the scheduled rewrite: %v", err)
	}
}

// aof_rewrites counts a rewrite when it starts, as Redis's stat_aof_rewrites;
// a second BGREWRITEAOF meanwhile is refused; CONFIG SET appendonly yes stops
// the rewrite of the AOF off and starts its own.
func TestAOFRewriteCountedAtStart(t *testing.T) {
	dir := t.TempDir()
	c := startInDir(t, dir)
	for i := range 20 {
		mustDo(t, c, ok, "SET", "k"+strconv.Itoa(i), "v")
	}
	mustDo(t, c, ok, "CONFIG", "SET", "rdb-key-save-delay", "1000000") // 1 s a key: 20 s
	mustDo(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
	wantFields(t, persistence(t, c), map[string]string{"aof_rewrites": "1", "aof_rewrite_in_progress": "1",
		"aof_last_rewrite_time_sec": "-1", "aof_enabled": "0"})
	mustDo(t, c, "-ERR Background append only file rewriting already in progress\r\n", "BGREWRITEAOF")
	mustDo(t, c, ok, "CONFIG", "SET", "rdb-key-save-delay", "0")
	mustDo(t, c, ok, "CONFIG", "SET", "appendonly", "yes")
	p := waitRewriteDone(t, c)
	wantFields(t, p, map[string]string{"aof_rewrites": "2", "aof_enabled": "1", "aof_last_bgrewrite_status": "ok",
		"aof_rewrites_consecutive_failures": "0"})
	mustDo(t, c, redistest.Bulk("v"), "GET", "k19")
}

// With --workers N the rewrite's captures would race: it is refused with
// Redis's reply for a rewrite that cannot start.
func TestBgrewriteaofRefusedWithWorkers(t *testing.T) {
	dir := t.TempDir()
	c := startInDir(t, dir, "--workers", "4")
	mustDo(t, c, "-ERR Can't execute an AOF background rewriting. Please check the server logs for more information.\r\n", "BGREWRITEAOF")
	wantFields(t, persistence(t, c), map[string]string{"aof_rewrites": "0", "aof_rewrite_in_progress": "0"})
	if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); err == nil {
		t.Fatal("an AOF file was written with --workers 4")
	}
}
