package myredis_test

// Replication with real processes: needs redis-server 7.0 in PATH for the
// tests that mix MyRedis and Redis (they skip without it).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

const replTestDBs = 3 // databases compared (0..2)

// replClient is a go-redis client on db of addr.
func replClient(t *testing.T, addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// fillAllTypes writes one key of each type (small and larger encodings) in
// databases 0 and 1.
func fillAllTypes(t *testing.T, addr string) {
	ctx := context.Background()
	for db := 0; db < 2; db++ {
		c := replClient(t, addr, db)
		p := c.Pipeline()
		p.Set(ctx, "str", "hello", 0)
		p.Set(ctx, "int", "12345", 0)
		p.Set(ctx, "ttl", "v", time.Hour)
		p.RPush(ctx, "list", "a", "b", "c")
		p.SAdd(ctx, "intset", 1, 2, 3)
		p.SAdd(ctx, "set", "x", "y", "z")
		p.HSet(ctx, "hash", "f1", "v1", "f2", "v2")
		p.ZAdd(ctx, "zset", redis.Z{Score: 1.5, Member: "m1"}, redis.Z{Score: 2, Member: "m2"})
		for i := 0; i < 300; i++ {
			p.RPush(ctx, "biglist", strings.Repeat("x", i%70))
			p.SAdd(ctx, "bigset", "member-"+strconv.Itoa(i))
			p.HSet(ctx, "bighash", "field-"+strconv.Itoa(i), strings.Repeat("v", i%100))
			p.ZAdd(ctx, "bigzset", redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)})
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
}

// writeFollowUps writes what a replica must follow: plain writes, a script,
// MULTI/EXEC, expiries, another database, deletions.
func writeFollowUps(t *testing.T, addr string) {
	ctx := context.Background()
	c := replClient(t, addr, 0)
	require.NoError(t, c.Set(ctx, "after", "1", 0).Err())
	require.NoError(t, c.Incr(ctx, "int").Err())
	require.NoError(t, c.Eval(ctx, "redis.call('set', KEYS[1], ARGV[1]); redis.call('lpush', KEYS[2], ARGV[1]); return 1",
		[]string{"scripted", "list"}, "s").Err())
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "tx")
		p.HSet(ctx, "hash", "f3", "v3")
		p.SRem(ctx, "set", "x")
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, c.Expire(ctx, "str", time.Hour).Err())
	require.NoError(t, c.Set(ctx, "short", "v", 50*time.Millisecond).Err())
	require.NoError(t, c.Del(ctx, "bigset").Err())
	require.NoError(t, c.ZIncrBy(ctx, "zset", 2, "m1").Err())
	c2 := replClient(t, addr, 2)
	require.NoError(t, c2.Set(ctx, "db2", "x", 0).Err())
	time.Sleep(200 * time.Millisecond) // "short" expires on the master, which sends a DEL
	c.Get(ctx, "short")
}

// dataset reads every key of the first databases as type|value|has-ttl.
func dataset(t *testing.T, addr string) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	for db := 0; db < replTestDBs; db++ {
		c := replClient(t, addr, db)
		keys, err := c.Keys(ctx, "*").Result()
		require.NoError(t, err)
		for _, k := range keys {
			typ := c.Type(ctx, k).Val()
			var val string
			switch typ {
			case "string":
				val = c.Get(ctx, k).Val()
			case "list":
				val = strings.Join(c.LRange(ctx, k, 0, -1).Val(), ",")
			case "set":
				m := c.SMembers(ctx, k).Val()
				sort.Strings(m)
				val = strings.Join(m, ",")
			case "hash":
				var pairs []string
				for f, v := range c.HGetAll(ctx, k).Val() {
					pairs = append(pairs, f+"="+v)
				}
				sort.Strings(pairs)
				val = strings.Join(pairs, ",")
			case "zset":
				for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
					val += fmt.Sprintf("%v=%v,", z.Member, z.Score)
				}
			}
			ttl := c.PTTL(ctx, k).Val() > 0
			out[strconv.Itoa(db)+":"+k] = typ + "|" + val + "|" + strconv.FormatBool(ttl)
		}
	}
	return out
}

// infoField reads one INFO replication (or stats) field.
func infoField(t *testing.T, addr, section, name string) string {
	c := replClient(t, addr, 0)
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// waitSynced waits until replica is linked to master and has its whole stream.
func waitSynced(t *testing.T, master, replica string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if infoField(t, replica, "replication", "master_link_status") == "up" {
			mo := infoField(t, master, "replication", "master_repl_offset")
			ro := infoField(t, replica, "replication", "slave_repl_offset")
			if mo != "" && mo == ro {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("replica %s did not catch up with master %s: link %s, offsets %s / %s", replica, master,
		infoField(t, replica, "replication", "master_link_status"),
		infoField(t, master, "replication", "master_repl_offset"),
		infoField(t, replica, "replication", "slave_repl_offset"))
}

func replHostPort(t *testing.T, addr string) (string, string) {
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return h, p
}

// compareDatasets fails the test on every key that differs.
func compareDatasets(t *testing.T, want, got map[string]string) {
	t.Helper()
	require.NotEmpty(t, want)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: master %q, replica %q", k, v, got[k])
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %s only on the replica: %q", k, v)
		}
	}
}

func myRedisMaster(t *testing.T) string {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir() // a disk sync writes dump.rdb
	require.NoError(t, cfg.Set("repl-diskless-sync-delay", "0"))
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	return addr
}

// (a) a real redis-server replicates MyRedis: the dataset, then the writes.
func TestReplRealRedisReplicaOfMyRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			master := myRedisMaster(t)
			require.NoError(t, replClient(t, master, 0).ConfigSet(context.Background(), "repl-diskless-sync", diskless).Err())
			fillAllTypes(t, master)
			h, p := replHostPort(t, master)
			replica := redistest.StartRealRedis(t, "--replicaof", h, p)
			waitSynced(t, master, replica)
			compareDatasets(t, dataset(t, master), dataset(t, replica))
			writeFollowUps(t, master)
			waitSynced(t, master, replica)
			compareDatasets(t, dataset(t, master), dataset(t, replica))
			n, err := replClient(t, master, 0).Do(context.Background(), "WAIT", 1, 2000).Int()
			require.NoError(t, err)
			require.Equal(t, 1, n, "WAIT 1: the replica acknowledges")
		})
	}
}

// (b) MyRedis replicates a real redis-server (live migration from Redis).
func TestReplMyRedisReplicaOfRealRedis(t *testing.T) {
	master := redistest.StartRealRedis(t, "--repl-diskless-sync-delay", "0")
	fillAllTypes(t, master)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	h, p := replHostPort(t, master)
	ctx := context.Background()
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
	waitSynced(t, master, replica)
	compareDatasets(t, dataset(t, master), dataset(t, replica))
	writeFollowUps(t, master)
	waitSynced(t, master, replica)
	compareDatasets(t, dataset(t, master), dataset(t, replica))
	err := replClient(t, replica, 0).Set(ctx, "w", "1", 0).Err()
	require.EqualError(t, err, "READONLY You can't write against a read only replica.")
	n, err := replClient(t, master, 0).Do(ctx, "WAIT", 1, 2000).Int()
	require.NoError(t, err)
	require.Equal(t, 1, n, "WAIT on Redis: MyRedis acknowledges with REPLCONF ACK")
	role, err := replClient(t, replica, 0).Do(ctx, "ROLE").Slice()
	require.NoError(t, err)
	require.Equal(t, []any{"slave", h, int64(mustAtoi(t, p)), "connected"}, role[:4])
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// (c) MyRedis replicates MyRedis, and a replica of that replica follows too.
func TestReplMyRedisReplicaOfMyRedis(t *testing.T) {
	master := myRedisMaster(t)
	fillAllTypes(t, master)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	_, sub := redistest.StartMyRedisConfig(t, replicaConfig(t))
	ctx := context.Background()
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
	rh, rp := replHostPort(t, replica)
	require.NoError(t, replClient(t, sub, 0).Do(ctx, "REPLICAOF", rh, rp).Err())
	waitSynced(t, master, replica)
	waitSynced(t, replica, sub)
	writeFollowUps(t, master)
	waitSynced(t, master, replica)
	waitSynced(t, replica, sub)
	want := dataset(t, master)
	compareDatasets(t, want, dataset(t, replica))
	compareDatasets(t, want, dataset(t, sub))
	require.Equal(t, infoField(t, master, "replication", "master_replid"),
		infoField(t, sub, "replication", "master_replid"), "offsets and IDs are the master's down the chain")
}

// (d) a replica restarted within the backlog continues (+CONTINUE), no full sync.
func TestReplReplicaRestartContinues(t *testing.T) {
	for _, real := range []bool{false, true} {
		t.Run(map[bool]string{false: "myredis-master", true: "redis-master"}[real], func(t *testing.T) {
			var master string
			if real {
				master = redistest.StartRealRedis(t, "--repl-diskless-sync-delay", "0")
			} else {
				master = myRedisMaster(t)
			}
			fillAllTypes(t, master)
			h, p := replHostPort(t, master)
			dir := t.TempDir()
			cfg := myredis.DefaultConfig()
			cfg.Dir = dir
			require.NoError(t, cfg.Set("replicaof", h+" "+p))
			srv, replica, stop := startStoppable(t, cfg)
			waitSynced(t, master, replica)
			ctx := context.Background()
			require.NoError(t, replClient(t, replica, 0).Save(ctx).Err())
			stop()
			_ = srv
			writeFollowUps(t, master) // while the replica is down
			full := infoField(t, master, "stats", "sync_full")
			partial := infoField(t, master, "stats", "sync_partial_ok")
			_, replica2, _ := startStoppable(t, cfg)
			waitSynced(t, master, replica2)
			compareDatasets(t, dataset(t, master), dataset(t, replica2))
			require.Equal(t, full, infoField(t, master, "stats", "sync_full"), "no new full sync")
			require.Equal(t, mustAtoi(t, partial)+1, mustAtoi(t, infoField(t, master, "stats", "sync_partial_ok")))
		})
	}
}

// startStoppable serves cfg; stop closes the server (its RDB stays in cfg.Dir).
func startStoppable(t *testing.T, cfg myredis.Config) (*myredis.Server, string, func()) {
	s, addr, stop, err := redistest.ServeMyRedis(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { stop() })
	return s, addr, func() { require.NoError(t, stop()) }
}

// SYNC, as the suite's attach_to_replication_stream uses it: an RDB as a
// bulk, then the writes as commands, SELECT first.
func TestReplSyncStream(t *testing.T) {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir() // SYNC without capa eof writes dump.rdb there
	_, addr := redistest.StartMyRedisConfig(t, cfg)
	c := redistest.Dial(t, addr)
	require.Equal(t, redistest.Simple("OK"), c.Do("CONFIG", "SET", "repl-ping-replica-period", "3600"))
	require.Equal(t, redistest.Simple("OK"), c.Do("SET", "before", "1"))
	s, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Write([]byte("SYNC\r\n"))
	require.NoError(t, err)
	br := bufio.NewReader(s)
	head, err := br.ReadString('\n')
	require.NoError(t, err)
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	require.NoError(t, err, head)
	rdb := make([]byte, n)
	_, err = io.ReadFull(br, rdb)
	require.NoError(t, err)
	require.Equal(t, "REDIS0010", string(rdb[:9]))
	c.Do("SET", "k", "v")
	c.Do("SELECT", "1")
	c.Do("SET", "x", "1", "PX", "100000")
	c.Do("EVAL", "redis.call('incr', 'n') redis.call('incr', 'n')", "0")
	want := redistest.Bulks("SELECT", "0") + redistest.Bulks("SET", "k", "v") +
		redistest.Bulks("SELECT", "1")
	s.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	all, _ := io.ReadAll(br)
	got := string(all)
	require.True(t, strings.HasPrefix(got, want), "%q", got)
	require.Contains(t, got, redistest.Bulks("MULTI")+redistest.Bulks("incr", "n")+redistest.Bulks("incr", "n")+redistest.Bulks("EXEC"))
	require.Contains(t, got, "PXAT", "relative expiries travel as absolute ones")
}

// replicaConfig is a default config in a temporary directory.
func replicaConfig(t *testing.T) myredis.Config {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir()
	return cfg
}
