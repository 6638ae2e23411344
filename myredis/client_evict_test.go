package myredis_test

import (
	"strconv"
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

// TestClientEvictedBeforeKeys: a request whose query buffer takes both the
// clients past maxmemory-clients and used_memory past maxmemory closes its
// client before any key is evicted, as Redis's processCommand runs
// evictClients before performEvictions. (Evicting keys first would have taken
// keys for memory that the client's eviction gives back anyway.)
func TestClientEvictedBeforeKeys(t *testing.T) {
	c, _, addr := start(t)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	for i := range 100 {
		mustDo(t, c, ok, "SET", "key:"+strconv.Itoa(i), strings.Repeat("v", 1000))
	}
	used := infoInt(t, c, "used_memory")
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used+64<<10, 10))
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-clients", "128kb")

	big := redistest.Dial(t, addr)
	sendCmds(t, big, []string{"SET", "big", strings.Repeat("x", 256<<10)})
	if data, closed := big.ReadAll(30 * time.Second); !closed || data != "" {
		t.Fatalf("the client past maxmemory-clients: got %q closed=%v, want no reply and a close", data, closed)
	}
	waitField(t, c, "stats", "evicted_clients", "1")
	if n := infoInt(t, c, "evicted_keys"); n != 0 {
		t.Fatalf("%d keys evicted before the client was", n)
	}
	mustDo(t, c, num(100), "DBSIZE")
}
