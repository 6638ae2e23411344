package myredis

import (
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks of the list type and its commands. They measure, they assert nothing
// about time.
//
//	go test -run '^$' -bench List -benchmem ./myredis/

func BenchmarkCallLpush(b *testing.B) {
	benchCall(b, benchServer(b), argv("LPUSH", "l", "xxx"), "")
}

func BenchmarkCallRpush(b *testing.B) {
	benchCall(b, benchServer(b), argv("RPUSH", "l", "xxx"), "")
}

// BenchmarkCallLpopRpush pops and pushes so the list keeps its length.
func BenchmarkCallLpopRpush(b *testing.B) {
	s := benchServer(b)
	s.Do("RPUSH", "l", "a", "b", "c")
	benchCall(b, s, argv("RPOPLPUSH", "l", "l"), "")
}

func BenchmarkCallLrange100(b *testing.B) {
	s := benchServer(b)
	for range 600 {
		s.Do("RPUSH", "l", "xxx")
	}
	benchCall(b, s, argv("LRANGE", "l", "0", "99"), "")
}

func BenchmarkCallLindexMiddle(b *testing.B) {
	s := benchServer(b)
	for i := 0; i < 100000; i += 1000 {
		args := []string{"RPUSH", "l"}
		for j := range 1000 {
			args = append(args, fmt.Sprint(i+j))
		}
		s.Do(args...)
	}
	benchCall(b, s, argv("LINDEX", "l", "50000"), "")
}

// BenchmarkListMemory reports the live heap a list of a million elements takes
// per element (after a GC), the figure to set beside Redis's used_memory per
// element for the same list (Redis 7.0.15: 18.3 bytes for 16-byte elements).
func BenchmarkListMemory(b *testing.B) {
	for _, size := range []int{3, 16, 100} {
		b.Run(fmt.Sprintf("elem=%dB", size), func(b *testing.B) {
			elems := make([][]byte, 1000000)
			for i := range elems {
				elems[i] = fmt.Appendf(nil, "%0*d", size, i)
			}
			var perElem float64
			for range b.N {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				l := newList(-2)
				for _, e := range elems {
					l.PushBack(e)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				perElem = (float64(m1.HeapAlloc) - float64(m0.HeapAlloc)) / float64(len(elems))
				runtime.KeepAlive(l)
			}
			b.ReportMetric(perElem, "bytes/element")
		})
	}
}
