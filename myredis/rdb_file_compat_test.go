package myredis_test

// Needs redis-server (skips without it) and, for one check, redis-check-rdb:
// RDB files written by Redis 7.0.15 load into MyRedis and MyRedis's load into
// Redis, every key compared with its type's reads, TTLs and functions.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// rdbKey is one key of the dataset: its database, name and dumpCase.
type rdbKey struct {
	db   string
	name string
	dc   dumpCase
}

// rdbDataset spreads every dumpCase over three databases, under its own name.
func rdbDataset() []rdbKey {
	var keys []rdbKey
	for i, dc := range dumpCases() {
		keys = append(keys, rdbKey{db: fmt.Sprint(i % 3), name: fmt.Sprintf("key:%d", i), dc: dc})
	}
	return keys
}

// renameKey replaces the dumpCase's key "k" by name.
func renameKey(args []string, name string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if i > 0 && a == "k" {
			out[i] = name
		}
	}
	return out
}

const rdbTestLib = "#!lua name=rdblib\nredis.register_function('rdbfunc', function(keys, args) return 'from the rdb file: ' .. args[1] end)"

// fillRDBDataset writes the dataset, some keys with a TTL, and a library.
func fillRDBDataset(t *testing.T, c *redistest.Conn) {
	t.Helper()
	for i, k := range rdbDataset() {
		c.Do("SELECT", k.db)
		for _, cmd := range k.dc.setup {
			if r := c.Do(renameKey(cmd, k.name)...); strings.HasPrefix(r, "-") {
				t.Fatalf("%q: %q", cmd, r)
			}
		}
		if i%2 == 0 {
			c.Do("PEXPIREAT", k.name, fmt.Sprint(4102444800000+int64(i))) // 2100-01-01
		}
	}
	c.Do("SELECT", "5")
	c.Do("SET", "ttl:string", "v", "PXAT", "4102444800123")
	c.Do("SET", "plain", "123456")
	c.Do("SELECT", "0")
	if r := c.Do("FUNCTION", "LOAD", rdbTestLib); r != redistest.Bulk("rdblib") {
		t.Fatalf("FUNCTION LOAD: %q", r)
	}
}

// compareRDBDataset reads every key on both servers.
func compareRDBDataset(t *testing.T, want, got *redistest.Conn) {
	t.Helper()
	compareRDBDatasetAs(t, want, got, nil)
}

// compareRDBDatasetAs is compareRDBDataset with the replies passed through
// normalize first, when it is not nil.
func compareRDBDatasetAs(t *testing.T, want, got *redistest.Conn, normalize func(string) string) {
	t.Helper()
	read := read
	if normalize != nil {
		read = func(c *redistest.Conn, args []string) string { return normalize(readReply(c, args)) }
	}
	for _, k := range rdbDataset() {
		want.Do("SELECT", k.db)
		got.Do("SELECT", k.db)
		reads := append(k.dc.reads, []string{"TYPE", "k"}, []string{"PEXPIRETIME", "k"})
		for _, rd := range reads {
			rd = renameKey(rd, k.name)
			if w, g := read(want, rd), read(got, rd); w != g {
				t.Errorf("%s db %s %q:\n source: %.300q\n loaded: %.300q", k.dc.name, k.db, rd, w, g)
			}
		}
	}
	for _, db := range []string{"0", "1", "2", "5"} {
		want.Do("SELECT", db)
		got.Do("SELECT", db)
		for _, rd := range [][]string{{"DBSIZE"}, {"GET", "plain"}, {"PEXPIRETIME", "ttl:string"}} {
			if w, g := read(want, rd), read(got, rd); w != g {
				t.Errorf("db %s %q: source %q, loaded %q", db, rd, w, g)
			}
		}
	}
	want.Do("SELECT", "0")
	got.Do("SELECT", "0")
	if r := got.Do("FCALL", "rdbfunc", "0", "x"); r != redistest.Bulk("from the rdb file: x") {
		t.Errorf("FCALL after loading: %q", r)
	}
}

func TestRDBFileFromRedisLoadsIntoMyRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	dir := t.TempDir()
	real := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir, "--dbfilename", "x.rdb",
		"--enable-debug-command", "yes"))
	fillRDBDataset(t, real)
	// a key that has expired but is still in Redis's memory: written to the
	// file, skipped by the loader
	real.Do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	real.Do("SELECT", "5")
	real.Do("SET", "expired", "v", "PXAT", "1000")
	real.Do("SELECT", "0")
	if r := real.Do("SAVE"); r != redistest.OK {
		t.Fatalf("SAVE on redis: %q", r)
	}
	real.Do("SELECT", "5")
	real.Do("GET", "expired") // deletes it, so DBSIZE counts as a load should
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir, DBFilename: "x.rdb"})
	mine := redistest.Dial(t, addr)
	compareRDBDataset(t, real, mine)
}

func TestRDBFileFromMyRedisLoadsIntoRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	dir := t.TempDir()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	mine := redistest.Dial(t, addr)
	fillRDBDataset(t, mine)
	if r := mine.Do("SAVE"); r != redistest.OK {
		t.Fatalf("SAVE: %q", r)
	}
	path := filepath.Join(dir, "dump.rdb")
	if check, err := exec.LookPath("redis-check-rdb"); err == nil {
		checkRDB(t, check, path)
	} else {
		t.Log("redis-check-rdb not installed: not checked")
	}
	real := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir, "--dbfilename", "dump.rdb"))
	compareRDBDataset(t, mine, real)

	// and without compression or checksum, as rdbcompression/rdbchecksum no
	dir2 := t.TempDir()
	_, addr2 := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir2, RDBNoCompression: true, RDBNoChecksum: true})
	mine2 := redistest.Dial(t, addr2)
	fillRDBDataset(t, mine2)
	mine2.Do("SAVE")
	b, err := os.ReadFile(filepath.Join(dir2, "dump.rdb"))
	if err != nil || !strings.HasSuffix(string(b), "\xff\x00\x00\x00\x00\x00\x00\x00\x00") {
		t.Fatalf("rdbchecksum no: the file does not end in EOF and a zero checksum (%v)", err)
	}
	real2 := redistest.Dial(t, redistest.StartRealRedis(t, "--dir", dir2, "--dbfilename", "dump.rdb"))
	compareRDBDataset(t, mine2, real2)
}

// checkRDB runs redis-check-rdb on path.
func checkRDB(t *testing.T, check, path string) {
	t.Helper()
	out, err := exec.Command(check, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Errorf("redis-check-rdb %s: %v\n%s", path, err, out)
	}
}
