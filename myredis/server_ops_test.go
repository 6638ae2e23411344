package myredis_test

import (
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// TestIdleTimeout: with timeout set, an idle client is closed once it has been
// idle longer than timeout seconds; a blocked client is not.
func TestIdleTimeout(t *testing.T) {
	c, clk, addr := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "timeout", "10")
	idle := redistest.Dial(t, addr)
	mustDo(t, idle, simple("PONG"), "PING")
	blocked := redistest.Dial(t, addr)
	if err := blocked.Write(redistest.Encode("BZPOPMIN", "q", "0")); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, c, "blocked_clients", "1")

	clk.Advance(10 * time.Second) // idle for exactly timeout: kept (Redis: longer than)
	mustDo(t, idle, simple("PONG"), "PING")
	clk.Advance(11 * time.Second)
	if reply, closed := idle.ReadAll(5 * time.Second); !closed || reply != "" {
		t.Fatalf("idle client: reply %q, closed %v; want it closed", reply, closed)
	}
	watcher := redistest.Dial(t, addr)
	waitInfo(t, watcher, "blocked_clients", "1")
	mustDo(t, watcher, num(1), "ZADD", "q", "1", "a")
	if got, err := blocked.Read(); err != nil || got != bulks("q", "a", "1") {
		t.Fatalf("blocked client: %q %v", got, err)
	}
	mustDo(t, watcher, ok, "CONFIG", "SET", "timeout", "0")
}
