package myredis

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/redcon"
)

// startWorkersServer serves a MyRedis with the given worker count on a free
// loopback port and returns a client factory.
func startWorkersServer(t *testing.T, workers int) (*Server, func() *redis.Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Workers = workers
	s := New(cfg)
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	addr := ln.Addr().String()
	pc := redis.NewClient(&redis.Options{Addr: addr})
	defer pc.Close()
	if err := pc.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err) // also orders Serve's start before Close (they race otherwise)
	}
	return s, func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 2})
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// TestWorkersModeIsRaceFree drives every parallel command group from several
// clients at once on a server with 4 workers. Run under -race it proves the
// per-primitive lock guards all shared state; without -race it checks the
// server stays consistent (DBSIZE agrees with KEYS) and keeps answering.
func TestWorkersModeIsRaceFree(t *testing.T) {
	_, client := startWorkersServer(t, 4)
	ctx := context.Background()
	const clients, rounds = 6, 150
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for id := range clients {
		c := client()
		wg.Go(func() {
			for r := range rounds {
				k := "k" + strconv.Itoa(r%7)
				p := c.Pipeline()
				p.SetNX(ctx, "leader", id, time.Second)
				p.SetArgs(ctx, "lease", id, redis.SetArgs{Mode: "NX", TTL: 50 * time.Millisecond})
				p.Get(ctx, "leader")
				p.Incr(ctx, "n")
				p.Append(ctx, "log", "x")
				p.Set(ctx, k, r, 0)
				p.MSet(ctx, k+"a", 1, k+"b", 2)
				p.MGet(ctx, k, k+"a")
				p.Expire(ctx, k, time.Minute)
				p.TTL(ctx, k)
				p.PTTL(ctx, "lease")
				p.Exists(ctx, k, "leader")
				p.Type(ctx, k)
				p.Rename(ctx, k+"a", k+"c")
				p.GetDel(ctx, k+"b")
				p.Persist(ctx, k)
				p.Del(ctx, "leader")
				// sorted sets: the queue's commands on a shared key that comes and goes
				p.ZAdd(ctx, "waiting", redis.Z{Score: float64(r), Member: id*1000 + r})
				p.ZAdd(ctx, "active", redis.Z{Score: float64(r), Member: id})
				p.ZCard(ctx, "active")
				p.ZRank(ctx, "waiting", strconv.Itoa(id*1000+r))
				p.ZScore(ctx, "waiting", strconv.Itoa(id*1000+r))
				p.ZRange(ctx, "waiting", 0, 5)
				p.ZRangeByScore(ctx, "waiting", &redis.ZRangeBy{Min: "-inf", Max: "+inf", Count: 3})
				p.ZCount(ctx, "waiting", "-inf", "10")
				p.ZIncrBy(ctx, "active", 1, strconv.Itoa(id))
				p.ZPopMin(ctx, "waiting", 2)
				p.ZRem(ctx, "active", strconv.Itoa(id))
				p.ZRemRangeByScore(ctx, "waiting", "-inf", "3")
				if cmds, err := p.Exec(ctx); err != nil && err != redis.Nil && !isNoSuchKey(err) {
					var b strings.Builder
					for _, c := range cmds {
						fmt.Fprintf(&b, "\n  %v", c)
					}
					errs <- fmt.Errorf("client %d round %d: %w%s", id, r, err, b.String())
					return
				}
				if r%25 == 0 { // exclusive commands between the parallel ones
					tx := c.TxPipeline()
					tx.Incr(ctx, "tx")
					tx.Get(ctx, "tx")
					if _, err := tx.Exec(ctx); err != nil {
						errs <- err
						return
					}
					c.Info(ctx, "stats", "keyspace")
					c.Keys(ctx, "*")
					c.DBSize(ctx)
					// exclusive sorted-set commands, one reading the same set twice
					c.ZInter(ctx, &redis.ZStore{Keys: []string{"waiting", "waiting"}})
					c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"waiting", "active"}})
					c.ZRangeStore(ctx, "r", redis.ZRangeArgs{Key: "waiting", Start: 0, Stop: -1})
					c.ZScan(ctx, "waiting", 0, "*", 10)
					c.ZRandMember(ctx, "waiting", 2)
					if err := c.Eval(ctx, "redis.call('zadd', KEYS[1], 1, ARGV[1]) return redis.call('zcard', KEYS[1])",
						[]string{"scripted"}, id).Err(); err != nil {
						errs <- fmt.Errorf("EVAL in workers mode: %v", err)
						return
					}
					if err := c.BZPopMin(ctx, time.Second, "nothing-here").Err(); err != redis.Nil {
						errs <- fmt.Errorf("BZPOPMIN in workers mode: %v, want an immediate nil", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := client()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if int(n) < len(keys) { // DBSIZE also counts expired keys not yet reclaimed
		t.Fatalf("DBSIZE %d < KEYS %d: keyspace torn", n, len(keys))
	}
	if got, _ := c.Get(ctx, "log").Result(); len(got) == 0 || len(got) > clients*rounds {
		t.Fatalf("APPEND log has %d bytes, want 1..%d", len(got), clients*rounds)
	}
}

func isNoSuchKey(err error) bool { return err != nil && err.Error() == "ERR no such key" }

// TestSingleExecutorSetNXHasOneWinner is the control: with one executor, K
// contenders racing SET NX on a fresh key always produce exactly one winner.
func TestSingleExecutorSetNXHasOneWinner(t *testing.T) {
	_, client := startWorkersServer(t, 1)
	ctx := context.Background()
	const contenders, rounds = 8, 100
	cs := make([]*redis.Client, contenders)
	for i := range cs {
		cs[i] = client()
	}
	for r := range rounds {
		key := "leader:" + strconv.Itoa(r)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Go(func() {
				ok, err := c.SetNX(ctx, key, i, time.Second).Result()
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if w := wins.Load(); w != 1 {
			t.Fatalf("round %d: %d winners, want 1", r, w)
		}
	}
}

// TestWorkersSelectParallel checks which batches run side by side.
func TestWorkersSelectParallel(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Workers = 2
	s := New(cfg)
	defer s.Close()
	cases := []struct {
		cmds [][]string
		want bool
	}{
		{[][]string{{"SET", "a", "1", "NX", "PX", "10"}, {"GET", "a"}}, true},
		{[][]string{{"PING"}, {"INFO"}}, false},
		{[][]string{{"MULTI"}, {"SET", "a", "1"}, {"KEYS", "*"}}, true}, // queued only
		{[][]string{{"MULTI"}, {"SET", "a", "1"}, {"EXEC"}}, false},
		{[][]string{{"NOSUCHCOMMAND"}}, true},
		{[][]string{{"WATCH", "a"}}, false},
		{[][]string{{"ZADD", "q", "1", "a"}, {"ZPOPMIN", "q"}, {"ZCARD", "q"}}, true},
		{[][]string{{"ZUNIONSTORE", "d", "1", "q"}}, false},
		{[][]string{{"ZADD", "q", "1", "a"}, {"ZRANGE", "q", "0", "-1"}}, false},
		{[][]string{{"BZPOPMIN", "q", "0"}}, false},
	}
	for _, tc := range cases {
		c := newClient(s, nil)
		for _, args := range tc.cmds {
			var cmd redcon.Command
			for _, a := range args {
				cmd.Args = append(cmd.Args, []byte(a))
			}
			c.cmds = append(c.cmds, cmd)
		}
		if got := s.parallelBatch(c); got != tc.want {
			t.Errorf("%v: parallel = %v, want %v", tc.cmds, got, tc.want)
		}
	}
}
