package myredis

import (
	"slices"
	"testing"
)

// FuzzStreamID: any argument parses or is refused, never panics; an accepted
// strict ID prints back to one that parses to itself.
func FuzzStreamID(f *testing.F) {
	for _, s := range []string{"1-1", "0", "-", "+", "5-*", "18446744073709551615-18446744073709551615",
		"01-02", " 7", "1--01", "(3", "", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, strict := range []bool{false, true} {
			id, _, ok := parseStreamID(b, 0, strict, true)
			if !ok {
				continue
			}
			again, seqGiven, ok := parseStreamID(id.bytes(), 0, true, false)
			if !ok || again != id || !seqGiven {
				t.Fatalf("%q -> %v -> %v %v", b, id, again, ok)
			}
		}
	})
}

// FuzzStreamRDB: a stream payload (RDB type 19) either loads into a stream every
// operation can walk, or is refused; it never panics. A loaded stream writes
// back to a payload that loads to the same entries.
func FuzzStreamRDB(f *testing.F) {
	s := newStream()
	for i := 1; i <= 12; i++ {
		fv := [][]byte{[]byte("f"), []byte("v"), []byte("n"), []byte("123")}
		if i%4 == 0 {
			fv = [][]byte{[]byte("other"), []byte("x")}
		}
		s.add(streamID{uint64(i), 0}, fv, 4096, 5)
	}
	s.remove(streamID{3, 0})
	g := s.createGroup("g", streamID{5, 0}, 5)
	c := g.createConsumer("alice", 99)
	p := &pendingEntry{id: streamID{4, 0}, deliveryTime: 7, deliveryCount: 2, consumer: c}
	g.pel.Set(p)
	c.pel.Set(p)
	var w rdbWriter
	s.appendRDB(&w)
	f.Add(w.b)
	f.Add(w.b[:len(w.b)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := readStreamRDB(&rdbReader{p: b}, rdbTypeStreamLP2)
		if err != nil {
			return
		}
		st := v.(*stream)
		entries := streamEntries(st, false)
		rev := streamEntries(st, true)
		slices.Reverse(rev)
		if !slices.Equal(entries, rev) {
			t.Fatalf("forward and reverse walks differ")
		}
		st.edge(true, true)
		st.trim(&trimArgs{strategy: trimMaxlen, maxlen: 3})
		st.add(streamID{^uint64(0) - 1, 0}, [][]byte{[]byte("a"), []byte("b")}, 4096, 5)
		var w rdbWriter
		st.appendRDB(&w)
		again, err := readStreamRDB(&rdbReader{p: w.b}, rdbTypeStreamLP2)
		if err != nil {
			t.Fatalf("a loaded stream wrote a payload it cannot read: %v", err)
		}
		if !slices.Equal(streamEntries(again.(*stream), false), streamEntries(st, false)) {
			t.Fatal("the payload written back loads to other entries")
		}
	})
}
