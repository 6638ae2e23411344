package queue

// Redis Cluster. Needs redis-server and redis-cli (7.0 or later, for
// --cluster-port); skips with a message without them. The test starts three
// masters on loopback ports, joins them with redis-cli --cluster create, and
// runs the invariant simulation through a go-redis ClusterClient.

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startCluster starts a 3-master Redis Cluster and returns its addresses.
func startCluster(t *testing.T) []string {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found on PATH: Redis Cluster test skipped (apt-get install redis-server)")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not found on PATH: Redis Cluster test skipped (apt-get install redis-tools)")
	}
	var addrs []string
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		bus, err := freePort()
		require.NoError(t, err)
		addr, stop, err := startRedisServer(server, dir, func(port int) []string {
			return []string{"--cluster-enabled", "yes", "--cluster-port", fmt.Sprint(bus),
				"--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port), "--cluster-node-timeout", "5000"}
		})
		require.NoError(t, err)
		t.Cleanup(stop)
		addrs = append(addrs, addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	out, err := exec.Command(cli, args...).CombinedOutput()
	require.NoError(t, err, "redis-cli --cluster create: %s", out)
	// Wait until every node agrees the cluster is up.
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		ok := false
		for i := 0; i < 200 && !ok; i++ {
			info, _ := c.ClusterInfo(bg).Result()
			ok = strings.Contains(info, "cluster_state:ok")
			if !ok {
				time.Sleep(50 * time.Millisecond)
			}
		}
		c.Close()
		require.True(t, ok, "cluster node %s never reached cluster_state:ok", a)
	}
	return addrs
}

func clusterClient(addrs []string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: 16,
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
}

func TestRedisCluster(t *testing.T) {
	addrs := startCluster(t)
	cc := clusterClient(addrs)
	defer cc.Close()
	require.NoError(t, cc.ForEachShard(bg, func(ctx context.Context, c *redis.Client) error {
		return c.Ping(ctx).Err()
	}))

	t.Run("one queue, one slot", func(t *testing.T) {
		k := newKeys("tickets")
		slot, err := cc.ClusterKeySlot(bg, k.waiting).Result()
		require.NoError(t, err)
		for _, key := range []string{k.active, k.seq, k.settings, k.leader, k.admitted, k.rate,
			k.expiry, k.ticket("x"), k.user("u"), k.roundMark("i")} {
			s, err := cc.ClusterKeySlot(bg, key).Result()
			require.NoError(t, err)
			require.Equal(t, slot, s, "key %s", key)
		}
		// Many queues spread over the masters.
		masters := map[string]bool{}
		for i := 0; i < 30; i++ {
			key := newKeys(fmt.Sprintf("event-%d", i)).waiting
			c, err := cc.MasterForKey(bg, key)
			require.NoError(t, err)
			masters[c.Options().Addr] = true
		}
		require.Len(t, masters, 3, "30 queues land on all three masters")
	})

	for _, s := range []Strategy{Optimistic, Atomic} {
		t.Run(string(s), func(t *testing.T) {
			cfg := defaultSim(s, 3)
			cfg.users, cfg.early = 2000, 500
			r := runSim(t, func() redis.UniversalClient { return clusterClient(addrs) }, cfg)
			t.Logf("cluster %s x3: %s", s, r)
			checkSim(t, cfg, r)
		})
	}

	// One queue's ceiling: users who hold for a moment and never abandon, so
	// admissions are limited by the store and the engines, not by the holds.
	// Reported against a single redis-server measured in the same run.
	t.Run("ceiling", func(t *testing.T) {
		cfg := defaultSim(Atomic, 3)
		cfg.abandon, cfg.holdMax, cfg.deadEvery = 0, time.Millisecond, 0
		onCluster := runSim(t, func() redis.UniversalClient { return clusterClient(addrs) }, cfg)
		line := fmt.Sprintf("one queue, atomic x3, slot %d, %d users: cluster %.0f admitted/s", cfg.slot, cfg.users, onCluster.admitPerSecond)
		storesOnce.Do(setupStores)
		for _, tg := range stores {
			if tg.name == "redis" {
				single := runSim(t, func() redis.UniversalClient { return tg.client(16) }, cfg)
				line += fmt.Sprintf(", single redis-server %.0f admitted/s (ratio %.2f)",
					single.admitPerSecond, onCluster.admitPerSecond/single.admitPerSecond)
			}
		}
		t.Log(line)
		checkSim(t, cfg, onCluster)
	})
}
