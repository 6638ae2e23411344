package myredis_test

// Needs redis-server (skips without it): a multi-part AOF directory written by
// redis-server 7.0.15 itself (a base file from BGREWRITEAOF, then writes in the
// incr file, then SHUTDOWN NOSAVE) is imported by MyRedis started on the same
// dir (aof_import.go): the data equals what Redis loads from a copy of the
// directory, the directory is renamed untouched, MyRedis's appendonly.aof
// reloads, and Redis started on the dir afterwards upgrades that file.

import (
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// redis7AOFDir has redis-server write an AOF directory in a new dir and stop,
// and returns the dir.
func redis7AOFDir(t *testing.T, preamble string, more ...string) string {
	t.Helper()
	dir := t.TempDir()
	addr := redistest.StartRealRedis(t, append([]string{"--dir", dir, "--appendonly", "yes", "--appendfsync", "always",
		"--aof-use-rdb-preamble", preamble}, more...)...)
	real := redistest.Dial(t, addr)
	fillRDBDataset(t, real)
	real.Do("BGREWRITEAOF")
	ext := map[string]string{"yes": "rdb", "no": "aof"}[preamble]
	base := filepath.Join(dir, "appendonlydir", "appendonly.aof.2.base."+ext)
	waitAOFRewrite(t, real, func() bool { _, err := os.Stat(base); return err == nil })
	if strings.Contains(strings.Join(more, " "), "aof-timestamp-enabled yes") {
		time.Sleep(1100 * time.Millisecond) // Redis annotates the first write of a new second
	}
	// into the incr file
	for _, cmd := range [][]string{
		{"SET", "tail", "after the base"}, {"INCR", "counter"}, {"INCR", "counter"},
		{"DEL", "key:0"}, {"SET", "short", "v", "EX", "100000"},
		{"SELECT", "1"}, {"HSET", "h2", "f", "v"}, {"MULTI"}, {"RPUSH", "l2", "a"}, {"SADD", "s2", "m"}, {"EXEC"},
		{"SELECT", "0"}, {"SET", "last", "the last command"},
	} {
		if r := real.Do(cmd...); strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %q", cmd, r)
		}
	}
	real.DoErr("SHUTDOWN", "NOSAVE")
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("redis-server still up 10 s after SHUTDOWN")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return dir
}

// copyTree copies dir's files to a new directory and returns it.
func copyTree(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// compareIncrWrites reads what the writes into the incr file made.
func compareIncrWrites(t *testing.T, want, got *redistest.Conn) {
	t.Helper()
	for _, rd := range [][]string{
		{"SELECT", "0"}, {"GET", "tail"}, {"GET", "counter"}, {"EXISTS", "key:0"}, {"PEXPIRETIME", "short"}, {"GET", "last"},
		{"SELECT", "1"}, {"HGETALL", "h2"}, {"LRANGE", "l2", "0", "-1"}, {"SMEMBERS", "s2"}, {"SELECT", "0"},
	} {
		if w, g := want.Do(rd...), got.Do(rd...); w != g {
			t.Errorf("%q: Redis %q, MyRedis %q", rd, w, g)
		}
	}
}

func serveMyRedisOn(t *testing.T, dir, preamble string) (*redistest.Conn, func() error) {
	t.Helper()
	cfg := myredis.DefaultConfig()
	cfg.Dir, cfg.AppendOnly = dir, true
	if err := cfg.Set("aof-use-rdb-preamble", preamble); err != nil {
		t.Fatal(err)
	}
	_, addr, stop, err := redistest.ServeMyRedis(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	return redistest.Dial(t, addr), stop
}

// seenTime is a stream consumer's seen-time in XINFO STREAM FULL. Redis's AOF
// rewrite without the RDB preamble writes a consumer as an XCLAIM (or XGROUP
// CREATECONSUMER), so replaying it sets seen-time to the moment of the replay,
// in Redis as in MyRedis: two loads of the same file differ there.
var seenTime = regexp.MustCompile(`\$9\r\nseen-time\r\n:\d+\r\n`)

func maskSeenTime(reply string) string {
	return seenTime.ReplaceAllString(reply, "$$9\r\nseen-time\r\n:<replay time>\r\n")
}

func TestAOFImportFromRedis7(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	for _, tc := range []struct{ preamble, timestamps string }{{"yes", "no"}, {"no", "no"}, {"no", "yes"}} {
		preamble := tc.preamble
		t.Run("aof-use-rdb-preamble "+preamble+", aof-timestamp-enabled "+tc.timestamps, func(t *testing.T) {
			dir := redis7AOFDir(t, preamble, "--aof-timestamp-enabled", tc.timestamps)
			if incr, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof")); strings.Contains(string(incr), "#TS:") != (tc.timestamps == "yes") {
				t.Fatalf("annotations in the incr file: %q", incr)
			}
			compareRDBDataset := compareRDBDataset
			if preamble == "no" {
				compareRDBDataset = func(t *testing.T, want, got *redistest.Conn) {
					t.Helper()
					compareRDBDatasetAs(t, want, got, maskSeenTime)
				}
			}
			before := myredis.ReadTree(t, filepath.Join(dir, "appendonlydir"))
			ref := copyTree(t, dir) // what Redis itself loads from it
			want := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", ref, "--appendonly", "yes"))

			mine, stop := serveMyRedisOn(t, dir, preamble)
			compareRDBDataset(t, want, mine)
			compareIncrWrites(t, want, mine)
			if g := mine.Do("GET", "last"); g != redistest.Bulk("the last command") {
				t.Fatalf("the incr file's last write: %q", g)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			moved, _ := filepath.Glob(filepath.Join(dir, "appendonlydir.imported-*"))
			if len(moved) != 1 {
				t.Fatalf("renamed directories: %q", moved)
			}
			if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); !os.IsNotExist(err) {
				t.Fatalf("appendonlydir is still there: %v", err)
			}
			if !maps.Equal(myredis.ReadTree(t, moved[0]), before) {
				t.Fatal("the imported directory's files changed")
			}
			if _, err := os.Stat(filepath.Join(dir, "appendonly.aof")); err != nil {
				t.Fatalf("no appendonly.aof: %v", err)
			}

			// a restart loads MyRedis's own file
			mine, stop = serveMyRedisOn(t, dir, preamble)
			compareRDBDataset(t, want, mine)
			compareIncrWrites(t, want, mine)
			mine.Do("SET", "under myredis", "1")
			want.Do("SET", "under myredis", "1") // the reference follows
			if err := stop(); err != nil {
				t.Fatal(err)
			}

			// Redis 7 started later on the dir upgrades appendonly.aof (no stale manifest)
			back := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir, "--appendonly", "yes"))
			compareRDBDataset(t, want, back)
			compareIncrWrites(t, want, back)
			if g := back.Do("GET", "under myredis"); g != redistest.Bulk("1") {
				t.Fatalf("Redis started after MyRedis lost MyRedis's write: %q", g)
			}
		})
	}
}

// TestAOFImportTornLastIncrFromRedis7: the incr file cut inside its last
// command loads up to it, as in Redis; the user's file is left uncut.
func TestAOFImportTornLastIncrFromRedis7(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	dir := redis7AOFDir(t, "yes")
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof")
	st, err := os.Stat(incr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(incr, st.Size()-5); err != nil { // inside SET last ...
		t.Fatal(err)
	}
	before := myredis.ReadTree(t, filepath.Join(dir, "appendonlydir"))
	ref := copyTree(t, dir)
	want := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", ref, "--appendonly", "yes"))
	mine, stop := serveMyRedisOn(t, dir, "yes")
	compareRDBDataset(t, want, mine)
	compareIncrWrites(t, want, mine)
	if g := mine.Do("GET", "last"); g != "$-1\r\n" {
		t.Fatalf("the torn command applied: %q", g)
	}
	if g := mine.Do("GET", "tail"); g != redistest.Bulk("after the base") {
		t.Fatalf("a write before the torn one: %q", g)
	}
	stop()
	moved, _ := filepath.Glob(filepath.Join(dir, "appendonlydir.imported-*"))
	if len(moved) != 1 || !maps.Equal(myredis.ReadTree(t, moved[0]), before) {
		t.Fatalf("not renamed as it was: %q", moved)
	}
}

// TestAOFImportMissingFileFromRedis7: a listed file gone stops start-up naming
// it; nothing is renamed or written.
func TestAOFImportMissingFileFromRedis7(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	dir := redis7AOFDir(t, "yes")
	if err := os.Remove(filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof")); err != nil {
		t.Fatal(err)
	}
	before := myredis.ReadTree(t, dir)
	cfg := myredis.DefaultConfig()
	cfg.Dir, cfg.AppendOnly = dir, true
	_, _, stop, err := redistest.ServeMyRedis(cfg)
	if err == nil {
		stop()
		t.Fatal("MyRedis started without the incr file")
	}
	if want := "Unable to obtain the AOF file appendonly.aof.2.incr.aof length. stat: No such file or directory"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q lacks %q", err, want)
	}
	if !maps.Equal(myredis.ReadTree(t, dir), before) {
		t.Fatal("files changed")
	}
}
