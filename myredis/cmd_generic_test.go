package myredis_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

func TestKeyCommands(t *testing.T) {
	unsupported := func(opt string) string { return errRe("ERR Unsupported option " + opt) }
	runGroup(t, []groupCase{
		{"del exists type", []step{
			do(num(0), "DEL", "a"),
			do(ok, "MSET", "a", "1", "b", "2"),
			do(num(3), "EXISTS", "a", "a", "b"), // repeats count
			do(num(2), "DEL", "a", "b", "c"),
			do(num(0), "EXISTS", "a", "b"),
			do(ok, "SET", "a", "1"),
			do(simple("string"), "TYPE", "a"),
			do(simple("none"), "TYPE", "missing"),
			do(num(1), "UNLINK", "a", "a"),
			do(arity("del"), "DEL"),
			do(arity("exists"), "EXISTS"),
			do(arity("type"), "TYPE", "a", "b"),
		}},
		{"expire pexpire expireat pexpireat", []step{
			do(num(0), "EXPIRE", "k", "10"),
			do(ok, "SET", "k", "v"),
			do(num(1), "EXPIRE", "k", "100"),
			do(num(100), "TTL", "k"),
			do(num(1), "PEXPIRE", "k", "5500"),
			do(num(5500), "PTTL", "k"),
			do(num(6), "TTL", "k"),
			do(num(1), "EXPIREAT", "k", at(200*time.Second, false)),
			do(num(200), "TTL", "k"),
			do(num(1), "PEXPIREAT", "k", at(300*time.Second, true)),
			do(num(300_000), "PTTL", "k"),
			do(num(clockStart+300), "EXPIRETIME", "k"),
			do(num((clockStart+300)*1000), "PEXPIRETIME", "k"),
			do(notInt, "EXPIRE", "k", "1.5"),
			do(notInt, "EXPIRE", "k", "abc"),
			do(errRe("ERR invalid expire time in 'expire' command"), "EXPIRE", "k", "9223372036854775807"),
			do(errRe("ERR invalid expire time in 'pexpire' command"), "PEXPIRE", "k", "9223372036854775807"),
			do(arity("expire"), "EXPIRE", "k"),
		}},
		{"expire NX XX GT LT", []step{
			do(ok, "SET", "k", "v"),
			do(num(0), "EXPIRE", "k", "100", "XX"), // XX: no TTL yet
			do(num(0), "EXPIRE", "k", "100", "GT"), // GT fails on a key without a TTL
			do(num(1), "EXPIRE", "k", "100", "LT"), // LT: no TTL counts as infinite
			do(num(0), "EXPIRE", "k", "200", "NX"),
			do(num(1), "EXPIRE", "k", "200", "XX"),
			do(num(0), "EXPIRE", "k", "100", "GT"),
			do(num(1), "EXPIRE", "k", "300", "GT"),
			do(num(0), "EXPIRE", "k", "400", "LT"),
			do(num(1), "EXPIRE", "k", "50", "lt"),
			do(num(50), "TTL", "k"),
			do(errRe("ERR NX and XX, GT or LT options at the same time are not compatible"), "EXPIRE", "k", "10", "NX", "XX"),
			do(errRe("ERR NX and XX, GT or LT options at the same time are not compatible"), "EXPIRE", "k", "10", "NX", "GT"),
			do(errRe("ERR GT and LT options at the same time are not compatible"), "EXPIRE", "k", "10", "GT", "LT"),
			do(unsupported("FOO"), "EXPIRE", "k", "10", "FOO"),
			do(num(1), "EXPIRE", "k", "60", "XX", "GT"),
			do(num(60), "TTL", "k"),
			do(num(0), "EXPIRE", "missing", "10", "NX"),
		}},
		{"a time in the past deletes", []step{
			do(ok, "SET", "k", "v"),
			do(num(1), "EXPIRE", "k", "0"),
			do(num(0), "EXISTS", "k"),
			do(ok, "SET", "k", "v"),
			do(num(1), "PEXPIRE", "k", "-1"),
			do(num(0), "EXISTS", "k"),
			do(ok, "SET", "k", "v"),
			do(num(1), "EXPIREAT", "k", "1"),
			do(num(0), "EXISTS", "k"),
			do(ok, "SET", "k", "v", "EX", "100"),
			do(num(1), "EXPIRE", "k", "-5", "LT"),
			do(num(0), "EXISTS", "k"),
		}},
		{"ttl pttl persist", []step{
			do(num(-2), "TTL", "k"),
			do(num(-2), "PTTL", "k"),
			do(num(-2), "EXPIRETIME", "k"),
			do(ok, "SET", "k", "v"),
			do(num(-1), "TTL", "k"),
			do(num(-1), "PTTL", "k"),
			do(num(-1), "PEXPIRETIME", "k"),
			do(num(0), "PERSIST", "k"),
			do(num(1), "EXPIRE", "k", "100"),
			do(num(1), "PERSIST", "k"),
			do(num(-1), "TTL", "k"),
			do(ok, "SET", "r", "v", "PX", "1499"),
			do(num(1), "TTL", "r"),
			do(ok, "SET", "r", "v", "PX", "1500"),
			do(num(2), "TTL", "r"),
			do(ok, "SET", "r", "v", "PX", "499"),
			do(num(0), "TTL", "r"),
		}},
		{"keys", []step{
			do(ok, "MSET", "one", "1", "two", "2", "three", "3", "a*b", "4"),
			do(bulks("a*b"), "KEYS", "a\\*b"),
			do(empty, "KEYS", "nomatch*"),
			do(bulks("one"), "KEYS", "o?e"),
			do(bulks("one"), "KEYS", "[^t]ne"),
			do(arity("keys"), "KEYS"),
		}},
		{"keys: CVE-2022-36021 pattern answers (exponential before: the test timed out)", []step{
			do(ok, "SET", strings.Repeat("a", 40), "1"),
			do(empty, "KEYS", strings.Repeat("a*", 20)+"b"),
			do(array(bulk("0"), empty), "SCAN", "0", "MATCH", strings.Repeat("a*", 20)+"b"),
			do(num(1), "EXISTS", strings.Repeat("a", 40)),
		}},
		{"rename", []step{
			do(errRe("ERR no such key"), "RENAME", "a", "b"),
			do(errRe("ERR no such key"), "RENAMENX", "a", "b"),
			do(ok, "SET", "a", "1", "EX", "100"),
			do(ok, "RENAME", "a", "b"),
			do(num(100), "TTL", "b"),
			do(num(0), "EXISTS", "a"),
			do(ok, "SET", "c", "3"),
			do(num(0), "RENAMENX", "b", "c"),
			do(num(1), "RENAMENX", "b", "d"),
			do(ok, "RENAME", "d", "d"),
			do(num(0), "RENAMENX", "d", "d"),
			do(ok, "RENAME", "d", "c"), // overwrites, TTL moves along
			do(num(100), "TTL", "c"),
		}},
		{"dbsize select flush", []step{
			do(num(0), "DBSIZE"),
			do(ok, "MSET", "a", "1", "b", "2"),
			do(num(2), "DBSIZE"),
			do(ok, "SELECT", "15"),
			do(num(0), "DBSIZE"),
			do(ok, "SET", "x", "1"),
			do(errRe("ERR DB index is out of range"), "SELECT", "16"),
			do(errRe("ERR DB index is out of range"), "SELECT", "-1"),
			do(notInt, "SELECT", "x"),
			do(ok, "FLUSHDB"),
			do(num(0), "DBSIZE"),
			do(ok, "SELECT", "0"),
			do(num(2), "DBSIZE"),
			do(ok, "FLUSHDB", "ASYNC"),
			do(syntax, "FLUSHDB", "foo"),
			do(ok, "SET", "a", "1"),
			do(ok, "SELECT", "3"),
			do(ok, "SET", "a", "1"),
			do(ok, "FLUSHALL", "SYNC"),
			do(num(0), "DBSIZE"),
			do(ok, "SELECT", "0"),
			do(num(0), "DBSIZE"),
		}},
		{"randomkey", []step{
			do(null, "RANDOMKEY"),
			do(ok, "SET", "only", "1"),
			do(bulk("only"), "RANDOMKEY"),
		}},
		{"scan arguments", []step{
			do(ok, "MSET", "a1", "1", "a2", "2", "b1", "3"),
			do(errRe("ERR invalid cursor"), "SCAN", "abc"),
			do(errRe("ERR invalid cursor"), "SCAN", " 0"),
			do(syntax, "SCAN", "0", "COUNT", "0"),
			do(notInt, "SCAN", "0", "COUNT", "x"),
			do(syntax, "SCAN", "0", "MATCH"),
			do(syntax, "SCAN", "0", "FOO", "bar"),
			do(array(bulk("0"), empty), "SCAN", "0", "TYPE", "zset"),
			do(array(bulk("0"), bulks("b1")), "SCAN", "0", "MATCH", "b*"),
			do(array(bulk("0"), empty), "SCAN", "-1", "MATCH", "nothing"), // strtoul: -1 is a cursor
		}},
	})
}

// scanAll runs a full SCAN iteration and returns every key it reported.
func scanAll(t *testing.T, c *redistest.Conn, extra ...string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor := "0"
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("SCAN does not terminate")
		}
		reply := c.Do(append([]string{"SCAN", cursor}, extra...)...)
		next, keys := parseScan(t, reply)
		for _, k := range keys {
			seen[k]++
		}
		if next == "0" {
			return seen
		}
		cursor = next
	}
}

func parseScan(t *testing.T, reply string) (string, []string) {
	t.Helper()
	rd := bufio.NewReader(strings.NewReader(reply))
	var lines []string
	for {
		l, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, strings.TrimSuffix(l, "\r\n"))
	}
	// *2, $n, cursor, *m, ($n, key)...
	if len(lines) < 4 || lines[0] != "*2" {
		t.Fatalf("bad SCAN reply %q", reply)
	}
	var keys []string
	for i := 5; i < len(lines); i += 2 {
		keys = append(keys, lines[i])
	}
	return lines[2], keys
}

// TestScanGuarantee: a full SCAN returns every key present for the whole
// iteration, while other clients add and delete keys concurrently. Keys that stay
// and keys that churn are interleaved, so deletions move staying keys around.
func TestScanGuarantee(t *testing.T) {
	c, _, addr := start(t)
	const stay = 2000
	for round, count := range []string{"3", "10", "97"} {
		mustDo(t, c, ok, "FLUSHDB")
		args := []string{"MSET"}
		for i := 0; i < stay; i++ {
			args = append(args, "stay:"+strconv.Itoa(i), "v", "churn:"+strconv.Itoa(i), "v")
		}
		mustDo(t, c, ok, args...)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				cc := redistest.Dial(t, addr)
				r := rand.New(rand.NewPCG(uint64(w), uint64(round)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					k := "churn:" + strconv.Itoa(r.IntN(2*stay))
					if r.IntN(4) == 0 {
						cc.Do("SET", k, "v")
					} else {
						cc.Do("DEL", k)
					}
				}
			}(w)
		}
		seen := scanAll(t, c, "COUNT", count)
		close(stop)
		wg.Wait()
		for i := 0; i < stay; i++ {
			if seen["stay:"+strconv.Itoa(i)] == 0 {
				t.Fatalf("COUNT %s: stay:%d never returned by a full SCAN", count, i)
			}
		}
	}
	// MATCH filters, and a quiet database is scanned without repeats.
	seen := scanAll(t, c, "MATCH", "stay:1*", "COUNT", "50")
	want := 0
	for i := 0; i < stay; i++ {
		if strings.HasPrefix(strconv.Itoa(i), "1") {
			want++
		}
	}
	if len(seen) != want {
		t.Fatalf("MATCH stay:1*: %d keys, want %d", len(seen), want)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s returned %d times from a quiet database", k, n)
		}
	}
}

// TestActiveExpiry: keys never read again are reclaimed by the active cycle.
func TestActiveExpiry(t *testing.T) {
	c, clk, _ := start(t)
	for i := 0; i < 500; i++ {
		mustDo(t, c, ok, "SET", fmt.Sprintf("tmp:%d", i), "v", "PX", "100")
	}
	mustDo(t, c, ok, "SET", "keep", "v")
	mustDo(t, c, ok, "SET", "later", "v", "EX", "1000")
	mustDo(t, c, num(502), "DBSIZE")
	clk.Advance(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for c.Do("DBSIZE") != num(2) {
		if time.Now().After(deadline) {
			t.Fatalf("expired keys not reclaimed: DBSIZE %q", c.Do("DBSIZE"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	info := c.Do("INFO", "stats")
	if !strings.Contains(info, "expired_keys:500\r\n") {
		t.Fatalf("INFO stats does not count 500 expired keys:\n%s", info)
	}
	mustDo(t, c, num(999), "TTL", "later")
}
