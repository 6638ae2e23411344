package myredis_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// fakeReplica attaches to master as a replica that never acknowledges: the
// master's shutdown has a lagging replica to wait for.
func fakeReplica(t *testing.T, master string) {
	t.Helper()
	nc, err := net.Dial("tcp", master)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.Write([]byte("REPLCONF listening-port 1\r\nPSYNC ? -1\r\n"))
	br := bufio.NewReader(nc)
	line, err := br.ReadString('\n')
	if err != nil || line != "+OK\r\n" {
		t.Fatalf("REPLCONF: %q %v", line, err)
	}
	if line, err = br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q %v", line, err)
	}
	go func() { // keep reading the stream, never answer GETACK
		buf := make([]byte, 4096)
		for {
			if _, err := br.Read(buf); err != nil {
				return
			}
		}
	}()
}

func shutdownServer(t *testing.T, timeout string) (*myredis.Server, string) {
	cfg := myredis.DefaultConfig()
	cfg.Dir = t.TempDir()
	if err := cfg.Set("repl-diskless-sync-delay", "0"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("shutdown-timeout", timeout); err != nil {
		t.Fatal(err)
	}
	return redistest.StartMyRedisConfig(t, cfg)
}

// SHUTDOWN with a replica behind waits for it with writes paused; reads go
// on; SHUTDOWN ABORT ends the wait: the waiting SHUTDOWN gets Redis's error
// and writes resume.
func TestShutdownWaitsForReplicasAndAborts(t *testing.T) {
	s, addr := shutdownServer(t, "30")
	fakeReplica(t, addr)
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "SET", "k", "v") // the replica is behind from now on
	waiter := redistest.Dial(t, addr)
	if err := waiter.Write(redistest.Encode("SHUTDOWN")); err != nil {
		t.Fatal(err)
	}
	writer := redistest.Dial(t, addr)
	writer.Write(redistest.Encode("SET", "k", "paused"))
	mustDo(t, c, bulk("v"), "GET", "k")                                        // the server still serves reads; the SET waits
	if list := c.Do("CLIENT", "LIST"); strings.Count(list, " flags=b ") != 2 { // SHUTDOWN and the SET
		t.Fatalf("not both clients wait: %q", list)
	}
	mustDo(t, c, ok, "SHUTDOWN", "ABORT")
	if got, err := writer.Read(); err != nil || got != ok {
		t.Fatalf("the paused SET: %q %v", got, err)
	}
	got, err := waiter.Read()
	if err != nil || got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
		t.Fatalf("the waiting SHUTDOWN got %q %v", got, err)
	}
	mustDo(t, c, ok, "SET", "k", "w") // writes are not paused any more
	mustDo(t, c, "-ERR No shutdown in progress.\r\n", "SHUTDOWN", "ABORT")
	select {
	case <-s.Done():
		t.Fatal("the server stopped")
	default:
	}
}

// After shutdown-timeout the shutdown goes on without the lagging replica;
// SHUTDOWN NOW does not wait at all.
func TestShutdownTimeoutThenStops(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		args    []string
	}{{"1", []string{"SHUTDOWN", "NOSAVE"}}, {"3600", []string{"SHUTDOWN", "NOW"}}} {
		s, addr := shutdownServer(t, tc.timeout)
		fakeReplica(t, addr)
		c := redistest.Dial(t, addr)
		mustDo(t, c, ok, "SET", "k", "v")
		waiter := redistest.Dial(t, addr)
		waiter.Write(redistest.Encode(tc.args...))
		select {
		case <-s.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("%v with shutdown-timeout %s: the server did not stop", tc.args, tc.timeout)
		}
		if got, closed := waiter.ReadAll(5 * time.Second); !closed || got != "" {
			t.Fatalf("the SHUTDOWN client got %q (closed %v)", got, closed)
		}
	}
}

// A replica that keeps up lets the shutdown finish as soon as it acknowledged.
func TestShutdownWaitsForCaughtUpReplica(t *testing.T) {
	s, master := shutdownServer(t, "3600")
	_, replica := redistest.StartMyRedisConfig(t, replicaConfig(t))
	h, p := replHostPort(t, master)
	rc := redistest.Dial(t, replica)
	mustDo(t, rc, ok, "REPLICAOF", h, p)
	waitSynced(t, master, replica)
	c := redistest.Dial(t, master)
	mustDo(t, c, ok, "SET", "last", "write")
	c.Write(redistest.Encode("SHUTDOWN", "NOSAVE"))
	select {
	case <-s.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the shutdown did not finish after the replica acknowledged")
	}
	mustDo(t, rc, bulk("write"), "GET", "last")
}
