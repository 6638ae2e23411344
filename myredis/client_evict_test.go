package myredis_test

import (
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// TestClientEviction: with maxmemory-clients set, the client whose memory
// (here the arguments queued in its MULTI) takes the total past the limit is
// closed; one that said CLIENT NO-EVICT ON is not, even when it holds most of
// the memory, and its transaction still runs. evicted_clients counts.
func TestClientEviction(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-clients", "128kb")
	kept := redistest.Dial(t, addr)
	mustDo(t, kept, ok, "CLIENT", "NO-EVICT", "ON")
	mustDo(t, kept, ok, "MULTI")
	mustDo(t, kept, queued, "SET", "k1", strings.Repeat("x", 50<<10))
	mustDo(t, kept, queued, "SET", "k2", strings.Repeat("x", 50<<10))
	if list := c.Do("CLIENT", "LIST"); !strings.Contains(list, "flags=xe ") {
		t.Fatalf("no client with flags xe (MULTI, no-evict):\n%s", list)
	}

	evicted := redistest.Dial(t, addr)
	mustDo(t, evicted, ok, "MULTI")
	sendCmds(t, evicted, []string{"SET", "a", strings.Repeat("y", 40<<10)})
	if _, closed := evicted.ReadAll(30 * time.Second); !closed {
		t.Fatal("the client that passed maxmemory-clients was not closed")
	}
	waitField(t, c, "stats", "evicted_clients", "1")
	mustDo(t, kept, array(ok, ok), "EXEC")
	mustDo(t, c, num(2), "DBSIZE")
}

// TestClientEvictionOff: with maxmemory-clients 0 (the default) nobody is
// evicted, whatever clients hold.
func TestClientEvictionOff(t *testing.T) {
	c, _, addr := start(t)
	big := redistest.Dial(t, addr)
	mustDo(t, big, ok, "MULTI")
	for range 4 {
		mustDo(t, big, queued, "SET", "k", strings.Repeat("x", 100<<10))
	}
	mustDo(t, big, array(ok, ok, ok, ok), "EXEC")
	waitField(t, c, "stats", "evicted_clients", "0")
}
