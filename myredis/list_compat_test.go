// Needs redis-server on PATH (skips without it): random list command sequences
// and blocked list clients, played on MyRedis and on a real redis-server 7.0,
// raw replies compared byte for byte.
package myredis

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// listGen draws list commands, valid and not, over a few keys (one a string).
type listGen struct{ r *rand.Rand }

func (g listGen) pick(words ...string) string { return words[g.r.IntN(len(words))] }
func (g listGen) key() string                 { return g.pick("l1", "l1", "l1", "l2", "l2", "s", "none") }
func (g listGen) elem() string {
	return g.pick("a", "b", "c", "a", "", "long-element-"+strings.Repeat("x", g.r.IntN(100)), strconv.Itoa(g.r.IntN(20)))
}
func (g listGen) index() string {
	return g.pick("0", "1", "-1", "2", "-2", "5", "-5", "100", "-100", strconv.Itoa(g.r.IntN(40)-20),
		"9223372036854775807", "-9223372036854775808", "x", "1.5", "")
}
func (g listGen) where() string { return g.pick("LEFT", "RIGHT", "left", "right", "up") }

func (g listGen) command() []string {
	k := g.key()
	switch g.r.IntN(22) {
	case 0, 1, 2, 3:
		args := []string{g.pick("LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), k}
		for range 1 + g.r.IntN(12) {
			args = append(args, g.elem())
		}
		return args
	case 4, 5:
		args := []string{g.pick("LPOP", "RPOP"), k}
		if g.r.IntN(2) == 0 {
			args = append(args, g.pick("0", "1", "3", "100", "-1", "x"))
		}
		return args
	case 6:
		return []string{g.pick("LLEN", "TYPE", "EXISTS"), k}
	case 7, 8:
		return []string{"LRANGE", k, g.index(), g.index()}
	case 9:
		return []string{"LINDEX", k, g.index()}
	case 10:
		return []string{"LSET", k, g.index(), g.elem()}
	case 11:
		return []string{"LTRIM", k, g.index(), g.index()}
	case 12:
		return []string{"LREM", k, g.pick("0", "1", "-1", "2", "-2", "x"), g.elem()}
	case 13:
		return []string{"LINSERT", k, g.pick("BEFORE", "AFTER", "after", "x"), g.elem(), g.elem()}
	case 14, 15:
		args := []string{"LPOS", k, g.elem()}
		for range g.r.IntN(3) {
			args = append(args, g.pick("RANK", "COUNT", "MAXLEN", "rank", "x"), g.pick("0", "1", "-1", "2", "-2", "5", "x"))
		}
		return args
	case 16:
		return []string{"LMOVE", g.key(), g.key(), g.where(), g.where()}
	case 17:
		return []string{"RPOPLPUSH", g.key(), g.key()}
	case 18:
		args := []string{"LMPOP", g.pick("1", "2", "0", "x"), g.key(), g.key(), g.where()}
		if g.r.IntN(2) == 0 {
			args = append(args, "COUNT", g.pick("1", "2", "10", "0", "x"))
		}
		return args
	case 19:
		return []string{g.pick("BLPOP", "BRPOP"), g.key(), g.key(), "0.001"}
	case 20:
		return []string{g.pick("SET", "DEL"), g.pick("s", "l2"), "v"}[:2+g.r.IntN(2)]
	default:
		return []string{g.pick("BLMOVE", "BLMOVE", "BRPOPLPUSH"), g.key(), g.key(), g.where(), g.where(), "0.001"}[:6]
	}
}

// TestListCompatRandom sends random sequences of list commands to both servers and
// compares every reply and, after each step, the whole of each list.
func TestListCompatRandom(t *testing.T) {
	realAddr := startRealRedis(t)
	myAddr := startTestServer(t)
	p := dialPair(t, realAddr, myAddr)
	seqs, steps := 30, 300
	if testing.Short() {
		seqs = 5
	}
	for seed := range uint64(seqs) {
		p.real.do("FLUSHALL")
		p.mine.do("FLUSHALL")
		g := listGen{rand.New(rand.NewPCG(seed, 11))}
		for i := range steps {
			args := g.command()
			if args[0] == "BRPOPLPUSH" {
				args = []string{args[0], args[1], args[2], "0.001"}
			}
			want, got := p.real.do(args...), p.mine.do(args...)
			if got != want {
				t.Fatalf("seed %d step %d %q:\n redis:   %q\n myredis: %q", seed, i, args, want, got)
			}
			for _, k := range []string{"l1", "l2"} {
				check := []string{"LRANGE", k, "0", "-1"}
				if w, g := p.real.do(check...), p.mine.do(check...); w != g {
					t.Fatalf("seed %d after step %d %q, %s:\n redis:   %q\n myredis: %q", seed, i, args, k, w, g)
				}
			}
		}
	}
}

// blockScene is a scenario with blocked clients, played on one server: it returns
// every reply in the order they were read.
type blockScene func(t *testing.T, c *rconn, waiters []*rconn, block func(w *rconn, args ...string)) []string

// TestListCompatBlocking plays blocked-client scenarios on both servers and
// compares the replies each client gets, in order.
func TestListCompatBlocking(t *testing.T) {
	realAddr := startRealRedis(t)
	myAddr := startTestServer(t)
	scenes := map[string]blockScene{
		"three waiters are served oldest first": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BLPOP", "q", "0")
			block(w[1], "BRPOP", "q", "0")
			block(w[2], "BLPOP", "q", "0")
			out := []string{c.do("RPUSH", "q", "a", "b")}
			out = append(out, w[0].read(), w[1].read())
			out = append(out, c.do("RPUSH", "q", "c", "d"), w[2].read(), c.do("LRANGE", "q", "0", "-1"))
			return out
		},
		"pushes inside MULTI are served after EXEC, key by key": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BLPOP", "b", "a", "0")
			block(w[1], "BLPOP", "a", "0")
			block(w[2], "BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "5")
			out := []string{c.do("MULTI"), c.do("RPUSH", "a", "1", "2"), c.do("RPUSH", "b", "3", "4"), c.do("LPUSH", "a", "0"), c.do("EXEC")}
			out = append(out, w[0].read(), w[1].read(), w[2].read())
			return append(out, c.do("LRANGE", "a", "0", "-1"), c.do("LRANGE", "b", "0", "-1"))
		},
		"a push in a script wakes after the script": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BRPOP", "q", "0")
			out := []string{c.do("EVAL", "redis.call('rpush', KEYS[1], 'x', 'y') return redis.call('llen', KEYS[1])", "1", "q")}
			return append(out, w[0].read(), c.do("LRANGE", "q", "0", "-1"))
		},
		"BLMOVE chain": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BLMOVE", "a", "b", "LEFT", "RIGHT", "0")
			block(w[1], "BRPOPLPUSH", "b", "c", "0")
			block(w[2], "BLPOP", "c", "0")
			out := []string{c.do("LPUSH", "a", "x")}
			out = append(out, w[0].read(), w[1].read(), w[2].read())
			return append(out, c.do("EXISTS", "a", "b", "c"))
		},
		"a waiter keeps its place while the key is not a list": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BLPOP", "q", "0")
			block(w[1], "BLPOP", "q", "0")
			out := []string{c.do("SET", "q", "s"), c.do("DEL", "q"), c.do("ZADD", "q", "1", "m"), c.do("DEL", "q")}
			out = append(out, c.do("RPUSH", "q", "1"), w[0].read(), c.do("RPUSH", "q", "2"), w[1].read())
			return out
		},
		"list and sorted-set waiters on one key": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BZPOPMIN", "k", "0")
			block(w[1], "BLPOP", "k", "0")
			out := []string{c.do("RPUSH", "k", "a"), w[1].read(), c.do("ZADD", "k", "1", "m"), w[0].read()}
			block(w[0], "BZPOPMAX", "z", "k", "0")
			return append(out, c.do("MULTI"), c.do("ZADD", "k", "2", "n"), c.do("ZADD", "z", "3", "o"), c.do("EXEC"), w[0].read())
		},
		"BRPOPLPUSH to a wrong-type destination": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			c.do("SET", "dst", "x")
			block(w[0], "BRPOPLPUSH", "src", "dst", "0")
			block(w[1], "BRPOPLPUSH", "src", "other", "0")
			out := []string{c.do("RPUSH", "src", "a", "b")}
			return append(out, w[0].read(), w[1].read(), c.do("LRANGE", "src", "0", "-1"), c.do("LRANGE", "other", "0", "-1"))
		},
		"timeouts": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			return []string{w[0].do("BLPOP", "q", "0.02"), w[1].do("BLMOVE", "q", "r", "LEFT", "LEFT", "0.02"),
				w[2].do("BLMPOP", "0.02", "1", "q", "LEFT"), w[0].do("BRPOPLPUSH", "q", "r", "0.01")}
		},
		"a waiter served twice from one push of many": func(t *testing.T, c *rconn, w []*rconn, block func(*rconn, ...string)) []string {
			block(w[0], "BLMPOP", "0", "1", "q", "LEFT", "COUNT", "2")
			block(w[1], "BLPOP", "q", "q", "0")
			out := []string{c.do("RPUSH", "q", "1", "2", "3", "4")}
			return append(out, w[0].read(), w[1].read(), c.do("LRANGE", "q", "0", "-1"))
		},
	}
	for name, scene := range scenes {
		t.Run(name, func(t *testing.T) {
			run := func(addr string) []string {
				c := dialRaw(t, addr)
				c.do("FLUSHALL")
				waiters := []*rconn{dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)}
				block := func(w *rconn, args ...string) {
					blocked := strings.Count(c.do("CLIENT", "LIST"), "flags=b")
					w.send(args...)
					waitFor(t, func() bool { return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == blocked+1 })
				}
				return scene(t, c, waiters, block)
			}
			want, got := run(realAddr), run(myAddr)
			if fmt.Sprint(want) != fmt.Sprint(got) {
				for i := range want {
					if i >= len(got) || got[i] != want[i] {
						t.Errorf("reply %d:\n redis:   %q\n myredis: %q", i, want[i], got[i])
					}
				}
			}
		})
	}
}
