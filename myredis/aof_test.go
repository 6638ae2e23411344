package myredis

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// In-process AOF tests: the server runs in the test binary and is closed and opened
// again on the same directory. The crash tests (SIGKILL) are in aof_crash_test.go.

// aofClock is a settable clock for the expiry tests.
type aofClock struct{ ms atomic.Int64 }

func (c *aofClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }
func (c *aofClock) add(d time.Duration) {
	c.ms.Add(d.Milliseconds())
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openAOFServer opens a server with appendonly yes on dir and serves it on a free
// loopback port.
func openAOFServer(t testing.TB, dir string, mod func(*Config), opts ...Option) (*Server, string) {
	t.Helper()
	s, err := tryOpenAOF(dir, mod, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	return s, ln.Addr().String()
}

func tryOpenAOF(dir string, mod func(*Config), opts ...Option) (*Server, error) {
	cfg := DefaultConfig()
	cfg.AppendOnly = true
	cfg.Dir = dir
	cfg.AppendFsync = "always"
	if mod != nil {
		mod(&cfg)
	}
	return Open(cfg, append([]Option{WithLogger(quietLogger())}, opts...)...)
}

// dump lists every live key of every database as "db key value pexpiretime".
func dump(s *Server) []string {
	var out []string
	s.submit(func() {
		now := s.nowMs()
		for _, db := range s.dbs {
			db.each(func(key string, e *entry) {
				if db.isExpired(key, now) {
					return
				}
				val := fmt.Sprintf("%q", e.value())
				switch v := e.value().(type) {
				case *zset:
					val = fmt.Sprint(v.Items(0, v.Len(), false))
				case *setValue:
					val = fmt.Sprint(sortedCopy(v.members()))
				case *hashValue:
					var fields []string
					v.Range(func(f string, b []byte) bool {
						fields = append(fields, fmt.Sprintf("%q=%q", f, b))
						return true
					})
					sort.Strings(fields)
					val = fmt.Sprint(fields)
				case *list:
					val = fmt.Sprintf("%q", listElems(v))
				}
				out = append(out, fmt.Sprintf("%d %s %s %d", db.id, key, val, db.when(e)))
			})
		}
	})
	sort.Strings(out)
	return out
}

func aofPath(dir string) string { return filepath.Join(dir, "appendonly.aof") }

func TestAOFReplayRestoresEveryDatabaseAndDeadline(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "plain", "v")
	c.must(t, "SET", "ttl", "v", "EX", 1000)
	c.must(t, "SET", "n", "10")
	c.must(t, "INCRBY", "n", 5)
	c.must(t, "INCRBYFLOAT", "n", "0.5")
	c.must(t, "APPEND", "plain", "+more")
	c.must(t, "SET", "gone", "x")
	c.must(t, "DEL", "gone")
	c.must(t, "SET", "p", "x", "EX", 100)
	c.must(t, "PERSIST", "p")
	c.must(t, "SET", "e", "x")
	c.must(t, "PEXPIRE", "e", 50000)
	c.must(t, "SELECT", 3)
	c.must(t, "SET", "in3", "three")
	c.must(t, "MULTI")
	c.must(t, "SET", "tx", "1")
	c.must(t, "SELECT", 5)
	c.must(t, "SET", "tx5", "5")
	c.must(t, "EXEC")
	c.must(t, "SELECT", 0)
	c.must(t, "RENAME", "e", "e2")
	c.must(t, "GETEX", "ttl", "PX", 900000)
	want := dump(s)
	s.Close()

	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	got := dump(s2)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAOFLogsAbsoluteDeadlinesSelectAndTransactions(t *testing.T) {
	dir := t.TempDir()
	clock := &aofClock{}
	clock.ms.Store(1_700_000_000_000)
	s, addr := openAOFServer(t, dir, nil, WithClock(clock))
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "a", "1", "EX", 10)
	c.must(t, "EXPIRE", "a", 20)
	c.must(t, "GET", "a") // reads are not logged
	c.must(t, "SET", "nx", "1", "NX")
	c.must(t, "SET", "nx", "2", "NX") // did nothing: not logged
	c.must(t, "SELECT", 2)
	c.must(t, "MULTI")
	c.must(t, "INCR", "k")
	c.must(t, "INCR", "k")
	c.must(t, "EXEC")
	c.must(t, "MULTI")
	c.must(t, "GET", "k")
	c.must(t, "EXEC") // read-only transaction: nothing logged
	s.Close()

	var want []byte
	for _, cmd := range [][]string{
		{"SELECT", "0"},
		{"SET", "a", "1", "PXAT", "1700000010000"},
		{"PEXPIREAT", "a", "1700000020000"},
		{"SET", "nx", "1", "NX"}, // as sent: it does the same on replay
		{"SELECT", "2"},
		{"MULTI"},
		{"INCR", "k"},
		{"INCR", "k"},
		{"EXEC"},
	} {
		want = appendCommand(want, bargs(cmd...))
	}
	got, _ := os.ReadFile(aofPath(dir))
	if !bytes.Equal(got, want) {
		t.Fatalf("file:\n%q\nwant:\n%q", got, want)
	}
}

// TestAOFLogsRestoreAsRedisPropagatesIt: RESTORE with a relative TTL is logged as
// sent (its options, their case) with the TTL made absolute and ABSTTL added, as
// Redis rewrites it; with ABSTTL, or without a TTL, it is logged unchanged.
func TestAOFLogsRestoreAsRedisPropagatesIt(t *testing.T) {
	dir := t.TempDir()
	clock := &aofClock{}
	clock.ms.Store(1_700_000_000_000)
	s, addr := openAOFServer(t, dir, nil, WithClock(clock))
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "src", "hello")
	dump, ok := c.must(t, "DUMP", "src").(string)
	if !ok {
		t.Fatal("DUMP did not return a string")
	}
	c.must(t, "restore", "a", "5000", dump, "idletime", "7")
	c.must(t, "RESTORE", "b", "1800000000000", dump, "absttl")
	c.must(t, "RESTORE", "c", "0", dump, "Replace")
	s.Close()

	var want []byte
	for _, cmd := range [][]string{
		{"SELECT", "0"},
		{"SET", "src", "hello"},
		{"restore", "a", "1700000005000", dump, "idletime", "7", "ABSTTL"},
		{"RESTORE", "b", "1800000000000", dump, "absttl"},
		{"RESTORE", "c", "0", dump, "Replace"},
	} {
		want = appendCommand(want, bargs(cmd...))
	}
	got, _ := os.ReadFile(aofPath(dir))
	if !bytes.Equal(got, want) {
		t.Fatalf("file:\n%q\nwant:\n%q", got, want)
	}
}

// writeAOF writes commands as an AOF file and returns the offset where each starts.
func writeAOF(t testing.TB, dir string, cmds ...[]string) []int {
	t.Helper()
	var b []byte
	var offs []int
	for _, c := range cmds {
		offs = append(offs, len(b))
		b = appendCommand(b, bargs(c...))
	}
	if err := os.WriteFile(aofPath(dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return offs
}

func TestAOFTornTailAtEveryOffsetIsCutAndEarlierCommandsLoad(t *testing.T) {
	cmds := [][]string{
		{"SELECT", "0"},
		{"SET", "a", "1"},
		{"SET", "b", "2", "PXAT", "99999999999999"},
		{"SET", "last", "value-of-the-last-command"},
	}
	full := appendCommand(nil, nil)[:0]
	var lastAt int
	for i, c := range cmds {
		if i == len(cmds)-1 {
			lastAt = len(full)
		}
		full = appendCommand(full, bargs(c...))
	}
	for cut := lastAt; cut < len(full); cut++ {
		dir := t.TempDir()
		os.WriteFile(aofPath(dir), full[:cut], 0o644)
		s, err := tryOpenAOF(dir, nil)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := s.Do("MGET", "a", "b", "last")
		s.Do("SET", "after", "restart") // appended after the cut, must be readable
		s.Close()
		if string(got) != "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n" {
			t.Fatalf("cut at %d: MGET = %q", cut, got)
		}
		s, err = tryOpenAOF(dir, nil)
		if err != nil {
			t.Fatalf("cut at %d, second start: %v", cut, err)
		}
		if got := s.Do("GET", "after"); string(got) != "$7\r\nrestart\r\n" {
			t.Fatalf("cut at %d: the write after the cut was not replayed: %q", cut, got)
		}
		s.Close()
	}
}

func TestAOFUnfinishedTransactionIsCutWhole(t *testing.T) {
	dir := t.TempDir()
	offs := writeAOF(t, dir,
		[]string{"SET", "before", "1"},
		[]string{"MULTI"},
		[]string{"SET", "tx1", "1"},
		[]string{"SET", "tx2", "2"},
	)
	s, err := tryOpenAOF(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Do("MGET", "before", "tx1", "tx2")
	s.Close()
	if string(got) != "*3\r\n$1\r\n1\r\n$-1\r\n$-1\r\n" {
		t.Fatalf("MGET = %q: a transaction without EXEC must apply nothing", got)
	}
	if st, _ := os.Stat(aofPath(dir)); st.Size() != int64(offs[1]) {
		t.Fatalf("file is %d bytes, want it cut at MULTI (%d)", st.Size(), offs[1])
	}
}

func TestAOFCorruptionStopsStartUpNamingTheOffsetAndKeepsTheFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte, at int) []byte
		where  int // the offset named, from the start of the damaged command
	}{
		{"bad byte", func(b []byte, at int) []byte { b[at] = '?'; return b }, 0}, // ('#' starts an annotation)
		{"bad length", func(b []byte, at int) []byte { b[at+1] = 'x'; return b }, 1},
		{"bad bulk end", func(b []byte, at int) []byte { b[at+11] = '!'; return b }, 11},
		{"length past the end of the file", func(b []byte, at int) []byte {
			return bytes.Replace(b, []byte("$2\r\nk2"), []byte("$999\r\nk2"), 1)
		}, 0},
		{"unknown command", func(b []byte, at int) []byte {
			return bytes.Replace(b, []byte("$3\r\nSET\r\n$2\r\nk2"), []byte("$3\r\nSEX\r\n$2\r\nk2"), 1)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			offs := writeAOF(t, dir,
				[]string{"SET", "k1", "1"},
				[]string{"SET", "k2", "2"},
				[]string{"SET", "k3", "3"},
			)
			b, _ := os.ReadFile(aofPath(dir))
			b = tc.damage(b, offs[1])
			os.WriteFile(aofPath(dir), b, 0o644)
			_, err := tryOpenAOF(dir, nil)
			if err == nil {
				t.Fatal("start-up succeeded on a corrupt file")
			}
			if at := offs[1] + tc.where; !strings.Contains(err.Error(), fmt.Sprintf("offset %d:", at)) {
				t.Fatalf("error does not name offset %d: %v", at, err)
			}
			after, _ := os.ReadFile(aofPath(dir))
			if !bytes.Equal(after, b) {
				t.Fatal("the corrupt file was modified")
			}
		})
	}
}

func TestAOFExpiredKeysStayExpiredAndDeletedStayDeleted(t *testing.T) {
	dir := t.TempDir()
	clock := &aofClock{}
	clock.ms.Store(1_700_000_000_000)
	s, addr := openAOFServer(t, dir, nil, WithClock(clock))
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "read-after-expiry", "x", "PX", 100)
	c.must(t, "SET", "never-read", "x", "PX", 100)
	c.must(t, "SET", "lives", "x", "PX", 100000)
	c.must(t, "SET", "deleted", "x")
	c.must(t, "DEL", "deleted")
	c.must(t, "SET", "getdel", "x")
	c.must(t, "GETDEL", "getdel")
	clock.add(time.Second)
	if v := c.must(t, "GET", "read-after-expiry"); v != nil {
		t.Fatalf("GET of an expired key = %v", v)
	}
	s.Close()

	// Replayed at a time after the deadlines, with nothing but the file to go by.
	s2, addr2 := openAOFServer(t, dir, nil, WithClock(clock))
	defer s2.Close()
	c2 := mustDialAOF(t, addr2)
	for _, k := range []string{"read-after-expiry", "never-read", "deleted", "getdel"} {
		if v := c2.must(t, "EXISTS", k); v != int64(0) {
			t.Errorf("%s exists after replay", k)
		}
	}
	if v := c2.must(t, "PTTL", "lives"); v != int64(99000) {
		t.Errorf("PTTL lives = %v, want 99000", v)
	}
	if v := c2.must(t, "DBSIZE"); v != int64(1) {
		t.Errorf("DBSIZE = %v, want 1", v)
	}
}

// TestWriteCommandsDeclareTheirKeys guards the rewrite: it captures a key's old state
// from the keys a write command declares (firstKey/lastKey/step), so a write command
// that changes an undeclared key would break the rewrite's snapshot.
func TestWriteCommandsDeclareTheirKeys(t *testing.T) {
	// swapdb: the rewrite captures both databases before it runs (beforeSwapDB)
	keyless := map[string]bool{"flushdb": true, "flushall": true, "swapdb": true}
	for name, cmd := range buildCommandTable() {
		if cmd.flags&flagWrite != 0 && cmd.firstKey == 0 && cmd.numKeysAt == 0 && cmd.keysFn == nil && !keyless[name] {
			t.Errorf("write command %s declares no keys", name)
		}
	}
}

// TestAOFAlwaysRepliesOnlyAfterFsync: under always, when a write's reply arrives,
// every byte written to the file so far is covered by an fsync. (A SIGKILL cannot
// tell a fsynced write from one in the page cache; this can.)
func TestAOFAlwaysRepliesOnlyAfterFsync(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	defer s.Close()
	c := mustDialAOF(t, addr)
	for i := range 200 {
		c.must(t, "SET", "k", i)
		size := int64(0)
		if st, err := os.Stat(aofPath(dir)); err == nil {
			size = st.Size()
		}
		if synced := s.aof.synced.Load(); synced != size {
			t.Fatalf("write %d: reply received with %d bytes fsynced of %d in the file", i, synced, size)
		}
	}
}

func TestAOFGroupCommitSharesFsyncs(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	defer s.Close()
	const clients, each = 20, 100
	var wg sync.WaitGroup
	for g := range clients {
		c := mustDialAOF(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c.must(t, "SET", fmt.Sprintf("k%d:%d", g, i), i)
			}
		}()
	}
	wg.Wait()
	c := mustDialAOF(t, addr)
	fsyncs, _ := strconv.Atoi(c.infoField(t, "persistence", "aof_fsyncs"))
	replies, _ := strconv.Atoi(c.infoField(t, "persistence", "aof_group_commit_replies"))
	t.Logf("%d writes, %d replies held for the disk, %d fsyncs (%.1f writes per fsync)",
		clients*each, replies, fsyncs, float64(clients*each)/float64(fsyncs))
	if replies < clients*each {
		t.Errorf("only %d of %d write replies waited for the writer", replies, clients*each)
	}
	if fsyncs*2 > clients*each {
		t.Errorf("%d fsyncs for %d writes from %d clients: writes are not grouped", fsyncs, clients*each, clients)
	}
}

// TestAOFRewriteUnderWritesKeepsEveryWrite checks the copy-on-write snapshot: while
// the rewrite scans, clients increment counters (replaying an INCR twice would
// show), overwrite, delete and create keys. After a restart the data equals the
// data before it, and the file is smaller than before the rewrite.
// It runs with aof-use-rdb-preamble yes (the snapshot is an RDB payload) and no.
func TestAOFRewriteUnderWritesKeepsEveryWrite(t *testing.T) {
	for _, pre := range []bool{true, false} {
		t.Run(fmt.Sprintf("preamble=%v", pre), func(t *testing.T) { rewriteUnderWrites(t, pre) })
	}
}

func rewriteUnderWrites(t *testing.T, preamble bool) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, func(c *Config) { c.AppendFsync, c.AOFNoRDBPreamble = "no", !preamble })
	c := mustDialAOF(t, addr)
	const keys = 20000
	for round := range 3 { // each key written three times: the file is ~3x the data
		for i := 0; i < keys; i += 100 {
			args := []any{"MSET"}
			for j := i; j < i+100; j++ {
				args = append(args, fmt.Sprintf("key:%d", j), fmt.Sprintf("v%d-%d", round, j))
			}
			c.must(t, args...)
		}
	}
	for i := range 200 {
		c.must(t, "SET", fmt.Sprintf("ctr:%d", i), 0, "EX", 3600)
	}
	for i := 0; i < 3*zsetSlice; i += 500 { // a sorted set captured in slices
		args := []any{"ZADD", "queue"}
		for j := i; j < i+500; j++ {
			args = append(args, j, fmt.Sprintf("user:%d", j))
		}
		c.must(t, args...)
	}
	for i := range 300 {
		c.must(t, "HSET", "hash", fmt.Sprintf("f%d", i), i)
	}
	c.must(t, "SELECT", 1)
	c.must(t, "SET", "db1", "x")
	c.must(t, "SELECT", 0)
	before, _ := os.Stat(aofPath(dir))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wc := mustDialAOF(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				switch n % 8 {
				case 0, 1:
					wc.must(t, "INCR", fmt.Sprintf("ctr:%d", r.IntN(200)))
				case 2:
					wc.must(t, "SET", fmt.Sprintf("key:%d", r.IntN(keys)), fmt.Sprintf("w%d", n))
				case 3:
					wc.must(t, "DEL", fmt.Sprintf("key:%d", r.IntN(keys)))
				case 4:
					wc.must(t, "APPEND", fmt.Sprintf("new:%d:%d", g, r.IntN(1000)), "+")
				case 5:
					wc.must(t, "ZINCRBY", "queue", 1, fmt.Sprintf("user:%d", r.IntN(3*zsetSlice)))
				case 6:
					wc.must(t, "ZPOPMIN", "queue")
				case 7:
					wc.must(t, "ZADD", "queue", r.IntN(100000), fmt.Sprintf("late:%d:%d", g, n))
					wc.must(t, "HINCRBY", "hash", fmt.Sprintf("f%d", r.IntN(400)), 1)
				}
				if g == 0 && n == 50 { // a FLUSHDB of database 1 in the middle
					wc.must(t, "SELECT", 1)
					wc.must(t, "FLUSHDB")
					wc.must(t, "SET", "after-flush", n)
					wc.must(t, "SELECT", 0)
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if v := c.must(t, "BGREWRITEAOF"); v != "Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF = %v", v)
	}
	if _, err := c.do("BGREWRITEAOF"); err == nil || !strings.Contains(err.Error(), "already in progress") {
		t.Fatalf("second BGREWRITEAOF: %v", err)
	}
	c.waitRewrite(t, 1)
	base, _ := strconv.ParseInt(c.infoField(t, "persistence", "aof_base_size"), 10, 64)
	time.Sleep(20 * time.Millisecond) // writes after the switch go to the new file
	close(stop)
	wg.Wait()
	want := dump(s)
	s.Close()

	if base >= before.Size() {
		t.Errorf("rewritten file is %d bytes, %d before: it did not shrink", base, before.Size())
	}
	t.Logf("file %d bytes before the rewrite, %d after", before.Size(), base)
	if b, _ := os.ReadFile(aofPath(dir)); bytes.HasPrefix(b, []byte("REDIS0010")) != preamble {
		t.Fatalf("preamble %v, the rewritten file begins %q", preamble, b[:min(len(b), 16)])
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	got := dump(s2)
	if len(got) != len(want) {
		t.Fatalf("%d keys after restart, %d before", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("after restart %s, before %s", got[i], want[i])
		}
	}
}

func TestAOFAutomaticRewriteWhenTheFileDoubles(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, func(c *Config) {
		c.AppendFsync = "no"
		c.AutoAOFRewriteMinSize = 64 << 10
	})
	defer s.Close()
	c := mustDialAOF(t, addr)
	started := func() bool {
		return c.infoField(t, "persistence", "aof_rewrite_in_progress") == "1" ||
			c.infoField(t, "persistence", "aof_rewrites") != "0"
	}
	for i := 0; i%10 != 0 || !started(); i++ { // stop writing once it has started
		c.must(t, "SET", fmt.Sprintf("k%d", i%100), strings.Repeat("x", 100))
		if i > 100000 {
			t.Fatal("no automatic rewrite after 10 MB of writes")
		}
	}
	c.waitRewrite(t, 1)
	if size, _ := strconv.Atoi(c.infoField(t, "persistence", "aof_base_size")); size > 64<<10 {
		t.Errorf("aof_base_size = %d after rewriting 100 keys", size)
	}
}

func TestSaveAndBgrewriteaofWithAOF(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, noPreamble) // the command encoding
	c := mustDialAOF(t, addr)
	for i := range 10 {
		c.must(t, "SET", "k", i)
	}
	if v := c.must(t, "SAVE"); v != "OK" { // the RDB file, as in Redis; the AOF stays
		t.Fatalf("SAVE = %v", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatalf("SAVE with appendonly yes wrote no dump.rdb: %v", err)
	}
	c.must(t, "SET", "k2", "x")
	if v := c.must(t, "BGREWRITEAOF"); v != "Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF = %v", v)
	}
	c.waitRewrite(t, 1)
	b, _ := os.ReadFile(aofPath(dir))
	if !bytes.Contains(b, appendCommand(nil, bargs("SET", "k", "9"))) || bytes.Contains(b, appendCommand(nil, bargs("SET", "k", "8"))) {
		t.Fatalf("after BGREWRITEAOF the AOF is not rewritten: %q", b)
	}
	c.must(t, "MULTI")
	c.must(t, "BGREWRITEAOF")
	if v := c.must(t, "EXEC"); fmt.Sprint(v) != "[Background append only file rewriting scheduled]" {
		t.Fatalf("BGREWRITEAOF in MULTI = %v", v)
	}
	c.waitRewrite(t, 2)
	s.Close()
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := s2.Do("MGET", "k", "k2"); string(got) != "*2\r\n$1\r\n9\r\n$1\r\nx\r\n" {
		t.Fatalf("MGET after restart = %q", got)
	}
	// BGREWRITEAOF with appendonly no: aof_detached_test.go
}

func TestAOFInfoPersistence(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	defer s.Close()
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "k", "v")
	for field, want := range map[string]string{
		"aof_enabled":             "1",
		"aof_rewrite_in_progress": "0",
		"aof_last_write_status":   "ok",
		"aof_current_size":        strconv.Itoa(len(appendCommand(appendCommand(nil, bargs("SELECT", "0")), bargs("SET", "k", "v")))),
		"aof_base_size":           "0",
	} {
		if got := c.infoField(t, "persistence", field); got != want {
			t.Errorf("%s:%s, want %s", field, got, want)
		}
	}
	if v := c.must(t, "CONFIG", "GET", "appendfsync"); fmt.Sprint(v) != "[appendfsync always]" {
		t.Errorf("CONFIG GET appendfsync = %v", v)
	}
	c.must(t, "CONFIG", "SET", "appendfsync", "everysec")
	c.must(t, "SET", "k", "v2")
	if v := c.must(t, "GET", "k"); v != "v2" {
		t.Errorf("GET after CONFIG SET appendfsync = %v", v)
	}
}

// BenchmarkAOFLoad replays a file of 100k SET commands (a rewritten file's shape).
func BenchmarkAOFLoad(b *testing.B) {
	dir := b.TempDir()
	var file []byte
	file = appendCommand(file, bargs("SELECT", "0"))
	const n = 100000
	for i := range n {
		file = appendCommand(file, bargs("SET", "key:"+strconv.Itoa(i), "value-"+strconv.Itoa(i), "PXAT", "99999999999999"))
	}
	os.WriteFile(aofPath(dir), file, 0o644)
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for range b.N {
		s, err := tryOpenAOF(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "commands/s")
}

// TestAOFWriteErrorHoldsWriteRepliesUntilTheFileWorks makes the file unwritable:
// a write's reply waits (it is not durable), INFO says so, reads still answer, and
// once writing works again the reply comes and the write is in the file.
func TestAOFWriteErrorHoldsWriteRepliesUntilTheFileWorks(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "before", "1")
	good := s.aof.file.Load()
	ro, err := os.Open(aofPath(dir)) // read-only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s.aof.file.Store(ro)

	replied := make(chan any, 1)
	w := mustDialAOF(t, addr)
	go func() { v, _ := w.do("SET", "during", "2"); replied <- v }()
	select {
	case v := <-replied:
		t.Fatalf("SET answered %v while the file could not be written", v)
	case <-time.After(300 * time.Millisecond):
	}
	if st := c.infoField(t, "persistence", "aof_last_write_status"); st != "err" {
		t.Fatalf("aof_last_write_status:%s while writes fail", st)
	}
	s.aof.file.Store(good)
	select {
	case v := <-replied:
		if v != "OK" {
			t.Fatalf("SET = %v", v)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no reply after the file became writable again")
	}
	if st := c.infoField(t, "persistence", "aof_last_write_status"); st != "ok" {
		t.Fatalf("aof_last_write_status:%s after recovery", st)
	}
	s.Close()
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := s2.Do("MGET", "before", "during"); string(got) != "*2\r\n$1\r\n1\r\n$1\r\n2\r\n" {
		t.Fatalf("MGET after restart = %q", got)
	}
}

// FuzzAOFLoad: whatever the file holds, start-up either refuses it (and leaves it as
// it was) or loads it; a file that loaded loads again to the same data, with
// nothing more to cut.
func FuzzAOFLoad(f *testing.F) {
	var valid []byte
	for _, c := range [][]string{{"SELECT", "1"}, {"SET", "a", "1"}, {"MULTI"}, {"INCR", "n"}, {"EXEC"},
		{"SET", "b", "x", "PXAT", "99999999999999"}, {"DEL", "a"}} {
		valid = appendCommand(valid, bargs(c...))
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$99\r\nk\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"))
	// annotations (Redis's aof-timestamp-enabled), the last one torn
	f.Add([]byte("#TS:1700000000\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n#TS:17"))
	withPreamble := append(preambleSeed(f), valid...) // aof-use-rdb-preamble (aof_preamble.go)
	f.Add(withPreamble)
	f.Add(withPreamble[:len(withPreamble)/3])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(aofPath(dir), data, 0o644)
		s, err := tryOpenAOF(dir, nil)
		if err != nil {
			if after, _ := os.ReadFile(aofPath(dir)); !bytes.Equal(after, data) {
				t.Fatalf("refused (%v) but modified the file", err)
			}
			return
		}
		first := dump(s)
		s.Close()
		loaded, _ := os.ReadFile(aofPath(dir))
		s, err = tryOpenAOF(dir, nil)
		if err != nil {
			t.Fatalf("loaded once, then refused: %v", err)
		}
		second := dump(s)
		s.Close()
		if again, _ := os.ReadFile(aofPath(dir)); !bytes.Equal(again, loaded) {
			t.Fatalf("the second load cut the file again")
		}
		if strings.Join(first, "\n") != strings.Join(second, "\n") {
			t.Fatalf("two loads differ:\n%v\n%v", first, second)
		}
	})
}

// TestAOFEverysecFsyncsInTheBackground: under everysec a reply does not wait for an
// fsync, and the syncer covers the write within about a second.
func TestAOFEverysecFsyncsInTheBackground(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, func(c *Config) { c.AppendFsync = "everysec" })
	defer s.Close()
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "k", "v")
	written := s.aof.written.Load()
	if written == 0 {
		t.Fatal("the reply came before the write reached the file")
	}
	// a hang detector, not a timing test: an fsync on a loaded shared disk can take seconds
	deadline := time.Now().Add(30 * time.Second)
	for s.aof.synced.Load() < written {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d of %d bytes fsynced", s.aof.synced.Load(), written)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := c.infoField(t, "persistence", "aof_fsyncs"); n == "0" {
		t.Fatalf("aof_fsyncs:%s", n)
	}
}

func TestAOFRewriteSortedSets(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, noPreamble) // the command encoding
	c := mustDialAOF(t, addr)
	args := []any{"ZADD", "z", "1.1", "a", "-0", "b", "inf", "c", "-inf", "d", "1e300", "e", "3", "f", "0.1", "g"}
	for i := range 200 {
		args = append(args, i, fmt.Sprintf("m%03d", i))
	}
	c.must(t, args...)
	c.must(t, "ZINCRBY", "z", "0.2", "a")
	c.must(t, "PEXPIRE", "z", 500000)
	c.must(t, "ZADD", "small", 1, "x")
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	want := dump(s)
	wantRange := c.must(t, "ZRANGE", "z", 0, -1, "WITHSCORES")
	s.Close()

	b, _ := os.ReadFile(aofPath(dir))
	if n := bytes.Count(b, []byte("ZADD")); n != 5 { // 207 members: 4 batches of 64 or fewer, plus small
		t.Errorf("%d ZADD commands in the rewritten file, want 5", n)
	}
	s2, addr2 := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := mustDialAOF(t, addr2).must(t, "ZRANGE", "z", 0, -1, "WITHSCORES"); fmt.Sprint(got) != fmt.Sprint(wantRange) {
		t.Fatalf("ZRANGE after restart differs")
	}
}

// TestAOFRewriteSnapshotIsTheDataAtItsStart drives a rewrite's scan steps by hand and
// writes in between, to a large sorted set halfway through its slices among others:
// replaying the captured keys alone must give exactly the data at the start.
func TestAOFRewriteSnapshotIsTheDataAtItsStart(t *testing.T) {
	s, _ := openAOFServer(t, t.TempDir(), func(c *Config) { c.AppendFsync = "no" })
	defer s.Close()
	do := func(args ...string) { s.call(s.rewriteTestClient(), bargs(args...), &Writer{}) }
	var t0 []string
	var items []snapItem
	s.submit(func() {
		for i := range 3000 {
			do("SET", fmt.Sprintf("s%d", i), strconv.Itoa(i))
		}
		do("ZADD", "small", "1", "a", "2", "b")
		for i := range 3 * zsetSlice {
			do("ZADD", "big", strconv.Itoa(i%1000), fmt.Sprintf("m%d", i))
		}
		do("PEXPIRE", "big", "9999999")
	})
	t0 = dump(s)
	s.submit(func() {
		a := s.aof
		rw := &rewrite{touched: make(map[dbKey]struct{})}
		a.rw, s.beforeWrite = rw, a.beforeWrite
		step := func() bool {
			got, done, err := a.scanStep(rw)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, got...)
			return done
		}
		for len(rw.slicing) == 0 { // up to big (to be sliced), in the table's order
			if step() {
				t.Error("the scan ended without slicing big")
				return
			}
		}
		step() // big's first slice
		do("ZINCRBY", "big", "5000", "m1")
		do("ZADD", "big", "-1", "new")
		do("ZPOPMIN", "big")
		do("DEL", "s1", "s2999")
		do("SET", "s5", "changed")
		do("INCR", "s6")
		do("ZADD", "small", "3", "c")
		do("SET", "created", "x")
		for !step() {
			do("INCR", "s7")
		}
		a.rw, s.beforeWrite = nil, nil
	})
	assertSnapshotReplays(t, items, t0)
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%.200s vs %.200s", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// rewriteTestClient is an internal client in database 0 (tests, on the executor).
func (s *Server) rewriteTestClient() *Client {
	c := newClient(s, nil)
	c.authed = true
	return c
}

func TestAOFSelectBeyondDatabasesStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	writeAOF(t, dir, []string{"SELECT", "20"}, []string{"SET", "k", "v"})
	if _, err := tryOpenAOF(dir, nil); err == nil || !strings.Contains(err.Error(), "more databases") {
		t.Fatalf("start-up with SELECT 20 and 16 databases: %v", err)
	}
	if _, err := tryOpenAOF(dir, func(c *Config) { c.Databases = 32 }); err != nil {
		t.Fatalf("with --databases 32: %v", err)
	}
}

// BenchmarkAOFSet measures SET over loopback from 50 connections with the AOF off and
// under each fsync policy, in one run: go test -run '^$' -bench AOFSet ./myredis
func BenchmarkAOFSet(b *testing.B) {
	for _, policy := range []string{"off", "no", "everysec", "always"} {
		b.Run(policy, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Dir = b.TempDir()
			cfg.AppendOnly = policy != "off"
			cfg.AppendFsync = policy
			s, err := Open(cfg, WithLogger(quietLogger()))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			go s.Serve(ln)
			b.SetParallelism(25) // 50 connections on 2 cores
			var id atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				c := mustDialAOF(b, ln.Addr().String())
				key := fmt.Sprintf("k%d", id.Add(1))
				for pb.Next() {
					if _, err := c.do("SET", key, "value"); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if s.aof != nil && s.aof.groups.Load() > 0 {
				b.ReportMetric(float64(s.aof.released.Load())/float64(s.aof.groups.Load()), "replies/round")
			}
			if s.aof != nil && policy == "always" {
				b.ReportMetric(float64(b.N)/float64(s.aof.fsyncs.Load()), "writes/fsync")
			}
		})
	}
}
