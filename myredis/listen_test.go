package myredis_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// CONFIG SET port moves the listener: the new port answers, the old one is
// closed, the connection that asked stays open.
func TestConfigSetPortMovesListener(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	port := redistest.FreePort(t)
	if got := c.Do("CONFIG", "SET", "port", strconv.Itoa(port)); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET port: %q", got)
	}
	moved := redistest.Dial(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if got := moved.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING on the new port: %q", got)
	}
	if got := c.Do("CONFIG", "GET", "port"); !strings.Contains(got, strconv.Itoa(port)) {
		t.Fatalf("CONFIG GET port: %q", got)
	}
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.Close()
		t.Fatalf("the old address %s still accepts", addr)
	}
	if got := c.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("the asking connection: %q", got)
	}
}

// A port in use fails CONFIG SET with Redis's message, naming port, and every
// setting of the command keeps its value (Redis's rollback on apply error).
func TestConfigSetPortInUseRollsBack(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	before := c.Do("CONFIG", "GET", "maxmemory")
	got := c.Do("CONFIG", "SET", "maxmemory", "10000001", "port", busyPort, "client-query-buffer-limit", "10m")
	want := "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if after := c.Do("CONFIG", "GET", "maxmemory"); after != before {
		t.Fatalf("maxmemory changed: %q -> %q", before, after)
	}
	if got := c.Do("CONFIG", "GET", "client-query-buffer-limit"); !strings.Contains(got, "1073741824") {
		t.Fatalf("client-query-buffer-limit changed: %q", got)
	}
	fresh := redistest.Dial(t, addr) // still listening where it was
	if got := fresh.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING on the old port: %q", got)
	}
}

// CONFIG SET bind listens on every address of the list; "-" marks one the
// machine may lack.
func TestConfigSetBindList(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	if got := c.Do("CONFIG", "SET", "bind", "127.0.0.1 -192.0.2.123"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET bind: %q", got)
	}
	if got := c.Do("CONFIG", "GET", "bind"); got != "*2\r\n$4\r\nbind\r\n$22\r\n127.0.0.1 -192.0.2.123\r\n" {
		t.Fatalf("CONFIG GET bind: %q", got)
	}
	fresh := redistest.Dial(t, addr)
	if got := fresh.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after the move: %q", got)
	}
	want := "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"
	if got := c.Do("CONFIG", "SET", "bind", "192.0.2.123"); got != want {
		t.Fatalf("a missing address: %q", got)
	}
}

// key-load-delay and rdb-key-save-delay pause after each key: 20 keys with a
// 5 ms pause take at least 100 ms to reload and to save (a lower bound only:
// a loaded machine makes it slower, never faster).
func TestHiddenKeyDelays(t *testing.T) {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir()
	if err := cfg.Set("enable-debug-command", "yes"); err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr)
	for i := range 20 {
		c.Do("SET", "k"+strconv.Itoa(i), "v")
	}
	for _, tc := range []struct{ param, cmd string }{{"key-load-delay", "RELOAD"}, {"rdb-key-save-delay", "SAVE"}} {
		if got := c.Do("CONFIG", "SET", tc.param, "5000"); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET %s: %q", tc.param, got)
		}
		start := time.Now()
		args := []string{"DEBUG", "RELOAD"}
		if tc.cmd == "SAVE" {
			args = []string{"SAVE"}
		}
		if got := c.Do(args...); got != "+OK\r\n" {
			t.Fatalf("%v: %q", args, got)
		}
		if took := time.Since(start); took < 100*time.Millisecond {
			t.Errorf("%s 5000 with 20 keys: %v took %v, want at least 100ms", tc.param, args, took)
		}
		c.Do("CONFIG", "SET", tc.param, "0")
	}
}

// The per-client command cache (call): one connection alternating names, cases
// and unknown commands gets each command's own reply.
func TestCommandLookupCachePerClient(t *testing.T) {
	c := redistest.Dial(t, redistest.StartMyRedis(t))
	steps := [][2][]string{
		{{"SET", "k", "v"}, {"+OK\r\n"}},
		{{"GET", "k"}, {"$1\r\nv\r\n"}},
		{{"get", "k"}, {"$1\r\nv\r\n"}},
		{{"GETT", "k"}, {"-ERR unknown command 'GETT', with args beginning with: 'k' \r\n"}},
		{{"gEt", "k"}, {"$1\r\nv\r\n"}},
		{{"GETDEL", "k"}, {"$1\r\nv\r\n"}},
		{{"GET", "k"}, {"$-1\r\n"}},
		{{"GET"}, {"-ERR wrong number of arguments for 'get' command\r\n"}},
		{{"PING"}, {"+PONG\r\n"}},
	}
	for _, st := range steps {
		if got := c.Do(st[0]...); got != st[1][0] {
			t.Errorf("%v: got %q, want %q", st[0], got, st[1][0])
		}
	}
}

// DEBUG DIGEST-VALUE of a sorted set equals the one redis-server 7.0.15 gave
// for the same ZADD (the differential suite testdata/compat/debug compares
// every type against a live redis-server).
func TestDigestValueKnown(t *testing.T) {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir()
	if err := cfg.Set("enable-debug-command", "yes"); err != nil {
		t.Fatal(err)
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr)
	if got := c.Do("DEBUG", "DIGEST"); got != "+"+strings.Repeat("0", 40)+"\r\n" {
		t.Fatalf("empty dataset: %q", got)
	}
	c.Do("ZADD", "z", "1", "a", "2.5", "b")
	if got := c.Do("DEBUG", "DIGEST-VALUE", "z"); got != "*1\r\n+c45c5b051acd64070e5ed1a949939d5145f806c5\r\n" {
		t.Fatalf("DEBUG DIGEST-VALUE z: %q", got)
	}
}
