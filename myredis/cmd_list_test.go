package myredis_test

import (
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// Table tests for the list commands over a real connection. The expected replies
// were checked against redis-server 7.0.15 (testdata/compat/lists.txt and
// list_compat_test.go replay the same ground against a live one).

const (
	listWrongType   = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	listNotPositive = "-ERR value is out of range, must be positive\r\n"
)

func TestListCommands(t *testing.T) {
	runGroup(t, []groupCase{
		{"push and pop at both ends", []step{
			do(num(3), "LPUSH", "l", "a", "b", "c"),
			do(num(5), "RPUSH", "l", "d", "e"),
			do(bulks("c", "b", "a", "d", "e"), "LRANGE", "l", "0", "-1"),
			do(bulk("c"), "LPOP", "l"),
			do(bulk("e"), "RPOP", "l"),
			do(bulks("b", "a"), "LPOP", "l", "2"),
			do(empty, "RPOP", "l", "0"),
			do(bulks("d"), "RPOP", "l", "5"),
			do(num(0), "EXISTS", "l"),
			do(null, "LPOP", "l"),
			do(nullArr, "LPOP", "l", "1"),
			do(listNotPositive, "LPOP", "l", "-1"),
			do(listNotPositive, "RPOP", "l", "x"),
			do(errRe("ERR wrong number of arguments for 'lpop' command"), "LPOP", "l", "1", "2"),
			do(errRe("ERR wrong number of arguments for 'rpush' command"), "RPUSH", "l"),
		}},
		{"pushx only onto existing lists", []step{
			do(num(0), "LPUSHX", "l", "a"),
			do(num(0), "RPUSHX", "l", "a"),
			do(num(0), "EXISTS", "l"),
			do(num(1), "RPUSH", "l", "m"),
			do(num(3), "LPUSHX", "l", "b", "a"),
			do(num(4), "RPUSHX", "l", "z"),
			do(bulks("a", "b", "m", "z"), "LRANGE", "l", "0", "-1"),
		}},
		{"wrong type", []step{
			do(ok, "SET", "s", "v"),
			do(listWrongType, "LPUSH", "s", "a"),
			do(listWrongType, "RPUSHX", "s", "a"),
			do(listWrongType, "LPOP", "s"),
			do(listWrongType, "LLEN", "s"),
			do(listWrongType, "LINDEX", "s", "x"), // the key is checked before the index
			do(listWrongType, "LSET", "s", "0", "v"),
			do(notInt, "LRANGE", "s", "x", "0"), // the indexes before the key
			do(listWrongType, "LRANGE", "s", "0", "1"),
			do(listWrongType, "LTRIM", "s", "0", "1"),
			do(listWrongType, "LREM", "s", "0", "v"),
			do(syntax, "LINSERT", "s", "middle", "a", "b"),
			do(listWrongType, "LINSERT", "s", "before", "a", "b"),
			do(listWrongType, "LPOS", "s", "v"),
			do(null, "LMOVE", "none", "s", "LEFT", "LEFT"), // a missing source comes first
			do(num(1), "RPUSH", "l", "x"),
			do(listWrongType, "LMOVE", "l", "s", "LEFT", "LEFT"),
			do(bulks("x"), "LRANGE", "l", "0", "-1"),
			do(listWrongType, "LMPOP", "2", "none", "s", "LEFT"),
			do(listWrongType, "BLPOP", "none", "s", "0"),
		}},
		{"lindex lset", []step{
			do(num(5), "RPUSH", "l", "a", "b", "c", "d", "e"),
			do(bulk("a"), "LINDEX", "l", "0"),
			do(bulk("e"), "LINDEX", "l", "-1"),
			do(bulk("a"), "LINDEX", "l", "-5"),
			do(null, "LINDEX", "l", "5"),
			do(null, "LINDEX", "l", "-6"),
			do(notInt, "LINDEX", "l", "1.5"),
			do(null, "LINDEX", "none", "x"),
			do(ok, "LSET", "l", "-1", "E"),
			do(ok, "LSET", "l", "1", ""),
			do(errRe("ERR index out of range"), "LSET", "l", "5", "x"),
			do(errRe("ERR no such key"), "LSET", "none", "0", "x"),
			do(notInt, "LSET", "l", "x", "x"),
			do(bulks("a", "", "c", "d", "E"), "LRANGE", "l", "0", "-1"),
		}},
		{"lrange ltrim", []step{
			do(num(6), "RPUSH", "l", "1", "2", "3", "4", "5", "6"),
			do(bulks("5", "6"), "LRANGE", "l", "-2", "100"),
			do(empty, "LRANGE", "l", "4", "2"),
			do(empty, "LRANGE", "l", "6", "10"),
			do(bulks("1"), "LRANGE", "l", "-100", "0"),
			do(empty, "LRANGE", "none", "0", "-1"),
			do(ok, "LTRIM", "l", "1", "-2"),
			do(bulks("2", "3", "4", "5"), "LRANGE", "l", "0", "-1"),
			do(ok, "LTRIM", "l", "-1", "100"),
			do(bulks("5"), "LRANGE", "l", "0", "-1"),
			do(ok, "LTRIM", "l", "1", "0"),
			do(num(0), "EXISTS", "l"),
			do(ok, "LTRIM", "none", "0", "1"),
			do(notInt, "LTRIM", "none", "x", "1"),
		}},
		{"lrem linsert", []step{
			do(num(7), "RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"),
			do(num(2), "LREM", "l", "2", "a"),
			do(num(1), "LREM", "l", "-1", "a"),
			do(bulks("b", "c", "a", "b"), "LRANGE", "l", "0", "-1"),
			do(num(2), "LREM", "l", "0", "b"),
			do(num(0), "LREM", "l", "0", "x"),
			do(num(0), "LREM", "none", "1", "a"),
			do(notInt, "LREM", "l", "x", "a"),
			do(num(3), "LINSERT", "l", "BEFORE", "a", "x"),
			do(num(4), "LINSERT", "l", "after", "a", "y"),
			do(num(-1), "LINSERT", "l", "before", "nosuch", "z"),
			do(num(0), "LINSERT", "none", "before", "a", "z"),
			do(bulks("c", "x", "a", "y"), "LRANGE", "l", "0", "-1"),
		}},
		{"lpos", []step{
			do(num(8), "RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"),
			do(num(2), "LPOS", "l", "c"),
			do(num(6), "LPOS", "l", "c", "RANK", "2"),
			do(num(7), "LPOS", "l", "c", "RANK", "-1"),
			do(null, "LPOS", "l", "c", "RANK", "4"),
			do(array(num(2), num(6), num(7)), "LPOS", "l", "c", "COUNT", "0"),
			do(array(num(6), num(2)), "LPOS", "l", "c", "COUNT", "2", "RANK", "-2"),
			do(null, "LPOS", "l", "c", "MAXLEN", "2"),
			do(array(num(7)), "LPOS", "l", "c", "COUNT", "0", "MAXLEN", "1", "RANK", "-1"),
			do(num(7), "LPOS", "l", "c", "RANK", "-9223372036854775808"),
			do(empty, "LPOS", "l", "x", "COUNT", "5"),
			do(null, "LPOS", "none", "a"),
			do(empty, "LPOS", "none", "a", "COUNT", "1"),
			do(errRe("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"),
				"LPOS", "none", "a", "RANK", "0"),
			do(errRe("ERR COUNT can't be negative"), "LPOS", "l", "c", "COUNT", "x"),
			do(errRe("ERR MAXLEN can't be negative"), "LPOS", "l", "c", "MAXLEN", "-1"),
			do(notInt, "LPOS", "l", "c", "RANK", "x"),
			do(syntax, "LPOS", "l", "c", "RANK"),
			do(syntax, "LPOS", "l", "c", "FOO", "1"),
		}},
		{"lmove rpoplpush", []step{
			do(num(3), "RPUSH", "src", "a", "b", "c"),
			do(bulk("a"), "LMOVE", "src", "dst", "LEFT", "RIGHT"),
			do(bulk("c"), "RPOPLPUSH", "src", "dst"),
			do(bulks("c", "a"), "LRANGE", "dst", "0", "-1"),
			do(bulk("b"), "LMOVE", "src", "src", "left", "left"),
			do(bulk("b"), "RPOPLPUSH", "src", "dst"),
			do(num(0), "EXISTS", "src"),
			do(null, "RPOPLPUSH", "src", "dst"),
			do(syntax, "LMOVE", "src", "dst", "up", "LEFT"),
			do(syntax, "LMOVE", "src", "dst", "LEFT", "down"),
		}},
		{"lmpop", []step{
			do(num(3), "RPUSH", "a", "1", "2", "3"),
			do(array(bulk("a"), bulks("1")), "LMPOP", "2", "none", "a", "LEFT"),
			do(array(bulk("a"), bulks("3", "2")), "LMPOP", "1", "a", "RIGHT", "COUNT", "10"),
			do(nullArr, "LMPOP", "1", "a", "RIGHT"),
			do(errRe("ERR numkeys should be greater than 0"), "LMPOP", "0", "a", "LEFT"),
			do(errRe("ERR numkeys should be greater than 0"), "LMPOP", "x", "a", "LEFT"),
			do(syntax, "LMPOP", "2", "a", "LEFT"),
			do(syntax, "LMPOP", "9223372036854775807", "a", "LEFT"),
			do(syntax, "LMPOP", "1", "a", "UP"),
			do(errRe("ERR count should be greater than 0"), "LMPOP", "1", "a", "LEFT", "COUNT", "0"),
			do(syntax, "LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"),
			do(errRe("ERR timeout is negative"), "BLMPOP", "-1", "1", "a", "LEFT"),
			do(errRe("ERR count should be greater than 0"), "BLMPOP", "x", "1", "a", "LEFT", "COUNT", "0"),
		}},
		{"blocking commands inside MULTI answer at once", []step{
			do(ok, "MULTI"),
			do(queued, "BLPOP", "a", "0"),
			do(queued, "BLMOVE", "a", "b", "LEFT", "RIGHT", "0"),
			do(queued, "BRPOPLPUSH", "a", "b", "0"),
			do(queued, "BLMPOP", "0", "1", "a", "LEFT"),
			do(queued, "RPUSH", "a", "x"),
			do(queued, "BRPOP", "a", "0"),
			do(array(nullArr, null, null, nullArr, num(1), array(bulk("a"), bulk("x"))), "EXEC"),
		}},
		{"blocking timeouts are checked", []step{
			do(errRe("ERR timeout is negative"), "BLPOP", "a", "-1"),
			do(errRe("ERR timeout is not a float or out of range"), "BRPOP", "a", "x"),
			do(errRe("ERR timeout is negative"), "BLMOVE", "a", "b", "LEFT", "LEFT", "1e400"), // as 7.0
			do(syntax, "BLMOVE", "a", "b", "UP", "LEFT", "x"),                                 // directions first
			do(errRe("ERR timeout is negative"), "BRPOPLPUSH", "a", "b", "-0.5"),
		}},
		{"generic commands see lists", []step{
			do(num(2), "RPUSH", "l", "a", "b"),
			do(simple("list"), "TYPE", "l"),
			do(ok, "RENAME", "l", "m"),
			do(bulks("a", "b"), "LRANGE", "m", "0", "-1"),
			do(array(bulk("0"), bulks("m")), "SCAN", "0", "TYPE", "list"),
			do(num(1), "EXPIRE", "m", "100"),
			do(num(1), "DEL", "m"),
			do(num(0), "EXISTS", "m"),
		}},
	})
}

// blocked waits until n clients of the server at c are blocked.
func blocked(t *testing.T, c *redistest.Conn, n int) {
	t.Helper()
	for range 500 {
		if strings.Count(c.Do("CLIENT", "LIST"), "flags=b") == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d clients never blocked", n)
}

// TestListBlocking runs blocked list clients over real sockets: who is served,
// in which order, with what.
func TestListBlocking(t *testing.T) {
	type scene func(t *testing.T, c *redistest.Conn, w []*redistest.Conn)
	read := func(t *testing.T, w *redistest.Conn, want string) {
		t.Helper()
		got, err := w.Read()
		if err != nil || got != want {
			t.Fatalf("blocked client got %q, %v; want %q", got, err, want)
		}
	}
	send := func(t *testing.T, c, w *redistest.Conn, n int, args ...string) {
		t.Helper()
		if err := w.Write(redistest.Encode(args...)); err != nil {
			t.Fatal(err)
		}
		blocked(t, c, n)
	}
	scenes := map[string]scene{
		"three waiters are served in the order they blocked": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "BLPOP", "q", "0")
			send(t, c, w[1], 2, "BRPOP", "other", "q", "0")
			send(t, c, w[2], 3, "BLMPOP", "0", "1", "q", "LEFT", "COUNT", "2")
			mustDo(t, c, num(2), "RPUSH", "q", "a", "b")
			read(t, w[0], bulks("q", "a"))
			read(t, w[1], bulks("q", "b"))
			blocked(t, c, 1)
			mustDo(t, c, num(3), "RPUSH", "q", "c", "d", "e")
			read(t, w[2], array(bulk("q"), bulks("c", "d")))
			mustDo(t, c, bulks("e"), "LRANGE", "q", "0", "-1")
		},
		"a push inside MULTI wakes the waiter after EXEC": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "BLPOP", "q", "0")
			mustDo(t, c, ok, "MULTI")
			mustDo(t, c, queued, "RPUSH", "q", "a", "b")
			mustDo(t, c, queued, "LPOP", "q")
			mustDo(t, c, array(num(2), bulk("a")), "EXEC")
			read(t, w[0], bulks("q", "b"))
			mustDo(t, c, num(0), "EXISTS", "q")
		},
		"a BLMOVE chain": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "BLMOVE", "a", "b", "RIGHT", "LEFT", "0")
			send(t, c, w[1], 2, "BRPOPLPUSH", "b", "c", "0")
			send(t, c, w[2], 3, "BLPOP", "c", "0")
			mustDo(t, c, num(1), "RPUSH", "a", "x")
			read(t, w[0], bulk("x"))
			read(t, w[1], bulk("x"))
			read(t, w[2], bulks("c", "x"))
			mustDo(t, c, num(0), "EXISTS", "a", "b", "c")
		},
		"a timeout answers nil and serves nobody later": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "BLPOP", "q", "0.05")
			read(t, w[0], nullArr)
			send(t, c, w[1], 1, "BLMOVE", "q", "r", "LEFT", "LEFT", "0.05")
			read(t, w[1], nullArr)
			mustDo(t, c, num(1), "RPUSH", "q", "x")
			mustDo(t, c, bulks("x"), "LRANGE", "q", "0", "-1")
		},
		"a waiter keeps its place while the key holds another type": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "BLPOP", "q", "0")
			send(t, c, w[1], 2, "BRPOP", "q", "0")
			mustDo(t, c, ok, "SET", "q", "s")
			mustDo(t, c, num(1), "DEL", "q")
			blocked(t, c, 2)
			mustDo(t, c, num(1), "RPUSH", "q", "x")
			read(t, w[0], bulks("q", "x"))
		},
	}
	for name, sc := range scenes {
		t.Run(name, func(t *testing.T) {
			addr := redistest.StartMyRedis(t)
			c := redistest.Dial(t, addr)
			w := []*redistest.Conn{redistest.Dial(t, addr), redistest.Dial(t, addr), redistest.Dial(t, addr)}
			sc(t, c, w)
		})
	}
}
