package myredis_test

import (
	"testing"

	"waitroom/myredis/redistest"
)

// Stream tests over a real connection. Replies without blocking are compared with
// redis-server 7.0.15 by testdata/compat/streams.txt and stream_groups.txt; these
// tests cover what the differential files cannot: blocked clients.

const nilArray = "*-1\r\n"

func entry(id string, fv ...string) string { return array(bulk(id), bulks(fv...)) }

// TestStreamBlocking runs blocked XREAD and XREADGROUP clients over real sockets.
func TestStreamBlocking(t *testing.T) {
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
	scenes := map[string]func(t *testing.T, c *redistest.Conn, w []*redistest.Conn){
		"XREAD $ is served the next entry only": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, bulk("1-0"), "XADD", "s", "1", "old", "x")
			send(t, c, w[0], 1, "XREAD", "BLOCK", "0", "STREAMS", "other", "s", "$", "$")
			mustDo(t, c, bulk("2-0"), "XADD", "s", "2", "new", "y")
			read(t, w[0], array(array(bulk("s"), array(entry("2-0", "new", "y")))))
		},
		"XREAD is not woken by a write that adds nothing past its ID": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			send(t, c, w[0], 1, "XREAD", "BLOCK", "0", "STREAMS", "s", "5")
			mustDo(t, c, bulk("3-0"), "XADD", "s", "3", "f", "v")
			mustDo(t, c, num(1), "DEL", "s")
			mustDo(t, c, num(1), "LPUSH", "s", "x")
			blocked(t, c, 1)
			mustDo(t, c, num(1), "DEL", "s")
			mustDo(t, c, bulk("6-0"), "XADD", "s", "6", "f", "v")
			read(t, w[0], array(array(bulk("s"), array(entry("6-0", "f", "v")))))
		},
		"XREADGROUP > delivers to the oldest waiter and records the PEL": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			send(t, c, w[0], 1, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
			send(t, c, w[1], 2, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
			mustDo(t, c, bulk("1-0"), "XADD", "s", "1", "f", "v")
			read(t, w[0], array(array(bulk("s"), array(entry("1-0", "f", "v")))))
			blocked(t, c, 1)
			mustDo(t, c, bulk("2-0"), "XADD", "s", "2", "f", "w")
			read(t, w[1], array(array(bulk("s"), array(entry("2-0", "f", "w")))))
			mustDo(t, c, array(num(2), bulk("1-0"), bulk("2-0"),
				array(array(bulk("alice"), bulk("1")), array(bulk("bob"), bulk("1")))), "XPENDING", "s", "g")
		},
		"XREADGROUP is answered when its key goes": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			send(t, c, w[0], 1, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
			mustDo(t, c, num(1), "DEL", "s")
			read(t, w[0], "-UNBLOCKED the stream key no longer exists\r\n")
		},
		"XREADGROUP is answered when its key is emptied by FLUSHALL": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			send(t, c, w[0], 1, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
			mustDo(t, c, "+OK\r\n", "FLUSHALL")
			read(t, w[0], "-UNBLOCKED the stream key no longer exists\r\n")
		},
		"XREADGROUP is answered when its group goes": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
			send(t, c, w[0], 1, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
			mustDo(t, c, num(1), "XGROUP", "DESTROY", "s", "g")
			read(t, w[0], "-NOGROUP the consumer group this client was blocked on no longer exists\r\n")
		},
		"XREAD inside MULTI answers at once": func(t *testing.T, c *redistest.Conn, w []*redistest.Conn) {
			mustDo(t, c, "+OK\r\n", "MULTI")
			mustDo(t, c, "+QUEUED\r\n", "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
			mustDo(t, c, array(nilArray), "EXEC")
		},
	}
	for name, scene := range scenes {
		t.Run(name, func(t *testing.T) {
			c, _, addr := start(t)
			w := []*redistest.Conn{redistest.Dial(t, addr), redistest.Dial(t, addr)}
			scene(t, c, w)
		})
	}
}

// TestStreamBlockTimeout: a blocked read whose BLOCK milliseconds pass (on the
// real clock) answers a null array.
func TestStreamBlockTimeout(t *testing.T) {
	c := redistest.Dial(t, redistest.StartMyRedis(t))
	mustDo(t, c, nilArray, "XREAD", "BLOCK", "30", "STREAMS", "s", "$")
	mustDo(t, c, "+OK\r\n", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	mustDo(t, c, nilArray, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "30", "STREAMS", "s", ">")
}
