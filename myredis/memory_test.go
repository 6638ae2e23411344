package myredis_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"waitroom/myredis/redistest"
)

// heapAfterGC is the live heap of this process (the server runs in it).
func heapAfterGC() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestStoredValueOwnsItsBytes: "MSET big <50 MB> small y; DEL big" frees the 50 MB;
// before, small's value pointed into the whole request and kept it alive.
func TestStoredValueOwnsItsBytes(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	const size = 50 << 20
	base := heapAfterGC()
	func() {
		c := redistest.Dial(t, addr)
		defer c.Close()
		big := strings.Repeat("x", size)
		if r := c.Do("MSET", "big", big, "small", "y"); r != ok {
			t.Fatalf("MSET: %.100q", r)
		}
		if r := c.Do("HSET", "h", "f", "v", "bigfield", big[:1<<20]); r != num(2) {
			t.Fatalf("HSET: %.100q", r)
		}
		mustDo(t, c, num(1), "HDEL", "h", "bigfield")
		mustDo(t, c, num(1), "DEL", "big")
	}()
	c := redistest.Dial(t, addr)
	mustDo(t, c, bulk("y"), "GET", "small")
	mustDo(t, c, bulk("v"), "HGET", "h", "f")
	if grown := heapAfterGC() - base; grown > 10<<20 {
		t.Fatalf("heap grew by %d MB after DEL big: a kept value holds its request", grown>>20)
	}
}

// TestReplyBuffersShrink: clients that each read a big value do not keep a copy
// of it in their reply buffers afterwards.
func TestReplyBuffersShrink(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	const size, clients = 16 << 20, 4
	setter := redistest.Dial(t, addr)
	if r := setter.Do("SET", "big", strings.Repeat("x", size)); r != ok {
		t.Fatalf("SET: %.100q", r)
	}
	setter.Close()
	conns := make([]*redistest.Conn, clients)
	for i := range conns {
		conns[i] = redistest.Dial(t, addr)
	}
	base := heapAfterGC()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := c.Do("GET", "big"); len(r) != size+len("$16777216\r\n\r\n") {
				t.Errorf("GET big: %d bytes", len(r))
			}
		}()
	}
	wg.Wait()
	for _, c := range conns { // still connected, idle
		mustDo(t, c, simple("PONG"), "PING")
	}
	if grown := heapAfterGC() - base; grown > 8<<20 {
		t.Fatalf("heap grew by %d MB with %d idle clients that read a %d MB value", grown>>20, clients, size>>20)
	}
}
