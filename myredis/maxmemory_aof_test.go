package myredis

// Redis's unit maxmemory, "propagation with eviction" and "propagation with
// eviction in MULTI", read from the AOF instead of a replication stream: every
// eviction is written as DEL after the commands that ran before it.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// aofCommands reads the AOF in dir as commands, each joined by spaces.
func aofCommands(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(aofPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	rd := &respReader{r: bufio.NewReader(bytes.NewReader(b)), max: 1 << 30, size: int64(len(b))}
	var out []string
	for {
		cmd, err := rd.command()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("AOF: %v", err)
		}
		out = append(out, strings.ToLower(string(bytes.Join(cmd, []byte(" ")))))
	}
}

// waitEmpty polls DBSIZE until the eviction task emptied the database.
func waitEmpty(t *testing.T, c *aofClient) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.must(t, "DBSIZE") != int64(0) {
		if time.Now().After(deadline) {
			t.Fatal("not all keys were evicted")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// matchCommands compares commands with patterns where a trailing * matches
// any rest, as Redis's assert_replication_stream.
func matchCommands(t *testing.T, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		if p, wild := strings.CutSuffix(want[i], "*"); wild {
			ok = strings.HasPrefix(got[i], p)
		} else {
			ok = got[i] == want[i]
		}
	}
	if !ok {
		t.Fatalf("AOF commands:\n%q\nwant:\n%q", got, want)
	}
}

func TestAOFPropagatesEvictions(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "SET", "asdf1", "1")
	c.must(t, "SET", "asdf2", "2")
	c.must(t, "SET", "asdf3", "3")
	c.must(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	c.must(t, "CONFIG", "SET", "maxmemory", "1")
	waitEmpty(t, c)
	c.must(t, "CONFIG", "SET", "maxmemory", "0")
	c.must(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	c.must(t, "SET", "asdf4", "4")
	s.Close()
	matchCommands(t, aofCommands(t, dir), []string{
		"select *", "set asdf1 1", "set asdf2 2", "set asdf3 3",
		"del asdf*", "del asdf*", "del asdf*", "set asdf4 4",
	})
}

func TestAOFPropagatesEvictionsAfterMulti(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	c.must(t, "MULTI")
	c.must(t, "INCR", "x")
	c.must(t, "CONFIG", "SET", "maxmemory", "1")
	c.must(t, "INCR", "x")
	got := c.must(t, "EXEC")
	if r, ok := got.([]any); !ok || len(r) != 3 || r[0] != int64(1) || r[1] != "OK" || r[2] != int64(2) {
		t.Fatalf("EXEC: %#v, want [1 OK 2]", got)
	}
	waitEmpty(t, c)
	c.must(t, "CONFIG", "SET", "maxmemory", "0")
	c.must(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	s.Close()
	matchCommands(t, aofCommands(t, dir), []string{
		"select *", "multi", "incr x", "incr x", "exec", "del x",
	})
}
