package myredis

import (
	"fmt"
	"testing"
)

// BenchmarkSetMemory reports the live heap per member of a set of 1M members of
// 20 bytes ("element:<12 digits>", redis-benchmark's names): entries, index and
// member strings. Redis 7.0.15 takes 72.5 bytes/member of used_memory for the same
// set (scripts/compare-redis.sh, section sets).
func BenchmarkSetMemory(b *testing.B) {
	const n = 1_000_000
	members := make([][]byte, n)
	for i := range members {
		members[i] = []byte(fmt.Sprintf("element:%012d", i))
	}
	for b.Loop() {
		before := heapInUse()
		s := newSet()
		for _, m := range members {
			s.add(m, setMaxIntsetEntries)
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/n, "bytes/member")
		if s.Len() != n {
			b.Fatal("wrong size")
		}
	}
}

// BenchmarkSetAdd is SADD's work on a set of 1M members: adding a member, half
// of them new, the other half present.
func BenchmarkSetAdd(b *testing.B) {
	s := newSet()
	members := make([][]byte, 2_000_000)
	for i := range members {
		members[i] = []byte(fmt.Sprintf("element:%012d", i))
	}
	for _, m := range members[:1_000_000] {
		s.add(m, setMaxIntsetEntries)
	}
	i := 0
	for b.Loop() {
		s.add(members[i%len(members)], setMaxIntsetEntries)
		i += 7
	}
}

// BenchmarkSetPop is SPOP's work: a random member out of a set of 1M members.
func BenchmarkSetPop(b *testing.B) {
	s := newSet()
	for i := range 1_000_000 {
		s.add([]byte(fmt.Sprintf("element:%012d", i)), setMaxIntsetEntries)
	}
	var buf []byte
	for b.Loop() {
		if s.Len() == 0 {
			b.StopTimer()
			for i := range 1_000_000 {
				s.add([]byte(fmt.Sprintf("element:%012d", i)), setMaxIntsetEntries)
			}
			b.StartTimer()
		}
		i := s.random()
		buf = s.appendAt(buf[:0], i)
		s.removeAt(i)
	}
}
