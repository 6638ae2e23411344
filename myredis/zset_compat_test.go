// Needs redis-server on PATH (skips without it): sends the same sorted-set
// commands to MyRedis and to a real redis-server 7.0 and compares raw replies
// byte for byte: the cases of testdata/compat/sorted_sets.txt, random command
// sequences drawn by rapid, and blocked BZPOPMIN clients.
package myredis

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// startRealRedis starts redis-server on a free port, without persistence, for
// the rest of the test.
func startRealRedis(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed: skipping the differential test")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for range 200 {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return addr
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("redis-server did not start on %s", addr)
	return ""
}

// compatCase is a named command sequence of testdata/compat (the format of the
// core's differential suite: "=== name", one command a line, "@N" for
// connection N, "~" to compare only the reply type, "^" for an unordered array).
type compatCase struct {
	name string
	cmds [][]string
}

func loadCompatCases(t *testing.T, path string) []compatCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []compatCase
	for ln, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "==="); ok {
			cases = append(cases, compatCase{name: strings.TrimSpace(name)})
			continue
		}
		args, err := splitCompatLine(line)
		if err != nil || len(cases) == 0 {
			t.Fatalf("%s:%d: %q: %v", path, ln+1, line, err)
		}
		cases[len(cases)-1].cmds = append(cases[len(cases)-1].cmds, args)
	}
	return cases
}

// splitCompatLine splits a line as redis-cli does: blanks separate arguments,
// "..." takes \xHH, \n, \r, \t, \" and \\ escapes.
func splitCompatLine(line string) ([]string, error) {
	var args []string
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		var b []byte
		if line[i] != '"' {
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				b = append(b, line[i])
				i++
			}
			args = append(args, string(b))
			continue
		}
		i++
		for {
			if i >= len(line) {
				return nil, fmt.Errorf("unbalanced quotes")
			}
			c := line[i]
			if c == '"' {
				i++
				break
			}
			if c == '\\' && i+1 < len(line) {
				i++
				switch line[i] {
				case 'x':
					v, err := strconv.ParseUint(line[i+1:i+3], 16, 8)
					if err != nil {
						return nil, err
					}
					b = append(b, byte(v))
					i += 2
				case 'n':
					b = append(b, '\n')
				case 'r':
					b = append(b, '\r')
				case 't':
					b = append(b, '\t')
				default:
					b = append(b, line[i])
				}
				i++
				continue
			}
			b = append(b, c)
			i++
		}
		args = append(args, string(b))
	}
	return args, nil
}

// pair is one connection to each server.
type pair struct{ real, mine *rconn }

func dialPair(t testing.TB, realAddr, myAddr string) pair {
	return pair{dialRaw(t, realAddr), dialRaw(t, myAddr)}
}

func TestSortedSetCompat(t *testing.T) {
	realAddr := startRealRedis(t)
	myAddr := startTestServer(t)
	for _, cc := range loadCompatCases(t, "testdata/compat/sorted_sets.txt") {
		t.Run(cc.name, func(t *testing.T) {
			conns := map[int]pair{}
			conn := func(n int) pair {
				if p, ok := conns[n]; ok {
					return p
				}
				conns[n] = dialPair(t, realAddr, myAddr)
				return conns[n]
			}
			conn(1).real.do("FLUSHALL")
			conn(1).mine.do("FLUSHALL")
			for i, args := range cc.cmds {
				n := 1
				if strings.HasPrefix(args[0], "@") {
					n, _ = strconv.Atoi(args[0][1:])
					args = args[1:]
				}
				p := conn(n)
				want, got := p.real.do(args...), p.mine.do(args...)
				if got != want {
					t.Errorf("step %d %q:\n redis:   %q\n myredis: %q", i+1, args, want, got)
				}
			}
		})
	}
}

// TestSortedSetCompatRandom draws random sequences of sorted-set commands, with
// arguments from small pools so that they collide (equal scores, ±inf, exclusive
// bounds, existing and missing members, wrong types), and compares every reply.
func TestSortedSetCompatRandom(t *testing.T) {
	realAddr := startRealRedis(t)
	myAddr := startTestServer(t)
	p := dialPair(t, realAddr, myAddr)
	keys := rapid.SampledFrom([]string{"z", "z", "y", "str", "missing"})
	members := rapid.SampledFrom([]string{"a", "b", "c", "d", "aa", "ab", "B", "", "x y"})
	scores := rapid.SampledFrom([]string{"0", "1", "1", "2", "-1", "1.5", "0.1", "inf", "-inf", "+inf", "3e2", "-0", "x"})
	bounds := rapid.SampledFrom([]string{"0", "1", "(1", "2", "(2", "-inf", "+inf", "(-inf", "1.5", "x", "[1"})
	lex := rapid.SampledFrom([]string{"-", "+", "[a", "(a", "[b", "(b", "[c", "(aa", "[", "a"})
	ints := rapid.SampledFrom([]string{"0", "1", "2", "-1", "-2", "3", "10", "-10", "x"})
	count := rapid.SampledFrom([]string{"0", "1", "2", "5", "-1", "x"})
	opt := func(t *rapid.T, label string, opts ...string) []string {
		return rapid.SliceOfDistinct(rapid.SampledFrom(opts), rapid.ID[string]).Draw(t, label)
	}
	type gen func(*rapid.T) []string
	cmds := map[string]gen{
		"ZADD": func(t *rapid.T) []string {
			a := []string{"ZADD", keys.Draw(t, "key")}
			a = append(a, opt(t, "opts", "NX", "XX", "GT", "LT", "CH", "INCR")...)
			for range rapid.IntRange(1, 3).Draw(t, "pairs") {
				a = append(a, scores.Draw(t, "score"), members.Draw(t, "member"))
			}
			return a
		},
		"ZINCRBY": func(t *rapid.T) []string {
			return []string{"ZINCRBY", keys.Draw(t, "key"), scores.Draw(t, "by"), members.Draw(t, "member")}
		},
		"ZREM": func(t *rapid.T) []string {
			return []string{"ZREM", keys.Draw(t, "key"), members.Draw(t, "m1"), members.Draw(t, "m2")}
		},
		"ZSCORE": func(t *rapid.T) []string { return []string{"ZSCORE", keys.Draw(t, "key"), members.Draw(t, "m")} },
		"ZMSCORE": func(t *rapid.T) []string {
			return []string{"ZMSCORE", keys.Draw(t, "key"), members.Draw(t, "m1"), members.Draw(t, "m2")}
		},
		"ZCARD": func(t *rapid.T) []string { return []string{"ZCARD", keys.Draw(t, "key")} },
		"ZRANK": func(t *rapid.T) []string {
			return []string{rapid.SampledFrom([]string{"ZRANK", "ZREVRANK"}).Draw(t, "cmd"), keys.Draw(t, "key"), members.Draw(t, "m")}
		},
		"ZCOUNT": func(t *rapid.T) []string {
			return []string{"ZCOUNT", keys.Draw(t, "key"), bounds.Draw(t, "min"), bounds.Draw(t, "max")}
		},
		"ZRANGE": func(t *rapid.T) []string {
			a := []string{"ZRANGE", keys.Draw(t, "key")}
			switch rapid.IntRange(0, 2).Draw(t, "by") {
			case 0:
				a = append(a, ints.Draw(t, "start"), ints.Draw(t, "stop"))
			case 1:
				a = append(a, bounds.Draw(t, "min"), bounds.Draw(t, "max"), "BYSCORE")
			case 2:
				a = append(a, lex.Draw(t, "min"), lex.Draw(t, "max"), "BYLEX")
			}
			a = append(a, opt(t, "opts", "REV", "WITHSCORES", "LIMIT")...)
			if a[len(a)-1] == "LIMIT" {
				a = append(a, ints.Draw(t, "offset"), ints.Draw(t, "count"))
			}
			return a
		},
		"ZRANGEBYSCORE": func(t *rapid.T) []string {
			a := []string{rapid.SampledFrom([]string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}).Draw(t, "cmd"),
				keys.Draw(t, "key"), bounds.Draw(t, "a"), bounds.Draw(t, "b")}
			if rapid.Bool().Draw(t, "withscores") {
				a = append(a, "WITHSCORES")
			}
			if rapid.Bool().Draw(t, "limit") {
				a = append(a, "LIMIT", ints.Draw(t, "offset"), ints.Draw(t, "count"))
			}
			return a
		},
		"ZREMRANGE": func(t *rapid.T) []string {
			switch rapid.IntRange(0, 1).Draw(t, "by") {
			case 0:
				return []string{"ZREMRANGEBYSCORE", keys.Draw(t, "key"), bounds.Draw(t, "min"), bounds.Draw(t, "max")}
			default:
				return []string{"ZREMRANGEBYRANK", keys.Draw(t, "key"), ints.Draw(t, "start"), ints.Draw(t, "stop")}
			}
		},
		"ZPOP": func(t *rapid.T) []string {
			a := []string{rapid.SampledFrom([]string{"ZPOPMIN", "ZPOPMAX"}).Draw(t, "cmd"), keys.Draw(t, "key")}
			if rapid.Bool().Draw(t, "count") {
				a = append(a, count.Draw(t, "n"))
			}
			return a
		},
		"BZPOP": func(t *rapid.T) []string {
			// a short timeout: both servers answer null when the keys are empty
			return []string{rapid.SampledFrom([]string{"BZPOPMIN", "BZPOPMAX"}).Draw(t, "cmd"), keys.Draw(t, "key"), "z", "0.01"}
		},
		"ZSETOP": func(t *rapid.T) []string {
			a := []string{rapid.SampledFrom([]string{"ZUNION", "ZINTER", "ZDIFF"}).Draw(t, "cmd"), "2", keys.Draw(t, "k1"), keys.Draw(t, "k2")}
			if a[0] != "ZDIFF" && rapid.Bool().Draw(t, "weights") {
				a = append(a, "WEIGHTS", scores.Draw(t, "w1"), scores.Draw(t, "w2"))
			}
			if a[0] != "ZDIFF" && rapid.Bool().Draw(t, "aggregate") {
				a = append(a, "AGGREGATE", rapid.SampledFrom([]string{"SUM", "MIN", "MAX"}).Draw(t, "agg"))
			}
			return append(a, "WITHSCORES")
		},
		"ZSETSTORE": func(t *rapid.T) []string {
			return []string{rapid.SampledFrom([]string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}).Draw(t, "cmd"),
				keys.Draw(t, "dst"), "2", keys.Draw(t, "k1"), keys.Draw(t, "k2")}
		},
	}
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	rapid.Check(t, func(t *rapid.T) {
		for _, c := range []*rconn{p.real, p.mine} {
			c.do("FLUSHALL")
			c.do("SET", "str", "v")
			c.do("ZADD", "z", "1", "a", "1", "b", "2", "c")
			c.do("ZADD", "y", "0", "a", "0", "b", "0", "c", "0", "d") // a lex set
		}
		steps := rapid.IntRange(1, 30).Draw(t, "steps")
		for i := range steps {
			args := cmds[rapid.SampledFrom(names).Draw(t, "command")](t)
			want, got := p.real.do(args...), p.mine.do(args...)
			if got != want {
				t.Fatalf("step %d %q:\n redis:   %q\n myredis: %q", i+1, args, want, got)
			}
			// the whole of each set after every step
			for _, k := range []string{"z", "y"} {
				check := []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}
				if w, g := p.real.do(check...), p.mine.do(check...); w != g {
					t.Fatalf("after step %d %q, %s:\n redis:   %q\n myredis: %q", i+1, args, k, w, g)
				}
			}
		}
	})
}

// TestSortedSetCompatBlocking plays the same BZPOPMIN waits on both servers:
// three clients block on one key, members arrive one by one, then a timeout.
func TestSortedSetCompatBlocking(t *testing.T) {
	realAddr := startRealRedis(t)
	myAddr := startTestServer(t)
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		var replies []string
		waiters := make([]*rconn, 3)
		for i := range waiters {
			waiters[i] = dialRaw(t, addr)
			waiters[i].send("BZPOPMIN", "q", "p", "0")
			waitFor(t, func() bool { return strings.Count(c.do("CLIENT", "LIST"), "flags=b") == i+1 })
		}
		replies = append(replies, c.do("ZADD", "q", "2", "two", "1", "one"))
		replies = append(replies, waiters[0].read(), waiters[1].read())
		replies = append(replies, c.do("ZADD", "p", "3", "three", "4", "four"))
		replies = append(replies, waiters[2].read())
		replies = append(replies, c.do("ZRANGE", "p", "0", "-1", "WITHSCORES"), c.do("EXISTS", "q"))
		replies = append(replies, waiters[0].do("BZPOPMAX", "none", "0.05"))
		return replies
	}
	want, got := run(realAddr), run(myAddr)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d:\n redis:   %q\n myredis: %q", i, want[i], got[i])
		}
	}
}
