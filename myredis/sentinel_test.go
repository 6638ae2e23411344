package myredis_test

// Failover by Redis Sentinel of MyRedis processes: needs redis-sentinel (and
// builds cmd/myredis); skips with a message without it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// proc is a server process the test can SIGKILL.
type proc struct {
	cmd  *exec.Cmd
	port int
	addr string
}

// startProc runs bin with a config file holding conf (CONFIG REWRITE needs
// one) and waits until it answers PING.
func startProc(t *testing.T, bin, conf string, port int) *proc {
	dir := t.TempDir()
	path := filepath.Join(dir, "node.conf")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("port %d\ndir %s\n%s", port, dir, conf)), 0o644))
	cmd := exec.Command(bin, path)
	log, err := os.Create(filepath.Join(dir, "log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, port: port, addr: "127.0.0.1:" + strconv.Itoa(port)}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("log of %s on port %d:\n%s", filepath.Base(bin), port, out)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := redistest.DialErr(p.addr)
		if err == nil {
			c.Close()
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s on port %d did not start", bin, port)
	return nil
}

func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
	}
}

// eventually polls cond every 100ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for: %s", what)
}

func TestSentinelFailsOverMyRedis(t *testing.T) {
	sentinelBin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel not found in PATH: install it (apt-get install redis-sentinel) to run the " +
			"Sentinel failover test; .ci/run does")
	}
	bin := redistest.BuildMyRedis(t)
	ctx := context.Background()
	common := "repl-diskless-sync-delay 0\nsave \"\"\n"
	master := startProc(t, bin, common, redistest.FreePort(t))
	replicas := []*proc{
		startProc(t, bin, common+fmt.Sprintf("replicaof 127.0.0.1 %d\n", master.port), redistest.FreePort(t)),
		startProc(t, bin, common+fmt.Sprintf("replicaof 127.0.0.1 %d\n", master.port), redistest.FreePort(t)),
	}
	mc := replClient(t, master.addr, 0)
	for i := 0; i < 100; i++ {
		require.NoError(t, mc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	for _, r := range replicas {
		waitSynced(t, master.addr, r.addr)
	}
	var sentinels []*redis.SentinelClient
	for i := 0; i < 3; i++ {
		conf := fmt.Sprintf("sentinel monitor mymaster 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds mymaster 1000\n"+
			"sentinel failover-timeout mymaster 10000\n", master.port)
		s := startProc(t, sentinelBin, conf, redistest.FreePort(t))
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.addr})
		t.Cleanup(func() { sc.Close() })
		sentinels = append(sentinels, sc)
	}
	eventually(t, 30*time.Second, "the sentinels see 2 replicas and each other", func() bool {
		for _, sc := range sentinels {
			reps, err := sc.Replicas(ctx, "mymaster").Result()
			others, err2 := sc.Sentinels(ctx, "mymaster").Result()
			if err != nil || err2 != nil || len(reps) != 2 || len(others) != 2 {
				return false
			}
		}
		return true
	})

	master.kill() // SIGKILL
	var newPort int
	eventually(t, 60*time.Second, "a replica promoted", func() bool {
		addr, err := sentinels[0].GetMasterAddrByName(ctx, "mymaster").Result()
		if err != nil || len(addr) != 2 {
			return false
		}
		newPort, _ = strconv.Atoi(addr[1])
		return newPort != master.port
	})
	var promoted, other *proc
	for _, r := range replicas {
		if r.port == newPort {
			promoted = r
		} else {
			other = r
		}
	}
	require.NotNil(t, promoted, "the new master is one of the replicas")
	pc := replClient(t, promoted.addr, 0)
	eventually(t, 30*time.Second, "the promoted replica is a master", func() bool {
		role, err := pc.Do(ctx, "ROLE").Slice()
		return err == nil && role[0] == "master"
	})
	eventually(t, 30*time.Second, "the other replica follows the new master", func() bool {
		return infoField(t, other.addr, "replication", "master_port") == strconv.Itoa(newPort) &&
			infoField(t, other.addr, "replication", "master_link_status") == "up"
	})
	require.NoError(t, pc.Set(ctx, "after-failover", "yes", 0).Err())
	waitSynced(t, promoted.addr, other.addr)
	require.Equal(t, "yes", replClient(t, other.addr, 0).Get(ctx, "after-failover").Val())
	require.Equal(t, "99", replClient(t, other.addr, 0).Get(ctx, "k99").Val(), "the data from before the failover")
}
