package myredis

import (
	"net"
	"testing"
)

// discardConn is a socket that takes every write at once (a subscriber that
// keeps up), so the benchmark measures the executor's side of PUBLISH.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }
func (discardConn) Close() error                { return nil }

// BenchmarkPublish100 is PUBLISH of a 64-byte message to 100 subscribers of the
// channel (and one non-matching pattern), run on the executor goroutine: the
// copy into each outbox, never a socket write.
func BenchmarkPublish100(b *testing.B) {
	s := benchServer(b)
	s.submit(func() {
		for range 100 {
			c := newClient(s, nil)
			c.ps = &clientPubSub{out: newOutbox(discardConn{})}
			var w Writer
			s.subscribe(c, subChannel, "news", &w)
			b.Cleanup(c.ps.out.close)
		}
		s.subscribe(newClient(s, nil), subPattern, "other.*", &Writer{})
	})
	benchCall(b, s, argv("PUBLISH", "news", string(make([]byte, 64))), ":100\r\n")
}
