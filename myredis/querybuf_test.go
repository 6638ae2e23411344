package myredis_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// TestClientQueryBufferLimit: a request whose payload passes
// client-query-buffer-limit closes its client without a reply (as Redis);
// one under it runs; the limit is validated as Redis validates it.
func TestClientQueryBufferLimit(t *testing.T) {
	c, _, addr := start(t)
	runSteps(t, c, []step{
		do("-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n",
			"CONFIG", "SET", "client-query-buffer-limit", "1000"),
		do("-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be a memory value\r\n",
			"CONFIG", "SET", "client-query-buffer-limit", "lots"),
		do("+OK\r\n", "CONFIG", "SET", "client-query-buffer-limit", "1mb"),
		do("*2\r\n$25\r\nclient-query-buffer-limit\r\n$7\r\n1048576\r\n", "CONFIG", "GET", "client-query-buffer-limit"),
	})
	under := redistest.Dial(t, addr)
	mustDo(t, under, "+OK\r\n", "MSET", "a", strings.Repeat("x", 400_000), "b", strings.Repeat("y", 400_000))

	over := redistest.Dial(t, addr)
	if err := over.Write(redistest.Encode("MSET", "c", strings.Repeat("x", 600_000), "d", strings.Repeat("y", 600_000))); err != nil {
		t.Fatal(err)
	}
	data, closed := over.ReadAll(5 * time.Second)
	if !closed || data != "" {
		t.Fatalf("over the limit: got %q, closed=%v; want the connection closed without a reply", data, closed)
	}
	mustDo(t, c, ":0\r\n", "EXISTS", "c", "d")
	mustDo(t, c, ":2\r\n", "EXISTS", "a", "b")
}

// TestNormalOutputBufferLimit: replies past the normal class's hard limit
// close the client instead of being sent; under it they are sent.
func TestNormalOutputBufferLimit(t *testing.T) {
	c, _, addr := start(t)
	runSteps(t, c, []step{
		do("+OK\r\n", "SET", "big", strings.Repeat("x", 2<<20)),
		do("+OK\r\n", "SET", "small", strings.Repeat("y", 100<<10)),
		do("+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0"),
	})
	reader := redistest.Dial(t, addr)
	mustDo(t, reader, "$102400\r\n"+strings.Repeat("y", 100<<10)+"\r\n", "GET", "small")
	if err := reader.Write(redistest.Encode("GET", "big")); err != nil {
		t.Fatal(err)
	}
	data, closed := reader.ReadAll(5 * time.Second)
	if !closed || data != "" {
		t.Fatalf("past the hard limit: got %d bytes, closed=%v; want the connection closed unanswered", len(data), closed)
	}
	runSteps(t, c, []step{do("+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")})
	again := redistest.Dial(t, addr)
	if got := again.Do("STRLEN", "big"); got != ":2097152\r\n" {
		t.Fatalf("STRLEN big: %q", got)
	}
}

// clientField reads one field of the CLIENT LIST line of the client named name.
func clientField(t *testing.T, c *redistest.Conn, name, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(c.Do("CLIENT", "LIST"), "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, field+"="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("%s in %q", field, line)
				}
				return n
			}
		}
	}
	t.Fatalf("no client %s with %s in CLIENT LIST", name, field)
	return 0
}

// pollUntil waits (generously) for cond, failing with what() when it never holds.
func pollUntil(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal(what())
		}
	}
}

// TestQueryBufferShrinksWhenIdle: a client that sent most of a big request
// and went quiet holds a buffer sized for the whole request; after two idle
// seconds the free part goes (Redis's clientsCronResizeQueryBuffer): qbuf-free
// drops to 0, qbuf stays the bytes received, and used_memory falls by the
// space given back. Once the request is complete it runs, and the buffer
// (which became the request's own copy) is gone: qbuf and qbuf-free 0.
func TestQueryBufferShrinksWhenIdle(t *testing.T) {
	c, _, addr := start(t)
	big := redistest.Dial(t, addr)
	mustDo(t, big, "+OK\r\n", "CLIENT", "SETNAME", "big")
	const size = 16 << 20
	req := redistest.Encode("SET", "k", strings.Repeat("v", size))
	half := len(req) - size*7/16 // past 8 MB: the buffer doubled to the request's 16 MB
	base := infoInt(t, c, "used_memory")
	if err := big.Write(req[:half]); err != nil {
		t.Fatal(err)
	}
	// the buffer doubles as bytes come, up to the size the header announced
	pollUntil(t, func() bool { return clientField(t, c, "big", "qbuf") == int64(half) },
		func() string { return "qbuf never showed the bytes sent: " + c.Do("CLIENT", "LIST") })
	if free := clientField(t, c, "big", "qbuf-free"); free < size*7/16-1024 {
		t.Fatalf("qbuf-free=%d while the request's other half is due", free)
	}
	grown := infoInt(t, c, "used_memory")
	if grown < base+size/2 {
		t.Fatalf("used_memory %d with a %d-byte buffer, %d before", grown, size, base)
	}
	pollUntil(t, func() bool { return clientField(t, c, "big", "qbuf-free") == 0 },
		func() string { return "the idle client's buffer kept its free space: " + c.Do("CLIENT", "LIST") })
	if q := clientField(t, c, "big", "qbuf"); q != int64(half) {
		t.Fatalf("trimming lost received bytes: qbuf=%d, want %d", q, half)
	}
	pollUntil(t, func() bool { return infoInt(t, c, "used_memory") < grown-size/4 },
		func() string { return "used_memory did not fall after the trim" })

	if err := big.Write(req[half:]); err != nil {
		t.Fatal(err)
	}
	if got, err := big.Read(); err != nil || got != "+OK\r\n" {
		t.Fatalf("SET after the trim: %q %v", got, err)
	}
	mustDo(t, c, ":16777216\r\n", "STRLEN", "k")
	pollUntil(t, func() bool {
		return clientField(t, c, "big", "qbuf") == 0 && clientField(t, c, "big", "qbuf-free") == 0
	}, func() string { return "the buffer stayed after the request ran: " + c.Do("CLIENT", "LIST") })
	mustDo(t, c, ":1\r\n", "DEL", "k")
	pollUntil(t, func() bool { return infoInt(t, c, "used_memory") < base+size/4 },
		func() string { return "used_memory stayed up once the value was deleted" })
}

// TestQueryBufferIdleGivesBackRSS: the myredis process (a binary of its own,
// so that the RSS is the server's alone) gives the trimmed part of an idle
// client's buffer back to the OS: its RSS falls by most of the free space.
func TestQueryBufferIdleGivesBackRSS(t *testing.T) {
	addr := redistest.StartMyRedisBinary(t, redistest.BuildMyRedis(t))
	c := redistest.Dial(t, addr)
	big := redistest.Dial(t, addr)
	mustDo(t, big, "+OK\r\n", "CLIENT", "SETNAME", "big")
	const size = 64 << 20
	req := redistest.Encode("SET", "k", strings.Repeat("v", size))
	part := len(req) - size*7/16 // the buffer doubles to 64 MB, 28 MB of it free
	if err := big.Write(req[:part]); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, func() bool { return clientField(t, c, "big", "qbuf") == int64(part) },
		func() string { return "qbuf never showed the bytes sent: " + c.Do("CLIENT", "LIST") })
	rssFull := infoInt(t, c, "used_memory_rss")
	pollUntil(t, func() bool { return clientField(t, c, "big", "qbuf-free") == 0 },
		func() string { return "the idle client's buffer kept its free space: " + c.Do("CLIENT", "LIST") })
	pollUntil(t, func() bool { return infoInt(t, c, "used_memory_rss") < rssFull-size/4 },
		func() string {
			return fmt.Sprintf("used_memory_rss %d after the trim, %d before", infoInt(t, c, "used_memory_rss"), rssFull)
		})
	if err := big.Write(req[part:]); err != nil {
		t.Fatal(err)
	}
	if got, err := big.Read(); err != nil || got != "+OK\r\n" {
		t.Fatalf("SET after the trim: %q %v", got, err)
	}
}
