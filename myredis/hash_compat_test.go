// Needs redis-server on PATH (skips without it): sends the same hash commands to
// MyRedis and to a real redis-server 7.0 and compares the raw replies byte for byte:
// the cases of testdata/compat/hashes.txt, big hashes (order-insensitive), and random
// command sequences.
package myredis

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hashDiff is a differential session: numbered connection pairs, both servers
// flushed at the start.
type hashDiff struct {
	t                testing.TB
	realAddr, myAddr string
	conns            map[int]pair
}

func newHashDiff(t testing.TB, realAddr, myAddr string) *hashDiff {
	d := &hashDiff{t: t, realAddr: realAddr, myAddr: myAddr, conns: map[int]pair{}}
	if r := d.conn(1).real.do("FLUSHALL"); r != rOK {
		t.Fatalf("FLUSHALL on redis-server: %q", r)
	}
	d.conn(1).mine.do("FLUSHALL")
	return d
}

func (d *hashDiff) conn(n int) pair {
	if _, ok := d.conns[n]; !ok {
		d.conns[n] = dialPair(d.t, d.realAddr, d.myAddr)
	}
	return d.conns[n]
}

// run sends one command line (the compat format: "@N" connection, "~" reply type
// only, "^" unordered) to both servers and reports a difference.
func (d *hashDiff) run(where string, args []string) {
	d.t.Helper()
	n := 1
	if len(args) > 1 && len(args[0]) > 1 && args[0][0] == '@' {
		var err error
		if n, err = strconv.Atoi(args[0][1:]); err != nil {
			d.t.Fatalf("%s: bad connection marker %q", where, args[0])
		}
		args = args[1:]
	}
	var mode byte
	if len(args[0]) > 1 && (args[0][0] == '~' || args[0][0] == '^') {
		mode = args[0][0]
		args = append([]string{args[0][1:]}, args[1:]...)
	}
	p := d.conn(n)
	want, got := p.real.do(args...), p.mine.do(args...)
	switch mode {
	case '~':
		want, got = want[:1], got[:1]
	case '^':
		want, got = unorderedHashReply(args, want), unorderedHashReply(args, got)
	}
	if got != want {
		d.t.Errorf("%s: %q\n redis:   %q\n myredis: %q", where, args, want, got)
	}
}

// unorderedHashReply puts a reply's elements in byte order: field/value pairs as
// pairs for HGETALL, HRANDFIELD ... WITHVALUES and HSCAN (whose second element is
// the list), single elements for the rest.
func unorderedHashReply(args []string, reply string) string {
	rd := bufio.NewReader(strings.NewReader(reply))
	name := strings.ToLower(args[0])
	pairs := name == "hgetall" || name == "hscan" ||
		(name == "hrandfield" && len(args) == 4 && strings.EqualFold(args[3], "withvalues"))
	if name == "hscan" {
		head, _ := rd.ReadString('\n')
		if head != "*2\r\n" {
			return reply
		}
		var cursor strings.Builder
		if readRaw(rd, &cursor) != nil {
			return reply
		}
		rest, _ := sortedHashArray(rd, true)
		return head + cursor.String() + rest
	}
	if out, ok := sortedHashArray(rd, pairs); ok {
		return out
	}
	return reply
}

// sortedHashArray reads an array reply and re-renders it with its elements (or
// element pairs) sorted.
func sortedHashArray(rd *bufio.Reader, pairs bool) (string, bool) {
	head, err := rd.ReadString('\n')
	if err != nil || head[0] != '*' {
		return head, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 {
		return head, false
	}
	step := 1
	if pairs {
		step = 2
	}
	var elems []string
	for i := 0; i < n; i += step {
		var b strings.Builder
		for range min(step, n-i) {
			if readRaw(rd, &b) != nil {
				return head, false
			}
		}
		elems = append(elems, b.String())
	}
	sort.Strings(elems)
	return head + strings.Join(elems, ""), true
}

// TestHashCompat replays testdata/compat/hashes.txt on both servers.
func TestHashCompat(t *testing.T) {
	realAddr := startRealRedis(t)
	_, _, myAddr := startHashServer(t)
	for _, cc := range loadCompatCases(t, "testdata/compat/hashes.txt") {
		t.Run(cc.name, func(t *testing.T) {
			d := newHashDiff(t, realAddr, myAddr)
			for i, args := range cc.cmds {
				d.run(fmt.Sprintf("step %d", i+1), args)
			}
		})
	}
}

// TestHashCompatBig compares hashes past Redis's listpack limits, where Redis's
// order is its hash table's: replies that list the hash compare as multisets.
func TestHashCompatBig(t *testing.T) {
	realAddr := startRealRedis(t)
	_, _, myAddr := startHashServer(t)
	d := newHashDiff(t, realAddr, myAddr)
	args := []string{"HSET", "h"}
	for i := range 600 {
		args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i*7))
	}
	d.run("create", args)
	for _, line := range []string{
		"HLEN h", "^HGETALL h", "^HKEYS h", "^HVALS h", "HGET h f599", "HSTRLEN h f599",
		"HMGET h f1 f2 nosuch", "^HSCAN h 0 COUNT 100000", "^HSCAN h 0 COUNT 100000 MATCH f1?",
		"^HRANDFIELD h 600", "^HRANDFIELD h 1000 WITHVALUES", "HRANDFIELD h 0", "~HRANDFIELD h 10",
		"HINCRBY h f5 1", "HINCRBYFLOAT h f5 0.5", "HDEL h f1 f2 f3", "HLEN h", "^HGETALL h",
	} {
		d.run(line, strings.Fields(line))
	}
	// delete the fields one call at a time down to none: the key goes
	for i := range 600 {
		d.run("HDEL", []string{"HDEL", "h", "f" + strconv.Itoa(i)})
	}
	d.run("EXISTS", []string{"EXISTS", "h"})
}

// TestHashCompatRandom sends random sequences of hash commands, valid and not, over
// a few small hashes (within the listpack limits, so order compares exactly).
func TestHashCompatRandom(t *testing.T) {
	realAddr := startRealRedis(t)
	_, _, myAddr := startHashServer(t)
	seqs, steps := 40, 300
	if testing.Short() {
		seqs = 5
	}
	for seed := range uint64(seqs) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			d := newHashDiff(t, realAddr, myAddr)
			g := hashGen{rand.New(rand.NewPCG(seed, 7))}
			for i := range steps {
				args := g.command()
				d.run(fmt.Sprintf("seed %d step %d", seed, i), args)
				if t.Failed() {
					return // the rest would differ too
				}
			}
		})
	}
}

// hashGen draws hash commands from a small vocabulary.
type hashGen struct{ r *rand.Rand }

func (g hashGen) pick(words ...string) string { return words[g.r.IntN(len(words))] }
func (g hashGen) key() string                 { return g.pick("h1", "h1", "h1", "h2", "s", "none") }
func (g hashGen) field() string {
	return g.pick("a", "b", "c", "d", "e", "f", "g", "", "long-field-name", "n1", "n2", "x")
}

func (g hashGen) value() string {
	return g.pick("1", "-5", "0", "10", "abc", "", "1.5", "0x10", "inf", "-inf", "01", "-0",
		"9223372036854775807", "-9223372036854775808", "3.0e3", " 7", strconv.Itoa(g.r.IntN(1000)))
}

func (g hashGen) incr() string {
	return g.pick("1", "-1", "100", "9223372036854775807", "-9223372036854775808", "x", "1.5",
		"0.1", "-0.25", "1e3", "inf", "nan", "", "+1", "0")
}

func (g hashGen) command() []string {
	k := g.key()
	switch g.r.IntN(20) {
	case 0, 1, 2:
		args := []string{g.pick("HSET", "HSET", "HMSET"), k}
		for range 1 + g.r.IntN(4) {
			args = append(args, g.field(), g.value())
		}
		if g.r.IntN(10) == 0 {
			args = args[:len(args)-1] // odd: arity
		}
		return args
	case 3:
		return []string{"HSETNX", k, g.field(), g.value()}
	case 4, 5:
		return []string{"HGET", k, g.field()}
	case 6:
		return []string{"HMGET", k, g.field(), g.field(), g.field()}
	case 7:
		return []string{g.pick("HGETALL", "HKEYS", "HVALS", "HLEN", "TYPE", "EXISTS"), k}
	case 8, 9:
		args := []string{"HDEL", k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.field())
		}
		return args
	case 10:
		return []string{g.pick("HEXISTS", "HSTRLEN"), k, g.field()}
	case 11, 12:
		return []string{"HINCRBY", k, g.field(), g.incr()}
	case 13, 14:
		return []string{"HINCRBYFLOAT", k, g.field(), g.incr()}
	case 15:
		args := []string{"HRANDFIELD", k, g.pick("0", "100", "-0", "x", "9223372036854775807")}
		if g.r.IntN(2) == 0 {
			args = append(args, g.pick("WITHVALUES", "withvalues", "foo"))
		}
		return args
	case 16:
		args := []string{"HSCAN", k, g.pick("0", "0", "7", "x", "-1")}
		for range g.r.IntN(3) {
			args = append(args, g.pick("MATCH", "COUNT", "TYPE"), g.pick("*", "?", "[a-c]", "1", "0", "n*"))
		}
		return args
	case 17:
		return []string{g.pick("SET", "DEL"), g.pick("s", "h2"), "v"}[:2+g.r.IntN(2)]
	case 18:
		return []string{"HSET", k, g.field()} // arity
	default:
		return []string{"HGETALL", k}
	}
}
