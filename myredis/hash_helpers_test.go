package myredis

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers for the hash tests: a MyRedis on a loopback port, a raw RESP connection
// that returns each reply's bytes, and builders for expected replies. (Named for
// the hash tests so they sit beside the other command groups' helpers without
// clashing; one shared set can replace them.)

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

// hashConn is a raw RESP connection.
type hashConn struct {
	t  testing.TB
	nc net.Conn
	rd *bufio.Reader
}

func dialHash(t testing.TB, addr string) *hashConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &hashConn{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

func hashEncode(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// do sends one command and returns its raw reply.
func (c *hashConn) do(args ...string) string {
	c.t.Helper()
	if _, err := c.nc.Write(hashEncode(args...)); err != nil {
		c.t.Fatal(err)
	}
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	if err := hashReadReply(c.rd, &b); err != nil {
		c.t.Fatalf("%q: reading the reply: %v (so far %q)", args, err, b.String())
	}
	return b.String()
}

// hashReadReply copies one RESP2 reply from rd to w.
func hashReadReply(rd *bufio.Reader, w *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	w.WriteString(line)
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return fmt.Errorf("bad line %q", line)
	}
	switch line[0] {
	case '$':
		n, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil || n < 0 {
			return err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return err
		}
		w.Write(buf)
	case '*':
		n, err := strconv.Atoi(line[1 : len(line)-2])
		if err != nil {
			return err
		}
		for range max(n, 0) {
			if err := hashReadReply(rd, w); err != nil {
				return err
			}
		}
	}
	return nil
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

// hstep is one command and its expected raw reply.
type hstep struct {
	cmd  string
	want string
}

// playHash runs steps in order on c, reporting every mismatch.
func playHash(t *testing.T, c *hashConn, steps []hstep) {
	t.Helper()
	for _, s := range steps {
		if got := c.do(hashArgs(s.cmd)...); got != s.want {
			t.Errorf("%s\n got: %q\nwant: %q", s.cmd, got, s.want)
		}
	}
}

// hr builds expected replies: hr.Int(1), hr.Bulks("a", "b"), hr.Null.
var hr = hashReplies{
	OK:        "+OK\r\n",
	Null:      "$-1\r\n",
	Empty:     "*0\r\n",
	WrongType: "-" + msgWrongType + "\r\n",
	NotInt:    "-" + msgNotInt + "\r\n",
	Syntax:    "-" + msgSyntax + "\r\n",
}

type hashReplies struct{ OK, Null, Empty, WrongType, NotInt, Syntax string }

func (hashReplies) Int(n int64) string      { return ":" + strconv.FormatInt(n, 10) + "\r\n" }
func (hashReplies) Bulk(s string) string    { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func (hashReplies) Err(msg string) string   { return "-" + msg + "\r\n" }
func (hashReplies) Arity(cmd string) string { return "-" + errArity(cmd) + "\r\n" }

func (hashReplies) Arr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

func (r hashReplies) Bulks(items ...string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = r.Bulk(s)
	}
	return r.Arr(out...)
}

// Scan is a SCAN-family reply: the next cursor and a flat list of bulk strings.
func (r hashReplies) Scan(cursor string, items ...string) string {
	return r.Arr(r.Bulk(cursor), r.Bulks(items...))
}
