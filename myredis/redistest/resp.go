package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Conn is a raw RESP client: it sends argument vectors (or any bytes) and returns
// each reply exactly as the server wrote it, so tests can compare bytes.
type Conn struct {
	t  testing.TB
	nc net.Conn
	rd *bufio.Reader
}

// Timeout bounds every Conn read and write.
var Timeout = 10 * time.Second

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 64*1024) }

// Dial connects to addr; the connection is closed when the test ends.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, Timeout)
	if err != nil {
		t.Fatalf("redistest: dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, rd: newReader(nc)}
}

// DialErr connects to addr without a test: the caller closes the connection.
// Do and Pipeline need a test; use DoErr, Write and Read.
func DialErr(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, Timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{nc: nc, rd: newReader(nc)}, nil
}

// Wrap makes a Conn of an open connection (a TLS one); it is closed when the
// test ends.
func Wrap(t testing.TB, nc net.Conn) *Conn {
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, rd: newReader(nc)}
}

// NetConn is the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends one command and returns its raw reply ("+OK\r\n"). It fails the test
// on a network error.
func (c *Conn) Do(args ...string) string {
	c.t.Helper()
	reply, err := c.DoErr(args...)
	if err != nil {
		c.t.Fatalf("redistest: %s: %v", strings.Join(args, " "), err)
	}
	return reply
}

// DoErr sends one command and returns its raw reply or the network error.
func (c *Conn) DoErr(args ...string) (string, error) {
	if err := c.Write(Encode(args...)); err != nil {
		return "", err
	}
	return c.Read()
}

// Write sends raw bytes.
func (c *Conn) Write(b []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(Timeout))
	_, err := c.nc.Write(b)
	return err
}

// Read reads exactly one reply, raw.
func (c *Conn) Read() (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(Timeout))
	var b strings.Builder
	err := ReadReply(c.rd, &b)
	return b.String(), err
}

// ReadAll reads until the server closes the connection or d passes, and returns
// every byte received. closed reports whether the server closed the connection.
func (c *Conn) ReadAll(d time.Duration) (data string, closed bool) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c.rd)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return string(b), false
	}
	return string(b), true
}

// Pipeline sends every command in one write and returns the raw replies in order.
func (c *Conn) Pipeline(cmds ...[]string) []string {
	c.t.Helper()
	var buf []byte
	for _, args := range cmds {
		buf = append(buf, Encode(args...)...)
	}
	if err := c.Write(buf); err != nil {
		c.t.Fatalf("redistest: pipeline write: %v", err)
	}
	out := make([]string, len(cmds))
	for i := range cmds {
		r, err := c.Read()
		if err != nil {
			c.t.Fatalf("redistest: pipeline reply %d: %v", i, err)
		}
		out[i] = r
	}
	return out
}

// Encode renders args as a RESP multibulk request.
func Encode(args ...string) []byte {
	b := make([]byte, 0, 16+8*len(args))
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// ReadReply copies one complete RESP2 or RESP3 reply from rd into w, raw.
func ReadReply(rd *bufio.Reader, w *strings.Builder) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		w.WriteString(line)
		return err
	}
	w.WriteString(line)
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("malformed reply line %q", line)
	}
	head := line[1 : len(line)-2]
	switch line[0] {
	case '+', '-', ':', ',', '#', '_', '(':
		return nil
	case '$', '=', '!':
		n, err := strconv.Atoi(head)
		if err != nil {
			return fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			w.Write(buf)
			return err
		}
		w.Write(buf)
		return nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(head)
		if err != nil {
			return fmt.Errorf("bad aggregate length %q", line)
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := ReadReply(rd, w); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

// Quote renders a raw reply on one line for failure messages.
func Quote(reply string) string { return strconv.Quote(reply) }

// Expected replies, raw, for comparisons with Conn.Do.
const (
	OK        = "+OK\r\n"
	Nil       = "$-1\r\n"
	NilArray  = "*-1\r\n"
	Queued    = "+QUEUED\r\n"
	EmptyList = "*0\r\n"
)

// Int is an integer reply.
func Int(n int64) string { return ":" + strconv.FormatInt(n, 10) + "\r\n" }

// Bulk is a bulk string reply.
func Bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// Simple is a status reply.
func Simple(s string) string { return "+" + s + "\r\n" }

// Err is an error reply; msg includes the prefix ("ERR syntax error").
func Err(msg string) string { return "-" + msg + "\r\n" }

// Array is an array of already-encoded replies.
func Array(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

// Bulks is an array of bulk strings.
func Bulks(items ...string) string {
	enc := make([]string, len(items))
	for i, s := range items {
		enc[i] = Bulk(s)
	}
	return Array(enc...)
}
