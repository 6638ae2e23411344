package myredis

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAOFSetsReplay: every set write, SPOP included, replays to the same data.
// SPOP is logged as the SREM of what it popped (a DEL when it took everything),
// never as SPOP, whose replay would pop other members.
func TestAOFSetsReplay(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	args := []any{"SADD", "big"}
	for i := range 300 {
		args = append(args, fmt.Sprintf("m%d", i))
	}
	c.must(t, args...)
	c.must(t, "SADD", "ints", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	c.must(t, "SPOP", "big")
	c.must(t, "SPOP", "big", 10)  // a few: drawn one by one
	c.must(t, "SPOP", "ints", 9)  // most: the rebuild path
	c.must(t, "SPOP", "big", 280) // most of a hash table
	c.must(t, "SADD", "all", "a", "b")
	c.must(t, "SPOP", "all", 5)
	c.must(t, "SADD", "a", "x", "y", "1")
	c.must(t, "SMOVE", "a", "b", "x")
	c.must(t, "SREM", "a", "y")
	c.must(t, "SINTERSTORE", "i", "a", "big")
	c.must(t, "SUNIONSTORE", "u", "a", "b", "big")
	c.must(t, "SDIFFSTORE", "d", "big", "a")
	c.must(t, "PEXPIRE", "u", 500000)
	want := dump(s)
	s.Close()

	b, _ := os.ReadFile(aofPath(dir))
	if bytes.Contains(bytes.ToUpper(b), []byte("SPOP")) {
		t.Error("SPOP logged as itself")
	}
	if n := bytes.Count(b, []byte("SREM")); n != 5 {
		t.Errorf("%d SREM in the log, want 5 (4 SPOP, 1 SREM)", n)
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart: %s", firstDiff(got, want))
	}
}

func TestAOFRewriteSets(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, noPreamble) // the command encoding
	c := mustDialAOF(t, addr)
	args := []any{"SADD", "s", "a", "", "x y", "\x00"}
	for i := range 200 {
		args = append(args, i)
	}
	c.must(t, args...)
	c.must(t, "SADD", "ints", -3, 7, 1)
	c.must(t, "PEXPIRE", "ints", 500000)
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	want := dump(s)
	s.Close()

	b, _ := os.ReadFile(aofPath(dir))
	if n := bytes.Count(b, []byte("SADD")); n != 5 { // 204 members: 4 batches, plus ints
		t.Errorf("%d SADD commands in the rewritten file, want 5", n)
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart: %s", firstDiff(got, want))
	}
}

// TestAOFRewriteBigSetSnapshot: a set too big for one rewrite step is captured in
// slices; writes to it in between (SPOP, SREM, SADD) first finish its capture, so
// the snapshot is the set as it was at the start.
func TestAOFRewriteBigSetSnapshot(t *testing.T) {
	s, _ := openAOFServer(t, t.TempDir(), func(c *Config) { c.AppendFsync = "no" })
	defer s.Close()
	do := func(args ...string) { s.call(s.rewriteTestClient(), bargs(args...), &Writer{}) }
	var items []snapItem
	s.submit(func() {
		do("SADD", "small", "1", "2")
		for i := range 3 * zsetSlice {
			do("SADD", "big", "m"+strconv.Itoa(i))
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
		do("SPOP", "big", "100")
		do("SREM", "big", "m5", "m20000")
		do("SADD", "big", "new")
		do("SPOP", "small")
		for !step() {
			do("SADD", "big", "later")
		}
		a.rw, s.beforeWrite = nil, nil
	})
	assertSnapshotReplays(t, items, t0)
}
