// Needs redis-server (skips without it): HyperLogLog bytes and random bit,
// range and HLL commands compared with a real redis-server byte for byte.
package myredis_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

func init() {
	// The limits of the bit and range commands at a small proto-max-bulk-len.
	diffSuites = append(diffSuites, diffSuite{name: "smallbulk-bits", args: []string{"--proto-max-bulk-len", "1mb"}, cases: []diffCase{
		{"bit offsets at the limit", [][]string{
			{"SETBIT", "k", "8388607", "1"},
			{"STRLEN", "k"},
			{"SETBIT", "k", "8388608", "1"},
			{"GETBIT", "k", "8388608"},
			{"BITFIELD", "k", "GET", "u8", "8388600", "SET", "u8", "8388607", "1"},
			{"BITFIELD", "k", "SET", "u8", "8388608", "1"},
			{"BITFIELD", "k", "SET", "u8", "#1048575", "1", "GET", "u8", "#1048575"},
			{"BITFIELD", "k", "GET", "u8", "#1048576"},
			{"STRLEN", "k"},
			{"BITCOUNT", "k"},
			{"BITPOS", "k", "1", "-1"},
		}},
		{"setrange at the limit", [][]string{
			{"SETRANGE", "k", "1048575", "x"},
			{"SETRANGE", "k", "1048576", "x"},
			{"SETRANGE", "k", "1048570", "0123456789"},
			{"SETRANGE", "k", "1048576", ""},
			{"STRLEN", "k"},
			{"SETRANGE", "n", "1048576", "x"},
			{"EXISTS", "n"},
		}},
		{"lcs table at the limit", [][]string{
			{"SET", "a", strings.Repeat("ab", 255)},
			{"SET", "b", strings.Repeat("ba", 255)},
			{"LCS", "a", "b", "LEN"},
			{"APPEND", "a", strings.Repeat("c", 10)},
			{"APPEND", "b", strings.Repeat("c", 10)},
			{"LCS", "a", "b", "LEN"},
		}},
	}})
}

// TestCompatHLLBytes adds the same elements to both servers and compares the
// stored HLL (GET) after every step: sparse codes as they grow, the promotion to
// dense at hll-sparse-max-bytes, the cached cardinality PFCOUNT writes, and
// PFMERGE of sparse and dense inputs.
func TestCompatHLLBytes(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	both := func(args ...string) string {
		t.Helper()
		want, got := rc.Do(args...), mc.Do(args...)
		if want != got {
			t.Fatalf("%.80q:\n redis:   %.200q\n myredis: %.200q", args, want, got)
		}
		return got
	}
	both("FLUSHALL")
	for _, maxBytes := range []string{"3000", "200", "0"} {
		both("CONFIG", "SET", "hll-sparse-max-bytes", maxBytes)
		for seed := uint64(1); seed <= 3; seed++ {
			r := rand.New(rand.NewPCG(seed, 7))
			key := "h" + maxBytes + "-" + strconv.FormatUint(seed, 10)
			for step := 0; step < 60; step++ {
				args := []string{"PFADD", key}
				for i := r.IntN(1 + step*step/4); i >= 0; i-- {
					args = append(args, randomElement(r))
				}
				both(args...)
				both("GET", key)
				if r.IntN(3) == 0 {
					both("PFCOUNT", key)
					both("GET", key)
				}
			}
			both("PFDEBUG", "ENCODING", key)
		}
	}
	both("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
	both("PFADD", "small", "a", "b", "c")
	both("PFADD", "small2", "c", "d", "e", "f")
	both("PFMERGE", "m1", "small", "small2")
	both("GET", "m1")
	both("PFMERGE", "m2", "small", "h3000-1")
	both("GET", "m2")
	both("PFMERGE", "small", "h0-2", "h200-3")
	both("GET", "small")
	both("PFCOUNT", "small", "small2", "h3000-2")
	both("PFCOUNT", "m2")
	both("GET", "m2")
}

// randomElement is a short text, a number or a few random bytes.
func randomElement(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		return "user:" + strconv.Itoa(r.IntN(100000))
	case 1:
		return strconv.FormatFloat(r.Float64(), 'g', -1, 64)
	}
	b := make([]byte, r.IntN(20))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// randomBitsCommand builds a bit, range or HLL command over a few keys, mostly
// well formed, sometimes not.
func randomBitsCommand(r *rand.Rand) []string {
	key := func() string { return "b" + strconv.Itoa(r.IntN(4)) }
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	idx := func() string {
		return pick("0", "1", "-1", "3", "7", "8", "-3", "15", "100", "-100", "9223372036854775807", "x", "1.5")
	}
	bitOff := func() string {
		return pick("0", "1", "7", "8", "9", "31", "63", "64", "100", "#0", "#1", "#3", "-1", "4294967296", "x")
	}
	typ := func() string {
		return pick("u1", "i1", "u4", "i4", "u8", "i8", "i16", "u31", "i33", "i64", "u63", "u64", "i0", "x8")
	}
	val := func() string {
		return pick("0", "1", "-1", "5", "127", "-128", "255", "256", "9223372036854775807", "-9223372036854775808", "x")
	}
	switch r.IntN(14) {
	case 0:
		return []string{"SETBIT", key(), pick("0", "1", "7", "9", "33", "100"), pick("0", "1", "1", "2")}
	case 1:
		return []string{"GETBIT", key(), bitOff()}
	case 2:
		c := []string{"BITCOUNT", key()}
		if r.IntN(3) > 0 {
			c = append(c, idx(), idx())
			if r.IntN(2) == 0 {
				c = append(c, pick("BIT", "BYTE", "bit", "foo"))
			}
		}
		return c
	case 3:
		c := []string{"BITPOS", key(), pick("0", "1", "1", "0", "2")}
		for i := r.IntN(4); i > 0; i-- {
			c = append(c, idx())
		}
		if len(c) == 6 {
			c[5] = pick("BIT", "BYTE", "x")
		}
		return c
	case 4:
		c := []string{"BITOP", pick("AND", "OR", "XOR", "NOT", "and", "nope"), key()}
		for i := r.IntN(3) + 1; i > 0; i-- {
			c = append(c, key())
		}
		return c
	case 5, 6:
		c := []string{pick("BITFIELD", "BITFIELD", "BITFIELD_RO"), key()}
		for i := r.IntN(4); i > 0; i-- {
			switch r.IntN(4) {
			case 0:
				c = append(c, "GET", typ(), bitOff())
			case 1:
				c = append(c, "SET", typ(), bitOff(), val())
			case 2:
				c = append(c, "INCRBY", typ(), bitOff(), val())
			default:
				c = append(c, "OVERFLOW", pick("WRAP", "SAT", "FAIL", "x"))
			}
		}
		return c
	case 7:
		return []string{"SETRANGE", key(), pick("0", "1", "5", "20", "-1"), pick("", "x", "hello", "\x00\xff")}
	case 8:
		return []string{pick("GETRANGE", "SUBSTR"), key(), idx(), idx()}
	case 9:
		c := []string{"LCS", key(), key()}
		for i := r.IntN(3); i > 0; i-- {
			c = append(c, pick("LEN", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "2"))
		}
		return c
	case 10:
		c := []string{"PFADD", key()}
		for i := r.IntN(5); i > 0; i-- {
			c = append(c, randomElement(r))
		}
		return c
	case 11:
		return []string{"PFCOUNT", key(), key()}[:2+r.IntN(2)]
	case 12:
		return []string{"PFMERGE", key(), key(), key()}[:2+r.IntN(2)]
	}
	return []string{pick("GET", "DEL", "STRLEN"), key()}
}

// TestCompatRandomBits plays random bit, range and HLL commands on both servers.
func TestCompatRandomBits(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	rc.Do("FLUSHALL")
	mc.Do("FLUSHALL")
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 43))
		var history []string
		for i := 0; i < 600; i++ {
			args := randomBitsCommand(r)
			history = append(history, strconv.Quote(strings.Join(args, " ")))
			want, got := rc.Do(args...), mc.Do(args...)
			if want != got {
				if len(history) > 12 {
					history = history[len(history)-12:]
				}
				t.Fatalf("seed %d step %d %q:\n redis:   %.300q\n myredis: %.300q\nlast commands: %s",
					seed, i, args, want, got, strings.Join(history, ", "))
			}
		}
	}
}
