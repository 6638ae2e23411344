package myredis

// Per-command cost on small hashes and sorted sets, the packed forms (hash.go,
// zset_pack.go): each operation walks and rebuilds a pack of at most 128
// entries, as Redis's listpack. A 4-field ticket hash and sorted sets of 5 and
// 128 members. They measure, they assert nothing about time.
//
//	go test -run '^$' -bench CallSmall -benchmem ./myredis/

import (
	"strconv"
	"testing"
)

func BenchmarkCallSmallHash(b *testing.B) {
	setup := func(s *Server) {
		s.Do("HSET", "t:1", "u", "user-1", "n", "9f86d081884c7d65", "a", "1764650000000", "e", "1764640000000")
	}
	b.Run("HGET", func(b *testing.B) {
		s := benchServer(b)
		setup(s)
		benchCall(b, s, argv("HGET", "t:1", "e"), "$13\r\n1764640000000\r\n")
	})
	b.Run("HSET-existing", func(b *testing.B) {
		s := benchServer(b)
		setup(s)
		benchCall(b, s, argv("HSET", "t:1", "a", "1764650000001"), ":0\r\n")
	})
}

func BenchmarkCallSmallZSet(b *testing.B) {
	for _, n := range []int{5, 128} {
		setup := func(s *Server) {
			for i := range n {
				s.Do("ZADD", "z", strconv.Itoa(i), "member:"+strconv.Itoa(i))
			}
		}
		last := "member:" + strconv.Itoa(n-1)
		b.Run("ZSCORE/"+strconv.Itoa(n), func(b *testing.B) {
			s := benchServer(b)
			setup(s)
			benchCall(b, s, argv("ZSCORE", "z", last), "")
		})
		b.Run("ZADD-rescore/"+strconv.Itoa(n), func(b *testing.B) {
			s := benchServer(b)
			setup(s)
			benchCall(b, s, argv("ZADD", "z", "INCR", "1", last), "")
		})
	}
}
