package myredis

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAOFLogsListPopsAsRedisPropagatesThem: the blocking pops and LMPOP are
// logged as the non-blocking command that had the same effect (BLPOP -> LPOP,
// BLMOVE -> LMOVE, BRPOPLPUSH -> RPOPLPUSH, [B]LMPOP -> LPOP/RPOP key count), for
// an immediate answer and for a served waiter alike; a timeout logs nothing.
func TestAOFLogsListPopsAsRedisPropagatesThem(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	c.must(t, "RPUSH", "a", "1", "2", "3", "4", "5")
	c.must(t, "BLPOP", "none", "a", 0)
	c.must(t, "BRPOP", "a", 0)
	c.must(t, "BLMOVE", "a", "b", "left", "RIGHT", 0)
	c.must(t, "BRPOPLPUSH", "a", "b", 0)
	c.must(t, "LMPOP", 2, "none", "b", "RIGHT", "COUNT", 10)
	c.must(t, "BLMPOP", 0, 1, "a", "LEFT", "COUNT", 3)
	c.must(t, "BLPOP", "none", 0.01) // timed out: nothing
	c.must(t, "LPOP", "none")        // nothing to pop: nothing

	w := mustDialAOF(t, addr)
	w.send([]any{"BLMOVE", "q", "r", "RIGHT", "LEFT", 0})
	w.w.Flush()
	waitBlocked(t, s, 1)
	c.must(t, "RPUSH", "q", "x")
	if v, err := w.read(); err != nil || fmt.Sprint(v) != "x" {
		t.Fatalf("served BLMOVE = %v, %v", v, err)
	}
	w.send([]any{"BLMPOP", 0, 1, "q", "RIGHT", "COUNT", 5})
	w.w.Flush()
	waitBlocked(t, s, 1)
	c.must(t, "RPUSH", "q", "y", "z")
	if _, err := w.read(); err != nil {
		t.Fatal(err)
	}
	want := dump(s)
	s.Close()

	var file []byte
	for _, cmd := range [][]string{
		{"SELECT", "0"},
		{"RPUSH", "a", "1", "2", "3", "4", "5"},
		{"LPOP", "a"},
		{"RPOP", "a"},
		{"LMOVE", "a", "b", "LEFT", "RIGHT"},
		{"RPOPLPUSH", "a", "b"},
		{"RPOP", "b", "2"},
		{"LPOP", "a", "1"},
		{"RPUSH", "q", "x"},
		{"LMOVE", "q", "r", "RIGHT", "LEFT"},
		{"RPUSH", "q", "y", "z"},
		{"RPOP", "q", "2"},
	} {
		file = appendCommand(file, bargs(cmd...))
	}
	got, _ := os.ReadFile(aofPath(dir))
	if !bytes.Equal(got, file) {
		t.Fatalf("file:\n%q\nwant:\n%q", got, file)
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t *testing.T, s *Server, n int) {
	t.Helper()
	waitFor(t, func() bool {
		var got int
		s.submit(func() {
			for _, cs := range s.blocking {
				got += len(cs)
			}
		})
		return got == n
	})
}

// TestAOFRewriteLists: a rewrite writes each list as RPUSH commands of up to 64
// elements, a big one slice by slice, and restarting from it gives the same lists.
func TestAOFRewriteLists(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, noPreamble) // the command encoding
	c := mustDialAOF(t, addr)
	args := []any{"RPUSH", "l", "", "\x00\r\n", strings.Repeat("x", 20000)}
	for i := range 200 {
		args = append(args, i)
	}
	c.must(t, args...)
	c.must(t, "LPUSH", "l", "head")
	c.must(t, "PEXPIRE", "l", 500000)
	c.must(t, "RPUSH", "small", "x")
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	want := dump(s)
	s.Close()

	b, _ := os.ReadFile(aofPath(dir))
	if n := bytes.Count(b, []byte("RPUSH")); n != 5 { // 204 elements: 4 batches, plus small
		t.Errorf("%d RPUSH commands in the rewritten file, want 5", n)
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAOFRewriteListSnapshot drives a rewrite's steps by hand, writing to a big
// list halfway through its slices: replaying the captured keys alone must give
// exactly the lists at the start.
func TestAOFRewriteListSnapshot(t *testing.T) {
	s, _ := openAOFServer(t, t.TempDir(), func(c *Config) { c.AppendFsync = "no" })
	defer s.Close()
	do := func(args ...string) { s.call(s.rewriteTestClient(), bargs(args...), &Writer{}) }
	var items []snapItem
	s.submit(func() {
		do("RPUSH", "other", "a", "b")
		for i := range 3 * zsetSlice {
			do("RPUSH", "big", strconv.Itoa(i))
		}
	})
	t0 := dump(s)
	s.submit(func() {
		a := s.aof
		rw := &rewrite{touched: make(map[dbKey]struct{})}
		a.rw, s.beforeWrite = rw, a.beforeWrite
		step := func() bool {
			got, done, err := a.scanStep(rw)
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, got...)
			return done
		}
		step()
		if len(rw.slicing) != 1 {
			t.Fatalf("%d values being sliced after the first step, want 1", len(rw.slicing))
		}
		step() // big's first slice
		do("LPOP", "big")
		do("LMPOP", "2", "none", "other", "LEFT")
		do("RPUSH", "big", "new")
		for !step() {
			do("LSET", "big", "5", "changed")
		}
		a.rw, s.beforeWrite = nil, nil
	})
	assertSnapshotReplays(t, items, t0)
}
