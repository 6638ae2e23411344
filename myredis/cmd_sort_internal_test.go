package myredis

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestSortRange(t *testing.T) {
	cases := []struct {
		start, count int64
		n            int
		from, to     int
	}{
		{0, -1, 5, 0, 4},
		{1, 2, 5, 1, 2},
		{-3, 2, 5, 0, 1},
		{3, 10, 5, 3, 4},
		{5, 1, 5, 0, -1},
		{2, 0, 5, 0, -1},
		{1, math.MaxInt64, 5, 1, 4},
		{math.MaxInt64, math.MaxInt64, 5, 0, -1},
		{0, 1, 0, 0, -1},
	}
	for _, c := range cases {
		from, to := sortRange(c.start, c.count, c.n)
		if from != c.from || to != c.to {
			t.Errorf("sortRange(%d, %d, %d) = [%d, %d], want [%d, %d]", c.start, c.count, c.n, from, to, c.from, c.to)
		}
	}
}

func TestSortScore(t *testing.T) {
	for in, want := range map[string]bool{
		"1": true, "-2.5": true, "": true, " 3": true, "0x10": true, "inf": true, "1\x00junk": true,
		"3 ": false, "abc": false, "nan": false, "1e400": false, "1e-400": false, " ": false,
	} {
		if _, ok := sortScore([]byte(in)); ok != want {
			t.Errorf("sortScore(%q) ok = %v, want %v", in, ok, want)
		}
	}
}

func FuzzSortOpts(f *testing.F) {
	for _, s := range []string{
		"", "DESC ALPHA", "LIMIT 0 10", "LIMIT x 1", "LIMIT 1", "BY w_* GET # GET h_*->f",
		"BY nosort", "STORE d", "STORE", "GET", "asc desc limit -1 -1 by * store x get #",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, readonly bool) {
		args := bytes.Fields([]byte(line))
		o, msg := parseSortOpts(args, readonly)
		if msg != "" {
			if msg != msgSyntax && msg != msgNotInt {
				t.Fatalf("%q: unexpected error %q", line, msg)
			}
			return
		}
		if readonly && o.store != nil {
			t.Fatalf("%q: SORT_RO took STORE", line)
		}
		if o.dontsort && o.by != nil {
			t.Fatalf("%q: nosort with a BY pattern", line)
		}
		if o.by != nil && bytes.IndexByte(o.by, '*') < 0 {
			t.Fatalf("%q: BY pattern %q without '*'", line, o.by)
		}
		keys := sortKeys(append([][]byte{[]byte("sort"), []byte("k")}, args...))
		if len(keys) != 1+btoi(o.store != nil) {
			t.Fatalf("%q: keys %q", line, keys)
		}
		for _, n := range []int{0, 1, 7} {
			from, to := sortRange(o.limitStart, o.limitCount, n)
			if to >= n || (to >= from && from < 0) || (to < from && (from != 0 || to != -1)) {
				t.Fatalf("%q: range [%d, %d] of %d", line, from, to, n)
			}
		}
	})
}

func FuzzSintercard(f *testing.F) {
	for _, s := range []string{"1 a", "2 a b LIMIT 1", "0 a", "x a", "3 a b", "1 a LIMIT -1", "1 a LIMIT", "1 a FOO 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := bytes.Fields([]byte(line))
		if len(args) < 2 { // the arity check comes first
			return
		}
		n, limit, msg := parseSintercard(args)
		switch msg {
		case "":
			if n < 1 || n > len(args)-1 || limit < 0 {
				t.Fatalf("%q: numkeys %d limit %d", line, n, limit)
			}
		case msgNumkeysPositive, msgNumKeysTooMany, msgSyntax, msgLimitNegative:
		default:
			t.Fatalf("%q: unexpected error %q", line, msg)
		}
	})
}

// TestSortLists: a list sorts by value, keeps its order (reversed by DESC)
// under BY nosort, and SORT ... STORE writes a list.
func TestSortLists(t *testing.T) {
	srv, _, _ := startHashServer(t)
	srv.Do("RPUSH", "l", "3", "1", "2", "1")
	for _, c := range []struct{ cmd, want string }{
		{"SORT l", "*4\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SORT l BY nosort", "*4\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n1\r\n"},
		{"SORT l BY nosort DESC", "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n"},
		{"SORT l BY nosort DESC LIMIT 1 2", "*2\r\n$1\r\n2\r\n$1\r\n1\r\n"},
		{"SORT l DESC LIMIT 0 1", "*1\r\n$1\r\n3\r\n"},
		{"SORT l STORE d", ":4\r\n"},
		{"TYPE d", "+list\r\n"},
		{"LRANGE d 0 -1", "*4\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{"SORT d GET # GET nokey_*", "*8\r\n$1\r\n1\r\n$-1\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n$-1\r\n$1\r\n3\r\n$-1\r\n"},
		{"SORT l GET nokey_* STORE d", ":4\r\n"},
		{"LRANGE d 0 -1", "*4\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"},
	} {
		if got := string(srv.Do(strings.Fields(c.cmd)...)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.cmd, got, c.want)
		}
	}
}
