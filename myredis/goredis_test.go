package myredis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// go-redis v9 with default options sends HELLO 3 (MyRedis switches the connection
// to RESP3) and CLIENT SETINFO on every new connection.

func newGoRedis(t *testing.T, opt *redis.Options) *redis.Client {
	t.Helper()
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGoRedisDefaults(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	rdb := newGoRedis(t, &redis.Options{Addr: addr})

	require.NoError(t, rdb.Ping(ctx).Err())
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	assert.Equal(t, "v", rdb.Get(ctx, "k").Val())
	_, err := rdb.Get(ctx, "missing").Result()
	assert.ErrorIs(t, err, redis.Nil)

	ok, err := rdb.SetNX(ctx, "leader", "a", 10*time.Second).Result()
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = rdb.SetNX(ctx, "leader", "b", 10*time.Second).Result()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, 10*time.Second, rdb.TTL(ctx, "leader").Val())
	assert.Equal(t, "a", rdb.GetDel(ctx, "leader").Val())
	assert.Equal(t, int64(0), rdb.Exists(ctx, "leader").Val())

	assert.Equal(t, int64(3), rdb.IncrBy(ctx, "n", 3).Val())
	assert.InDelta(t, 3.5, rdb.IncrByFloat(ctx, "n", 0.5).Val(), 1e-9)
	assert.Equal(t, []any{"v", nil}, rdb.MGet(ctx, "k", "missing").Val())
	assert.True(t, rdb.Expire(ctx, "k", time.Minute).Val())
	assert.Equal(t, "string", rdb.Type(ctx, "k").Val())

	err = rdb.Incr(ctx, "k").Err()
	assert.EqualError(t, err, "ERR value is not an integer or out of range")

	// The connection speaks RESP3 and announced itself.
	info := rdb.ClientInfo(ctx).Val()
	require.NotNil(t, info)
	assert.Equal(t, 3, info.Resp)
	list := rdb.ClientList(ctx).Val()
	assert.Contains(t, list, "resp=3")
	assert.Contains(t, list, "lib-name=go-redis")
	assert.Contains(t, list, "lib-ver=9.")

	hello, err := rdb.Do(ctx, "HELLO", "3").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(3), hello.(map[any]any)["proto"]) // a RESP3 map, read as one
}

// TestGoRedisRESP2 pins a go-redis client to RESP2: HELLO is not sent and the
// connection stays on RESP2.
func TestGoRedisRESP2(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	rdb := newGoRedis(t, &redis.Options{Addr: addr, Protocol: 2})
	require.NoError(t, rdb.HSet(ctx, "h", "f", "v").Err())
	assert.Equal(t, map[string]string{"f": "v"}, rdb.HGetAll(ctx, "h").Val())
	assert.Contains(t, rdb.ClientList(ctx).Val(), "resp=2")
}

func TestGoRedisPasswordAndDB(t *testing.T) {
	ctx := context.Background()
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{RequirePass: "pw"})
	rdb := newGoRedis(t, &redis.Options{Addr: addr, Password: "pw", DB: 3, ClientName: "queue-1"})
	require.NoError(t, rdb.Set(ctx, "k", "in db 3", 0).Err())
	assert.Equal(t, "queue-1", rdb.ClientGetName(ctx).Val())
	info := rdb.Info(ctx, "keyspace").Val()
	assert.Contains(t, info, "db3:keys=1")

	bad := newGoRedis(t, &redis.Options{Addr: addr, Password: "wrong", MaxRetries: -1})
	err := bad.Ping(ctx).Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WRONGPASS")

	none := newGoRedis(t, &redis.Options{Addr: addr, MaxRetries: -1})
	assert.EqualError(t, none.Get(ctx, "k").Err(), "NOAUTH Authentication required.")
}

func TestGoRedisPipeline1000(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	rdb := newGoRedis(t, &redis.Options{Addr: addr})
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 1000; i++ {
			switch i % 3 {
			case 0:
				p.Incr(ctx, "counter")
			case 1:
				p.Set(ctx, fmt.Sprintf("key:%d", i), i, 0)
			default:
				p.Get(ctx, fmt.Sprintf("key:%d", i-1))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, cmds, 1000)
	for i, c := range cmds {
		switch i % 3 {
		case 0:
			assert.Equal(t, int64(i/3+1), c.(*redis.IntCmd).Val())
		case 1:
			assert.Equal(t, "OK", c.(*redis.StatusCmd).Val())
		default:
			assert.Equal(t, fmt.Sprint(i-1), c.(*redis.StringCmd).Val())
		}
	}

	// The same through MULTI/EXEC.
	tx, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 1000; i++ {
			p.Incr(ctx, "tx")
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1000), tx[len(tx)-1].(*redis.IntCmd).Val())
}

func TestGoRedis50Clients(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	const clients, each = 50, 100
	var wg sync.WaitGroup
	winners := make(chan int, clients)
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 2})
			defer rdb.Close()
			for j := 0; j < each; j++ {
				if err := rdb.Incr(ctx, "hits").Err(); err != nil {
					errs <- err
					return
				}
			}
			// exactly one of 50 wins SET NX, as the seed's leader election needs
			won, err := rdb.SetNX(ctx, "queue:leader", i, 10*time.Second).Result()
			if err != nil {
				errs <- err
				return
			}
			if won {
				winners <- i
			}
			// and WATCH/MULTI/EXEC optimistic increments all land
			for j := 0; j < 5; j++ {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "cas").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "cas", n+1, 0)
							return nil
						})
						return err
					}, "cas")
					if err == nil {
						break
					}
					if !errors.Is(err, redis.TxFailedErr) {
						errs <- err
						return
					}
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	close(winners)
	for err := range errs {
		t.Fatal(err)
	}
	assert.Len(t, winners, 1)
	rdb := newGoRedis(t, &redis.Options{Addr: addr})
	assert.Equal(t, fmt.Sprint(clients*each), rdb.Get(ctx, "hits").Val())
	assert.Equal(t, fmt.Sprint(clients*5), rdb.Get(ctx, "cas").Val())
}

func TestGoRedisScanIterator(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartMyRedis(t)
	rdb := newGoRedis(t, &redis.Options{Addr: addr})
	for i := 0; i < 250; i++ {
		rdb.Set(ctx, fmt.Sprintf("user:%d", i), i, 0)
	}
	rdb.Set(ctx, "other", 1, 0)
	seen := map[string]bool{}
	it := rdb.Scan(ctx, 0, "user:*", 20).Iterator()
	for it.Next(ctx) {
		seen[it.Val()] = true
	}
	require.NoError(t, it.Err())
	assert.Len(t, seen, 250)
	keys := rdb.Keys(ctx, "user:1?").Val()
	assert.Len(t, keys, 10)
	for _, k := range keys {
		assert.True(t, strings.HasPrefix(k, "user:1"))
	}
}
