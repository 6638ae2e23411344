// Package redistest starts servers for tests: MyRedis in-process, a real
// redis-server, or a built binary, each on a free loopback port and stopped by
// t.Cleanup; and a raw RESP client for byte-exact comparisons.
package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis"
)

// StartMyRedis serves a MyRedis with default settings (and opts) on a free
// loopback port until the test ends, and returns its address.
func StartMyRedis(t testing.TB, opts ...myredis.Option) string {
	t.Helper()
	_, addr := StartMyRedisConfig(t, myredis.Config{}, opts...)
	return addr
}

// StartMyRedisConfig serves a MyRedis built from cfg on a free loopback port
// (cfg.Port and cfg.Bind are replaced) and returns the server and its address.
func StartMyRedisConfig(t testing.TB, cfg myredis.Config, opts ...myredis.Option) (*myredis.Server, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir() // SAVE, BGSAVE, a disk sync, SHUTDOWN write dump.rdb there, not in the package
	}
	s, addr, stop, err := ServeMyRedis(cfg, opts...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("redistest: %v", err)
		}
	})
	return s, addr
}

// ServeMyRedis is StartMyRedisConfig without a test, for TestMain and tools: it
// returns once the server listens, with a stop function that closes it and
// waits for Serve to return.
// Without cfg.Dir the server's files go to a temporary directory that stop removes.
func ServeMyRedis(cfg myredis.Config, opts ...myredis.Option) (srv *myredis.Server, addr string, stop func() error, err error) {
	tmpDir := ""
	if cfg.Dir == "" {
		if tmpDir, err = os.MkdirTemp("", "myredis-"); err != nil {
			return nil, "", nil, err
		}
		cfg.Dir = tmpDir
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(tmpDir)
		return nil, "", nil, fmt.Errorf("listen: %w", err)
	}
	cfg.Bind = "127.0.0.1"
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	s, err := myredis.Open(cfg, opts...)
	if err != nil {
		ln.Close()
		os.RemoveAll(tmpDir)
		return nil, "", nil, fmt.Errorf("open MyRedis: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	addr = ln.Addr().String()
	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			s.Close()
			select {
			case err := <-served:
				if err != nil {
					stopErr = fmt.Errorf("MyRedis Serve: %w", err)
				}
			case <-time.After(10 * time.Second):
				stopErr = errors.New("MyRedis did not stop within 10s")
			}
			if tmpDir != "" {
				os.RemoveAll(tmpDir)
			}
		})
		return stopErr
	}
	// The listener is open, so clients can connect at once (the backlog holds
	// them until Serve accepts): no readiness probe, which would show up as a
	// client of its own in CLIENT LIST and INFO.
	select {
	case err := <-served:
		os.RemoveAll(tmpDir)
		return nil, "", nil, fmt.Errorf("MyRedis Serve: %v", err)
	default:
	}
	return s, addr, stop, nil
}

// RedisServerPath is the redis-server binary, or "" when it is not installed.
func RedisServerPath() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// SkipWithoutRedis skips the test when redis-server is not installed.
func SkipWithoutRedis(t testing.TB) {
	t.Helper()
	if RedisServerPath() == "" {
		t.Skip("redis-server not found in PATH: install redis-server (apt-get install redis-server) " +
			"to run the tests that compare MyRedis with real Redis; .ci/run does")
	}
}

// StartRealRedis starts a real redis-server on a free loopback port with no
// persistence, plus any extra redis-server arguments ("--proto-max-bulk-len",
// "1000"), and returns its address. It skips the test when redis-server is absent.
func StartRealRedis(t testing.TB, args ...string) string {
	t.Helper()
	SkipWithoutRedis(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := FreePort(t)
		argv := append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(),
			"--daemonize", "no", "--loglevel", "warning", "--logfile", "",
		}, args...)
		addr, err := startProcess(t, RedisServerPath(), argv, port)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	t.Fatalf("redistest: cannot start redis-server: %v", lastErr)
	return ""
}

// StartMyRedisBinary runs the myredis binary at bin (see BuildMyRedis) on a free
// port with extra arguments and returns its address. The process is killed when
// the test ends.
func StartMyRedisBinary(t testing.TB, bin string, args ...string) string {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := FreePort(t)
		argv := append([]string{"--port", strconv.Itoa(port)}, args...)
		addr, err := startProcess(t, bin, argv, port)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	t.Fatalf("redistest: cannot start %s: %v", bin, lastErr)
	return ""
}

var buildOnce sync.Map // package path -> *buildResult

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// BuildMyRedis builds waitroom/cmd/myredis once per test process and returns the
// binary's path.
func BuildMyRedis(t testing.TB) string {
	t.Helper()
	return BuildCommand(t, "waitroom/cmd/myredis")
}

// BuildCommand builds the main package pkg once per test process and returns the
// binary's path. The binary lives in a temporary directory removed at exit only
// by the OS, so it can be shared across tests.
func BuildCommand(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := buildOnce.LoadOrStore(pkg, &buildResult{})
	r := v.(*buildResult)
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "redistest-bin-")
		if err != nil {
			r.err = err
			return
		}
		r.path = filepath.Join(dir, filepath.Base(pkg))
		if runtime.GOOS == "windows" {
			r.path += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", r.path, pkg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			r.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if r.err != nil {
		t.Fatalf("redistest: %v", r.err)
	}
	return r.path
}

// startProcess runs bin with argv, waits until addr answers PING and arranges
// for the process to be killed at cleanup.
func startProcess(t testing.TB, bin string, argv []string, port int) (string, error) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, argv...)
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			rc := &Conn{nc: c, rd: newReader(c)}
			c.SetDeadline(time.Now().Add(2 * time.Second))
			reply, err := rc.DoErr("PING")
			c.Close()
			if err == nil && (reply == "+PONG\r\n" || strings.HasPrefix(reply, "-NOAUTH")) {
				break
			}
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("%s exited: %v\n%s", filepath.Base(bin), err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return "", fmt.Errorf("%s not ready on %s within 10s\n%s", filepath.Base(bin), addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return addr, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
