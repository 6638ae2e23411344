package myredis_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// listenServer opens a MyRedis from redis.conf-style arguments and serves it
// with ListenAndServe (bind, port, unixsocket as given); it stops with the test.
func listenServer(t *testing.T, args ...string) (*myredis.Server, int) {
	t.Helper()
	port := redistest.FreePort(t)
	cfg, err := myredis.ParseArgs(append([]string{"--port", strconv.Itoa(port), "--dir", t.TempDir()}, args...))
	if err != nil {
		t.Fatal(err)
	}
	s, err := myredis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	for i := 0; s.Addr() == nil; i++ {
		if i == 500 {
			t.Fatal("the server did not start listening")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s, port
}

// nonLoopbackIPv4 is an address of this machine other than loopback, or "".
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// readUntilClosed reads what the server sends until it closes the connection.
func readUntilClosed(t *testing.T, nc net.Conn) string {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the connection was not closed; read %q", b.String())
			}
			return b.String()
		}
	}
}

// protected-mode yes (the default) with the default user nopass: a client
// from a non-loopback address gets Redis's DENIED text and is disconnected,
// counted in rejected_connections; loopback clients are served; CONFIG SET
// protected-mode no, or a password, lets the outside in.
func TestProtectedModeRefusesNonLoopback(t *testing.T) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Skip("this machine has no non-loopback IPv4 address to connect from")
	}
	_, port := listenServer(t, "--bind", "*")
	outside := net.JoinHostPort(ip, strconv.Itoa(port))
	loop := redistest.Dial(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	mustDo(t, loop, "+PONG\r\n", "PING")
	mustDo(t, loop, bulks("protected-mode", "yes"), "CONFIG", "GET", "protected-mode")

	nc, err := net.Dial("tcp", outside)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("PING\r\n"))
	got := readUntilClosed(t, nc)
	if !strings.HasPrefix(got, "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.") ||
		!strings.HasSuffix(got, "the server to start accepting connections from the outside.\r\n") || strings.Contains(got, "PONG") {
		t.Fatalf("non-loopback client got %q", got)
	}
	if info := loop.Do("INFO", "stats"); !strings.Contains(info, "rejected_connections:1\r\n") {
		t.Fatalf("rejected_connections not counted: %q", info)
	}

	mustDo(t, loop, ok, "CONFIG", "SET", "protected-mode", "no")
	out := redistest.Dial(t, outside)
	mustDo(t, out, "+PONG\r\n", "PING")

	mustDo(t, loop, ok, "CONFIG", "SET", "protected-mode", "yes", "requirepass", "pw")
	out2 := redistest.Dial(t, outside) // a password is set: accepted, then asked for it
	mustDo(t, out2, noAuth, "PING")
	mustDo(t, out2, ok, "AUTH", "pw")
	mustDo(t, out2, "+PONG\r\n", "PING")
}

// Bad values get Redis's CONFIG SET errors; unixsocket and unixsocketperm
// cannot change while running.
func TestOpsConfigSetErrors(t *testing.T) {
	c, _, _ := start(t)
	fail := func(name, msg string) string {
		return errRe("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + msg)
	}
	runSteps(t, c, []step{
		do(fail("protected-mode", "argument must be 'yes' or 'no'"), "CONFIG", "SET", "protected-mode", "maybe"),
		do(fail("unixsocket", "can't set immutable config"), "CONFIG", "SET", "unixsocket", "/tmp/x.sock"),
		do(fail("unixsocketperm", "can't set immutable config"), "CONFIG", "SET", "unixsocketperm", "700"),
		do(fail("stop-writes-on-bgsave-error", "argument must be 'yes' or 'no'"), "CONFIG", "SET", "stop-writes-on-bgsave-error", "1"),
		do(fail("shutdown-on-sigterm", "argument(s) must be one of the following: default, save, nosave, now, force"),
			"CONFIG", "SET", "shutdown-on-sigterm", "later"),
		do(fail("shutdown-on-sigint", "shutdown options SAVE and NOSAVE can't be used simultaneously"),
			"CONFIG", "SET", "shutdown-on-sigint", "save nosave"),
		do(ok, "CONFIG", "SET", "shutdown-on-sigint", "FORCE now save"),
		do(bulks("shutdown-on-sigint", "save now force"), "CONFIG", "GET", "shutdown-on-sigint"),
		do(ok, "CONFIG", "SET", "shutdown-on-sigint", "default"),
		do(bulks("shutdown-on-sigint", "default"), "CONFIG", "GET", "shutdown-on-sigint"),
		do(fail("oom-score-adj", "argument(s) must be one of the following: no, yes, relative, absolute"),
			"CONFIG", "SET", "oom-score-adj", "maybe"),
		do(fail("oom-score-adj-values", "wrong number of arguments"), "CONFIG", "SET", "oom-score-adj-values", "1 2"),
		do(fail("oom-score-adj-values", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."),
			"CONFIG", "SET", "oom-score-adj-values", "0 200 2001"),
		do(bulks("oom-score-adj", "no", "oom-score-adj-values", "0 200 800"), "CONFIG", "GET", "oom-score-adj*"),
	})
	for _, tc := range []struct{ args, msg string }{
		{"--unixsocketperm 800", "argument couldn't be parsed as an octal number"},
		{"--unixsocketperm 1000", "argument must be between 0 and 777 inclusive"},
	} {
		_, err := myredis.ParseArgs(strings.Fields(tc.args))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.msg)
		}
	}
}

// unixsocket: the server listens there too, with unixsocketperm as the file's
// mode; redis-cli -s and go-redis's "unix" network work; CLIENT LIST shows
// the path as Redis does; protected-mode never refuses such a client; the file
// is removed when the server stops.
func TestUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "r.sock")
	os.WriteFile(sock, []byte("stale"), 0o644) // a stale file is replaced, as Redis unlinks first
	s, port := listenServer(t, "--unixsocket", sock, "--unixsocketperm", "640", "--bind", "127.0.0.1")
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o640 {
		t.Fatalf("socket file: %v %v", fi, err)
	}
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	info, err := rdb.ClientInfo(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if info.Addr != sock+":0" || info.LAddr != sock+":0" || info.Flags&redis.ClientUnixSocket == 0 {
		t.Fatalf("CLIENT INFO: %+v", info)
	}
	list, _ := rdb.ClientList(ctx).Result()
	if !strings.Contains(list, " addr="+sock+":0 laddr="+sock+":0 ") || !strings.Contains(list, " flags=U ") {
		t.Fatalf("CLIENT LIST: %q", list)
	}
	tcp := redistest.Dial(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	mustDo(t, tcp, bulk("v"), "GET", "k")
	mustDo(t, tcp, bulks("unixsocket", sock), "CONFIG", "GET", "unixsocket")
	mustDo(t, tcp, bulks("unixsocketperm", "640"), "CONFIG", "GET", "unixsocketperm")
	if !strings.Contains(tcp.Do("CLIENT", "INFO"), " flags=N ") {
		t.Error("a TCP client has the U flag")
	}
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		out, err := exec.Command(cli, "-s", sock, "GET", "k").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "v" {
			t.Errorf("redis-cli -s: %q %v", out, err)
		}
	}
	s.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file outlived the server: %v", err)
	}
}

// port 0 with unixsocket listens on the socket only, as Redis.
func TestUnixSocketOnly(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "r.sock")
	cfg, err := myredis.ParseArgs([]string{"--port", "0", "--unixsocket", sock, "--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := myredis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe() }()
	defer func() { s.Close(); <-served }()
	var nc net.Conn
	for i := 0; ; i++ {
		if nc, err = net.Dial("unix", sock); err == nil {
			break
		}
		if i == 500 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := redistest.Wrap(t, nc)
	mustDo(t, c, "+PONG\r\n", "PING")
}

// tcp-backlog reaches listen(2): ss shows a listening socket's backlog as
// its Send-Q (Linux only; the kernel caps it at net.core.somaxconn).
func TestTCPBacklog(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tcp-backlog reaches listen(2) on Linux only")
	}
	ss, err := exec.LookPath("ss")
	if err != nil {
		t.Skip("ss (iproute2) is not installed: no way to read a socket's backlog")
	}
	for _, backlog := range []int{37, 511} {
		_, port := listenServer(t, "--bind", "127.0.0.1", "--tcp-backlog", strconv.Itoa(backlog))
		out, err := exec.Command(ss, "-ltnH", "sport = :"+strconv.Itoa(port)).Output()
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(out))
		if len(f) < 3 || f[2] != strconv.Itoa(backlog) {
			t.Fatalf("tcp-backlog %d: ss shows %q", backlog, out)
		}
	}
}

// stop-writes-on-bgsave-error: after a failed BGSAVE (its directory removed)
// writes, an EXEC with a write and PING get Redis's MISCONF (replies as
// redis-server 7.0.15 gave them in the same steps); reads do not; "no" lets
// writes through; a successful SAVE clears it.
func TestStopWritesOnBgsaveError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.Mkdir(dir, 0o755)
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{Dir: dir})
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "CONFIG", "SET", "save", "3600 1")
	mustDo(t, c, ok, "SET", "a", "1")
	os.RemoveAll(dir)
	if got := c.Do("SAVE"); got != "-ERR\r\n" {
		t.Fatalf("SAVE into a removed directory: %q", got)
	}
	mustDo(t, c, ok, "SET", "a", "1") // a failed SAVE is not a failed BGSAVE (Redis's rdbSave)
	mustDo(t, c, simple("Background saving started"), "BGSAVE")
	for i := 0; !strings.Contains(c.Do("INFO", "persistence"), "rdb_bgsave_in_progress:0"); i++ {
		if i == 500 {
			t.Fatal("BGSAVE did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	misconf := "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.\r\n"
	runSteps(t, c, []step{
		do(misconf, "SET", "a", "2"),
		do(misconf, "PING"),
		do(bulk("1"), "GET", "a"),
		do(ok, "MULTI"),
		do(misconf, "SET", "a", "2"),
		do("-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC"),
		do(misconf, "EVAL", "#!lua\nreturn redis.call('set','a','b')", "0"),
		do(ok, "CONFIG", "SET", "stop-writes-on-bgsave-error", "no"),
		do(ok, "SET", "a", "3"),
		do(ok, "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"),
		do(misconf, "DEL", "a"),
		do(ok, "CONFIG", "SET", "save", ""), // no save points: no refusal (saveparamslen > 0)
		do(num(1), "DEL", "a"),
		do(ok, "CONFIG", "SET", "save", "3600 1"),
		do(misconf, "SET", "a", "4"),
	})
	if got := c.Do("EVAL", "return redis.call('set','a','b')", "0"); !strings.HasPrefix(got, misconf[:len(misconf)-2]+" script: ") {
		t.Errorf("a write inside a script without flags: %q", got)
	}
	os.Mkdir(dir, 0o755)
	mustDo(t, c, ok, "SAVE")
	mustDo(t, c, ok, "SET", "a", "5")
	mustDo(t, c, "+PONG\r\n", "PING")
}

// The settings of config_ops.go and the replica-* and lazyfree-* ones read
// and refuse as redis-server 7.0.15 does: the same replies, byte for byte,
// to the same CONFIG GET and CONFIG SET commands.
func TestOpsConfigMatchesRedis(t *testing.T) {
	real := redistest.Dial(t, redistest.StartRealRedis(t))
	mine, _, _ := start(t)
	names := []string{"protected-mode", "stop-writes-on-bgsave-error", "unixsocket", "unixsocketperm",
		"shutdown-on-sigint", "shutdown-on-sigterm", "oom-score-adj", "oom-score-adj-values", "tcp-backlog",
		"replica-announce-ip", "replica-announce-port", "replica-announced", "replica-ignore-maxmemory",
		"replica-lazy-flush", "slave-announce-ip", "slave-announce-port", "slave-ignore-maxmemory", "slave-lazy-flush",
		"lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del", "lazyfree-lazy-user-del",
		"lazyfree-lazy-user-flush", "latency-tracking", "latency-tracking-info-percentiles", "shutdown-timeout", "activerehashing", "sanitize-dump-payload", "bind-source-addr",
		"repl-diskless-sync-max-replicas", "repl-backlog-ttl", "repl-disable-tcp-nodelay"}
	cmds := [][]string{}
	for _, n := range names {
		cmds = append(cmds, []string{"CONFIG", "GET", n})
	}
	for _, set := range [][2]string{
		{"protected-mode", "maybe"}, {"stop-writes-on-bgsave-error", "2"}, {"unixsocket", "/tmp/x"},
		{"unixsocketperm", "777"}, {"tcp-backlog", "10"}, {"shutdown-on-sigint", "save nosave"},
		{"shutdown-on-sigint", "nosave force now"}, {"shutdown-on-sigterm", "later"}, {"shutdown-on-sigterm", ""},
		{"oom-score-adj", "sometimes"}, {"oom-score-adj-values", "1 2"}, {"oom-score-adj-values", "1 2 x"},
		{"oom-score-adj-values", "0  800"}, {"oom-score-adj-values", "-2001 0 0"},
		{"replica-announce-port", "65536"}, {"replica-announce-port", "x"}, {"slave-announce-port", "1234"},
		{"replica-announce-ip", "1.2.3.4"}, {"replica-announced", "no"}, {"replica-ignore-maxmemory", "no"},
		{"slave-lazy-flush", "yes"}, {"lazyfree-lazy-user-del", "yes"}, {"lazyfree-lazy-expire", "on"},
		{"latency-tracking", "nope"}, {"latency-tracking-info-percentiles", "10.0 50.0 a"},
		{"latency-tracking-info-percentiles", "10 101"}, {"latency-tracking-info-percentiles", "-1"},
		{"latency-tracking-info-percentiles", " 5"}, {"latency-tracking-info-percentiles", "nan"},
		{"latency-tracking-info-percentiles", "0.0 50.0 100.0 99.99 1e1 0.0000001"},
		{"shutdown-timeout", "-1"}, {"shutdown-timeout", "30"}, {"activerehashing", "0"}, {"activerehashing", "no"},
		{"sanitize-dump-payload", "always"}, {"sanitize-dump-payload", "CLIENTS"}, {"bind-source-addr", "127.0.0.3"},
		{"repl-diskless-sync-max-replicas", "-1"}, {"repl-diskless-sync-max-replicas", "3"},
		{"repl-backlog-ttl", "-5"}, {"repl-backlog-ttl", "0"}, {"repl-disable-tcp-nodelay", "yes"},
	} {
		cmds = append(cmds, []string{"CONFIG", "SET", set[0], set[1]})
	}
	for _, n := range names {
		cmds = append(cmds, []string{"CONFIG", "GET", n})
	}
	cmds = append(cmds, []string{"CONFIG", "SET", "latency-tracking-info-percentiles", ""},
		[]string{"CONFIG", "GET", "latency-tracking-info-percentiles"})
	for _, cmd := range cmds {
		want := real.Do(cmd...)
		if got := mine.Do(cmd...); got != want {
			t.Errorf("%q:\n MyRedis %q\n Redis   %q", cmd, got, want)
		}
	}
}

// latency-tracking and latency-tracking-info-percentiles shape INFO
// latencystats as Redis's: the configured percentiles, in their order and
// spelling; no lines while tracking is off, and calls made then are not in
// the histograms.
func TestLatencyTrackingSettings(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, ok, "SET", "a", "b")
	if got := c.Do("INFO", "latencystats"); !regexp.MustCompile(`latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`).MatchString(got) {
		t.Fatalf("default percentiles: %q", got)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.5 100")
	if got := c.Do("INFO", "latencystats"); !regexp.MustCompile(`latency_percentiles_usec_set:p0=\d+\.\d{3},p50\.5=\d+\.\d{3},p100=\d+\.\d{3}\r\n`).MatchString(got) {
		t.Fatalf("configured percentiles: %q", got)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "latency-tracking", "no")
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	mustDo(t, c, ok, "SET", "a", "b")
	if got := c.Do("INFO", "latencystats"); strings.Contains(got, "latency_percentiles") {
		t.Fatalf("latency-tracking no: %q", got)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "latency-tracking", "yes")
	if got := c.Do("INFO", "latencystats"); strings.Contains(got, "latency_percentiles_usec_set") {
		t.Fatalf("a SET made while tracking was off is in the histogram: %q", got)
	}
	mustDo(t, c, ok, "SET", "a", "b") // the first one after: in the histogram (Redis's unit/info test)
	if got := c.Do("INFO", "latencystats"); !strings.Contains(got, "latency_percentiles_usec_set:p0=") {
		t.Fatalf("the SET after tracking came back on: %q", got)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "latency-tracking-info-percentiles", "")
	mustDo(t, c, bulk("b"), "GET", "a")
	if got := c.Do("INFO", "latencystats"); !strings.Contains(got, "latency_percentiles_usec_get:\r\n") {
		t.Fatalf("no percentiles: %q", got)
	}
}

// sanitize-dump-payload: MyRedis decodes a RESTORE payload whole whatever the
// value, so a listpack hash with a duplicate field (from Redis's corrupt-dump
// tests) is refused as redis-server refuses it with "yes"; redis-server with
// "no" accepts it, MyRedis does not (README).
func TestSanitizeDumpPayload(t *testing.T) {
	payload := "\x10\x17\x17\x00\x00\x00\x04\x00\x82\x61\x00\x03\x82\x62\x00\x03\x82\x61\x00\x03\x82\x64\x00\x03\xff\x0a\x00\xc0\xcf\xa6\x87\xe5\xa7\xc5\xbe"
	real := redistest.Dial(t, redistest.StartRealRedis(t))
	mine, _, _ := start(t)
	bad := "-ERR Bad data format\r\n"
	mustDo(t, real, ok, "CONFIG", "SET", "sanitize-dump-payload", "yes")
	mustDo(t, real, bad, "RESTORE", "h", "0", payload)
	mustDo(t, real, ok, "CONFIG", "SET", "sanitize-dump-payload", "no")
	mustDo(t, real, ok, "RESTORE", "h", "0", payload) // Redis's shallow check lets the duplicate in
	for _, v := range []string{"yes", "clients", "no"} {
		mustDo(t, mine, ok, "CONFIG", "SET", "sanitize-dump-payload", v)
		mustDo(t, mine, bad, "RESTORE", "h", "0", payload)
	}
}
