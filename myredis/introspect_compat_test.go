// Needs redis-server (skips without it): the slow log's entries and MONITOR's
// lines compared with a real redis-server 7.0, times and client ports left out.
package myredis_test

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// introStep is one command of an introspection case, sent on connection conn
// (1 or 2). Replies are read and ignored (the stream or the log is compared).
type introStep struct {
	conn int
	args []string
	// noReply: the command blocks (BLPOP); its reply is read before the next
	// such step or at the end
	noReply bool
}

func st(args ...string) introStep  { return introStep{conn: 1, args: args} }
func st2(args ...string) introStep { return introStep{conn: 2, args: args} }

var introCases = []struct {
	name  string
	steps []introStep
}{
	{"plain commands", []introStep{
		st("SET", "foo", "bar"), st("GET", "foo"), st("nosuchcommand", "x"), st("GET"),
		st("SET", "bin", "a\"b\\c\r\n\t\x00\x7f\xffé"), st("SELECT", "1"), st("SET", "x", "12"), st("SELECT", "0"),
		st("PING"), st("ECHO", "hi"), st("CLIENT", "ID"), st("INCRBYFLOAT", "f", "1.5"),
	}},
	{"admin commands are hidden", []introStep{
		st("CONFIG", "GET", "maxmemory"), st("SLOWLOG", "LEN"), st("LATENCY", "LATEST"), st("CLIENT", "LIST"),
		st("INFO", "server"), st("DEBUG", "SLEEP", "0"), st("CLIENT", "GETNAME"), st("COMMAND", "COUNT"),
	}},
	{"scripts", []introStep{
		st("EVAL", "redis.call('set',KEYS[1],ARGV[1]); return redis.call('get',KEYS[1])", "1", "k", "v"),
		st("EVAL", "return redis.pcall('incr','k')", "0"),
		st("EVALSHA", "0000000000000000000000000000000000000000", "0"),
		st("EVAL", "redis.call('select', 2); return redis.call('set','in2','1')", "0"),
		st("FUNCTION", "LOAD", "REPLACE", "#!lua name=mon\nredis.register_function('f', function(k) return redis.call('set', k[1], 'x') end)"),
		st("FCALL", "f", "1", "fk"), st("FCALL_RO", "nosuch", "0"),
	}},
	{"transactions", []introStep{
		st("MULTI"), st("SET", "a", "1"), st("INCR", "a"), st("EXEC"),
		st("MULTI"), st("nosuch"), st("EXEC"),
		st("MULTI"), st("GET"), st("DISCARD"),
		st("WATCH", "w"), st2("SET", "w", "1"), st("MULTI"), st("GET", "w"), st("EXEC"),
		st("MULTI"), st("EVAL", "return redis.call('set','e','1')", "0"), st("EXEC"),
	}},
	{"redacted arguments", []introStep{
		st("AUTH", "not-real"), st("AUTH", "not-real", "not-a-password"), st("HELLO", "2", "AUTH", "not-real", "not-a-password"),
		st("HELLO", "2", "SETNAME", "mon"), st("HELLO", "2"),
	}},
	{"blocked commands", []introStep{
		{conn: 2, args: []string{"BLPOP", "list", "0"}, noReply: true}, st("LPUSH", "list", "a", "b"),
		{conn: 2, args: []string{"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"}, noReply: true}, st("RPUSH", "src", "x"),
		st("BLPOP", "none", "0.01"),
	}},
}

// TestCompatMonitor compares what a MONITOR client receives.
func TestCompatMonitor(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	realAddr, myAddr := startPair(t, "--enable-debug-command", "yes")
	for _, tc := range introCases {
		t.Run(tc.name, func(t *testing.T) {
			want := monitorStream(t, realAddr, tc.steps)
			got := monitorStream(t, myAddr, tc.steps)
			if want == "" {
				t.Fatal("redis-server's monitor showed nothing")
			}
			if got != want {
				t.Errorf("monitor stream differs:\n redis:\n%s\n myredis:\n%s", want, got)
			}
		})
	}
}

// monitorStream plays steps on addr while a MONITOR client listens, and returns
// its lines with the time cut off and the clients' addresses named c1, c2.
func monitorStream(t *testing.T, addr string, steps []introStep) string {
	t.Helper()
	flush := redistest.Dial(t, addr)
	flush.Do("FLUSHALL")
	flush.Do("FUNCTION", "FLUSH")
	flush.Close()
	mon := redistest.Dial(t, addr)
	if r := mon.Do("MONITOR"); r != redistest.OK {
		t.Fatalf("MONITOR: %q", r)
	}
	conns := playIntro(t, addr, steps)
	const mark = "end-of-case-mark"
	conns[1].Do("ECHO", mark)
	rd := bufio.NewReader(mon.NetConn())
	mon.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
	names := map[string]string{}
	for i, c := range conns[1:] {
		names[c.NetConn().LocalAddr().String()] = fmt.Sprintf("c%d", i+1)
	}
	var out strings.Builder
	stamp := regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) ([^\]]+)\] `)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("monitor stream: %v after %q", err, out.String())
		}
		if strings.Contains(line, mark) {
			break
		}
		m := stamp.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("monitor line not in Redis's form: %q", line)
		}
		who := m[2]
		if n, ok := names[who]; ok {
			who = n
		}
		fmt.Fprintf(&out, "[%s %s] %s", m[1], who, line[len(m[0]):])
	}
	return out.String()
}

// playIntro runs steps on fresh connections 1 and 2 (index 0 is unused; 3
// waits for blocked clients with CLIENT LIST, which monitors do not see).
func playIntro(t *testing.T, addr string, steps []introStep) []*redistest.Conn {
	t.Helper()
	conns := []*redistest.Conn{nil, redistest.Dial(t, addr), redistest.Dial(t, addr), redistest.Dial(t, addr)}
	pending := 0 // the connection whose blocked reply is still to be read
	readPending := func() {
		if pending != 0 {
			if _, err := conns[pending].Read(); err != nil {
				t.Fatalf("blocked reply: %v", err)
			}
			pending = 0
		}
	}
	defer readPending()
	for _, s := range steps {
		c := conns[s.conn]
		if s.noReply {
			readPending()
			if err := c.Write(redistest.Encode(s.args...)); err != nil {
				t.Fatal(err)
			}
			pending = s.conn
			waitBlocked(t, conns[3], 1)
			continue
		}
		if _, err := c.DoErr(s.args...); err != nil {
			t.Fatalf("%q: %v", s.args, err)
		}
	}
	return conns
}

// waitBlocked waits until n clients are blocked, asking on c with CLIENT LIST
// (an admin command: MONITOR does not show it; the slow log entries of c are
// left out).
func waitBlocked(t *testing.T, c *redistest.Conn, n int) {
	t.Helper()
	for range 200 {
		if strings.Count(c.Do("CLIENT", "LIST"), " flags=b ") == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never saw %d blocked clients", n)
}

// TestCompatSlowlog compares the slow log's entries, ids checked to follow
// each other, durations and times left out.
func TestCompatSlowlog(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	realAddr, myAddr := startPair(t, "--enable-debug-command", "yes")
	long := strings.Repeat("A", 129)
	many := []string{"SADD", "set"}
	for i := 3; i <= 33; i++ {
		many = append(many, fmt.Sprint(i))
	}
	steps := []introStep{
		st("CLIENT", "SETNAME", "slow"),
		st("SADD", "set", "foo", long), st(many...), st("SET", "k", strings.Repeat("b", 128)),
		st("EVAL", "return redis.call('set','k','v')", "0"),
		st("MULTI"), st("SET", "a", "1"), st("DEBUG", "SLEEP", "0"), st("EXEC"),
		st("AUTH", "a", "b"), st("HELLO", "2", "AUTH", "a", "b"),
		st("CONFIG", "SET", "requirepass", "", "masterauth", "x"),
		st("SPOP", "set", "100"), st("GETSET", "k", "5"),
		{conn: 2, args: []string{"BLPOP", "l", "0"}, noReply: true}, st("MULTI"), st("LPUSH", "l", "x"), st("EXEC"),
		st("GET", "nosuch"), st("nosuchcommand"), st("GET"),
	}
	for _, tc := range []struct {
		name  string
		setup [][]string
	}{
		{"all", [][]string{{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, {"CONFIG", "SET", "slowlog-max-len", "128"}}},
		{"max len 3", [][]string{{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, {"CONFIG", "SET", "slowlog-max-len", "3"}}},
		{"off", [][]string{{"CONFIG", "SET", "slowlog-log-slower-than", "-1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slowlogEntries(t, realAddr, tc.setup, steps)
			got := slowlogEntries(t, myAddr, tc.setup, steps)
			if want == "" && tc.name != "off" {
				t.Fatal("redis-server's slow log is empty")
			}
			if got != want {
				t.Errorf("slow log differs:\n redis:\n%s\n myredis:\n%s", want, got)
			}
		})
	}
}

// slowlogEntries plays steps after setup and a SLOWLOG RESET and renders SLOWLOG
// GET -1 with relative ids, no times and the clients named.
func slowlogEntries(t *testing.T, addr string, setup [][]string, steps []introStep) string {
	t.Helper()
	c := redistest.Dial(t, addr)
	c.Do("FLUSHALL")
	for _, s := range setup {
		c.Do(s...)
	}
	c.Do("SLOWLOG", "RESET")
	conns := playIntro(t, addr, steps)
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
	reply := c.Do("SLOWLOG", "GET", "-1")
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
	c.Do("CONFIG", "SET", "slowlog-max-len", "128")
	names := map[string]string{c.NetConn().LocalAddr().String(): "setup"}
	for i, cc := range conns[1:] {
		names[cc.NetConn().LocalAddr().String()] = fmt.Sprintf("c%d", i+1)
	}
	entries, err := parseArrayOfArrays(reply)
	if err != nil {
		t.Fatalf("SLOWLOG GET: %v in %q", err, reply)
	}
	var out strings.Builder
	var prev int64
	for i, e := range entries {
		var id int64
		fmt.Sscan(e.fields[0], &id)
		if i > 0 && id != prev-1 {
			t.Errorf("entry ids not consecutive, newest first: %d after %d", id, prev)
		}
		prev = id
		peer := e.fields[4]
		if n, ok := names[peer]; ok {
			peer = n
		}
		if peer == "c3" {
			continue // the waiter's CLIENT LIST calls
		}
		fmt.Fprintf(&out, "%q %s name=%q\n", e.args, peer, e.fields[5])
	}
	return out.String()
}

// slowEntry is one SLOWLOG GET entry: its six fields as text (args at 3 empty)
// and its arguments.
type slowEntry struct {
	fields [6]string
	args   []string
}

func parseArrayOfArrays(reply string) ([]slowEntry, error) {
	rd := bufio.NewReader(strings.NewReader(reply))
	var n int
	if _, err := fmt.Fscanf(rd, "*%d\r\n", &n); err != nil {
		return nil, err
	}
	out := make([]slowEntry, n)
	for i := range out {
		var six int
		if _, err := fmt.Fscanf(rd, "*%d\r\n", &six); err != nil || six != 6 {
			return nil, fmt.Errorf("entry %d: %v (%d fields)", i, err, six)
		}
		for f := 0; f < 6; f++ {
			if f == 3 {
				var argc int
				if _, err := fmt.Fscanf(rd, "*%d\r\n", &argc); err != nil {
					return nil, err
				}
				for range argc {
					s, err := slowReadBulk(rd)
					if err != nil {
						return nil, err
					}
					out[i].args = append(out[i].args, s)
				}
				continue
			}
			line, err := rd.ReadString('\n')
			if err != nil {
				return nil, err
			}
			line = strings.TrimRight(line, "\r\n")
			if line[0] == '$' {
				var l int
				fmt.Sscanf(line, "$%d", &l)
				buf := make([]byte, l+2)
				if _, err := io.ReadFull(rd, buf); err != nil {
					return nil, err
				}
				line = string(buf[:l])
			} else {
				line = line[1:]
			}
			out[i].fields[f] = line
		}
	}
	return out, nil
}

func slowReadBulk(rd *bufio.Reader) (string, error) {
	var l int
	if _, err := fmt.Fscanf(rd, "$%d\r\n", &l); err != nil {
		return "", err
	}
	buf := make([]byte, l+2)
	if _, err := io.ReadFull(rd, buf); err != nil {
		return "", err
	}
	return string(buf[:l]), nil
}
