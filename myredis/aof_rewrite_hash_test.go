package myredis

import (
	"fmt"
	"strconv"
	"testing"
)

// TestAOFRewriteSlicesABigHash: a hash of more than zsetSlice slots is encoded a
// slice per executor job, not whole in one; writes to it halfway (HSET, HDEL,
// HINCRBY) first finish its capture, so replaying the captured keys gives the
// data at the start, and the live hash has the writes.
func TestAOFRewriteSlicesABigHash(t *testing.T) {
	s, _ := openAOFServer(t, t.TempDir(), func(c *Config) { c.AppendFsync = "no" })
	defer s.Close()
	do := func(args ...string) { s.call(s.rewriteTestClient(), bargs(args...), &Writer{}) }
	s.submit(func() {
		for i := range 100 {
			do("SET", fmt.Sprintf("s%d", i), strconv.Itoa(i))
		}
		for i := 0; i < 3*zsetSlice; i += 256 {
			args := []string{"HSET", "big"}
			for j := i; j < i+256; j++ {
				args = append(args, fmt.Sprintf("f%d", j), strconv.Itoa(j))
			}
			do(args...)
		}
		do("HDEL", "big", "f0", "f5", "f9000", "f20000") // holes inside slices
		do("PEXPIRE", "big", "9999999")
	})
	t0 := dump(s)
	var items []snapItem
	var bigItems int
	s.submit(func() {
		a := s.aof
		rw := &rewrite{touched: make(map[dbKey]struct{})}
		a.rw, s.beforeWrite = rw, a.beforeWrite
		step := func() bool {
			got, done, err := a.scanStep(rw)
			if err != nil {
				t.Error(err) // not Fatal: this runs on the executor
				return true
			}
			for _, it := range got {
				if it.key == "big" {
					bigItems++
				}
			}
			items = append(items, got...)
			return done
		}
		step() // big (to be sliced) and the strings
		if len(rw.slicing) != 1 {
			t.Errorf("%d values being sliced after the first step, want the big hash", len(rw.slicing))
		}
		step() // big's first slice
		do("HSET", "big", "f1", "changed", "new", "x")
		do("HDEL", "big", "f2", "f24000")
		do("HINCRBY", "big", "f3", "10")
		for !step() {
		}
		a.rw, s.beforeWrite = nil, nil
	})
	if bigItems != 2 { // the first slice by a step, the rest when the first write came
		t.Errorf("the big hash was captured in %d parts, want 2", bigItems)
	}
	assertSnapshotReplays(t, items, t0)
	if got := string(s.Do("HMGET", "big", "f1", "new", "f2", "f3")); got != "*4\r\n$7\r\nchanged\r\n$1\r\nx\r\n$-1\r\n$2\r\n13\r\n" {
		t.Errorf("live hash after the writes: %q", got)
	}
}
