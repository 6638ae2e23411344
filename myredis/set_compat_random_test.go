// Needs redis-server (skips without it): random set command sequences, the same on
// MyRedis and a real redis-server, replies compared byte for byte (as multisets
// where a hash table's order shows).
package myredis_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// randomSetCommand builds a set command over a few keys (one holding a string),
// with integer and other members so that sets change encoding. ordered is false
// when the reply's order may differ (a hash table's); sizeOnly when only its
// length is comparable (random picks).
func randomSetCommand(r *rand.Rand) (args []string, ordered, sizeOnly bool) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	key := func() string { return pick("s0", "s1", "s2", "s3", "str", "none") }
	member := func() string {
		if r.IntN(4) > 0 {
			return strconv.Itoa(r.IntN(40) - 5)
		}
		return pick("a", "b", "c", "", "01", "-0", "x y", "9223372036854775808")
	}
	members := func() []string {
		out := make([]string, 1+r.IntN(6))
		for i := range out {
			out[i] = member()
		}
		return out
	}
	keys := func() []string {
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = key()
		}
		return out
	}
	cmd := func(xs ...string) []string { return xs }
	switch r.IntN(20) {
	case 0, 1, 2, 3:
		return append(cmd("SADD", key()), members()...), true, false
	case 4, 5:
		return append(cmd("SREM", key()), members()...), true, false
	case 6:
		return cmd("SCARD", key()), true, false
	case 7:
		return cmd("SISMEMBER", key(), member()), true, false
	case 8:
		return append(cmd("SMISMEMBER", key()), members()...), true, false
	case 9:
		return cmd("SMEMBERS", key()), false, false
	case 10:
		return cmd("SMOVE", key(), key(), member()), true, false
	case 11:
		return append(cmd(pick("SINTER", "SUNION", "SDIFF")), keys()...), false, false
	case 12:
		return append(cmd(pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), key()), keys()...), true, false
	case 13:
		ks := keys()
		c := append(cmd("SINTERCARD", strconv.Itoa(len(ks))), ks...)
		if r.IntN(2) == 0 {
			c = append(c, "LIMIT", pick("0", "1", "2", "-1", "x"))
		}
		return c, true, false
	case 14:
		return cmd("SRANDMEMBER", key(), pick("1000", "-3", "-1", "0", "x")), false, true
	case 15:
		return cmd("SPOP", key(), pick("1000", "0", "-1")), false, false
	case 16:
		return cmd("SSCAN", key(), "0", "COUNT", "1000", "MATCH", pick("*", "1*", "[a-c]", "*0")), false, false
	case 17:
		return cmd(pick("TYPE", "EXISTS", "DEL"), key()), true, false
	case 18:
		c := cmd("SORT", key(), pick("ALPHA", "DESC", "LIMIT", "BY"), pick("0", "1", "nosort", "ALPHA"), pick("1", "2", "ALPHA"))
		return c, c[2] != "BY", false // a set's own order shows through BY without a '*'
	}
	return cmd("SET", "str", pick("x", "1")), true, false
}

func TestSetCompatRandom(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	for seed := uint64(1); seed <= 8; seed++ {
		rc.Do("FLUSHALL")
		mc.Do("FLUSHALL")
		r := rand.New(rand.NewPCG(seed, 7))
		var history []string
		for i := range 600 {
			args, ordered, sizeOnly := randomSetCommand(r)
			history = append(history, strconv.Quote(strings.Join(args, " ")))
			want, got := rc.Do(args...), mc.Do(args...)
			switch {
			case sizeOnly:
				want, _, _ = strings.Cut(want, "\r\n")
				got, _, _ = strings.Cut(got, "\r\n")
			case !ordered:
				want, got = sortedArray(want), sortedArray(got)
			}
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
