// Package storetest gives the queue service's tests a store: MyRedis in
// process when it serves every command the engine uses (sorted sets, hashes,
// EVAL), otherwise a redis-server child on a free loopback port; with neither
// the test is skipped with the reason. WAITROOM_TEST_STORE=myredis or =redis
// forces one.
package storetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/myredis"
)

// Store is a running store.
type Store struct {
	Name string // "myredis" or "redis"
	Addr string // 127.0.0.1:port
}

// URL is the store's redis URL.
func (s Store) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a client with short timeouts, closed at the end of the test.
func (s Store) Client(t testing.TB) *redis.Client {
	return ClientFor(t, s.Addr)
}

// ClientFor returns a client for addr with short timeouts, closed at the end of the test.
func ClientFor(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, PoolTimeout: time.Second, MaxRetries: 1})
	t.Cleanup(func() { c.Close() })
	return c
}

// Start starts a store for t and stops it when t ends.
func Start(t testing.TB) Store {
	t.Helper()
	force := os.Getenv("WAITROOM_TEST_STORE")
	var why []string
	if force == "" || force == "myredis" {
		st, err := startMyRedis(t)
		if err == nil {
			t.Logf("store: MyRedis in process at %s", st.Addr)
			return st
		}
		why = append(why, "myredis: "+err.Error())
	}
	if force == "" || force == "redis" {
		st, err := startRedisServer(t)
		if err == nil {
			t.Logf("store: redis-server at %s (MyRedis %s)", st.Addr, strings.Join(why, "; "))
			return st
		}
		why = append(why, "redis-server: "+err.Error())
	}
	t.Skipf("no store for the queue service: %v", why)
	return Store{}
}

// Each runs fn as a subtest against MyRedis in process and against a
// redis-server child, each started for its subtest; a store that cannot start
// skips its subtest with the reason.
func Each(t *testing.T, fn func(t *testing.T, st Store)) {
	t.Helper()
	for _, s := range []struct {
		name  string
		start func(testing.TB) (Store, error)
	}{{"myredis", startMyRedis}, {"redis", startRedisServer}} {
		t.Run(s.name, func(t *testing.T) {
			st, err := s.start(t)
			if err != nil {
				t.Skipf("%s: %v", s.name, err)
			}
			fn(t, st)
		})
	}
}

// probe runs the kinds of commands the engine needs.
func probe(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	ctx := context.Background()
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "probe:h", "f", 1)
		p.HGetAll(ctx, "probe:h")
		p.ZAdd(ctx, "probe:z", redis.Z{Score: 1, Member: "a"})
		p.ZRank(ctx, "probe:z", "a")
		p.ZPopMin(ctx, "probe:z", 1)
		p.GetDel(ctx, "probe:s")
		p.Eval(ctx, "return redis.call('ZCARD', KEYS[1])", []string{"probe:z"})
		p.Del(ctx, "probe:h", "probe:z")
		return nil
	})
	if err == redis.Nil {
		err = nil
	}
	return err
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func startMyRedis(t testing.TB) (Store, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Store{}, err
	}
	srv := myredis.New(myredis.Config{}, myredis.WithLogger(quiet))
	go srv.Serve(ln)
	addr := ln.Addr().String()
	if err := probe(addr); err != nil {
		srv.Close()
		return Store{}, fmt.Errorf("lacks a command the engine needs (%v)", err)
	}
	t.Cleanup(func() { srv.Close() })
	return Store{Name: "myredis", Addr: addr}, nil
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startRedisServer(t testing.TB) (Store, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return Store{}, fmt.Errorf("not on PATH (apt-get install redis-server)")
	}
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := FreePort()
		if err != nil {
			return Store{}, err
		}
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--logfile", "")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return Store{}, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		for i := 0; i < 100; i++ {
			if lastErr = probe(addr); lastErr == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if lastErr == nil {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			return Store{Name: "redis", Addr: addr}, nil
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	return Store{}, fmt.Errorf("did not answer: %v", lastErr)
}

// Proxy is a TCP proxy in front of a store that a test can cut and restore,
// to see what clients do while the store is unreachable.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

// NewProxy proxies a loopback port to target until t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.Down() })
	return p
}

// Addr is the proxy's address; point clients here.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Down cuts every connection and refuses new ones (they are closed at once).
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// Up lets connections through again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[s] = struct{}{}
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close(); c.Close() }()
	io.Copy(c, s)
	c.Close()
	s.Close()
}
