package myredis_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// replica-announce-ip and replica-announce-port are what a replica tells its
// master (REPLCONF ip-address, listening-port): the master's INFO slaveN line
// and ROLE show them, a MyRedis master and a real redis-server alike;
// replica-announced is the replica's INFO replica_announced.
func TestReplicaAnnounce(t *testing.T) {
	masters := map[string]string{"myredis master": myRedisMaster(t)}
	if redistest.RedisServerPath() != "" {
		masters["redis-server master"] = redistest.StartRealRedis(t)
	}
	for name, master := range masters {
		t.Run(name, func(t *testing.T) {
			cfg := replicaConfig(t)
			require.NoError(t, cfg.Set("replica-announce-ip", "10.1.2.3"))
			require.NoError(t, cfg.Set("slave-announce-port", "4567")) // the old name
			_, replica := redistest.StartMyRedisConfig(t, cfg)
			ctx := context.Background()
			h, p := replHostPort(t, master)
			require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
			waitSynced(t, master, replica)
			deadline := time.Now().Add(10 * time.Second) // a real master says online a little after the sync
			for !strings.Contains(infoField(t, master, "replication", "slave0"), ",state=online,") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.True(t, strings.HasPrefix(infoField(t, master, "replication", "slave0"), "ip=10.1.2.3,port=4567,state=online,"),
				infoField(t, master, "replication", "slave0"))
			role, err := replClient(t, master, 0).Do(ctx, "ROLE").Slice()
			require.NoError(t, err)
			require.Equal(t, []any{"10.1.2.3", "4567"}, role[2].([]any)[0].([]any)[:2])

			require.Equal(t, "1", infoField(t, replica, "replication", "replica_announced"))
			rc := redistest.Dial(t, replica)
			mustDo(t, rc, ok, "CONFIG", "SET", "replica-announced", "no")
			require.Equal(t, "0", infoField(t, replica, "replication", "replica_announced"))
			mustDo(t, rc, bulks("slave-announce-ip", "10.1.2.3", "slave-announce-port", "4567"),
				"CONFIG", "GET", "slave-announce-*")
		})
	}
}

// replica-ignore-maxmemory yes (the default): a replica over its maxmemory
// keeps every key its master sends; no: it evicts by its own policy.
func TestReplicaIgnoreMaxmemory(t *testing.T) {
	master := myRedisMaster(t)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	ctx := context.Background()
	rc := redistest.Dial(t, replica)
	used, err := strconv.ParseInt(infoField(t, replica, "memory", "used_memory"), 10, 64)
	require.NoError(t, err)
	mustDo(t, rc, ok, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used+512<<10, 10), "maxmemory-policy", "allkeys-random")
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
	waitSynced(t, master, replica)
	mc := replClient(t, master, 0)
	val := strings.Repeat("x", 10<<10)
	for i := range 200 { // about 2 MB, four times the room left
		require.NoError(t, mc.Set(ctx, "k"+strconv.Itoa(i), val, 0).Err())
	}
	waitSynced(t, master, replica)
	mustDo(t, rc, num(200), "DBSIZE")
	mustDo(t, rc, bulks("replica-ignore-maxmemory", "yes"), "CONFIG", "GET", "replica-ignore-maxmemory")

	mustDo(t, rc, ok, "CONFIG", "SET", "slave-ignore-maxmemory", "no")
	deadline := time.Now().Add(10 * time.Second)
	for rc.Do("DBSIZE") == num(200) {
		require.True(t, time.Now().Before(deadline), "the replica did not evict")
		time.Sleep(10 * time.Millisecond)
	}
	require.NotEqual(t, "0", infoField(t, replica, "stats", "evicted_keys"))
}

// bind-source-addr: a replica connects to its master from that address (here
// 127.0.0.2, a loopback address Linux answers on), which the master, MyRedis
// or redis-server, shows in INFO slaveN; an address the machine lacks falls
// back to an unbound connection, as Redis's best-effort bind.
func TestReplicaBindSourceAddr(t *testing.T) {
	masters := map[string]string{"myredis master": myRedisMaster(t)}
	if redistest.RedisServerPath() != "" {
		masters["redis-server master"] = redistest.StartRealRedis(t)
	}
	for name, master := range masters {
		// 127.0.0.2 is not 127.0.0.1: protected mode would refuse it (Redis compares the text)
		require.NoError(t, replClient(t, master, 0).ConfigSet(context.Background(), "protected-mode", "no").Err())
		for source, want := range map[string]string{"127.0.0.2": "ip=127.0.0.2,", "192.0.2.254": "ip=127.0.0.1,"} {
			t.Run(name+" "+source, func(t *testing.T) {
				cfg := replicaConfig(t)
				require.NoError(t, cfg.Set("bind-source-addr", source))
				_, replica := redistest.StartMyRedisConfig(t, cfg)
				h, p := replHostPort(t, master)
				require.NoError(t, replClient(t, replica, 0).Do(context.Background(), "REPLICAOF", h, p).Err())
				waitSynced(t, master, replica)
				_, port := replHostPort(t, replica)
				info, err := replClient(t, master, 0).Info(context.Background(), "replication").Result()
				require.NoError(t, err)
				require.Contains(t, info, ":"+want+"port="+port+",", "the replica's slaveN line")
			})
		}
	}
}

// repl-diskless-sync-max-replicas: with a long repl-diskless-sync-delay, one
// replica waits; the second makes two and the sync starts for both at once.
func TestReplDisklessSyncMaxReplicas(t *testing.T) {
	cfg := replicaConfig(t)
	require.NoError(t, cfg.Set("repl-diskless-sync-delay", "3600"))
	require.NoError(t, cfg.Set("repl-diskless-sync-max-replicas", "2"))
	_, master := redistest.StartMyRedisConfig(t, cfg)
	h, p := replHostPort(t, master)
	ctx := context.Background()
	var replicas []string
	for i := range 2 {
		_, r := redistest.StartMyRedisConfig(t, replicaConfig(t))
		replicas = append(replicas, r)
		require.NoError(t, replClient(t, r, 0).Do(ctx, "REPLICAOF", h, p).Err())
		if i == 0 {
			time.Sleep(time.Second) // time to connect and ask: it is left waiting
			require.Equal(t, "down", infoField(t, r, "replication", "master_link_status"), "synced with one replica waiting")
			require.Equal(t, "1", infoField(t, master, "stats", "sync_full")) // it asked
		}
	}
	for _, r := range replicas {
		waitSynced(t, master, r)
	}
	require.Equal(t, "2", infoField(t, master, "stats", "sync_full"))
}

// repl-backlog-ttl: a master without replicas frees its backlog after that
// many seconds and takes a new replication ID.
func TestReplBacklogTTL(t *testing.T) {
	master := myRedisMaster(t)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	ctx := context.Background()
	mc := replClient(t, master, 0)
	require.NoError(t, mc.ConfigSet(ctx, "repl-backlog-ttl", "1").Err())
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
	waitSynced(t, master, replica)
	require.Equal(t, "1", infoField(t, master, "replication", "repl_backlog_active"))
	id := infoField(t, master, "replication", "master_replid")
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	deadline := time.Now().Add(10 * time.Second)
	for infoField(t, master, "replication", "repl_backlog_active") != "0" {
		require.True(t, time.Now().Before(deadline), "the backlog was not freed")
		time.Sleep(50 * time.Millisecond)
	}
	require.NotEqual(t, id, infoField(t, master, "replication", "master_replid"))
	require.Equal(t, "0", infoField(t, master, "replication", "connected_slaves"))
}
