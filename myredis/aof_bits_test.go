package myredis

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// bitsAndHLLWrites are writes of every bit, range and HyperLogLog command,
// PFCOUNT's cache update and a sparse-to-dense promotion included.
func bitsAndHLLWrites() [][]string {
	cmds := [][]string{
		{"SETBIT", "bits", "100", "1"},
		{"SETBIT", "bits", "3", "1"},
		{"SETBIT", "bits", "3", "0"},
		{"SET", "ttl", "abc", "EX", "1000"},
		{"SETBIT", "ttl", "2000", "1"},
		{"SETRANGE", "r", "5", "hello"},
		{"SETRANGE", "r", "0", "J"},
		{"BITFIELD", "bf", "SET", "i8", "0", "-5", "INCRBY", "u4", "#3", "7", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "-1000"},
		{"BITOP", "XOR", "x", "bits", "r"},
		{"BITOP", "AND", "gone", "nothing"},
		{"PFADD", "hll", "a", "b", "c"},
		{"PFCOUNT", "hll"},
		{"PFADD", "hll2", "c", "d"},
		{"PFMERGE", "merged", "hll", "hll2"},
		{"PFADD", "dense", "x"},
		{"PFDEBUG", "TODENSE", "dense"},
		{"PFADD", "dense", "y", "z"},
		{"PFCOUNT", "dense"},
	}
	var many []string
	for i := range 400 {
		many = append(many, "e"+strconv.Itoa(i))
	}
	return append(cmds, append([]string{"PFADD", "big"}, many...), []string{"PFCOUNT", "big"})
}

// TestAOFReplayBitsAndHLL: the AOF replays to the same bytes, PFCOUNT's cached
// cardinality included, and so does the rewritten file.
func TestAOFReplayBitsAndHLL(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	for _, cmd := range bitsAndHLLWrites() {
		args := make([]any, len(cmd))
		for i, a := range cmd {
			args[i] = a
		}
		c.must(t, args...)
	}
	want := dump(s)
	if !strings.Contains(strings.Join(want, "\n"), "HYLL") {
		t.Fatal("no HLL in the data")
	}
	s.Close()

	s2, addr2 := openAOFServer(t, dir, nil)
	if got := dump(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after replay: %s", firstDiff(got, want))
	}
	c2 := mustDialAOF(t, addr2)
	c2.must(t, "BGREWRITEAOF")
	c2.waitRewrite(t, 1)
	s2.Close()

	s3, _ := openAOFServer(t, dir, nil)
	defer s3.Close()
	if got := dump(s3); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the rewrite: %s", firstDiff(got, want))
	}
}

// TestAOFRewriteSnapshotSurvivesInPlaceWrites: bit, range and HLL commands
// change strings in place, but not under a running rewrite, which holds the
// strings it captured by reference: the snapshot stays the data at its start.
func TestAOFRewriteSnapshotSurvivesInPlaceWrites(t *testing.T) {
	s, _ := openAOFServer(t, t.TempDir(), func(c *Config) { c.AppendFsync = "no" })
	defer s.Close()
	do := func(args ...string) { s.call(s.rewriteTestClient(), bargs(args...), &Writer{}) }
	const n = 3000 // more than one scan step
	s.submit(func() {
		for i := range n {
			k := fmt.Sprintf("s%d", i)
			switch i % 3 {
			case 0:
				do("SETBIT", k, "64", "1")
			case 1:
				do("PFADD", k, "a", "b")
			default:
				do("SET", k, "0123456789")
			}
		}
	})
	t0 := dump(s)
	var items []snapItem
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
		for i := range n { // keys scanned already and keys not yet scanned
			k := fmt.Sprintf("s%d", i)
			switch i % 3 {
			case 0:
				do("SETBIT", k, "0", "1")
				do("BITFIELD", k, "INCRBY", "u8", "8", "3")
			case 1:
				do("PFADD", k, "c", "d", "e")
				do("PFCOUNT", k)
			default:
				do("SETRANGE", k, "2", "xy")
			}
		}
		for !step() {
		}
		a.rw, s.beforeWrite = nil, nil
	})
	assertSnapshotReplays(t, items, t0)
}
