package myredis_test

// FAILOVER between two MyRedis servers (a master and its replica); the error
// replies are compared with redis-server in testdata/compat/failover.txt.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// failoverPair starts a master and a replica of it (enable-debug-command yes
// on the replica, for DEBUG SLEEP) and waits until the replica has the stream.
func failoverPair(t *testing.T) (master, replica string) {
	master = myRedisMaster(t) // replication_interop_test.go
	h, p := replHostPort(t, master)
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir()
	require.NoError(t, cfg.Set("replicaof", h+" "+p))
	require.NoError(t, cfg.Set("enable-debug-command", "yes"))
	_, replica = redistest.StartMyRedisConfig(t, cfg)
	mustDo(t, redistest.Dial(t, master), ok, "SET", "before", "1")
	waitSynced(t, master, replica)
	return master, replica
}

// waitReplField polls until INFO replication's field has the value.
func waitReplField(t *testing.T, addr, field, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for infoField(t, addr, "replication", field) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %q, want %q", addr, field, infoField(t, addr, "replication", field), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFailoverToReplica(t *testing.T) {
	master, replica := failoverPair(t)
	h, p := replHostPort(t, replica)
	m := redistest.Dial(t, master)
	mustDo(t, m, "-ERR FAILOVER target HOST and PORT is not a replica.\r\n", "FAILOVER", "TO", h, "1")
	mustDo(t, m, ok, "FAILOVER", "TO", h, p)
	waitReplField(t, master, "role", "slave")
	waitReplField(t, master, "master_failover_state", "no-failover")
	waitReplField(t, master, "master_link_status", "up")
	require.Equal(t, "master", infoField(t, replica, "replication", "role"))
	r := redistest.Dial(t, replica)
	mustDo(t, r, ok, "SET", "after", "2") // the new master writes, the old one follows
	waitSynced(t, replica, master)
	mustDo(t, m, redistest.Bulk("2"), "GET", "after")
	mustDo(t, m, redistest.Bulk("1"), "GET", "before")
	mustDo(t, m, "-READONLY You can't write against a read only replica.\r\n", "SET", "x", "y")
	mustDo(t, r, "-ERR FAILOVER target HOST and PORT is not a replica.\r\n", "FAILOVER", "TO", "nowhere", "1") // the old master is its replica now
}

// While no replica has the whole stream the master waits with writes paused:
// a write waits, FAILOVER and REPLICAOF are refused, ABORT ends it and the
// write runs.
func TestFailoverWaitsAndAborts(t *testing.T) {
	master, replica := failoverPair(t)
	r := redistest.Dial(t, replica)
	sleeping := make(chan string, 1)
	go func() { sleeping <- r.Do("DEBUG", "SLEEP", "5") }() // the replica applies and acks nothing meanwhile
	time.Sleep(300 * time.Millisecond)
	m := redistest.Dial(t, master)
	mustDo(t, m, ok, "SET", "unacked", "1")
	mustDo(t, m, ok, "FAILOVER")
	// held: the replica has not acknowledged the SET yet. On a machine so loaded
	// that DEBUG SLEEP reached the replica after the SET, it may have: skip then.
	held := func() {
		if state := infoField(t, master, "replication", "master_failover_state"); state != "waiting-for-sync" {
			t.Skipf("the replica caught up (state %q): DEBUG SLEEP came too late to hold it", state)
		}
	}
	held()
	mustDo(t, m, "-ERR FAILOVER already in progress.\r\n", "FAILOVER")
	mustDo(t, m, "-ERR REPLICAOF not allowed while failing over.\r\n", "REPLICAOF", "NO", "ONE")
	writer := redistest.Dial(t, master)
	require.NoError(t, writer.Write(redistest.Encode("SET", "paused", "1")))
	if got, _ := writer.ReadAll(300 * time.Millisecond); got != "" {
		held()
		t.Fatalf("a write during FAILOVER answered %q", got)
	}
	held()
	mustDo(t, m, redistest.Bulk("1"), "GET", "unacked") // reads go on
	mustDo(t, m, ok, "FAILOVER", "ABORT")
	got, err := writer.Read()
	require.NoError(t, err)
	require.Equal(t, ok, got, "the postponed write after ABORT")
	require.Equal(t, "no-failover", infoField(t, master, "replication", "master_failover_state"))
	require.Equal(t, "master", infoField(t, master, "replication", "role"))
	mustDo(t, m, "-ERR No failover in progress.\r\n", "FAILOVER", "ABORT")
	if reply := <-sleeping; !strings.HasPrefix(reply, "+OK") {
		t.Fatalf("DEBUG SLEEP: %q", reply)
	}
	// a FAILOVER to any replica picks the one that caught up
	waitSynced(t, master, replica)
	mustDo(t, m, ok, "FAILOVER", "TIMEOUT", "60000")
	waitReplField(t, replica, "role", "master")
	waitReplField(t, master, "role", "slave")
	waitReplField(t, master, "master_failover_state", "no-failover")
}

// FAILOVER TIMEOUT without FORCE gives up when no replica catches up.
func TestFailoverTimeout(t *testing.T) {
	master, replica := failoverPair(t)
	r := redistest.Dial(t, replica)
	sleeping := make(chan string, 1)
	go func() { sleeping <- r.Do("DEBUG", "SLEEP", "5") }()
	time.Sleep(300 * time.Millisecond)
	m := redistest.Dial(t, master)
	mustDo(t, m, ok, "SET", "unacked", "1")
	mustDo(t, m, ok, "FAILOVER", "TIMEOUT", "300")
	waitReplField(t, master, "master_failover_state", "no-failover")
	if infoField(t, master, "replication", "role") != "master" {
		t.Skip("the replica caught up before the timeout: DEBUG SLEEP came too late to hold it")
	}
	mustDo(t, m, ok, "SET", "after", "1") // writes run again
	<-sleeping
}

// FAILOVER TO ... TIMEOUT ... FORCE fails over when the timeout passes even
// though the target has not caught up.
func TestFailoverForce(t *testing.T) {
	master, replica := failoverPair(t)
	h, p := replHostPort(t, replica)
	r := redistest.Dial(t, replica)
	sleeping := make(chan string, 1)
	go func() { sleeping <- r.Do("DEBUG", "SLEEP", "3") }()
	time.Sleep(300 * time.Millisecond)
	m := redistest.Dial(t, master)
	mustDo(t, m, ok, "SET", "unacked", "1")
	mustDo(t, m, ok, "FAILOVER", "TO", h, p, "TIMEOUT", "200", "FORCE")
	waitReplField(t, replica, "role", "master")
	waitReplField(t, master, "role", "slave")
	waitReplField(t, master, "master_failover_state", "no-failover")
	waitReplField(t, master, "master_link_status", "up")
	<-sleeping
}
