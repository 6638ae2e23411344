package myredis_test

// PUBLISH propagation and min-replicas-to-write with real replicas: MyRedis
// replicas, and a real redis-server replica where redis-server is in PATH.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// TestReplPublishReachesReplicaSubscribers: a message published on the master
// reaches the subscribers of its replicas (Redis propagates PUBLISH to
// replicas), down a chain of replicas too, and from inside MULTI and scripts.
func TestReplPublishReachesReplicaSubscribers(t *testing.T) {
	master := myRedisMaster(t)
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	_, sub := redistest.StartMyRedisConfig(t, replicaConfig(t))
	ctx := context.Background()
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(ctx, "REPLICAOF", h, p).Err())
	rh, rp := replHostPort(t, replica)
	require.NoError(t, replClient(t, sub, 0).Do(ctx, "REPLICAOF", rh, rp).Err())
	waitSynced(t, master, replica)
	waitSynced(t, replica, sub)
	targets := map[string]string{"replica": replica, "replica of the replica": sub}
	if redistest.RedisServerPath() != "" {
		real := redistest.StartRealRedis(t, "--replicaof", h, p)
		waitSynced(t, master, real)
		targets["real redis-server replica"] = real
	}
	subs := map[string]*redistest.Conn{}
	for name, addr := range targets {
		c := redistest.Dial(t, addr)
		require.Equal(t, redistest.Array(redistest.Bulk("subscribe"), redistest.Bulk("news"), redistest.Int(1)),
			c.Do("SUBSCRIBE", "news"), name)
		subs[name] = c
	}
	mc := redistest.Dial(t, master)
	require.Equal(t, redistest.Int(0), mc.Do("PUBLISH", "news", "plain"), "no subscriber on the master itself")
	mc.Do("MULTI")
	mc.Do("PUBLISH", "news", "in multi")
	mc.Do("EXEC")
	mc.Do("EVAL", "return redis.call('publish', 'news', 'from a script')", "0")
	for name, c := range subs {
		for _, msg := range []string{"plain", "in multi", "from a script"} {
			got, err := readWithin(c, 30*time.Second)
			require.NoError(t, err, name)
			require.Equal(t, redistest.Array(redistest.Bulk("message"), redistest.Bulk("news"), redistest.Bulk(msg)), got, name)
		}
	}
}

// readWithin reads one reply, waiting at most d.
func readWithin(c *redistest.Conn, d time.Duration) (string, error) {
	c.NetConn().SetReadDeadline(time.Now().Add(d))
	defer c.NetConn().SetReadDeadline(time.Time{})
	return c.Read()
}

// TestReplMinReplicasToWrite: with min-replicas-to-write 1 a master refuses
// writes NOREPLICAS until a replica is online and acknowledging, then takes
// them; INFO shows the good replicas as Redis does.
func TestReplMinReplicasToWrite(t *testing.T) {
	master := myRedisMaster(t)
	mc := redistest.Dial(t, master)
	require.Equal(t, redistest.Simple("OK"), mc.Do("CONFIG", "SET", "min-replicas-to-write", "1"))
	require.Equal(t, redistest.Err("NOREPLICAS Not enough good replicas to write."), mc.Do("SET", "k", "v"))
	require.Equal(t, "0", infoField(t, master, "replication", "min_slaves_good_slaves"))
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	h, p := replHostPort(t, master)
	require.NoError(t, replClient(t, replica, 0).Do(context.Background(), "REPLICAOF", h, p).Err())
	waitSynced(t, master, replica)
	deadline := time.Now().Add(30 * time.Second)
	for infoField(t, master, "replication", "min_slaves_good_slaves") != "1" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, redistest.Simple("OK"), mc.Do("SET", "k", "v"))
	require.Equal(t, redistest.Int(1), mc.Do("WAIT", "1", "5000"))
	require.Equal(t, redistest.Bulk("v"), redistest.Dial(t, replica).Do("GET", "k"))
}
