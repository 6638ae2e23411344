package myredis_test

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// startDebug serves a MyRedis with DEBUG enabled and a fake clock.
func startDebug(t *testing.T) (*redistest.Conn, *fakeClock, string) {
	t.Helper()
	clk := newFakeClock()
	cfg := myredis.DefaultConfig()
	if err := cfg.Set("enable-debug-command", "yes"); err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg, myredis.WithClock(clk))
	return redistest.Dial(t, addr), clk, addr
}

func TestSlowlogTruncation(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	mustDo(t, c, ok, "SLOWLOG", "RESET")
	args := []string{"RPUSH", "l"}
	for i := range 40 {
		args = append(args, fmt.Sprint(i))
	}
	c.Do(args...)
	c.Do("SET", "k", strings.Repeat("x", 1000))
	c.Do("SET", "k2", strings.Repeat("y", 128))
	mustDo(t, c, ok, "CONFIG", "SET", "slowlog-log-slower-than", "-1")
	got := c.Do("SLOWLOG", "GET", "3")
	// newest first: SET k2 (128 bytes: kept whole), SET k (cut), RPUSH (32 args)
	want32 := []string{"RPUSH", "l"}
	for i := range 29 {
		want32 = append(want32, fmt.Sprint(i))
	}
	want32 = append(want32, "... (11 more arguments)")
	for _, part := range []string{
		bulks("SET", "k2", strings.Repeat("y", 128)),
		bulks("SET", "k", strings.Repeat("x", 128)+"... (872 more bytes)"),
		bulks(want32...),
	} {
		if !strings.Contains(got, part) {
			t.Errorf("SLOWLOG GET lacks %.80q...\n got %.300q", part, got)
		}
	}
	mustDo(t, c, num(4), "SLOWLOG", "LEN") // with SLOWLOG RESET itself
	mustDo(t, c, ok, "CONFIG", "SET", "slowlog-max-len", "2")
	mustDo(t, c, ok, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	c.Do("PING")
	mustDo(t, c, num(2), "SLOWLOG", "LEN")
	mustDo(t, c, "*0\r\n", "SLOWLOG", "GET", "0")
}

func TestSlowlogThreshold(t *testing.T) {
	c, _, _ := startDebug(t)
	mustDo(t, c, ok, "CONFIG", "SET", "slowlog-log-slower-than", "100000") // 100 ms
	mustDo(t, c, ok, "SLOWLOG", "RESET")
	mustDo(t, c, simple("PONG"), "PING")
	mustDo(t, c, num(0), "SLOWLOG", "LEN")
	mustDo(t, c, ok, "CLIENT", "SETNAME", "sleeper")
	mustDo(t, c, ok, "DEBUG", "SLEEP", "0.15")
	mustDo(t, c, num(1), "SLOWLOG", "LEN")
	e := c.Do("SLOWLOG", "GET")
	if !strings.Contains(e, bulks("DEBUG", "SLEEP", "0.15")) || !strings.HasSuffix(e, bulk("sleeper")) {
		t.Fatalf("entry %q", e)
	}
	// the duration field, in microseconds, is at least the sleep
	var id, unix, usec int64
	rd := bufio.NewReader(strings.NewReader(e))
	if _, err := fmt.Fscanf(rd, "*1\r\n*6\r\n:%d\r\n:%d\r\n:%d\r\n", &id, &unix, &usec); err != nil {
		t.Fatalf("entry %q: %v", e, err)
	}
	if usec < 150000 || unix != clockStart {
		t.Errorf("entry time %d (want the fake clock's %d), duration %d us", unix, clockStart, usec)
	}
	// inside MULTI the command is logged, EXEC is not
	mustDo(t, c, ok, "SLOWLOG", "RESET")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "DEBUG", "SLEEP", "0.12")
	mustDo(t, c, array(ok), "EXEC")
	mustDo(t, c, num(1), "SLOWLOG", "LEN")
	if e := c.Do("SLOWLOG", "GET"); !strings.Contains(e, bulks("DEBUG", "SLEEP", "0.12")) {
		t.Errorf("entry %q", e)
	}
}

// monitorLines reads n lines from a MONITOR connection, time stripped.
func monitorLines(t *testing.T, rd *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	for range n {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("monitor: %v after %q", err, out)
		}
		// +1893553445.000000 [0 127.0.0.1:1234] "set" ...
		if !strings.HasPrefix(line, fmt.Sprintf("+%d.000000 [", clockStart)) {
			t.Fatalf("monitor line %q", line)
		}
		rest := line[strings.IndexByte(line, '[')+1 : len(line)-2]
		db, who, _ := strings.Cut(rest, " ")
		if !strings.HasPrefix(who, "lua]") {
			who = "c" + who[strings.IndexByte(who, ']'):]
		}
		out = append(out, db+" "+who)
	}
	return out
}

func TestMonitorOrder(t *testing.T) {
	c, _, addr := start(t)
	mon := redistest.Dial(t, addr)
	mustDo(t, mon, ok, "MONITOR")
	rd := bufio.NewReader(mon.NetConn())
	mon.NetConn().SetReadDeadline(time.Now().Add(5 * time.Second))
	c.Do("SET", "k", "v")
	c.Do("nosuch")
	c.Do("GET")
	c.Do("MULTI")
	c.Do("INCR", "n")
	c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "k")
	c.Do("EXEC")
	c.Do("CONFIG", "GET", "hz") // admin: not shown
	c.Do("SELECT", "3")
	c.Do("EVAL", "redis.call('select', 5) return redis.call('ping')", "0")
	c.Do("ECHO", "a\x01\"")
	got := monitorLines(t, rd, 10)
	want := []string{
		`0 c] "SET" "k" "v"`,
		`0 c] "MULTI"`,
		`0 c] "INCR" "n"`,
		`0 c] "EVAL" "return redis.call('get', KEYS[1])" "1" "k"`,
		`0 lua] "get" "k"`,
		`0 c] "EXEC"`,
		`3 c] "SELECT" "3"`,
		`3 c] "EVAL" "redis.call('select', 5) return redis.call('ping')" "0"`,
		`5 lua] "select" "5"`,
		`5 lua] "ping"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("monitor:\n got  %q\n want %q", got, want)
	}
	if got := monitorLines(t, rd, 1); got[0] != `3 c] "ECHO" "a\x01\""` {
		t.Errorf("escaped line %q", got[0])
	}
	// a client list shows the monitor's O flag; RESET ends monitoring
	if cl := c.Do("CLIENT", "LIST"); !strings.Contains(cl, " flags=O ") {
		t.Errorf("CLIENT LIST: %q", cl)
	}
	mustDo(t, mon, simple("RESET"), "RESET")
	c.Do("SET", "after", "reset")
	mustDo(t, mon, simple("PONG"), "PING") // no monitor line came before it
}

// TestMonitorSlowConsumer: a monitor that does not read is disconnected by the
// output-buffer limit of its class (normal), and the server goes on serving.
func TestMonitorSlowConsumer(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "client-output-buffer-limit", "normal 256kb 0 0")
	mon := redistest.Dial(t, addr)
	mustDo(t, mon, ok, "MONITOR")
	big := strings.Repeat("v", 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.Do("SET", "k", big) // the monitor never reads
		if !strings.Contains(c.Do("CLIENT", "LIST"), "flags=O") {
			mustDo(t, c, num(int64(len(big))), "STRLEN", "k")
			return
		}
	}
	t.Fatal("a monitor that never reads was not disconnected")
}

func TestLatencyMonitor(t *testing.T) {
	c, _, _ := startDebug(t)
	mustDo(t, c, empty, "LATENCY", "LATEST")
	mustDo(t, c, ok, "CONFIG", "SET", "latency-monitor-threshold", "50")
	mustDo(t, c, ok, "DEBUG", "SLEEP", "0.06")
	mustDo(t, c, simple("PONG"), "PING")
	latest := c.Do("LATENCY", "LATEST")
	// [["command", time, latency, max]]: the fake clock's second
	prefix := "*1\r\n*4\r\n" + bulk("command") + num(clockStart)
	if !strings.HasPrefix(latest, prefix) {
		t.Fatalf("LATENCY LATEST %q", latest)
	}
	hist := c.Do("LATENCY", "HISTORY", "command")
	if !strings.HasPrefix(hist, "*1\r\n*2\r\n"+num(clockStart)) {
		t.Errorf("LATENCY HISTORY %q", hist)
	}
	graph := c.Do("LATENCY", "GRAPH", "command")
	if !strings.Contains(graph, "command - high ") || !strings.Contains(graph, "\n_\n") {
		t.Errorf("LATENCY GRAPH %q", graph)
	}
	if d := c.Do("LATENCY", "DOCTOR"); !strings.Contains(d, "1. command: 1 latency spikes") {
		t.Errorf("LATENCY DOCTOR %q", d)
	}
	mustDo(t, c, num(1), "LATENCY", "RESET", "COMMAND")
	mustDo(t, c, empty, "LATENCY", "LATEST")
	mustDo(t, c, errRe("ERR No samples available for event 'command'"), "LATENCY", "GRAPH", "command")
}

func TestLatencyHistogram(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	for range 40 { // more than one in timeEvery: every call is counted
		c.Do("SET", "a", "b")
	}
	c.Do("CLIENT", "ID")
	h := c.Do("LATENCY", "HISTOGRAM", "set", "client", "nosuch")
	if !strings.HasPrefix(h, "*4\r\n"+bulk("set")+"*4\r\n"+bulk("calls")+num(40)+bulk("histogram_usec")) {
		t.Fatalf("LATENCY HISTOGRAM set: %q", h)
	}
	if !strings.Contains(h, bulk("client|id")+"*4\r\n"+bulk("calls")+num(1)) {
		t.Fatalf("LATENCY HISTOGRAM client: %q", h)
	}
}

func TestDebugRefusedByDefault(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, errRe("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."), "DEBUG", "SLEEP", "0")
	cfg := myredis.DefaultConfig()
	if err := cfg.Set("enable-debug-command", "local"); err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	mustDo(t, redistest.Dial(t, addr), ok, "DEBUG", "SLEEP", "0") // loopback counts as local
	if err := cfg.Set("enable-debug-command", "maybe"); err == nil {
		t.Error("enable-debug-command maybe accepted")
	}
}
