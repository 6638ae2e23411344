package myredis

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tidwall/btree"
)

// The benchmarks run on the waiting room's shape: 1,000,000 members of 16
// bytes ("mem:000000123456", the form redis-benchmark's __rand_int__ makes)
// with random scores.
//
//	go test ./myredis -run '^$' -bench ZSet -benchmem
//
// The "tidwall" variants are the reference the tree was chosen against:
// github.com/tidwall/btree's BTreeG, whose rank must binary-search GetAt.

const benchMembers = 1_000_000

func benchMember(i int) string { return fmt.Sprintf("mem:%012d", i) }

// benchSet returns a set of n members with random scores, and the members.
func benchSet(n int) (*zset, []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := newZSet()
	members := make([]string, n)
	for i := range members {
		members[i] = benchMember(i)
		z.Add(members[i], float64(rng.IntN(1_000_000_000)))
	}
	return z, members
}

func tidwallSet(n int) (*btree.BTreeG[zItem], map[string]float64, []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	tr := btree.NewBTreeGOptions(zLess, btree.Options{NoLocks: true})
	scores := make(map[string]float64)
	members := make([]string, n)
	for i := range members {
		members[i] = benchMember(i)
		s := float64(rng.IntN(1_000_000_000))
		scores[members[i]] = s
		tr.Set(zItem{s, members[i]})
	}
	return tr, scores, members
}

// tidwallRank is the best rank BTreeG offers: a binary search over GetAt,
// O(log² n).
func tidwallRank(tr *btree.BTreeG[zItem], it zItem) int {
	lo, hi := 0, tr.Len()
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if v, _ := tr.GetAt(h); zLess(v, it) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// BenchmarkZSetRank is ZRANK of a random member of a 1M set.
func BenchmarkZSetRank(b *testing.B) {
	b.Run("tree", func(b *testing.B) {
		z, members := benchSet(benchMembers)
		rng := rand.New(rand.NewPCG(3, 4))
		b.ResetTimer()
		for range b.N {
			if _, ok := z.Rank(members[rng.IntN(len(members))], false); !ok {
				b.Fatal("member missing")
			}
		}
	})
	b.Run("tidwall", func(b *testing.B) {
		tr, scores, members := tidwallSet(benchMembers)
		rng := rand.New(rand.NewPCG(3, 4))
		b.ResetTimer()
		for range b.N {
			m := members[rng.IntN(len(members))]
			tidwallRank(tr, zItem{scores[m], m})
		}
	})
}

// BenchmarkZSetScore is ZSCORE of a random member of a 1M set.
func BenchmarkZSetScore(b *testing.B) {
	z, members := benchSet(benchMembers)
	rng := rand.New(rand.NewPCG(3, 4))
	b.ResetTimer()
	for range b.N {
		z.Score(members[rng.IntN(len(members))])
	}
}

// BenchmarkZSetAdd adds new members with random scores to a 1M set.
func BenchmarkZSetAdd(b *testing.B) {
	z, _ := benchSet(benchMembers)
	rng := rand.New(rand.NewPCG(5, 6))
	members := make([]string, b.N)
	for i := range members {
		members[i] = benchMember(benchMembers + i)
	}
	b.ResetTimer()
	for i := range b.N {
		z.Add(members[i], float64(rng.IntN(1_000_000_000)))
	}
}

// BenchmarkZSetPopMin pops the lowest member of a set of at least 1M.
func BenchmarkZSetPopMin(b *testing.B) {
	z, _ := benchSet(benchMembers + b.N)
	b.ResetTimer()
	for range b.N {
		z.PopMin(1)
	}
}

// BenchmarkZSetRange10 is ZRANGE z 0 9 WITHSCORES on a 1M set.
func BenchmarkZSetRange10(b *testing.B) {
	z, _ := benchSet(benchMembers)
	b.ResetTimer()
	for range b.N {
		n := 0
		z.Range(0, 10, false, func(zItem) bool { n++; return true })
	}
}

// BenchmarkZSetMemory reports the heap bytes a 1M-member set of 16-byte
// members holds, per member: B/member (map, tree and the member strings).
//
//	go test ./myredis -run '^$' -bench ZSetMemory -benchtime 1x
func BenchmarkZSetMemory(b *testing.B) {
	measure := func(b *testing.B, build func() any) {
		for range b.N {
			before := heapInUse()
			set := build()
			after := heapInUse()
			runtime.KeepAlive(set)
			b.ReportMetric(float64(after-before)/benchMembers, "B/member")
		}
	}
	b.Run("tree", func(b *testing.B) {
		measure(b, func() any { z, _ := benchSet(benchMembers); return z })
	})
	b.Run("tree-appended", func(b *testing.B) {
		// the queue's shape: scores (arrival times) only ever grow
		measure(b, func() any {
			z := newZSet()
			for i := range benchMembers {
				z.Add(benchMember(i), float64(i))
			}
			return z
		})
	})
	b.Run("tidwall", func(b *testing.B) {
		measure(b, func() any { tr, scores, _ := tidwallSet(benchMembers); return []any{tr, scores} })
	})
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
