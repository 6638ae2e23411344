package myredis

// Benchmarks of the bit and HyperLogLog commands through call() on the
// executor goroutine (see executor_bench_test.go). They measure only.
//
//	go test -run '^$' -bench 'Setbit|Bitcount|Pf' -benchmem ./myredis/

import (
	"strconv"
	"testing"
)

// benchCycle runs the commands of cmds in turn, b.N in all.
func benchCycle(b *testing.B, s *Server, cmds [][][]byte) {
	c := newClient(s, nil)
	c.authed = true
	var w Writer
	b.ReportAllocs()
	b.ResetTimer()
	s.submit(func() {
		for i := range b.N {
			w.Reset()
			s.call(c, cmds[i%len(cmds)], &w)
		}
	})
}

// BenchmarkCallSetbit sets bits all over a 1 MB bitmap (changed in place).
func BenchmarkCallSetbit(b *testing.B) {
	s := benchServer(b)
	s.Do("SETBIT", "bm", strconv.Itoa(8<<20-1), "1")
	cmds := make([][][]byte, 1024)
	for i := range cmds {
		cmds[i] = argv("SETBIT", "bm", strconv.Itoa((i*7919*8191)%(8<<20)), strconv.Itoa(i&1))
	}
	benchCycle(b, s, cmds)
}

// BenchmarkCallBitcount counts the bits of a 1 MB string (b.SetBytes: MB/s).
func BenchmarkCallBitcount(b *testing.B) {
	s := benchServer(b)
	s.Do("SETBIT", "bm", strconv.Itoa(8<<20-1), "1")
	b.SetBytes(1 << 20)
	benchCall(b, s, argv("BITCOUNT", "bm"), ":1\r\n")
}

// BenchmarkCallBitcountRange counts a 100-byte range, as rate limiters do.
func BenchmarkCallBitcountRange(b *testing.B) {
	s := benchServer(b)
	s.Do("SETBIT", "bm", strconv.Itoa(8<<20-1), "1")
	benchCall(b, s, argv("BITCOUNT", "bm", "1000", "1099"), ":0\r\n")
}

func pfaddCmds(n int) [][][]byte {
	cmds := make([][][]byte, n)
	for i := range cmds {
		cmds[i] = argv("PFADD", "h", "user:"+strconv.Itoa(i))
	}
	return cmds
}

// BenchmarkCallPfaddSparse adds to an HLL that stays sparse (about 200
// elements, under hll-sparse-max-bytes).
func BenchmarkCallPfaddSparse(b *testing.B) {
	s := benchServer(b)
	cmds := pfaddCmds(200)
	benchCycle(b, s, cmds)
	b.StopTimer()
	if enc := string(s.Do("PFDEBUG", "ENCODING", "h")); enc != "+sparse\r\n" {
		b.Fatalf("encoding %q", enc)
	}
}

// BenchmarkCallPfaddDense adds to a dense HLL.
func BenchmarkCallPfaddDense(b *testing.B) {
	s := benchServer(b)
	s.Do("PFADD", "h", "x")
	s.Do("PFDEBUG", "TODENSE", "h")
	benchCycle(b, s, pfaddCmds(100000))
}

// BenchmarkCallPfcountDense recomputes a dense HLL's cardinality each time:
// a SETRANGE in between marks the cache stale, so half the calls are SETRANGEs.
func BenchmarkCallPfcountDense(b *testing.B) {
	s := benchServer(b)
	for i := range 20000 {
		s.Do("PFADD", "h", "e"+strconv.Itoa(i))
	}
	benchCycle(b, s, [][][]byte{argv("SETRANGE", "h", "15", "\x80"), argv("PFCOUNT", "h")})
}

// BenchmarkCallPfcountUnion merges three HLLs (two dense, one sparse) per call.
func BenchmarkCallPfcountUnion(b *testing.B) {
	s := benchServer(b)
	for i := range 20000 {
		s.Do("PFADD", "a", "a"+strconv.Itoa(i))
		s.Do("PFADD", "b", "b"+strconv.Itoa(i))
	}
	for i := range 100 {
		s.Do("PFADD", "c", "c"+strconv.Itoa(i))
	}
	benchCall(b, s, argv("PFCOUNT", "a", "b", "c"), "")
}

// BenchmarkCallBitop XORs two 1 MB strings into a third (b.SetBytes: MB/s of
// each input).
func BenchmarkCallBitop(b *testing.B) {
	s := benchServer(b)
	s.Do("SETBIT", "a", strconv.Itoa(8<<20-1), "1")
	s.Do("SETBIT", "b", strconv.Itoa(8<<20-2), "1")
	b.SetBytes(1 << 20)
	benchCall(b, s, argv("BITOP", "XOR", "d", "a", "b"), ":1048576\r\n")
}
