package queue

// Test stores. This file needs /usr/bin/redis-server (or redis-server on
// PATH) for the real-Redis target; tests skip with a message without it.
// Other targets:
//   - WAITROOM_TEST_REDIS_URL=redis://host:port/0 adds any running store
//     (for example a MyRedis started by hand);
//   - myredisTarget, once package waitroom/myredis can start a server in
//     process (see the TODO below), adds MyRedis.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// target is one store the tests run against.
type target struct {
	name string
	addr string // host:port
	db   int
	eval bool // the store runs Lua scripts (needed by the atomic strategy)
}

func (tg target) client(poolSize int) *redis.Client {
	// 15 s: at a load average of 25 on two cores, a reply once took over 5 s
	// (CI, TestInvariantsUnderConcurrency); a store that hangs still fails.
	return redis.NewClient(&redis.Options{Addr: tg.addr, DB: tg.db, PoolSize: poolSize,
		MaxRetries: -1, ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second})
}

// myredisTarget starts MyRedis in process and returns its address, whether
// it supports EVAL, and a stop function.
// myredis_target_test.go sets it.
var myredisTarget func() (addr string, eval bool, stop func(), err error)

var (
	storesOnce sync.Once
	stores     []target
	storesErr  []string
	cleanups   []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

func setupStores() {
	if path, err := exec.LookPath("redis-server"); err == nil {
		addr, stop, err := startRedisServer(path, os.TempDir(), nil)
		if err != nil {
			storesErr = append(storesErr, "redis-server: "+err.Error())
		} else {
			cleanups = append(cleanups, stop)
			stores = append(stores, target{name: "redis", addr: addr, eval: true})
		}
	} else {
		storesErr = append(storesErr, "redis-server not found on PATH (apt-get install redis-server)")
	}
	if u := os.Getenv("WAITROOM_TEST_REDIS_URL"); u != "" {
		o, err := redis.ParseURL(u)
		if err != nil {
			storesErr = append(storesErr, "WAITROOM_TEST_REDIS_URL: "+err.Error())
		} else {
			c := redis.NewClient(o)
			eval := c.Eval(context.Background(), "return 1", nil).Err() == nil
			c.Close()
			stores = append(stores, target{name: "url", addr: o.Addr, db: o.DB, eval: eval})
		}
	}
	if myredisTarget != nil {
		addr, eval, stop, err := myredisTarget()
		if err != nil {
			storesErr = append(storesErr, "myredis: "+err.Error())
		} else {
			cleanups = append(cleanups, stop)
			stores = append(stores, target{name: "myredis", addr: addr, eval: eval})
		}
	}
}

// forEachStore runs fn as a subtest against every available store; it skips
// with the reasons when there is none.
func forEachStore(t *testing.T, fn func(t *testing.T, tg target)) {
	t.Helper()
	storesOnce.Do(setupStores)
	if len(stores) == 0 {
		t.Skipf("no store to test against: %s", strings.Join(storesErr, "; "))
	}
	for _, tg := range stores {
		t.Run(tg.name, func(t *testing.T) { fn(t, tg) })
	}
}

// needEval skips a strategy that needs scripting on a store without it.
func needEval(t *testing.T, tg target, s Strategy) {
	t.Helper()
	if s == Atomic && !tg.eval {
		t.Skipf("%s has no EVAL; the atomic strategy needs it", tg.name)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startRedisServer starts redis-server on a free loopback port with no
// persistence, in dir, with extra arguments (made for the chosen port), and
// waits until it answers PING.
func startRedisServer(path, dir string, extra func(port int) []string) (string, func(), error) {
	var lastErr error
	for try := 0; try < 5; try++ {
		port, err := freePort()
		if err != nil {
			return "", nil, err
		}
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", ""}
		if extra != nil {
			args = append(args, extra(port)...)
		}
		cmd := exec.Command(path, args...)
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		stop := func() { cmd.Process.Kill(); cmd.Wait() }
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		for i := 0; i < 100; i++ {
			if lastErr = c.Ping(context.Background()).Err(); lastErr == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.Close()
		if lastErr == nil {
			return addr, stop, nil
		}
		stop() // port taken meanwhile, or a slow start; try another port
	}
	return "", nil, fmt.Errorf("redis-server did not answer: %w", lastErr)
}

var queueSeq atomic.Int64
var nonName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// queueName returns a queue name unique to this test run.
func testQueue(t testing.TB) string {
	n := nonName.ReplaceAllString(filepath.Base(t.Name()), "-")
	if len(n) > 40 {
		n = n[:40]
	}
	return fmt.Sprintf("%s-%d-%d", n, time.Now().UnixNano()%1e6, queueSeq.Add(1))
}

var testSecret = []byte("test-secret-test-secret-test-secret!")

// newEngine returns an engine on its own client, initialised.
func newEngine(t testing.TB, rdb redis.UniversalClient, q string, opt Options) *Engine {
	t.Helper()
	if opt.Secret == nil {
		opt.Secret = testSecret
	}
	e, err := New(rdb, q, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}
