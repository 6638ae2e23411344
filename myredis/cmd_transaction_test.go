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

	"waitroom/myredis"
)

// Every expected reply below was checked byte for byte against redis-server 7.0.15.

// txStep is one command of a transaction sequence, sent on connection conn (0 or 1).
type txStep struct {
	conn int
	cmd  []string
	want string
}

func runTxSteps(t *testing.T, addr string, steps []txStep) {
	t.Helper()
	conns := []*respConn{dialRESP(t, addr), dialRESP(t, addr)}
	conns[0].do("FLUSHALL")
	for i, st := range steps {
		assert.Equal(t, st.want, conns[st.conn].do(st.cmd...), "step %d: %q", i, st.cmd)
	}
}

func step(cmd ...string) []string { return cmd }

func TestTransactionReplies(t *testing.T) {
	_, addr := serveMyRedis(t, myredis.Config{})
	const queued, ok = "+QUEUED\r\n", "+OK\r\n"
	tests := []struct {
		name  string
		steps []txStep
	}{
		{"queue and exec", []txStep{
			{0, step("MULTI"), ok},
			{0, step("SET", "a", "1"), queued},
			{0, step("INCR", "a"), queued},
			{0, step("GET", "a"), queued},
			{0, step("EXEC"), "*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n"},
		}},
		{"empty", []txStep{
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*0\r\n"},
		}},
		{"nested multi is refused but does not abort", []txStep{
			{0, step("MULTI"), ok},
			{0, step("MULTI"), "-ERR MULTI calls can not be nested\r\n"},
			{0, step("SET", "a", "1"), queued},
			{0, step("EXEC"), "*1\r\n+OK\r\n"},
		}},
		{"watch inside multi is refused but does not abort", []txStep{
			{0, step("MULTI"), ok},
			{0, step("WATCH", "a"), "-ERR WATCH inside MULTI is not allowed\r\n"},
			{0, step("SET", "a", "2"), queued},
			{0, step("EXEC"), "*1\r\n+OK\r\n"},
		}},
		{"exec and discard without multi", []txStep{
			{0, step("EXEC"), "-ERR EXEC without MULTI\r\n"},
			{0, step("DISCARD"), "-ERR DISCARD without MULTI\r\n"},
		}},
		{"queueing errors abort", []txStep{
			{0, step("MULTI"), ok},
			{0, step("SET", "a", "1"), queued},
			{0, step("FOO"), "-ERR unknown command 'FOO', with args beginning with: \r\n"},
			{0, step("SET", "a"), "-ERR wrong number of arguments for 'set' command\r\n"},
			{0, step("WATCH"), "-ERR wrong number of arguments for 'watch' command\r\n"},
			{0, step("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n"},
			{0, step("EXEC"), "-ERR EXEC without MULTI\r\n"},
			{0, step("GET", "a"), "$-1\r\n"},
		}},
		{"runtime errors stay in place", []txStep{
			{0, step("MULTI"), ok},
			{0, step("SET", "a", "x"), queued},
			{0, step("INCR", "a"), queued},
			{0, step("GET", "a"), queued},
			{0, step("EXEC"), "*3\r\n+OK\r\n-ERR value is not an integer or out of range\r\n$1\r\nx\r\n"},
		}},
		{"discard drops the queue", []txStep{
			{0, step("MULTI"), ok},
			{0, step("SET", "a", "1"), queued},
			{0, step("DISCARD"), ok},
			{0, step("GET", "a"), "$-1\r\n"},
		}},
		{"watch: modified by another client", []txStep{
			{0, step("SET", "k", "1"), ok},
			{0, step("WATCH", "k"), ok},
			{1, step("SET", "k", "2"), ok},
			{0, step("MULTI"), ok},
			{0, step("SET", "k", "3"), queued},
			{0, step("EXEC"), "*-1\r\n"},
			{0, step("GET", "k"), "$1\r\n2\r\n"},
		}},
		{"watch: modified by the same client", []txStep{
			{0, step("WATCH", "k"), ok},
			{0, step("SET", "k", "3"), ok},
			{0, step("MULTI"), ok},
			{0, step("GET", "k"), queued},
			{0, step("EXEC"), "*-1\r\n"},
		}},
		{"watch: deleted", []txStep{
			{0, step("SET", "k", "1"), ok},
			{0, step("WATCH", "k"), ok},
			{1, step("DEL", "k"), ":1\r\n"},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*-1\r\n"},
		}},
		{"watch: flushed", []txStep{
			{0, step("SET", "k", "1"), ok},
			{0, step("WATCH", "k"), ok},
			{1, step("FLUSHALL"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*-1\r\n"},
		}},
		{"watch: written by a script", []txStep{
			{0, step("WATCH", "k"), ok},
			{1, step("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*-1\r\n"},
		}},
		{"watch: untouched key", []txStep{
			{0, step("SET", "k", "1"), ok},
			{0, step("WATCH", "k"), ok},
			{1, step("SET", "other", "2"), ok},
			{0, step("MULTI"), ok},
			{0, step("INCR", "k"), queued},
			{0, step("EXEC"), "*1\r\n:2\r\n"},
		}},
		{"exec unwatches", []txStep{
			{0, step("WATCH", "k"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*0\r\n"},
			{1, step("SET", "k", "2"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*0\r\n"},
		}},
		{"discard unwatches", []txStep{
			{0, step("WATCH", "k"), ok},
			{0, step("MULTI"), ok},
			{0, step("DISCARD"), ok},
			{1, step("SET", "k", "2"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*0\r\n"},
		}},
		{"unwatch", []txStep{
			{0, step("WATCH", "k"), ok},
			{0, step("UNWATCH"), ok},
			{1, step("SET", "k", "2"), ok},
			{0, step("MULTI"), ok},
			{0, step("EXEC"), "*0\r\n"},
			{0, step("UNWATCH", "x"), "-ERR wrong number of arguments for 'unwatch' command\r\n"},
		}},
		{"scripts run inside exec", []txStep{
			{0, step("MULTI"), ok},
			{0, step("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"), queued},
			{0, step("SCRIPT", "LOAD", "return 1"), queued},
			{0, step("EXEC"), "*2\r\n:1\r\n$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runTxSteps(t, addr, tt.steps) })
	}
}

// TestWatchExpiry: a watched key that expires before EXEC fails the transaction,
// even when nobody read it.
func TestWatchExpiry(t *testing.T) {
	clock := &manualClock{now: time.Unix(1_700_000_000, 0)}
	_, addr := serveMyRedis(t, myredis.Config{}, myredis.WithClock(clock))
	c := dialRESP(t, addr)
	require.Equal(t, "+OK\r\n", c.do("SET", "k", "v", "PX", "100"))
	require.Equal(t, "+OK\r\n", c.do("WATCH", "k"))
	clock.advance(200 * time.Millisecond)
	c.do("MULTI")
	c.do("SET", "other", "1")
	assert.Equal(t, "*-1\r\n", c.do("EXEC"))
	assert.Equal(t, "$-1\r\n", c.do("GET", "other"))
}

type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestGoRedisTxPipelined(t *testing.T) {
	_, addr := serveMyRedis(t, myredis.Config{})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	var incr *redis.IntCmd
	var get *redis.StringCmd
	cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, "n")
		p.Set(ctx, "s", "v", 0)
		get = p.Get(ctx, "s")
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, cmds, 3)
	assert.Equal(t, int64(1), incr.Val())
	assert.Equal(t, "v", get.Val())

	// a runtime error inside EXEC is reported on its command; the others ran
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "s")
		incr = p.Incr(ctx, "n")
		return nil
	})
	assert.EqualError(t, err, "ERR value is not an integer or out of range")
	assert.Equal(t, int64(2), incr.Val())
}

// TestGoRedisWatchIncrementers: 20 clients increment one counter with
// WATCH/GET/MULTI/SET/EXEC and retry when EXEC fails; no increment is lost.
func TestGoRedisWatchIncrementers(t *testing.T) {
	_, addr := serveMyRedis(t, myredis.Config{})
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
