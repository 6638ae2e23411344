package myredis

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// aofClient is a minimal RESP2 client for the AOF tests: one request, one reply.
type aofClient struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

type respError string

func (e respError) Error() string { return string(e) }

func dialAOF(addr string) (*aofClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &aofClient{conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn)}, nil
}

func mustDialAOF(t testing.TB, addr string) *aofClient {
	t.Helper()
	c, err := dialAOF(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.conn.Close() })
	return c
}

// do sends one command and reads its reply: string (simple or bulk), int64, nil,
// []any, or a respError as the error.
func (c *aofClient) do(args ...any) (any, error) {
	c.send(args)
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *aofClient) send(args []any) {
	c.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		s := fmt.Sprint(a)
		c.w.WriteString("$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n")
	}
}

// pipeline sends every command, then reads every reply (a respError in place of a
// value for an error reply).
func (c *aofClient) pipeline(t testing.TB, cmds [][]any) []any {
	t.Helper()
	for _, args := range cmds {
		c.send(args)
	}
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(cmds))
	for i := range out {
		v, err := c.read()
		if err != nil && !isRespError(err) {
			t.Fatal(err)
		}
		if err != nil {
			v = err
		}
		out[i] = v
	}
	return out
}

func (c *aofClient) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("short reply line")
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, respError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			v, err := c.read()
			if err != nil && !isRespError(err) {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply %q", line)
}

func isRespError(err error) bool {
	var re respError
	return errors.As(err, &re)
}

// must runs a command and fails the test on any error.
func (c *aofClient) must(t testing.TB, args ...any) any {
	t.Helper()
	v, err := c.do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// infoField reads one field of INFO section.
func (c *aofClient) infoField(t testing.TB, section, field string) string {
	t.Helper()
	s, _ := c.must(t, "INFO", section).(string)
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s:\n%s", section, field, s)
	return ""
}

// waitRewrite polls INFO until no rewrite is running and at least n have finished.
func (c *aofClient) waitRewrite(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		done, _ := strconv.Atoi(c.infoField(t, "persistence", "aof_rewrites"))
		if c.infoField(t, "persistence", "aof_rewrite_in_progress") == "0" && done >= n {
			if st := c.infoField(t, "persistence", "aof_last_bgrewrite_status"); st != "ok" {
				t.Fatalf("aof_last_bgrewrite_status:%s", st)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("rewrite did not finish in 60s")
}

// assertSnapshotReplays writes the items a rewrite captured as a file, replays
// it into a new server and checks that it holds exactly t0, the data (dump)
// as it was when the rewrite started.
func assertSnapshotReplays(t *testing.T, items []snapItem, t0 []string) {
	t.Helper()
	var file []byte
	enc := rewriteEncoder{selected: -1}
	for _, it := range items {
		file = append(file, enc.append(it)...)
	}
	dir := t.TempDir()
	if err := os.WriteFile(aofPath(dir), file, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := tryOpenAOF(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(t0, "\n") {
		t.Fatalf("replaying the snapshot gives %d keys, the data at the start had %d; first difference: %s",
			len(got), len(t0), firstDiff(got, t0))
	}
}
