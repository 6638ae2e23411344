package myredis

import (
	"strings"
	"testing"
)

// TestBzmpopBlocksUntilAWrite: BZMPOP waits on every key and is served by the
// first write that gives one of them members, COUNT at a time, in the nested
// reply ZMPOP uses.
func TestBzmpopBlocksUntilAWrite(t *testing.T) {
	addr := startTestServer(t)
	c := dialRaw(t, addr)
	w := dialRaw(t, addr)
	w.send("BZMPOP", "0", "2", "a", "b", "MAX", "COUNT", "2")
	waitFor(t, func() bool { return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == 1 })
	playOn(t, c, []step{{"ZADD b 1 x 2 y 3 z", rInt(3)}})
	want := "*2\r\n$1\r\nb\r\n*2\r\n*2\r\n$1\r\nz\r\n$1\r\n3\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n"
	if got := w.read(); got != want {
		t.Fatalf("BZMPOP served %q, want %q", got, want)
	}
	w.send("BZMPOP", "0.05", "1", "a", "MIN")
	if got := w.read(); got != rNullArr {
		t.Fatalf("BZMPOP timeout = %q", got)
	}
}
