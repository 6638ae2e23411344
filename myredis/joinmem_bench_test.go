package myredis

// What the waiting room's join costs the Go heap when it runs as the queue runs
// it: EVALSHA of queue/scripts/waitroom.lua's join through call() on the
// executor, not the commands it leaves behind (KeyspaceMemory/join writes
// those directly). Besides the live heap per user it reports the span room
// left empty after a collection (HeapInuse - HeapAlloc: fragmentation, which
// RSS pays and the live heap does not) and, with -v, the allocations per join
// and the objects kept per user by size class.
//
//	go test -run '^$' -bench JoinScriptMemory -benchtime 1x -v ./myredis/
//	go test -run '^$' -bench JoinScriptMemory -benchtime 1x -memprofile /tmp/join.out ./myredis/
//	go tool pprof -sample_index=alloc_space -top myredis.test /tmp/join.out

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func BenchmarkJoinScriptMemory(b *testing.B) {
	src, err := os.ReadFile("../queue/scripts/waitroom.lua")
	if err != nil {
		b.Skip("no waitroom.lua:", err)
	}
	for range b.N {
		r := joinScriptHeap(b, string(src), keymemKeys/5)
		b.ReportMetric(r.live, "heap-B/user")
		b.ReportMetric(r.unused, "unused-B/user")
		b.ReportMetric(r.allocBytes, "alloc-B/join")
		b.ReportMetric(r.allocs, "allocs/join")
	}
}

type joinHeap struct {
	live, unused, allocBytes, allocs float64
}

// joinScriptHeap runs users anonymous joins through EVALSHA in a fresh server
// and returns the heap figures per user.
func joinScriptHeap(b *testing.B, src string, users int) joinHeap {
	s := New(Config{})
	defer s.Close()
	c := newClient(s, nil)
	c.authed = true
	var sha string
	s.submit(func() {
		var w Writer
		s.call(c, argv("SCRIPT", "LOAD", src), &w)
		sha = strings.TrimSpace(strings.TrimPrefix(string(w.Bytes()), "$40\r\n"))
	})
	if len(sha) != 40 {
		b.Fatalf("SCRIPT LOAD: %q", sha)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m0)
	const batch = 1000
	for i := 0; i < users; i += batch {
		s.submit(func() {
			var w Writer
			for j := i; j < min(i+batch, users); j++ {
				id := fmt.Sprintf("%024x", uint64(j+1)*0x9E3779B97F4A7C15) // random order, as the queue's ids
				w.Reset()
				s.call(c, argv("EVALSHA", sha, "7", "wr:{sale}:settings", "wr:{sale}:waiting", "wr:{sale}:active",
					"wr:{sale}:expiry", "wr:{sale}:seq", "wr:{sale}:admitted", "wr:{sale}:rate",
					"wr:{sale}:", "100", "300000", "300000", "1800000", "join", id, ""), &w)
				if j == 0 && w.Bytes()[0] != '*' {
					b.Fatalf("join: %q", w.Bytes())
				}
			}
		})
	}
	runtime.ReadMemStats(&m1)
	allocBytes, allocs := m1.TotalAlloc-m0.TotalAlloc, m1.Mallocs-m0.Mallocs
	var mg runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&mg)
	if n := s.dbs[0].Size(); n != users+4 { // settings, waiting, expiry, seq
		b.Fatalf("%d keys, want %d", n, users+4)
	}
	u := float64(users)
	r := joinHeap{
		live:       float64(int64(mg.HeapAlloc)-int64(m0.HeapAlloc)) / u,
		unused:     float64(int64(mg.HeapInuse-mg.HeapAlloc)-int64(m0.HeapInuse-m0.HeapAlloc)) / u,
		allocBytes: float64(allocBytes) / u,
		allocs:     float64(allocs) / u,
	}
	if testing.Verbose() {
		var sb strings.Builder
		sb.WriteString("size class: allocs per join, objects kept per user\n")
		for k := range m1.BySize {
			a := float64(m1.BySize[k].Mallocs-m0.BySize[k].Mallocs) / u
			kept := (float64(mg.BySize[k].Mallocs-mg.BySize[k].Frees) - float64(m0.BySize[k].Mallocs-m0.BySize[k].Frees)) / u
			if a >= 0.01 || kept >= 0.01 {
				sb.WriteString(strconv.Itoa(int(m1.BySize[k].Size)) + ": " + strconv.FormatFloat(a, 'f', 2, 64) +
					" " + strconv.FormatFloat(kept, 'f', 2, 64) + "\n")
			}
		}
		b.Log(sb.String())
	}
	runtime.KeepAlive(s)
	return r
}
