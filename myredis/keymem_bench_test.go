package myredis

// The Go heap each key shape costs: keys written through call() on the
// executor, then a collection; live heap bytes per key as a metric. It
// measures only (scripts/memkey compares RSS with a real Redis).
//
//	go test -run '^$' -bench KeyspaceMemory -benchtime 1x ./myredis/
//	go test -run '^$' -bench KeyspaceMemory/set -benchtime 1x -memprofile /tmp/mem.out ./myredis/
//	go tool pprof -sample_index=inuse_space -top myredis.test /tmp/mem.out

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
)

const keymemKeys = 1_000_000

func BenchmarkKeyspaceMemory(b *testing.B) {
	shapes := []struct {
		name string
		cmd  func(i int) []string
	}{
		{"set", func(i int) []string { return []string{"SET", "key:" + strconv.Itoa(i), "0123456789abcdef"} }},
		{"setpx", func(i int) []string {
			return []string{"SET", "key:" + strconv.Itoa(i), "0123456789abcdef", "PX", "3600000"}
		}},
		{"hash", func(i int) []string {
			return []string{"HSET", "key:" + strconv.Itoa(i), "u", "user-" + strconv.Itoa(i), "n", "9f86d081884c7d65",
				"a", "1764650000000", "e", "1764640000000"}
		}},
		{"zset", func(i int) []string {
			return []string{"ZADD", "key:" + strconv.Itoa(i), "1", "alpha", "2", "bravo", "3", "charlie", "4", "delta", "5", "echo"}
		}},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			for range b.N {
				b.ReportMetric(keyspaceHeapPerKey(b, sh.cmd), "heap-B/key")
			}
		})
	}
	b.Run("join", func(b *testing.B) {
		for range b.N {
			b.ReportMetric(joinHeapPerUser(b), "heap-B/user")
		}
	})
}

// joinHeapPerUser writes what an anonymous join of the waiting room leaves in
// the store (queue/scripts/waitroom.lua's ops.join: a member in the waiting
// and the expiry sorted sets, a ticket hash with u and j and a TTL) for
// keymemKeys/5 users, and returns the growth of the live heap per user.
func joinHeapPerUser(b *testing.B) float64 {
	s := New(Config{})
	defer s.Close()
	c := newClient(s, nil)
	c.authed = true
	before := liveHeap()
	users := keymemKeys / 5
	const batch = 10_000
	for i := 0; i < users; i += batch {
		s.submit(func() {
			var w Writer
			for j := i; j < i+batch; j++ {
				id := fmt.Sprintf("%024x", 0x5eed0000000000+j*7919)
				now := strconv.Itoa(1764650000000 + j)
				for _, cmd := range [][]string{
					{"ZADD", "wr:{sale}:waiting", strconv.Itoa(j + 1), id},
					{"ZADD", "wr:{sale}:expiry", now, id},
					{"HSET", "wr:{sale}:t:" + id, "u", "", "j", now},
					{"PEXPIRE", "wr:{sale}:t:" + id, "600000"},
				} {
					w.Reset()
					s.call(c, argv(cmd...), &w)
				}
			}
		})
	}
	if n := s.dbs[0].Size(); n != users+2 {
		b.Fatalf("%d keys, want %d", n, users+2)
	}
	per := float64(liveHeap()-before) / float64(users)
	runtime.KeepAlive(s)
	return per
}

// keyspaceHeapPerKey writes keymemKeys keys into a fresh server and returns
// the growth of the live heap per key.
func keyspaceHeapPerKey(b *testing.B, cmd func(i int) []string) float64 {
	s := New(Config{})
	defer s.Close()
	c := newClient(s, nil)
	c.authed = true
	before := liveHeap()
	const batch = 10_000
	for i := 0; i < keymemKeys; i += batch {
		s.submit(func() {
			var w Writer
			for j := i; j < i+batch; j++ {
				w.Reset()
				s.call(c, argv(cmd(j)...), &w)
			}
		})
	}
	if n := s.dbs[0].Size(); n != keymemKeys {
		b.Fatalf("%d keys, want %d", n, keymemKeys)
	}
	per := float64(liveHeap()-before) / keymemKeys
	runtime.KeepAlive(s)
	return per
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
