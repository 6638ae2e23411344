package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Env is what every scenario shares: where the binaries are, where child logs
// go, and where progress is drawn.
type Env struct {
	BinDir      string    // holds myredis and queue; built with `go build` when missing
	RedisServer string    // path of redis-server; "" to skip real Redis
	LogDir      string    // child process logs; a temporary directory when ""
	Progress    io.Writer // progress bars (stderr); nil for none
	Log         io.Writer // one-line notices (stderr); nil for none
	CPUs        CPUPlan   // where this process and the servers it starts run (ApplyCPUs)

	buildMu sync.Mutex
}

// DefaultRedisServer is where Debian's redis-server package puts the binary.
const DefaultRedisServer = "/usr/bin/redis-server"

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// HaveRedis reports whether a real redis-server can be started.
func (e *Env) HaveRedis() bool {
	if e.RedisServer == "" {
		return false
	}
	_, err := os.Stat(e.RedisServer)
	return err == nil
}

// Binary returns the path of bin/<name>, building ./cmd/<name> first if missing.
func (e *Env) Binary(name string) (string, error) {
	e.buildMu.Lock()
	defer e.buildMu.Unlock()
	dir := e.BinDir
	if dir == "" {
		dir = "bin"
	}
	path, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("%s not found and no source tree to build it: %w", path, err)
	}
	e.logf("bench: building %s", path)
	cmd := exec.Command("go", "build", "-o", path, "./cmd/"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	return path, nil
}

// moduleRoot finds the directory holding go.mod, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}

// FreePort returns a loopback TCP port nobody listens on right now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Proc is a child process the bench started.
type Proc struct {
	Name string
	Addr string // host:port it serves on
	cmd  *exec.Cmd
	log  string
	tmp  bool // log in the temporary directory: removed after a clean stop
	done chan struct{}
	err  error
}

// start runs path with args, logging to a file under LogDir.
func (e *Env) start(name, addr, path string, args ...string) (*Proc, error) {
	dir := e.LogDir
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "bench-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := e.command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the bench
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &Proc{Name: name, Addr: addr, cmd: cmd, log: f.Name(), tmp: e.LogDir == "", done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Stop asks the process to stop (SIGTERM), killing it after 5 s.
func (p *Proc) Stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.tmp && p.err == nil {
			os.Remove(p.log)
		}
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill stops the process at once (SIGKILL).
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// exited reports the process's end, for a helpful error while waiting for it.
func (p *Proc) exited() error {
	select {
	case <-p.done:
		tail, _ := os.ReadFile(p.log)
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("%s exited (%v); log %s:\n%s", p.Name, p.err, p.log, tail)
	default:
		return nil
	}
}

// waitRedis waits until the process answers PING.
func (p *Proc) waitRedis(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := p.exited(); err != nil {
			return err
		}
		if err := c.Ping(ctx).Err(); err == nil {
			return nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s at %s not answering: %w", p.Name, p.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitHTTP waits until GET url answers 200.
func (p *Proc) waitHTTP(ctx context.Context, url string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := p.exited(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s at %s not ready: %w", p.Name, url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Target is one store a scenario measures: a server the bench started, or a URL.
type Target struct {
	Name    string // "myredis", "myredis-w4", "redis", or the URL's host
	URL     string // redis://127.0.0.1:port/0
	Version string // from INFO server
	Workers int    // MyRedis executor workers; 0 when not MyRedis
	proc    *Proc
}

// Addr is the target's host:port.
func (t *Target) Addr() string {
	opt, err := redis.ParseURL(t.URL)
	if err != nil {
		return ""
	}
	return opt.Addr
}

// Close stops the server if the bench started it.
func (t *Target) Close() { t.proc.Stop() }

// Client opens a go-redis client to the target.
func (t *Target) Client(poolSize int) *redis.Client {
	opt, err := redis.ParseURL(t.URL)
	if err != nil {
		panic(err) // URLs are checked when the target is made
	}
	opt.PoolSize = poolSize
	opt.MinIdleConns = 0
	opt.MaxRetries = -1 // a failed command is counted, never silently repeated
	return redis.NewClient(opt)
}

// StartMyRedis starts bin/myredis with the given executor worker count.
func (e *Env) StartMyRedis(ctx context.Context, workers int) (*Target, error) {
	bin, err := e.Binary("myredis")
	if err != nil {
		return nil, err
	}
	name := "myredis"
	if workers > 1 {
		name = "myredis-w" + strconv.Itoa(workers)
	}
	return e.startStore(ctx, name, workers, bin, "--workers", strconv.Itoa(workers))
}

// StartRedis starts a real redis-server with persistence off.
func (e *Env) StartRedis(ctx context.Context) (*Target, error) {
	if !e.HaveRedis() {
		return nil, fmt.Errorf("redis-server not found at %q", e.RedisServer)
	}
	return e.startStore(ctx, "redis", 0, e.RedisServer, "--save", "", "--appendonly", "no")
}

func (e *Env) startStore(ctx context.Context, name string, workers int, bin string, args ...string) (*Target, error) {
	var lastErr error
	for range 3 { // a free port can be taken between FreePort and the child's bind
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, args...)
		p, err := e.start(name, addr, bin, all...)
		if err != nil {
			return nil, err
		}
		if lastErr = p.waitRedis(ctx); lastErr != nil {
			p.Stop()
			continue
		}
		t := &Target{Name: name, URL: "redis://" + addr + "/0", Workers: workers, proc: p}
		t.Version = serverVersion(ctx, t)
		return t, nil
	}
	return nil, lastErr
}

// URLTarget wraps a store the user runs.
func URLTarget(ctx context.Context, url string) (*Target, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("bad --redis-url %q: %w", url, err)
	}
	t := &Target{Name: opt.Addr, URL: url}
	c := t.Client(1)
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	t.Version = serverVersion(ctx, t)
	if w, ok := infoField(ctx, t, "executor_workers"); ok {
		t.Workers, _ = strconv.Atoi(w)
	}
	return t, nil
}

// serverVersion describes the server from INFO server.
func serverVersion(ctx context.Context, t *Target) string {
	c := t.Client(1)
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := parseInfo(info)
	if f["myredis"] != "" {
		return fmt.Sprintf("MyRedis (Redis %s compatible, %s, executor_workers=%s)",
			f["redis_version"], f["go_version"], f["executor_workers"])
	}
	return "Redis " + f["redis_version"]
}

func infoField(ctx context.Context, t *Target, name string) (string, bool) {
	c := t.Client(1)
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", false
	}
	v, ok := parseInfo(info)[name]
	return v, ok
}

func parseInfo(info string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// DefaultTargets starts MyRedis with one worker, MyRedis with `workers` workers
// (skipped when workers <= 1), and real Redis when present; or, when urls are
// given, wraps those instead. The caller closes them.
func (e *Env) DefaultTargets(ctx context.Context, urls []string, workers int) ([]*Target, error) {
	var ts []*Target
	fail := func(err error) ([]*Target, error) {
		for _, t := range ts {
			t.Close()
		}
		return nil, err
	}
	if len(urls) > 0 {
		for _, u := range urls {
			t, err := URLTarget(ctx, u)
			if err != nil {
				return fail(err)
			}
			ts = append(ts, t)
		}
		return ts, nil
	}
	t, err := e.StartMyRedis(ctx, 1)
	if err != nil {
		return fail(err)
	}
	ts = append(ts, t)
	if workers > 1 {
		t, err := e.StartMyRedis(ctx, workers)
		if err != nil {
			return fail(err)
		}
		ts = append(ts, t)
	}
	if e.HaveRedis() {
		t, err := e.StartRedis(ctx)
		if err != nil {
			return fail(err)
		}
		ts = append(ts, t)
	} else {
		e.logf("bench: redis-server not found at %q: measuring MyRedis only", e.RedisServer)
	}
	return ts, nil
}
