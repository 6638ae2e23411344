package myredis

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers the hash tests add to the shared ones (rconn, step, rInt, ... in
// cmd_sorted_set_test.go): a server with a fake clock, empty arguments in steps,
// and two reply shapes.

// hashClock is a settable clock: TTL tests advance it instead of sleeping.
type hashClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *hashClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *hashClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// startHashServer serves a MyRedis with a fake clock on a free loopback port until
// the test ends.
func startHashServer(t testing.TB) (*Server, *hashClock, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clk := &hashClock{now: time.Unix(1_900_000_000, 0)}
	s := New(Config{Bind: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}, WithClock(clk))
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, clk, ln.Addr().String()
}

// hashArgs splits a command on blanks; "" stands for an empty argument.
func hashArgs(cmd string) []string {
	args := strings.Fields(cmd)
	for i, a := range args {
		if a == `""` {
			args[i] = ""
		}
	}
	return args
}

// playHash runs steps in order on c (as playOn, with hashArgs), reporting every
// mismatch.
func playHash(t *testing.T, c *rconn, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := c.do(hashArgs(s.cmd)...); got != s.want {
			t.Errorf("%s\n got: %q\nwant: %q", s.cmd, got, s.want)
		}
	}
}

// rArity is the wrong-arity error of cmd.
func rArity(cmd string) string { return rErr(errArity(cmd)) }

// rScan is a SCAN-family reply: the next cursor and a flat list of bulk strings.
func rScan(cursor string, items ...string) string {
	return rArr(rBulk(cursor), rBulks(items...))
}
