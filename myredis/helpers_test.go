package myredis_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// Shorthands for expected raw replies.
const (
	ok       = redistest.OK
	null     = redistest.Nil
	nullArr  = redistest.NilArray
	queued   = redistest.Queued
	empty    = redistest.EmptyList
	syntax   = "-ERR syntax error\r\n"
	notInt   = "-ERR value is not an integer or out of range\r\n"
	notFloat = "-ERR value is not a valid float\r\n"
	noAuth   = "-NOAUTH Authentication required.\r\n"
)

var (
	num    = redistest.Int
	bulk   = redistest.Bulk
	errRe  = redistest.Err
	bulks  = redistest.Bulks
	array  = redistest.Array
	simple = redistest.Simple
)

func arity(name string) string {
	return errRe("ERR wrong number of arguments for '" + name + "' command")
}

// fakeClock is a settable clock for MyRedis: TTL tests advance it instead of
// sleeping.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// clockStart is where every fake clock starts: 2030-01-02T03:04:05Z, in unix seconds.
const clockStart = 1893553445

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(clockStart, 0)}
}

// at is clockStart plus d, in unix seconds (ms when ms is true), as an argument.
func at(d time.Duration, ms bool) string {
	t := time.Unix(clockStart, 0).Add(d)
	if ms {
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return strconv.FormatInt(t.Unix(), 10)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// start serves a MyRedis with a fake clock and returns a raw connection to it.
func start(t *testing.T, opts ...myredis.Option) (*redistest.Conn, *fakeClock, string) {
	t.Helper()
	clk := newFakeClock()
	addr := redistest.StartMyRedis(t, append([]myredis.Option{myredis.WithClock(clk)}, opts...)...)
	return redistest.Dial(t, addr), clk, addr
}

// mustDo sends one command and fails the test unless the raw reply is want.
func mustDo(t *testing.T, c *redistest.Conn, want string, args ...string) {
	t.Helper()
	if got := c.Do(args...); got != want {
		t.Fatalf("%s:\n got  %q\n want %q", strings.Join(args, " "), got, want)
	}
}

// step is one command and its expected raw reply.
type step struct {
	args []string
	want string
}

// do builds a step: do(want, "SET", "k", "v").
func do(want string, args ...string) step { return step{args, want} }

// runSteps plays steps on c, reporting every mismatch.
func runSteps(t *testing.T, c *redistest.Conn, steps []step) {
	t.Helper()
	for i, s := range steps {
		if got := c.Do(s.args...); got != s.want {
			t.Errorf("step %d %s:\n got  %q\n want %q", i+1, strings.Join(s.args, " "), got, s.want)
		}
	}
}

// groupCase is a named sequence of steps run on a fresh server.
type groupCase struct {
	name  string
	steps []step
}

// runGroup runs every case on its own server with a fake clock.
func runGroup(t *testing.T, cases []groupCase) {
	t.Helper()
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			c, _, _ := start(t)
			runSteps(t, c, gc.steps)
		})
	}
}
