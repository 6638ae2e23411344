package myredis_test

import (
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
