// Needs redis-server on PATH (skips without it): sends the same hash commands to
// MyRedis and to a real redis-server 7.0 and compares the raw replies byte for byte:
// the cases of testdata/compat/hashes.txt, big hashes (order-insensitive), and random
// command sequences.
package myredis

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startHashRealRedis starts redis-server on a free port, without persistence, for
// the rest of the test, or skips the test when redis-server is not installed.
func startHashRealRedis(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed: skipping the hash differential test")
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
	for range 300 {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return addr
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("redis-server did not start on %s", addr)
	return ""
}

// hashDiff is a differential session: the same connections on both servers.
type hashDiff struct {
	t                testing.TB
	realAddr, myAddr string
	real, mine       map[int]*hashConn
}

func newHashDiff(t testing.TB, realAddr, myAddr string) *hashDiff {
	d := &hashDiff{t: t, realAddr: realAddr, myAddr: myAddr,
		real: map[int]*hashConn{}, mine: map[int]*hashConn{}}
	if r := d.conns(1)[0].do("FLUSHALL"); r != hr.OK {
		t.Fatalf("FLUSHALL on redis-server: %q", r)
	}
	d.conns(1)[1].do("FLUSHALL")
	return d
}

func (d *hashDiff) conns(n int) [2]*hashConn {
	if d.real[n] == nil {
		d.real[n], d.mine[n] = dialHash(d.t, d.realAddr), dialHash(d.t, d.myAddr)
	}
	return [2]*hashConn{d.real[n], d.mine[n]}
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
	c := d.conns(n)
	want, got := c[0].do(args...), c[1].do(args...)
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
		if hashReadReply(rd, &cursor) != nil {
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
			if hashReadReply(rd, &b) != nil {
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
	realAddr := startHashRealRedis(t)
	_, _, myAddr := startHashServer(t)
	for _, tc := range loadHashCompat(t, "testdata/compat/hashes.txt") {
		t.Run(tc.name, func(t *testing.T) {
			d := newHashDiff(t, realAddr, myAddr)
			for _, l := range tc.lines {
				d.run(fmt.Sprintf("hashes.txt:%d", l.no), l.args)
			}
		})
	}
}

// TestHashCompatBig compares hashes past Redis's listpack limits, where Redis's
// order is its hash table's: replies that list the hash compare as multisets.
func TestHashCompatBig(t *testing.T) {
	realAddr := startHashRealRedis(t)
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
	realAddr := startHashRealRedis(t)
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

// hashCompatLine is one command line of a compat file.
type hashCompatLine struct {
	no   int
	args []string
}

type hashCompatCase struct {
	name  string
	lines []hashCompatLine
}

// loadHashCompat reads a testdata/compat file: "=== name" opens a case, "#" lines
// are comments, and each other line is a command in redis-cli syntax.
func loadHashCompat(t *testing.T, path string) []hashCompatCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []hashCompatCase
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "==="); ok {
			cases = append(cases, hashCompatCase{name: strings.TrimSpace(name)})
			continue
		}
		args, err := splitHashCompatLine(line)
		if err != nil || len(cases) == 0 || len(args) == 0 {
			t.Fatalf("%s:%d: %q: %v", path, i+1, line, err)
		}
		last := &cases[len(cases)-1]
		last.lines = append(last.lines, hashCompatLine{i + 1, args})
	}
	return cases
}

// splitHashCompatLine splits a line as redis-cli does: blanks separate arguments,
// "..." takes \xHH, \n, \r, \t, \" and \\ escapes.
func splitHashCompatLine(line string) ([]string, error) {
	var args []string
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		if line[i] != '"' {
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			args = append(args, line[i:j])
			i = j
			continue
		}
		var b []byte
		for i++; ; i++ {
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
					if i+2 >= len(line) {
						return nil, fmt.Errorf("short \\x escape")
					}
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
				continue
			}
			b = append(b, c)
		}
		args = append(args, string(b))
	}
	return args, nil
}
