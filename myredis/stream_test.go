package myredis

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// streamEntries reads every live entry of s as "id f=v f=v".
func streamEntries(s *stream, rev bool) []string {
	var out []string
	s.scan(streamID{}, maxStreamID, rev, func(id streamID, fv [][]byte) bool {
		e := id.String()
		for i := 0; i < len(fv); i += 2 {
			e += " " + string(fv[i]) + "=" + string(fv[i+1])
		}
		out = append(out, e)
		return true
	})
	return out
}

// checkStream verifies the node structure: every listpack parses, its header
// counts match its entries, no node is empty, masters are in order, and the
// live entries add up to the length.
func checkStream(t interface{ Fatalf(string, ...any) }, s *stream) {
	var live uint64
	var prev *streamNode
	s.nodes.Scan(func(n *streamNode) bool {
		if prev != nil && !prev.master.less(n.master) {
			t.Fatalf("nodes out of order: %v then %v", prev.master, n.master)
		}
		prev = n
		h, ok := n.head()
		if !ok {
			t.Fatalf("node %v: bad master entry", n.master)
		}
		var count, deleted int64
		n.each(func(_ *nodeHead, e *nodeEntry) bool {
			if e.deleted() {
				deleted++
			} else {
				count++
			}
			return true
		})
		if count != h.count || deleted != h.deleted || count == 0 {
			t.Fatalf("node %v: header %d/%d, entries %d/%d", n.master, h.count, h.deleted, count, deleted)
		}
		if err := validateStreamNode(n.lp, n.master); err != nil {
			t.Fatalf("node %v: %v", n.master, err)
		}
		live += uint64(count)
		return true
	})
	if live != s.length {
		t.Fatalf("length %d, live entries %d", s.length, live)
	}
}

func TestStreamIDParse(t *testing.T) {
	for _, tc := range []struct {
		in       string
		strict   bool
		auto     bool
		want     string
		seqGiven bool
		ok       bool
	}{
		{"1-2", true, false, "1-2", true, true},
		{"5", false, false, "5-7", true, true}, // missing seq is the caller's
		{"-", false, false, "0-0", true, true},
		{"+", false, false, "18446744073709551615-18446744073709551615", true, true},
		{"-", true, false, "", false, false},
		{"3-*", true, true, "3-0", false, true},
		{"3-*", true, false, "", false, false},
		{"01-1", true, false, "1-1", true, true}, // strtoull's leniency, as Redis
		{" 1", true, false, "1-7", true, true},
		{"1-", true, false, "", false, false},
		{"a-1", true, false, "", false, false},
		{"18446744073709551616", true, false, "", false, false},
		{"-1", true, false, "", false, false},
		{"1--1", true, false, "", false, false},                      // string2ll reads -1: negative
		{"1--01", true, false, "1-18446744073709551615", true, true}, // strtoull wraps it
	} {
		id, seqGiven, ok := parseStreamID([]byte(tc.in), 7, tc.strict, tc.auto)
		if ok != tc.ok || (ok && (id.String() != tc.want || seqGiven != tc.seqGiven)) {
			t.Errorf("parseStreamID(%q) = %v %v %v, want %s %v %v", tc.in, id, seqGiven, ok, tc.want, tc.seqGiven, tc.ok)
		}
	}
}

func TestStreamIDIncrDecr(t *testing.T) {
	if id, ok := (streamID{1, ^uint64(0)}).incr(); !ok || id != (streamID{2, 0}) {
		t.Errorf("incr carry: %v %v", id, ok)
	}
	if _, ok := maxStreamID.incr(); ok {
		t.Error("incr past the maximum succeeded")
	}
	if id, ok := (streamID{2, 0}).decr(); !ok || id != (streamID{1, ^uint64(0)}) {
		t.Errorf("decr borrow: %v %v", id, ok)
	}
	if _, ok := (streamID{}).decr(); ok {
		t.Error("decr below 0-0 succeeded")
	}
}

func TestStreamNodesAndFields(t *testing.T) {
	s := newStream()
	fv := func(kv ...string) [][]byte {
		out := make([][]byte, len(kv))
		for i, v := range kv {
			out[i] = []byte(v)
		}
		return out
	}
	// same fields as the master entry are compressed; others are not; integers
	// come back as the decimal text they were written as
	for i := 1; i <= 7; i++ {
		if i%3 == 0 {
			s.add(streamID{uint64(i), 0}, fv("x", "12345678901", "y", fmt.Sprint(-i)), 4096, 3)
		} else {
			s.add(streamID{uint64(i), 0}, fv("a", fmt.Sprint(i), "big", string(make([]byte, 70))), 4096, 3)
		}
	}
	checkStream(t, s)
	if s.nodeCount() != 3 { // 3 entries per node
		t.Fatalf("nodes = %d, want 3", s.nodeCount())
	}
	got := streamEntries(s, false)
	if len(got) != 7 || got[2] != "3-0 x=12345678901 y=-3" || got[0][:9] != "1-0 a=1 b" {
		t.Fatalf("entries: %q", got)
	}
	rev := streamEntries(s, true)
	slices.Reverse(rev)
	if !slices.Equal(rev, got) {
		t.Fatalf("reverse walk differs:\n%q\n%q", rev, got)
	}
	// the byte limit opens a new node
	b := newStream()
	for i := 1; i <= 4; i++ {
		b.add(streamID{uint64(i), 0}, fv("f", string(make([]byte, 50))), 100, 100)
	}
	if b.nodeCount() != 4 {
		t.Fatalf("byte-limited nodes = %d, want 4", b.nodeCount())
	}
	checkStream(t, b)
}

func TestStreamRemoveAndTrim(t *testing.T) {
	s := newStream()
	for i := 1; i <= 10; i++ {
		s.add(streamID{uint64(i), 0}, [][]byte{[]byte("f"), []byte("v")}, 4096, 4)
	}
	if !s.remove(streamID{2, 0}) || s.remove(streamID{2, 0}) || s.remove(streamID{99, 0}) {
		t.Fatal("remove did not report presence")
	}
	checkStream(t, s)
	// approximate: only whole nodes (1-4 holds 3 live entries, 5-8 four, 9-10 two)
	n := s.trim(&trimArgs{strategy: trimMaxlen, maxlen: 2, approx: true})
	if n != 7 || s.length != 2 {
		t.Fatalf("approx trim removed %d, length %d", n, s.length)
	}
	checkStream(t, s)
	n = s.trim(&trimArgs{strategy: trimMinID, minID: streamID{10, 0}})
	if n != 1 || s.length != 1 || s.firstID != (streamID{10, 0}) {
		t.Fatalf("minid trim removed %d, length %d, first %v", n, s.length, s.firstID)
	}
	checkStream(t, s)
}

// TestStreamModel checks the stream against a plain sorted slice under random
// appends, deletions, exact trims and range reads, with small nodes.
func TestStreamModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxEntries := rapid.SampledFrom([]int64{1, 2, 5, 100}).Draw(t, "maxEntries")
		maxBytes := rapid.SampledFrom([]int64{40, 200, 4096}).Draw(t, "maxBytes")
		s := newStream()
		type ent struct {
			id streamID
			e  string
		}
		var model []ent
		next := uint64(1)
		value := rapid.SampledFrom([]string{"1", "-7", "abc", "", "300000", "x\x00y", "99999999999999999999"})
		field := rapid.SampledFrom([]string{"a", "b", "12"})
		for range rapid.IntRange(1, 80).Draw(t, "ops") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1, 2:
				next += uint64(rapid.IntRange(0, 2).Draw(t, "gap"))
				id := streamID{next / 3, next % 3}
				next++
				var fv [][]byte
				e := id.String()
				for range rapid.IntRange(1, 3).Draw(t, "fields") {
					f, v := field.Draw(t, "f"), value.Draw(t, "v")
					fv = append(fv, []byte(f), []byte(v))
					e += " " + f + "=" + v
				}
				s.add(id, fv, maxBytes, maxEntries)
				model = append(model, ent{id, e})
			case 3:
				if len(model) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(model)-1).Draw(t, "del")
				if !s.remove(model[i].id) {
					t.Fatalf("remove %v failed", model[i].id)
				}
				model = slices.Delete(model, i, i+1)
			case 4:
				keep := rapid.IntRange(0, len(model)+1).Draw(t, "maxlen")
				s.trim(&trimArgs{strategy: trimMaxlen, maxlen: int64(keep)})
				if len(model) > keep {
					model = model[len(model)-keep:]
				}
			case 5:
				lo := streamID{uint64(rapid.IntRange(0, int(next/3)+1).Draw(t, "lo")), 1}
				hi := streamID{uint64(rapid.IntRange(0, int(next/3)+1).Draw(t, "hi")), 0}
				var want []string
				for _, m := range model {
					if !m.id.less(lo) && !hi.less(m.id) {
						want = append(want, m.e)
					}
				}
				var got []string
				s.scan(lo, hi, false, func(id streamID, fv [][]byte) bool {
					e := id.String()
					for i := 0; i < len(fv); i += 2 {
						e += " " + string(fv[i]) + "=" + string(fv[i+1])
					}
					got = append(got, e)
					return true
				})
				if !slices.Equal(got, want) {
					t.Fatalf("range %v..%v: got %q want %q", lo, hi, got, want)
				}
			}
			checkStream(t, s)
			var want []string
			for _, m := range model {
				want = append(want, m.e)
			}
			if got := streamEntries(s, false); !slices.Equal(got, want) {
				t.Fatalf("entries %q, want %q", got, want)
			}
			rev := streamEntries(s, true)
			slices.Reverse(rev)
			if !slices.Equal(rev, want) {
				t.Fatalf("reverse entries %q, want %q", rev, want)
			}
		}
	})
}

func TestStreamGroupsPEL(t *testing.T) {
	s := newStream()
	g := s.createGroup("g", streamID{}, -1)
	if s.createGroup("g", streamID{}, 0) != nil {
		t.Fatal("duplicate group created")
	}
	c := g.createConsumer("alice", 5)
	if g.createConsumer("alice", 6) != nil {
		t.Fatal("duplicate consumer created")
	}
	for i := 1; i <= 3; i++ {
		p := &pendingEntry{id: streamID{uint64(i), 0}, consumer: c, deliveryCount: 1}
		g.pel.Set(p)
		c.pel.Set(p)
	}
	g.ack(g.pending(streamID{2, 0}))
	if g.pel.Len() != 2 || c.pel.Len() != 2 || g.pending(streamID{2, 0}) != nil {
		t.Fatal("ack left the entry")
	}
	g.deleteConsumer(c)
	if g.pel.Len() != 0 || len(g.consumers) != 0 {
		t.Fatal("deleting the consumer left its entries")
	}
}
