package myredis_test

// Needs redis-server (skips without it): values DUMPed by Redis 7.0.15 RESTORE
// into MyRedis and the other way round, compared with each type's reads.

import (
	"fmt"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// dumpCase builds one key on a server and reads it back.
type dumpCase struct {
	name  string
	setup [][]string
	reads [][]string // each read's reply must be equal on both servers (^ = sorted array)
}

func dumpCases() []dumpCase {
	long := strings.Repeat("abcdefgh", 200)
	var bigHash, bigZSet, wideHash []string
	bigHash = append(bigHash, "HSET", "k")
	bigZSet = append(bigZSet, "ZADD", "k")
	for i := range 300 {
		bigHash = append(bigHash, fmt.Sprintf("f%d", i), fmt.Sprintf("%d", i*7))
		bigZSet = append(bigZSet, fmt.Sprintf("%d.5", i-150), fmt.Sprintf("m%d", i))
	}
	wideHash = append(wideHash, "HSET", "k", "f", strings.Repeat("x", 100), "n", "-12345678901", "e", "")
	bigList := []string{"RPUSH", "k"}
	bigSet := []string{"SADD", "k"}
	bigIntSet := []string{"SADD", "k"}
	for i := range 1000 {
		bigList = append(bigList, fmt.Sprintf("e%d", i), fmt.Sprint(i*1000003))
		bigSet = append(bigSet, fmt.Sprintf("m%d", i))
		bigIntSet = append(bigIntSet, fmt.Sprint(i-300))
	}
	bigStream := [][]string{{"CONFIG", "SET", "stream-node-max-entries", "100"}}
	for i := range 1000 {
		if i%7 == 0 {
			bigStream = append(bigStream, []string{"XADD", "k", fmt.Sprintf("%d-%d", 1000+i/3, i%3), "other", "x", "n", fmt.Sprint(i * 99991)})
		} else {
			bigStream = append(bigStream, []string{"XADD", "k", fmt.Sprintf("%d-%d", 1000+i/3, i%3), "item", fmt.Sprint(i), "v", long[:i%90]})
		}
	}
	bigStream = append(bigStream, []string{"XDEL", "k", "1000-1", "1100-2", "1200-0"}, []string{"XTRIM", "k", "MAXLEN", "~", "850"})
	groups := [][]string{
		{"XADD", "k", "1-1", "a", "1"}, {"XADD", "k", "1-2", "a", "2"}, {"XADD", "k", "2-0", "b", "3"},
		{"XGROUP", "CREATE", "k", "g1", "0"}, {"XGROUP", "CREATE", "k", "g2", "$", "ENTRIESREAD", "5"},
		{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "k", ">"},
		{"XREADGROUP", "GROUP", "g1", "bob", "STREAMS", "k", ">"},
		{"XCLAIM", "k", "g1", "carol", "0", "1-2", "TIME", "1700000000000", "RETRYCOUNT", "4"},
		{"XGROUP", "CREATECONSUMER", "k", "g2", "idle"}, {"XDEL", "k", "1-1"},
	}
	streamReads := [][]string{{"XRANGE", "k", "-", "+"}, {"XINFO", "STREAM", "k"}, {"XLEN", "k"}, {"OBJECT", "ENCODING", "k"}}
	return []dumpCase{
		{"small stream", [][]string{{"XADD", "k", "1-1", "a", "1", "b", "2"}, {"XADD", "k", "1-2", "a", "-3", "b", ""}, {"XADD", "k", "2-0", "c", long}},
			append(streamReads, []string{"XINFO", "STREAM", "k", "FULL"})},
		{"big stream", bigStream, append(streamReads, []string{"XREVRANGE", "k", "+", "-", "COUNT", "5"})},
		{"stream with groups", groups, append(streamReads, []string{"XINFO", "STREAM", "k", "FULL"},
			[]string{"XINFO", "GROUPS", "k"}, []string{"XPENDING", "k", "g1"})},
		{"empty stream", [][]string{{"XADD", "k", "MAXLEN", "0", "5-5", "a", "b"}, {"XSETID", "k", "7-7", "ENTRIESADDED", "9", "MAXDELETEDID", "6-0"},
			{"XGROUP", "CREATE", "k", "g", "$"}}, append(streamReads, []string{"XINFO", "GROUPS", "k"})},
		{"short string", [][]string{{"SET", "k", "hello"}}, [][]string{{"GET", "k"}}},
		{"integer strings", [][]string{{"SET", "k", "-2147483648"}}, [][]string{{"GET", "k"}}},
		{"64-bit integer", [][]string{{"SET", "k", "9223372036854775807"}}, [][]string{{"GET", "k"}}},
		{"compressible string", [][]string{{"SET", "k", long}}, [][]string{{"GET", "k"}, {"STRLEN", "k"}}},
		{"binary string", [][]string{{"SET", "k", "\x00\xff\r\n\x01"}}, [][]string{{"GET", "k"}}},
		{"small hash", [][]string{{"HSET", "k", "a", "1", "b", "two", "c", "-300000"}}, [][]string{{"^HGETALL", "k"}, {"HLEN", "k"}}},
		{"big hash", [][]string{bigHash}, [][]string{{"^HGETALL", "k"}, {"HGET", "k", "f299"}}},
		{"hash with a long value", [][]string{wideHash}, [][]string{{"^HGETALL", "k"}}},
		{"small zset", [][]string{{"ZADD", "k", "1", "a", "-inf", "b", "+inf", "c", "2.5e-10", "d"}}, [][]string{{"ZRANGE", "k", "0", "-1", "WITHSCORES"}}},
		{"big zset", [][]string{bigZSet}, [][]string{{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, {"ZCARD", "k"}}},
		{"small list", [][]string{{"RPUSH", "k", "a", "1", "-70000", strings.Repeat("z", 70), ""}}, [][]string{{"LRANGE", "k", "0", "-1"}}},
		{"big list", [][]string{bigList}, [][]string{{"LRANGE", "k", "0", "-1"}, {"LLEN", "k"}}},
		{"list with a big element", [][]string{{"RPUSH", "k", "x", long + long + long + long + long, "y"}}, [][]string{{"LRANGE", "k", "0", "-1"}}},
		{"intset", [][]string{{"SADD", "k", "1", "-2", "300", "70000", "-5000000000"}}, [][]string{{"SMEMBERS", "k"}, {"OBJECT", "ENCODING", "k"}}},
		{"big intset", [][]string{bigIntSet}, [][]string{{"^SMEMBERS", "k"}, {"SCARD", "k"}}},
		{"small set", [][]string{{"SADD", "k", "a", "b", "1"}}, [][]string{{"^SMEMBERS", "k"}}},
		{"big set", [][]string{bigSet}, [][]string{{"^SMEMBERS", "k"}, {"SCARD", "k"}}},
	}
}

// read runs a read, sorting an array reply when its name starts with ^.
func read(c *redistest.Conn, args []string) string { return readReply(c, args) }

func readReply(c *redistest.Conn, args []string) string {
	if strings.HasPrefix(args[0], "^") {
		return sortedArray(c.Do(append([]string{args[0][1:]}, args[1:]...)...))
	}
	return c.Do(args...)
}

func TestDumpRestoreBetweenRedisAndMyRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real := redistest.Dial(t, redistest.StartRealRedis(t))
	mine := redistest.Dial(t, redistest.StartMyRedis(t))
	for _, dc := range dumpCases() {
		for _, dir := range []struct {
			name     string
			from, to *redistest.Conn
		}{{"redis to myredis", real, mine}, {"myredis to redis", mine, real}} {
			t.Run(dc.name+"/"+dir.name, func(t *testing.T) {
				for _, c := range []*redistest.Conn{real, mine} {
					c.Do("FLUSHALL")
				}
				for _, cmd := range dc.setup {
					if r := dir.from.Do(cmd...); strings.HasPrefix(r, "-") {
						t.Fatalf("%q: %q", cmd, r)
					}
				}
				payload := bulkBody(t, dir.from.Do("DUMP", "k"))
				if r := dir.to.Do("RESTORE", "k", "0", payload); r != redistest.OK {
					t.Fatalf("RESTORE: %q", r)
				}
				for _, rd := range dc.reads {
					want, got := read(dir.from, rd), read(dir.to, rd)
					if want != got {
						t.Errorf("%q after RESTORE:\n source: %.300q\n target: %.300q", rd, want, got)
					}
				}
			})
		}
	}
}

// bulkBody is the contents of a raw bulk reply.
func bulkBody(t *testing.T, reply string) string {
	t.Helper()
	head, body, ok := strings.Cut(reply, "\r\n")
	if !ok || !strings.HasPrefix(head, "$") || !strings.HasSuffix(body, "\r\n") {
		t.Fatalf("not a bulk reply: %.200q", reply)
	}
	return strings.TrimSuffix(body, "\r\n")
}

// TestFunctionDumpBetweenRedisAndMyRedis: FUNCTION DUMP payloads cross over.
func TestFunctionDumpBetweenRedisAndMyRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real := redistest.Dial(t, redistest.StartRealRedis(t))
	mine := redistest.Dial(t, redistest.StartMyRedis(t))
	code := "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] .. ' from a library that is long enough to be compressed' end)"
	for _, dir := range []struct {
		name     string
		from, to *redistest.Conn
	}{{"redis to myredis", real, mine}, {"myredis to redis", mine, real}} {
		t.Run(dir.name, func(t *testing.T) {
			for _, c := range []*redistest.Conn{real, mine} {
				c.Do("FUNCTION", "FLUSH")
			}
			if r := dir.from.Do("FUNCTION", "LOAD", code); r != "$5\r\nmylib\r\n" {
				t.Fatalf("FUNCTION LOAD: %q", r)
			}
			payload := bulkBody(t, dir.from.Do("FUNCTION", "DUMP"))
			if r := dir.to.Do("FUNCTION", "RESTORE", payload); r != redistest.OK {
				t.Fatalf("FUNCTION RESTORE: %q", r)
			}
			if r := dir.to.Do("FCALL", "myfunc", "0", "hi"); !strings.Contains(r, "hi from a library") {
				t.Fatalf("FCALL after RESTORE: %q", r)
			}
		})
	}
}
