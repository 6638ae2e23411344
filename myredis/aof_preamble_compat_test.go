package myredis_test

// Needs redis-server (skips without it): an AOF with an RDB preamble written by
// MyRedis loads into Redis 7.0.15 (which migrates a single old-style
// appendonly.aof into its appendonlydir), and Redis's base file followed by its
// incr file, as one appendonly.aof, loads into MyRedis.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// waitAOFRewrite polls INFO persistence until n rewrites are done (MyRedis
// counts aof_rewrites; Redis has none, so its base file is polled for).
func waitAOFRewrite(t *testing.T, c *redistest.Conn, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !done() || strings.Contains(c.Do("INFO", "persistence"), "aof_rewrite_in_progress:1") {
		if time.Now().After(deadline) {
			t.Fatal("the AOF rewrite did not finish within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAOFPreambleFromMyRedisLoadsIntoRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	cfg := myredis.DefaultConfig()
	cfg.Dir, cfg.AppendOnly, cfg.AppendFsync = t.TempDir(), true, "always"
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	mine := redistest.Dial(t, addr)
	fillRDBDataset(t, mine)
	mine.Do("BGREWRITEAOF")
	waitAOFRewrite(t, mine, func() bool { return strings.Contains(mine.Do("INFO", "persistence"), "aof_rewrites:1") })
	mine.Do("SET", "tail", "after the preamble")
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "appendonly.aof"))
	if err != nil || !strings.HasPrefix(string(b), "REDIS0010") {
		t.Fatalf("no RDB preamble: %v %.20q", err, b)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "appendonly.aof"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	real := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir, "--appendonly", "yes"))
	compareRDBDataset(t, mine, real)
	if g := real.Do("GET", "tail"); g != redistest.Bulk("after the preamble") {
		t.Errorf("the command after the preamble, in Redis: %q", g)
	}
}

func TestAOFPreambleFromRedisLoadsIntoMyRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	dir := t.TempDir()
	real := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir, "--appendonly", "yes"))
	fillRDBDataset(t, real)
	real.Do("BGREWRITEAOF")
	base := filepath.Join(dir, "appendonlydir", "appendonly.aof.2.base.rdb")
	waitAOFRewrite(t, real, func() bool { _, err := os.Stat(base); return err == nil })
	real.Do("SET", "tail", "after the preamble")
	head, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := myredis.DefaultConfig()
	cfg.Dir, cfg.AppendOnly = t.TempDir(), true
	if err := os.WriteFile(filepath.Join(cfg.Dir, "appendonly.aof"), append(head, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	mine := redistest.Dial(t, addr)
	compareRDBDataset(t, real, mine)
	if g := mine.Do("GET", "tail"); g != redistest.Bulk("after the preamble") {
		t.Errorf("the command after Redis's preamble, in MyRedis: %q", g)
	}
}
