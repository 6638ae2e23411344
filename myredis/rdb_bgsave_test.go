package myredis_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// dbContents reads every key of every database: type, value (arrays sorted
// where the order is not the type's) and expiry.
func dbContents(t *testing.T, c *redistest.Conn, dbs int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for db := range dbs {
		c.Do("SELECT", fmt.Sprint(db))
		keys := strings.Split(sortedArray(c.Do("KEYS", "*")), "\r\n")
		for i := 2; i < len(keys); i += 2 {
			k := keys[i]
			var val string
			switch typ := c.Do("TYPE", k); typ {
			case "+string\r\n":
				val = c.Do("GET", k)
			case "+hash\r\n":
				val = sortedArray(c.Do("HGETALL", k))
			case "+zset\r\n":
				val = c.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
			case "+list\r\n":
				val = c.Do("LRANGE", k, "0", "-1")
			case "+set\r\n":
				val = sortedArray(c.Do("SMEMBERS", k))
			case "+stream\r\n":
				val = c.Do("XRANGE", k, "-", "+") + c.Do("XINFO", "GROUPS", k) + c.Do("XPENDING", k, "g") // (the extended form has idle times)
			default:
				t.Fatalf("key %q of type %q", k, typ)
			}
			out[fmt.Sprintf("%d/%s", db, k)] = val + c.Do("PEXPIRETIME", k)
		}
	}
	c.Do("SELECT", "0")
	return out
}

func waitBgsave(t *testing.T, c *redistest.Conn) {
	t.Helper()
	for range 3000 {
		if strings.Contains(c.Do("INFO", "persistence"), "rdb_bgsave_in_progress:0") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("BGSAVE did not finish in 30s")
}

// TestBgsaveWritesTheStateAtT0: writes made while BGSAVE runs (overwrites,
// in-place string changes, deletes, new keys, FLUSHDB, SWAPDB, MOVE) do not
// reach the file: it holds the data as it was when BGSAVE was answered.
func TestBgsaveWritesTheStateAtT0(t *testing.T) {
	dir := t.TempDir()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	c := redistest.Dial(t, addr)
	const n = 6000
	for db := range 4 {
		var cmds [][]string
		cmds = append(cmds, []string{"SELECT", fmt.Sprint(db)})
		for i := range n {
			switch i % 5 {
			case 0:
				cmds = append(cmds, []string{"SET", fmt.Sprint("k", i), fmt.Sprint("value-", i, strings.Repeat("x", i%40))})
			case 1:
				cmds = append(cmds, []string{"HSET", fmt.Sprint("k", i), "a", "1", "b", fmt.Sprint(i)})
			case 2:
				cmds = append(cmds, []string{"ZADD", fmt.Sprint("k", i), "1", "a", fmt.Sprint(i), "b"})
			case 3:
				cmds = append(cmds, []string{"RPUSH", fmt.Sprint("k", i), "a", fmt.Sprint(i)})
			case 4:
				cmds = append(cmds, []string{"SADD", fmt.Sprint("k", i), "1", fmt.Sprint(i)})
			}
			if i%7 == 0 {
				cmds = append(cmds, []string{"PEXPIREAT", fmt.Sprint("k", i), fmt.Sprint(4102444800000 + i)})
			}
		}
		c.Pipeline(cmds...)
	}
	want := dbContents(t, c, 4)

	// BGSAVE and, in the same pipeline, writes that the scan has not reached
	writes := [][]string{{"BGSAVE"}}
	for i := n - 1; i >= 0; i -= 3 {
		k := fmt.Sprint("k", i)
		switch i % 5 {
		case 0:
			writes = append(writes, []string{"SETRANGE", k, "0", "CHANGED"}, []string{"APPEND", k, "more"})
		case 1:
			writes = append(writes, []string{"HSET", k, "a", "changed"})
		case 2:
			writes = append(writes, []string{"ZADD", k, "5", "new"})
		case 3:
			writes = append(writes, []string{"DEL", k})
		case 4:
			writes = append(writes, []string{"SREM", k, "1"})
		}
		writes = append(writes, []string{"SET", fmt.Sprint("new", i), "v"})
	}
	writes = append(writes, []string{"MOVE", "k5", "3"}, []string{"SELECT", "1"}, []string{"FLUSHDB"},
		[]string{"SWAPDB", "2", "3"}, []string{"SELECT", "0"})
	replies := c.Pipeline(writes...)
	if replies[0] != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", replies[0])
	}
	inProgress := strings.Contains(c.Do("INFO", "persistence"), "rdb_bgsave_in_progress:1")
	t.Logf("still saving after the writes: %v", inProgress)
	waitBgsave(t, c)
	if info := c.Do("INFO", "persistence"); !strings.Contains(info, "rdb_saves:1\r\n") ||
		!strings.Contains(info, "rdb_last_bgsave_status:ok\r\n") {
		t.Fatalf("INFO after BGSAVE: %s", info)
	}

	_, addr2 := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	got := dbContents(t, redistest.Dial(t, addr2), 4)
	if len(got) != len(want) {
		t.Errorf("%d keys loaded, want %d", len(got), len(want))
	}
	bad := 0
	for k, w := range want {
		if got[k] != w && bad < 10 {
			bad++
			t.Errorf("%s: loaded %.100q, at BGSAVE %.100q", k, got[k], w)
		}
	}
	if check, err := exec.LookPath("redis-check-rdb"); err == nil {
		checkRDB(t, check, filepath.Join(dir, "dump.rdb"))
	}
}

func TestBgsaveWhileSaving(t *testing.T) {
	dir := t.TempDir()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	c := redistest.Dial(t, addr)
	c.Do("SET", "k", "v")
	// one pipeline runs as one executor job: the first BGSAVE is still running
	got := c.Pipeline([]string{"BGSAVE"}, []string{"BGSAVE"}, []string{"SAVE"}, []string{"BGSAVE", "SCHEDULE", "x"})
	want := []string{"+Background saving started\r\n", "-ERR Background save already in progress\r\n",
		"-ERR Background save already in progress\r\n", "-ERR syntax error\r\n"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d: %q, want %q", i, got[i], want[i])
		}
	}
	waitBgsave(t, c)
	if r := c.Do("SAVE"); r != redistest.OK {
		t.Fatalf("SAVE after BGSAVE: %q", r)
	}
}

// TestSavePointStartsBgsave: save 1 1 saves once a second has passed and a
// key has changed.
func TestSavePointStartsBgsave(t *testing.T) {
	dir := t.TempDir()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir, Save: [][2]int64{{1, 1}}})
	c := redistest.Dial(t, addr)
	c.Do("SET", "k", "v")
	for range 1000 {
		if strings.Contains(c.Do("INFO", "persistence"), "rdb_saves:1\r\n") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	info := c.Do("INFO", "persistence")
	if !strings.Contains(info, "rdb_saves:1\r\n") || !strings.Contains(info, "rdb_changes_since_last_save:0\r\n") {
		t.Fatalf("no save after the save point: %s", info)
	}
	_, addr2 := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	if r := redistest.Dial(t, addr2).Do("GET", "k"); r != redistest.Bulk("v") {
		t.Fatalf("GET after loading the saved file: %q", r)
	}
}

// TestBgsaveServesClientsDuringAHugeValue: while BGSAVE encodes a sorted set
// and a hash of 200,000 members each (a slice per executor job), another
// client's PINGs are answered; the file then loads with the same contents.
// The longest PING wait is logged, not asserted (the machine is shared).
func TestBgsaveServesClientsDuringAHugeValue(t *testing.T) {
	dir := t.TempDir()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	c := redistest.Dial(t, addr)
	const members, batch = 200_000, 1000
	for i := 0; i < members; i += batch {
		z, h := []string{"ZADD", "big"}, []string{"HSET", "bighash"}
		for j := i; j < i+batch; j++ {
			z = append(z, fmt.Sprint(j), fmt.Sprint("m", j))
			h = append(h, fmt.Sprint("f", j), fmt.Sprint(j))
		}
		c.Pipeline(z, h)
	}
	want := []string{c.Do("ZCARD", "big"), c.Do("HLEN", "bighash"), c.Do("ZRANGE", "big", "-3", "-1", "WITHSCORES")}
	ping := redistest.Dial(t, addr)
	if r := c.Do("BGSAVE"); r != redistest.Simple("Background saving started") {
		t.Fatalf("BGSAVE: %q", r)
	}
	answered, longest := 0, time.Duration(0)
	for {
		start := time.Now() // a round: INFO on one connection, PING on the other
		running := strings.Contains(c.Do("INFO", "persistence"), "rdb_bgsave_in_progress:1")
		if r := ping.Do("PING"); r != redistest.Simple("PONG") {
			t.Fatalf("PING: %q", r)
		}
		longest = max(longest, time.Since(start))
		if !running {
			break
		}
		answered++
	}
	t.Logf("PINGs answered while BGSAVE ran: %d, longest INFO+PING round %v", answered, longest)
	if answered == 0 {
		t.Error("no PING was answered while the BGSAVE ran")
	}
	_, addr2 := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	c2 := redistest.Dial(t, addr2)
	got := []string{c2.Do("ZCARD", "big"), c2.Do("HLEN", "bighash"), c2.Do("ZRANGE", "big", "-3", "-1", "WITHSCORES")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reload %q, want %q", got, want)
	}
}

// TestBgsaveLargeValuesUnderWrites: large sets, lists, streams, sorted sets
// and hashes (each saved a slice per executor job) changed while BGSAVE runs
// are saved as they were when BGSAVE was answered. Each round of writes
// changes one more key for the first time, so that first changes land before,
// during and after the scan slices each value.
func TestBgsaveLargeValuesUnderWrites(t *testing.T) {
	largeValuesUnderWrites(t, myredis.Config{}, "BGSAVE", "+Background saving started\r\n", "rdb_bgsave_in_progress")
}

// TestAOFRewriteLargeValuesUnderWrites: the same writes during BGREWRITEAOF
// with the RDB preamble (the large values encoded a slice per job, the writes
// in the rewrite buffer after it): the restarted server has the data as it was
// after the last write.
func TestAOFRewriteLargeValuesUnderWrites(t *testing.T) {
	largeValuesUnderWrites(t, myredis.Config{AppendOnly: true, AppendFsync: "no"}, "BGREWRITEAOF",
		"+Background append only file rewriting started\r\n", "aof_rewrite_in_progress")
}

// largeValuesUnderWrites fills large values, starts the snapshot with start
// (answered answer), writes round after round while the INFO persistence field
// progress is 1, restarts on the same files and compares: the data at the
// start for an RDB, after the last write for an AOF.
func largeValuesUnderWrites(t *testing.T, cfg myredis.Config, start, answer, progress string) {
	cfg.Dir = t.TempDir()
	srv, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr)
	const keys, members, batch = 4, 20000, 1000
	for k := range keys {
		for i := 0; i < members; i += batch {
			cmds := [][]string{{"SADD", fmt.Sprint("s", k)}, {"RPUSH", fmt.Sprint("l", k)},
				{"ZADD", fmt.Sprint("z", k)}, {"HSET", fmt.Sprint("h", k)}}
			for j := i; j < i+batch; j++ {
				cmds[0] = append(cmds[0], fmt.Sprint("m", j))
				cmds[1] = append(cmds[1], fmt.Sprint("e", j))
				cmds[2] = append(cmds[2], fmt.Sprint(j), fmt.Sprint("m", j))
				cmds[3] = append(cmds[3], fmt.Sprint("f", j), fmt.Sprint(j))
				cmds = append(cmds, []string{"XADD", fmt.Sprint("x", k), fmt.Sprint(j+1, "-1"), "f", fmt.Sprint(j)})
			}
			c.Pipeline(cmds...)
		}
		x := fmt.Sprint("x", k)
		c.Pipeline([]string{"XGROUP", "CREATE", x, "g", "0"},
			[]string{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "50", "STREAMS", x, ">"})
	}
	atStart := dbContents(t, c, 1)
	changes := func(round int) [][]string {
		var cmds [][]string
		for k := range min(round/5+1, keys) {
			r := fmt.Sprint(round)
			cmds = append(cmds,
				[]string{"SADD", fmt.Sprint("s", k), "new" + r}, []string{"SREM", fmt.Sprint("s", k), "m" + r},
				[]string{"RPUSH", fmt.Sprint("l", k), "new" + r}, []string{"LPOP", fmt.Sprint("l", k)},
				[]string{"LSET", fmt.Sprint("l", k), "100", "changed" + r},
				[]string{"ZADD", fmt.Sprint("z", k), "-1", "new" + r}, []string{"HSET", fmt.Sprint("h", k), "f1", r},
				[]string{"XADD", fmt.Sprint("x", k), "*", "new", r}, []string{"XDEL", fmt.Sprint("x", k), fmt.Sprint(round+100, "-1")},
				[]string{"XACK", fmt.Sprint("x", k), "g", fmt.Sprint(round+1, "-1")},
				[]string{"XTRIM", fmt.Sprint("x", k), "MINID", fmt.Sprint(round*10 + 1)})
		}
		return cmds
	}
	replies := c.Pipeline(append([][]string{{start}}, changes(0)...)...)
	if replies[0] != answer {
		t.Fatalf("%s: %q", start, replies[0])
	}
	rounds := 1
	for ; strings.Contains(c.Do("INFO", "persistence"), progress+":1"); rounds++ {
		c.Pipeline(changes(rounds)...)
	}
	t.Logf("rounds of writes while %s ran: %d", start, rounds)
	waitBgsave(t, c)
	for strings.Contains(c.Do("INFO", "persistence"), progress+":1") {
		time.Sleep(10 * time.Millisecond)
	}
	info := c.Do("INFO", "persistence")
	if !strings.Contains(info, "rdb_last_bgsave_status:ok\r\n") ||
		(cfg.AppendOnly && !strings.Contains(info, "aof_last_bgrewrite_status:ok\r\n")) {
		t.Fatalf("INFO after %s: %s", start, info)
	}
	want := atStart
	if cfg.AppendOnly {
		want = dbContents(t, c, 1)
	}
	srv.Close()
	_, addr2 := redistest.StartMyRedisConfig(t, cfg)
	got := dbContents(t, redistest.Dial(t, addr2), 1)
	if len(got) != len(want) {
		t.Errorf("%d keys loaded, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			g := got[k]
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s: loaded %d bytes, at BGSAVE %d bytes; from byte %d: loaded %.200q, at BGSAVE %.200q", k, len(g), len(w), i, g[i:], w[i:])
		}
	}
}
