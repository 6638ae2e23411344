package myredis_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

func TestTransactions(t *testing.T) {
	execAbort := errRe("EXECABORT Transaction discarded because of previous errors.")
	runGroup(t, []groupCase{
		{"multi exec", []step{
			do(ok, "MULTI"),
			do(queued, "SET", "a", "1"),
			do(queued, "INCR", "a"),
			do(queued, "GET", "a"),
			do(array(ok, num(2), bulk("2")), "EXEC"),
			do(ok, "MULTI"),
			do(empty, "EXEC"),
		}},
		{"errors outside multi", []step{
			do(errRe("ERR EXEC without MULTI"), "EXEC"),
			do(errRe("ERR DISCARD without MULTI"), "DISCARD"),
			do(ok, "MULTI"),
			do(errRe("ERR MULTI calls can not be nested"), "MULTI"),
			do(errRe("ERR WATCH inside MULTI is not allowed"), "WATCH", "k"),
			do(ok, "DISCARD"),
		}},
		{"queueing errors abort", []step{
			do(ok, "MULTI"),
			do(queued, "SET", "a", "1"),
			do(errRe("ERR unknown command 'NOSUCH', with args beginning with: "), "NOSUCH"),
			do(arity("get"), "GET"),
			do(arity("client|id"), "CLIENT", "ID", "x"),
			do(execAbort, "EXEC"),
			do(null, "GET", "a"),
		}},
		{"refused exec says why", []step{
			do(ok, "MULTI"),
			do(queued, "SET", "a", "1"),
			do(errRe("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command"), "EXEC", "x"),
			do(errRe("ERR EXEC without MULTI"), "EXEC"), // the transaction is gone
			do(null, "GET", "a"),
		}},
		{"runtime errors do not abort", []step{
			do(ok, "SET", "s", "text"),
			do(ok, "MULTI"),
			do(queued, "INCR", "s"),
			do(queued, "SET", "a", "1"),
			do(array(notInt, ok), "EXEC"),
			do(bulk("1"), "GET", "a"),
		}},
		{"discard", []step{
			do(ok, "MULTI"),
			do(queued, "SET", "a", "1"),
			do(ok, "DISCARD"),
			do(null, "GET", "a"),
		}},
		{"select inside exec", []step{
			do(ok, "MULTI"),
			do(queued, "SELECT", "1"),
			do(queued, "SET", "a", "1"),
			do(array(ok, ok), "EXEC"),
			do(bulk("1"), "GET", "a"), // the SELECT stays
		}},
	})
}

func TestWatch(t *testing.T) {
	c, clk, addr := start(t)
	other := redistest.Dial(t, addr)

	// A write by another client fails the EXEC.
	mustDo(t, c, ok, "SET", "k", "1")
	mustDo(t, c, ok, "WATCH", "k")
	mustDo(t, other, ok, "SET", "k", "2")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "SET", "k", "3")
	mustDo(t, c, nullArr, "EXEC")
	mustDo(t, c, bulk("2"), "GET", "k")

	// Untouched: EXEC runs; the WATCH ended with it.
	mustDo(t, c, ok, "WATCH", "k")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "SET", "k", "3")
	mustDo(t, c, array(ok), "EXEC")
	mustDo(t, other, ok, "SET", "k", "4")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "GET", "k")
	mustDo(t, c, array(bulk("4")), "EXEC")

	// UNWATCH forgets; a missing key created meanwhile counts as a change; a
	// DEL of a key that does not exist does not.
	mustDo(t, c, ok, "WATCH", "k")
	mustDo(t, other, ok, "SET", "k", "5")
	mustDo(t, c, ok, "UNWATCH")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, array(), "EXEC")
	mustDo(t, c, ok, "WATCH", "new")
	mustDo(t, other, ok, "SET", "new", "x")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, nullArr, "EXEC")
	mustDo(t, c, ok, "WATCH", "ghost")
	mustDo(t, other, num(0), "DEL", "ghost")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, array(), "EXEC")

	// A watched key that expires fails the EXEC, with no other client involved.
	mustDo(t, c, ok, "SET", "t", "v", "PX", "500")
	mustDo(t, c, ok, "WATCH", "t")
	clk.Advance(time.Second)
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, queued, "GET", "t")
	mustDo(t, c, nullArr, "EXEC")

	// FLUSHALL touches every watched key; a queueing error drops the WATCH too.
	mustDo(t, c, ok, "SET", "f", "1")
	mustDo(t, c, ok, "WATCH", "f")
	mustDo(t, other, ok, "FLUSHALL")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, nullArr, "EXEC")
	mustDo(t, c, ok, "WATCH", "g")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, arity("get"), "GET")
	mustDo(t, c, errRe("EXECABORT Transaction discarded because of previous errors."), "EXEC")
	mustDo(t, other, ok, "SET", "g", "1")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, array(), "EXEC")
}

// TestExecIsAtomic: while EXEC runs, no other client's command interleaves.
func TestExecIsAtomic(t *testing.T) {
	c, _, addr := start(t)
	other := redistest.Dial(t, addr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 300; i++ {
			if r := other.Do("INCRBY", "n", "1000"); r[0] != ':' {
				t.Errorf("INCRBY: %q", r)
				return
			}
		}
	}()
	for round := 0; round < 100; round++ {
		mustDo(t, c, ok, "MULTI")
		for i := 0; i < 5; i++ {
			mustDo(t, c, queued, "INCR", "n")
		}
		reply := c.Do("EXEC")
		// five INCRs in a row: the five values are consecutive
		var vals []int64
		rest := reply[len("*5\r\n"):]
		for len(rest) > 0 {
			var v int64
			n := 0
			for rest[1+n] != '\r' {
				v = v*10 + int64(rest[1+n]-'0')
				n++
			}
			vals = append(vals, v)
			rest = rest[n+3:]
		}
		for i := 1; i < len(vals); i++ {
			if vals[i] != vals[0]+int64(i) {
				t.Fatalf("EXEC interleaved with another client: %v", vals)
			}
		}
	}
	<-done
}

// TestTransactionsAndScripts: refusals that leave the transaction open, scripts
// queued in MULTI, and a script's write breaking a WATCH.
func TestTransactionsAndScripts(t *testing.T) {
	runGroup(t, []groupCase{
		{"refused MULTI and WATCH do not abort", []step{
			do(ok, "MULTI"),
			do(errRe("ERR MULTI calls can not be nested"), "MULTI"),
			do(errRe("ERR WATCH inside MULTI is not allowed"), "WATCH", "k"),
			do(queued, "SET", "a", "1"),
			do(array(ok), "EXEC"),
		}},
		{"scripts inside EXEC", []step{
			do(ok, "MULTI"),
			do(queued, "EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
			do(queued, "EVAL", "return redis.call('nosuch')", "0"),
			do(queued, "SCRIPT", "LOAD", "return 1"),
			do(array(num(1),
				scriptError("return redis.call('nosuch')", "ERR Unknown Redis command called from script", 1),
				bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db")), "EXEC"),
		}},
	})
	c, _, addr := start(t)
	other := redistest.Dial(t, addr)
	mustDo(t, c, ok, "WATCH", "k")
	mustDo(t, other, ok, "EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, nullArr, "EXEC")
	mustDo(t, c, ok, "WATCH", "k")
	mustDo(t, other, bulk("x"), "EVAL", "return redis.call('get', KEYS[1])", "1", "k")
	mustDo(t, c, ok, "MULTI")
	mustDo(t, c, array(), "EXEC")
}

// TestGoRedisWatchIncrementers: 20 clients increment one counter with
// WATCH/GET/MULTI/SET/EXEC and retry when EXEC fails; no increment is lost.
func TestGoRedisWatchIncrementers(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 20})
	defer rdb.Close()

	const clients, each = 20, 50
	increment := func(key string) (retries int, err error) {
		txf := func(tx *redis.Tx) error {
			n, err := tx.Get(ctx, key).Int()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, key, strconv.Itoa(n+1), 0)
				return nil
			})
			return err
		}
		for {
			err := rdb.Watch(ctx, txf, key)
			if !errors.Is(err, redis.TxFailedErr) {
				return retries, err
			}
			retries++
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	totalRetries := 0
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				r, err := increment("counter")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				totalRetries += r
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	n, err := rdb.Get(ctx, "counter").Int()
	require.NoError(t, err)
	assert.Equal(t, clients*each, n)
	t.Logf("%d increments, %d EXECs failed and were retried", clients*each, totalRetries)
}

// TestGoRedisTxPipelinedErrors: a runtime error inside EXEC is reported on its
// command; the other commands ran.
func TestGoRedisTxPipelinedErrors(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	require.NoError(t, rdb.Set(ctx, "s", "text", 0).Err())
	var incr *redis.IntCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "s")
		incr = p.Incr(ctx, "n")
		return nil
	})
	assert.EqualError(t, err, "ERR value is not an integer or out of range")
	assert.Equal(t, int64(1), incr.Val())
}
