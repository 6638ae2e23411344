// Needs redis-server (skips without it): the differential suite sends the same
// commands to MyRedis and to a real redis-server and compares raw replies byte for byte.
package myredis_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// A diffCase is a command sequence run on fresh connections to both servers after
// FLUSHALL. Each command is an argument vector, with two optional markers in its
// first element:
//
//	"@2"    a lone "@N" first element sends the rest on connection N (1 is the default),
//	        for WATCH and other multi-client sequences;
//	"~CMD"  compares only the reply's type byte (PTTL, RANDOMKEY, TIME, CLIENT ID);
//	"^CMD"  compares an array reply as a multiset (KEYS: hash order differs);
//	"!CMD"  expects no reply at all (CLIENT REPLY OFF/SKIP): nothing is read, so
//	        a stray reply shows up as a mismatch at the next command.
//
// Sequences also live in testdata/compat/*.txt, one command a line in redis-cli
// syntax, each case opened by "=== name"; see testdata/compat/README.
type diffCase struct {
	name string
	cmds [][]string
}

// diffCases are the sequences written in Go; other files may append to it in init.
var diffCases []diffCase

// A diffSuite is a set of cases run against one pair of servers started with the
// same redis-server arguments (MyRedis reads them with ParseArgs).
type diffSuite struct {
	name  string
	dir   string   // testdata directory of *.txt cases
	args  []string // redis-server arguments for both servers
	cases []diffCase
}

// diffSuites lists every suite; other files may append to it in init.
var diffSuites = []diffSuite{
	{name: "default", dir: "testdata/compat"},
	{name: "requirepass", dir: "testdata/compat/requirepass", args: []string{"--requirepass", "secret"}},
	{name: "acl", dir: "testdata/compat/acl"},                                                           // users of their own (cmd_acl.go)
	{name: "debug", dir: "testdata/compat/debug", args: []string{"--enable-debug-command", "yes"}},      // DEBUG DIGEST (digest.go)
	{name: "modules", dir: "testdata/compat/modules", args: []string{"--enable-module-command", "yes"}}, // MODULE LOAD (cmd_module.go)
	{name: "smallbulk", args: []string{"--proto-max-bulk-len", "1mb"}, cases: []diffCase{
		{"bulk at the limit", [][]string{
			{"SET", "k", strings.Repeat("x", 1<<20)},
			{"STRLEN", "k"},
			{"APPEND", "k", "y"},
			{"STRLEN", "k"},
			{"SET", "s", strings.Repeat("x", 1<<20-1)},
			{"APPEND", "s", "y"},
			{"APPEND", "s", "y"},
			{"STRLEN", "s"},
			{"CONFIG", "GET", "proto-max-bulk-len"},
			{"CONFIG", "SET", "proto-max-bulk-len", "1000"},
			{"CONFIG", "SET", "proto-max-bulk-len", "2mb"},
			{"APPEND", "s", "y"},
			{"CONFIG", "SET", "proto-max-bulk-len", "1mb"},
		}},
	}},
}

// TestCompat runs every suite against a real redis-server and MyRedis.
func TestCompat(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	for _, suite := range diffSuites {
		t.Run(suite.name, func(t *testing.T) {
			cases := suite.cases
			if suite.name == "default" {
				cases = append(cases, diffCases...)
			}
			files, _ := filepath.Glob(filepath.Join(suite.dir, "*.txt"))
			for _, f := range files {
				fc, err := loadDiffCases(f)
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, fc...)
			}
			if len(cases) == 0 {
				t.Fatalf("suite %s has no cases", suite.name)
			}
			real, mine := startPair(t, suite.args...)
			for _, dc := range cases {
				t.Run(dc.name, func(t *testing.T) { runDiff(t, real, mine, dc, 2) })
			}
			// every case again on connections that said HELLO 3 first
			for _, dc := range cases {
				if resp3Skip[dc.name] {
					continue
				}
				t.Run("resp3/"+dc.name, func(t *testing.T) { runDiff(t, real, mine, dc, 3) })
			}
		})
	}
}

// resp3Skip are cases not replayed in RESP3: LATENCY DOCTOR's text depends on the
// latency events the first (RESP2) pass left in the same servers.
var resp3Skip = map[string]bool{"introspect/latency settings": true}

// startPair starts a real redis-server and a MyRedis with the same arguments.
func startPair(t *testing.T, args ...string) (realAddr, myAddr string) {
	t.Helper()
	cfg, err := myredis.ParseArgs(args)
	if err != nil {
		t.Fatalf("MyRedis cannot take %.200q: %v", args, err)
	}
	realAddr = redistest.StartRealRedis(t, args...)
	_, myAddr = redistest.StartMyRedisConfig(t, cfg)
	return realAddr, myAddr
}

// diffPassword is the requirepass suite's password.
const diffPassword = "secret"

// runDiff plays dc against both addresses and reports every differing reply.
// With proto 3 each connection says HELLO 3 before the case's commands.
func runDiff(t *testing.T, realAddr, myAddr string, dc diffCase, proto int) {
	t.Helper()
	type side struct {
		addr  string
		conns map[int]*redistest.Conn
	}
	sides := []*side{{addr: realAddr}, {addr: myAddr}}
	for _, s := range sides {
		s.conns = map[int]*redistest.Conn{}
		c := redistest.Dial(t, s.addr)
		c.Do("AUTH", diffPassword) // for the requirepass suite; harmless error otherwise
		if r := c.Do("FLUSHALL"); r != redistest.OK {
			t.Fatalf("FLUSHALL on %s: %.200q", s.addr, r)
		}
		c.Close()
	}
	conn := func(s *side, n int) *redistest.Conn {
		if c, ok := s.conns[n]; ok {
			return c
		}
		c := redistest.Dial(t, s.addr)
		if proto == 3 { // (under requirepass: NOAUTH, and the case runs in RESP2)
			if r := c.Do("HELLO", "3"); !strings.HasPrefix(r, "%7\r\n") && !strings.HasPrefix(r, "-NOAUTH") {
				t.Fatalf("HELLO 3 on %s: %.200q", s.addr, r)
			}
		}
		s.conns[n] = c
		return c
	}
	for i, args := range dc.cmds {
		n := 1
		if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '@' {
			var err error
			if n, err = strconv.Atoi(args[0][1:]); err != nil {
				t.Fatalf("bad connection marker %.200q", args[0])
			}
			args = args[1:]
		}
		var mode byte
		if len(args) > 0 && len(args[0]) > 1 && strings.IndexByte("~^!", args[0][0]) >= 0 {
			mode = args[0][0]
			args = append([]string{args[0][1:]}, args[1:]...)
		}
		if mode == '!' {
			for _, s := range sides {
				if err := conn(s, n).Write(redistest.Encode(args...)); err != nil {
					t.Fatalf("step %d %.200q: %s: %v", i+1, args, s.addr, err)
				}
			}
			continue
		}
		want, err := conn(sides[0], n).DoErr(args...)
		if err != nil {
			t.Fatalf("step %d %.200q: redis-server: %v", i+1, args, err)
		}
		got, err := conn(sides[1], n).DoErr(args...)
		if err != nil {
			t.Fatalf("step %d %.200q: MyRedis: %v (Redis replied %.200q)", i+1, args, err, want)
		}
		switch mode {
		case '~':
			if got[:1] != want[:1] {
				t.Errorf("step %d %.200q: reply type differs\n redis:   %.200q\n myredis: %.200q", i+1, args, want, got)
			}
			continue
		case '^':
			want, got = sortedArray(want), sortedArray(got)
		}
		if got != want {
			t.Errorf("step %d %.200q:\n redis:   %.200q\n myredis: %.200q", i+1, args, want, got)
		}
	}
}

// sortedArray re-renders an array reply with its elements in byte order, nested
// arrays too (SCAN's and HSCAN's key list inside the [cursor, keys] pair).
func sortedArray(reply string) string {
	rd := bufio.NewReader(strings.NewReader(reply))
	out, err := sortedReply(rd)
	if err != nil {
		return reply
	}
	return out
}

func sortedReply(rd *bufio.Reader) (string, error) {
	head, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(head, "$") {
		n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil || n < 0 {
			return head, err
		}
		body := make([]byte, n+2)
		_, err = io.ReadFull(rd, body)
		return head + string(body), err
	}
	if !strings.HasPrefix(head, "*") && !strings.HasPrefix(head, "~") && !strings.HasPrefix(head, "%") {
		return head, nil // +, -, :, and RESP3's one-line types
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 {
		return head, err
	}
	elems := make([]string, n)
	for i := range elems {
		if elems[i], err = sortedReply(rd); err != nil {
			return "", err
		}
		if head[0] == '%' { // a map sorts by its pairs
			v, err := sortedReply(rd)
			if err != nil {
				return "", err
			}
			elems[i] += v
		}
	}
	sort.Strings(elems)
	return head + strings.Join(elems, ""), nil
}

// loadDiffCases reads a testdata/compat file.
func loadDiffCases(path string) ([]diffCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(path), ".txt")
	var cases []diffCase
	for ln, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "==="); ok {
			cases = append(cases, diffCase{name: base + "/" + strings.TrimSpace(name)})
			continue
		}
		if len(cases) == 0 {
			return nil, fmt.Errorf("%s:%d: command before the first '=== name' line", path, ln+1)
		}
		args, err := splitArgs(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, ln+1, err)
		}
		last := &cases[len(cases)-1]
		last.cmds = append(last.cmds, args)
	}
	return cases, nil
}

// splitArgs splits a line as redis-cli does: blanks separate arguments; "..."
// takes \n \r \t \" \\ and \xHH escapes; '...' takes \'.
func splitArgs(line string) ([]string, error) {
	var args []string
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		var cur []byte
		inq, insq := false, false
		for done := false; !done; {
			if i == len(line) {
				if inq || insq {
					return nil, fmt.Errorf("unbalanced quotes in %.200q", line)
				}
				break
			}
			ch := line[i]
			switch {
			case inq && ch == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				v, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
				cur = append(cur, byte(v))
				i += 3
			case inq && ch == '\\' && i+1 < len(line):
				i++
				switch line[i] {
				case 'n':
					cur = append(cur, '\n')
				case 'r':
					cur = append(cur, '\r')
				case 't':
					cur = append(cur, '\t')
				default:
					cur = append(cur, line[i])
				}
			case inq && ch == '"', insq && ch == '\'':
				if i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' {
					return nil, fmt.Errorf("closing quote must be followed by a space in %.200q", line)
				}
				inq, insq, done = false, false, true
			case insq && ch == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				cur = append(cur, '\'')
			case inq || insq:
				cur = append(cur, ch)
			case ch == ' ' || ch == '\t':
				done = true
			case ch == '"':
				inq = true
			case ch == '\'':
				insq = true
			default:
				cur = append(cur, ch)
			}
			i++
		}
		args = append(args, string(cur))
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// TestCompatInfoCounters compares INFO's counters after the same commands:
// hits and misses (only reads count, as Redis's lookupKeyRead), commands
// processed, expired keys, and the keyspace line.
func TestCompatInfoCounters(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	cmds := [][]string{
		{"SET", "a", "1"}, {"GET", "a"}, {"GET", "nope"}, {"MGET", "a", "nope", "a"}, {"EXISTS", "a", "nope"},
		{"TYPE", "a"}, {"TTL", "nope"}, {"INCR", "a"}, {"INCR", "fresh"}, {"APPEND", "a", "x"},
		{"SET", "a", "2", "GET"}, {"GETSET", "a", "3"}, {"STRLEN", "a"}, {"GETEX", "a"}, {"SETNX", "a", "1"},
		{"SET", "t", "v", "PX", "1"}, {"EXPIRE", "a", "100"}, {"NOSUCH"}, {"GET"}, {"SCAN", "0"},
	}
	fields := []string{"keyspace_hits", "keyspace_misses", "total_commands_processed", "db0"}
	results := make([]map[string]string, 2)
	for i, addr := range []string{real, mine} {
		c := redistest.Dial(t, addr)
		c.Do("FLUSHALL")
		c.Do("CONFIG", "RESETSTAT")
		for _, args := range cmds {
			c.Do(args...)
		}
		time.Sleep(5 * time.Millisecond) // let t expire
		c.Do("GET", "t")
		results[i] = map[string]string{}
		for _, sec := range []string{"stats", "keyspace"} {
			for k, v := range infoFields(t, c.Do("INFO", sec)) {
				results[i][k] = v
			}
		}
	}
	for _, f := range fields {
		want, got := results[0][f], results[1][f]
		if f == "db0" { // avg_ttl is Redis's running estimate
			want, _, _ = strings.Cut(want, ",avg_ttl")
			got, _, _ = strings.Cut(got, ",avg_ttl")
		}
		if want != got {
			t.Errorf("INFO %s: redis %q, myredis %q", f, want, got)
		}
	}
	if results[0]["expired_keys"] != results[1]["expired_keys"] {
		t.Errorf("INFO expired_keys: redis %q, myredis %q", results[0]["expired_keys"], results[1]["expired_keys"])
	}
}

// TestCompatCommandInfo compares COMMAND INFO and COMMAND DOCS of every command
// MyRedis serves with redis-server's. A failure after adding a command means
// commandinfo_redis.go is stale: run "go generate ./myredis".
func TestCompatCommandInfo(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	for _, proto := range []string{"2", "3"} { // RESP3: maps and sets (commandinfo_redis.go's types)
		rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
		rc.Do("HELLO", proto)
		mc.Do("HELLO", proto)
		for _, name := range myredis.CommandNames() {
			for _, sub := range []string{"INFO", "DOCS"} {
				want, got := rc.Do("COMMAND", sub, name), mc.Do("COMMAND", sub, name)
				if strings.Contains(want, "|") {
					continue // subcommands come in Redis's hash order, different in every process
				}
				if want != got {
					t.Errorf("RESP%s COMMAND %s %s:\n redis:   %.300q\n myredis: %.300q\n(stale commandinfo_redis.go? run go generate ./myredis)", proto, sub, name, want, got)
				}
			}
		}
	}
}

// TestCompatInfoSections compares which INFO sections come back, in which order,
// for the arguments clients send.
func TestCompatInfoSections(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	headers := func(reply string) []string {
		var hs []string
		for _, line := range strings.Split(reply, "\r\n") {
			if strings.HasPrefix(line, "# ") {
				hs = append(hs, line)
			}
		}
		return hs
	}
	for _, args := range [][]string{
		{}, {"default"}, {"all"}, {"everything"}, {"SERVER"}, {"server", "keyspace"}, {"keyspace", "server"},
		{"nosuch"}, {"cpu"}, {"replication"}, {"cluster"}, {"commandstats"}, {"modules"}, {"default", "commandstats"},
		{"errorstats"}, {"latencystats"}, {"ERRORSTATS", "commandstats"},
	} {
		cmd := append([]string{"INFO"}, args...)
		want, got := headers(rc.Do(cmd...)), headers(mc.Do(cmd...))
		if strings.Join(want, ",") != strings.Join(got, ",") {
			t.Errorf("%q sections:\n redis:   %q\n myredis: %q", cmd, want, got)
		}
	}
	for _, f := range []string{"role", "connected_slaves", "cluster_enabled", "redis_mode", "redis_version"} {
		want := infoFields(t, rc.Do("INFO", "everything"))[f]
		if got := infoFields(t, mc.Do("INFO", "everything"))[f]; got != want {
			t.Errorf("INFO %s: redis %q, myredis %q", f, want, got)
		}
	}
}

// TestSortedArray checks the "^" comparison's normal form.
func TestSortedArray(t *testing.T) {
	a := "*2\r\n$1\r\n0\r\n*3\r\n$1\r\nb\r\n$2\r\naa\r\n:5\r\n"
	b := "*2\r\n*3\r\n:5\r\n$2\r\naa\r\n$1\r\nb\r\n$1\r\n0\r\n"
	if sortedArray(a) != sortedArray(b) {
		t.Fatalf("%q and %q differ:\n%q\n%q", a, b, sortedArray(a), sortedArray(b))
	}
	if c := "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\nc\r\n"; sortedArray(a) == sortedArray(c) {
		t.Fatalf("%q and %q compare equal", a, c)
	}
	if s := sortedArray("-ERR x\r\n"); s != "-ERR x\r\n" {
		t.Fatalf("error reply changed: %q", s)
	}
}
