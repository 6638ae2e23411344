package myredis

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// serveInternal serves a Server built from cfg on a loopback port.
func serveInternal(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Dir = t.TempDir()
	s := New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

// repl-disable-tcp-nodelay yes: the master's socket to a replica that asked
// for a full sync has TCP_NODELAY off; no (the default) leaves Go's on.
func TestReplDisableTCPNoDelay(t *testing.T) {
	for _, disable := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Set("repl-diskless-sync-delay", "0")
		if disable {
			cfg.Set("repl-disable-tcp-nodelay", "yes")
		}
		master, addr := serveInternal(t, cfg)
		replica, _ := serveInternal(t, DefaultConfig())
		host, port, _ := net.SplitHostPort(addr)
		replica.Do("REPLICAOF", host, port)
		var nodelay, n int
		deadline := time.Now().Add(10 * time.Second)
		for n == 0 && time.Now().Before(deadline) {
			master.submit(func() {
				for _, r := range master.repl.replicas {
					if gc, ok := r.nc.(*guardConn); ok {
						nodelay, _ = syscall.GetsockoptInt(gc.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
						n++
					}
				}
			})
			time.Sleep(10 * time.Millisecond)
		}
		if n == 0 {
			t.Fatal("no replica attached")
		}
		if want := b2i(!disable); nodelay != want {
			t.Errorf("repl-disable-tcp-nodelay %v: TCP_NODELAY %d, want %d", disable, nodelay, want)
		}
	}
}
