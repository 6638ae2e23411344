package myredis

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// checkAccounting verifies, on the executor, that every entry's size is what
// measuring it afresh gives, that DB.used and Server.dataUsed are their sums,
// and that each type's payload counter matches its contents.
func checkAccounting(t *testing.T, s *Server) {
	t.Helper()
	s.submit(func() {
		var total int64
		for _, db := range s.dbs {
			var sum int64
			db.each(func(key string, e *entry) {
				want := keyMem(len(key), e.hasTTL()) + s.valueMem(e.value())
				if int64(e.size) != want {
					t.Errorf("key %q (%T): size %d, measured afresh %d", key, e.value(), e.size, want)
				}
				sum += int64(e.size)
				checkPayload(t, key, e.value())
			})
			if db.used != sum {
				t.Errorf("db %d: used %d, entries sum to %d", db.id, db.used, sum)
			}
			total += sum
		}
		if s.dataUsed != total {
			t.Errorf("dataUsed %d, databases sum to %d", s.dataUsed, total)
		}
	})
}

// checkPayload compares a type's byte counter with its contents.
func checkPayload(t *testing.T, key string, val any) {
	var want, got int64
	switch v := val.(type) {
	case *hashValue:
		if v.table() == nil {
			return
		}
		v.Range(func(f string, b []byte) bool { want += int64(len(f) + len(b)); return true })
		got = v.table().bytes
	case *setValue:
		if !v.hash {
			return
		}
		for _, m := range v.members() {
			want += int64(len(m))
		}
		got = v.bytes
	case *list:
		v.Range(0, v.Len(), func(b []byte) bool { want += int64(entrySize(len(b))); return true })
		got = int64(v.bytes)
	case *zset:
		if v.view().packed() {
			return
		}
		v.Range(0, v.Len(), false, func(it zItem) bool { want += int64(len(it.member)); return true })
		got = v.view().x.bytes
	default:
		return
	}
	if got != want {
		t.Errorf("key %q (%T): payload counter %d, contents %d", key, val, got, want)
	}
}

// TestAccountingFollowsEveryChange runs random commands of every type, in and
// out of MULTI and scripts, and checks the sizes after each round.
func TestAccountingFollowsEveryChange(t *testing.T) {
	s := New(Config{Dir: t.TempDir()})
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	val := func() string { return strings.Repeat("v", r.IntN(3)*r.IntN(100)) + strconv.Itoa(r.IntN(50)) }
	key := func() string { return "k" + strconv.Itoa(r.IntN(12)) }
	cmds := []func() []string{
		func() []string { return []string{"SET", key(), val()} },
		func() []string { return []string{"SET", key(), val(), "EX", "100"} },
		func() []string { return []string{"APPEND", key(), val()} },
		func() []string { return []string{"SETRANGE", key(), strconv.Itoa(r.IntN(200)), val()} },
		func() []string { return []string{"INCR", key()} },
		func() []string { return []string{"EXPIRE", key(), "100"} },
		func() []string { return []string{"PERSIST", key()} },
		func() []string { return []string{"DEL", key()} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"COPY", key(), key()} },
		func() []string { return []string{"MOVE", key(), "1"} },
		func() []string { return []string{"HSET", key(), val(), val(), val(), val()} },
		func() []string { return []string{"HDEL", key(), val()} },
		func() []string { return []string{"HINCRBY", key(), val(), "3"} },
		func() []string { return []string{"SADD", key(), val(), strconv.Itoa(r.IntN(1000)), val()} },
		func() []string { return []string{"SREM", key(), val(), strconv.Itoa(r.IntN(1000))} },
		func() []string { return []string{"SPOP", key()} },
		func() []string { return []string{"SINTERSTORE", key(), key(), key()} },
		func() []string { return []string{"LPUSH", key(), val(), val()} },
		func() []string { return []string{"RPUSH", key(), val()} },
		func() []string { return []string{"LPOP", key()} },
		func() []string { return []string{"LSET", key(), "0", val()} },
		func() []string { return []string{"LINSERT", key(), "BEFORE", val(), val()} },
		func() []string { return []string{"LREM", key(), "0", val()} },
		func() []string { return []string{"LTRIM", key(), "1", "-2"} },
		func() []string { return []string{"LMOVE", key(), key(), "LEFT", "RIGHT"} },
		func() []string { return []string{"ZADD", key(), strconv.Itoa(r.IntN(9)), val(), "1", val()} },
		func() []string { return []string{"ZREM", key(), val()} },
		func() []string { return []string{"ZPOPMIN", key()} },
		func() []string { return []string{"ZREMRANGEBYRANK", key(), "0", "1"} },
		func() []string { return []string{"ZUNIONSTORE", key(), "2", key(), key()} },
		func() []string { return []string{"PFADD", key(), val(), val()} },
		func() []string {
			return []string{"EVAL", "redis.call('hset', KEYS[1], 'f', ARGV[1]) return 1", "1", key(), val()}
		},
		func() []string { return []string{"FLUSHDB"} },
	}
	for round := 0; round < 60; round++ {
		for range 50 {
			args := cmds[r.IntN(len(cmds))]()
			if args[0] == "FLUSHDB" && r.IntN(10) != 0 {
				continue
			}
			if r.IntN(8) == 0 {
				s.Do("MULTI")
				s.Do(args...)
				s.Do(cmds[r.IntN(len(cmds))]()...)
				s.Do("EXEC")
				continue
			}
			s.Do(args...)
		}
		if r.IntN(4) == 0 {
			s.Do("SWAPDB", "0", "1")
		}
		checkAccounting(t, s)
		if t.Failed() {
			t.Fatalf("after round %d", round)
		}
	}
}

// TestJemallocSize: the size classes Redis's allocator serves.
func TestJemallocSize(t *testing.T) {
	for _, c := range [][2]int64{{1, 8}, {8, 8}, {9, 16}, {24, 32}, {128, 128}, {129, 160}, {256, 256},
		{257, 320}, {1000, 1024}, {1025, 1280}, {100_000, 114_688}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<18}} {
		if got := jemallocSize(c[0]); got != c[1] {
			t.Errorf("jemallocSize(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}
