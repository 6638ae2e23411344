// Cross-process tests: they build this command, start three instances as
// subprocesses against one store (MyRedis in process, or redis-server; see
// queue/storetest) and talk to them over HTTP. They need the go tool
// on PATH and skip without a store.
package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/queue/storetest"
)

const testSecret = "three-instances-share-this-secret-32b"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// queueBinary builds this command once per test run.
func queueBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("go tool not on PATH: %v", err)
			return
		}
		buildDir, err = os.MkdirTemp("", "queue-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(buildDir, "queue")
		out, err := exec.Command(goTool, "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// instance is one queue process.
type instance struct {
	name string
	url  string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startInstance(t *testing.T, name, storeURL string, args ...string) *instance {
	t.Helper()
	port, err := storetest.FreePort()
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(queueBinary(t), append([]string{"--listen", addr, "--instance-id", name}, args...)...)
	// Settings also come from the environment, as in a deployment.
	cmd.Env = append(os.Environ(), "QUEUE_REDIS_URL="+storeURL, "QUEUE_SECRET="+testSecret, "QUEUE_LOG_LEVEL=debug")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in := &instance{name: name, url: "http://" + addr, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = in.log, in.log
	require.NoError(t, cmd.Start())
	go func() { cmd.Wait(); close(in.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-in.done
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, in.log.String())
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(in.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 10*time.Second, 20*time.Millisecond, "%s never became ready:\n%s", name, in.log.String())
	return in
}

var client = &http.Client{Timeout: 3 * time.Second}

// call makes one API call; code 0 means the instance did not answer.
func call(base, method, path, token, body string, hdr ...string) (int, map[string]any) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == "POST" || method == "PUT" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	out := map[string]any{}
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func TestInstancesShareTicketsAndRelease(t *testing.T) {
	st := storetest.Start(t)
	q := fmt.Sprintf("share-%d", time.Now().UnixNano())
	// A one-minute period: only releases (and joins at the head) admit, so
	// an admission within moments of a release is the release's doing.
	args := []string{"--queue", q, "--slot", "1", "--period", "1m"}
	a := startInstance(t, "A", st.URL(), args...)
	b := startInstance(t, "B", st.URL(), args...)
	c := startInstance(t, "C", st.URL(), args...)
	api := "/v1/queues/" + q

	code, u1 := call(a.url, "POST", api+"/join", "", `{}`)
	require.Equal(t, 200, code)
	t1 := str(u1, "ticket")
	require.Eventually(t, func() bool {
		code, s := call(b.url, "GET", api+"/status", t1, "")
		return code == 200 && str(s, "state") == "admitted"
	}, 5*time.Second, 20*time.Millisecond, "a ticket from A is accepted by B")

	code, u2 := call(b.url, "POST", api+"/join", "", `{}`)
	require.Equal(t, 200, code)
	t2 := str(u2, "ticket")
	code, s := call(c.url, "GET", api+"/status", t2, "")
	require.Equal(t, 200, code)
	assert.Equal(t, "waiting", str(s, "state"))
	assert.EqualValues(t, 1, s["position"])

	// Forged tickets are refused everywhere.
	code, _ = call(c.url, "GET", api+"/status", t2[:len(t2)-2]+"xx", "")
	assert.Equal(t, 401, code)

	// Release on B (u1 was admitted, not entered: its ticket may give the
	// place back): the next user is in at once, seen from A.
	start := time.Now()
	code, r := call(b.url, "POST", api+"/release", t1, "")
	require.Equal(t, 200, code)
	assert.Equal(t, true, r["released"])
	var pass string
	require.Eventually(t, func() bool {
		code, s := call(a.url, "GET", api+"/status", t2, "")
		pass = str(s, "pass")
		return code == 200 && str(s, "state") == "admitted"
	}, 5*time.Second, 10*time.Millisecond)
	t.Logf("release on B to admission seen on A: %v (period 1m)", time.Since(start))

	// The pass works once, on any instance.
	code, _ = call(c.url, "POST", api+"/enter", "", `{"pass":"`+pass+`"}`)
	assert.Equal(t, 200, code)
	code, _ = call(a.url, "POST", api+"/enter", "", `{"pass":"`+pass+`"}`)
	assert.Equal(t, 409, code)
}

// Killing an instance (SIGKILL, mid-traffic) loses nobody: every user who
// joined, on any instance, is admitted in the end through the survivors, and
// the slot is never exceeded.
func TestKillingAnInstanceLosesNobody(t *testing.T) {
	st := storetest.Start(t)
	q := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	const slot, users = 3, 30
	args := []string{"--queue", q, "--slot", fmt.Sprint(slot), "--period", "100ms", "--session", "1m"}
	ins := []*instance{
		startInstance(t, "A", st.URL(), args...),
		startInstance(t, "B", st.URL(), args...),
		startInstance(t, "C", st.URL(), append(args, "--mark-rounds")...),
	}
	api := "/v1/queues/" + q

	// An observer watches the active set the whole time.
	rdb := st.Client(t)
	ctx, stopObserver := context.WithCancel(context.Background())
	var maxActive atomic.Int64
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		for ctx.Err() == nil {
			if n, err := rdb.ZCard(ctx, "wr:{"+q+"}:active").Result(); err == nil && n > maxActive.Load() {
				maxActive.Store(n)
			}
		}
	}()

	var killed atomic.Bool
	alive := func() []*instance {
		if killed.Load() {
			return ins[:2]
		}
		return ins
	}
	// do calls a random live instance, and the others when it does not
	// answer. unanswered tells whether some attempt got no answer at all (the
	// instance may have done the work and died before replying).
	do := func(method, path, token, body string) (code int, m map[string]any, unanswered bool) {
		for attempt := 0; attempt < 20; attempt++ {
			live := alive()
			code, m = call(live[rand.IntN(len(live))].url, method, path, token, body)
			if code != 0 && code != 503 {
				return code, m, unanswered
			}
			unanswered = unanswered || code == 0
			time.Sleep(50 * time.Millisecond)
		}
		return 0, nil, unanswered
	}

	var admitted atomic.Int64
	results := make([]string, users)
	var wg sync.WaitGroup
	for i := 0; i < users; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Join through a fixed instance, so C issues a third of the tickets.
			code, j := call(ins[i%3].url, "POST", api+"/join", "", `{}`)
			if code != 200 {
				results[i] = fmt.Sprintf("join: %d", code)
				return
			}
			ticket := str(j, "ticket")
			deadline := time.Now().Add(40 * time.Second)
			for time.Now().Before(deadline) {
				code, s, _ := do("GET", api+"/status", ticket, "")
				switch {
				case code == 200 && str(s, "state") == "admitted":
					admitted.Add(1)
					code, in, unanswered := do("POST", api+"/enter", "", `{"pass":"`+str(s, "pass")+`"}`)
					// 409 after an unanswered try: the killed instance used
					// the pass before it could reply. The pass is single-use,
					// so a retry cannot tell; the user is inside all the same,
					// but the site has no session token: it lets the session
					// run out. The test releases it as the site's admin would.
					if code != 200 && !(code == 409 && unanswered) {
						results[i] = fmt.Sprintf("enter: %d", code)
						return
					}
					time.Sleep(time.Duration(30+rand.IntN(70)) * time.Millisecond)
					if code == 200 {
						code, _, _ = do("POST", api+"/release", str(in, "session"), "")
					} else {
						id, _, _ := strings.Cut(ticket, ".")
						_, err := rdb.ZRem(context.Background(), "wr:{"+q+"}:active", id).Result()
						code = 200
						if err != nil {
							code = 0
						}
					}
					if code != 200 {
						results[i] = fmt.Sprintf("release: %d", code)
						return
					}
					results[i] = "done"
					return
				case code == 200:
					time.Sleep(30 * time.Millisecond)
				default:
					results[i] = fmt.Sprintf("status: %d %v", code, s)
					return
				}
			}
			results[i] = "still waiting at the deadline"
		}()
	}

	// Kill C once the room has turned over a few times, the moment the store
	// shows it inside a round (its round marker). Whether the kill landed
	// mid-round is read from the store afterwards: the marker of a round that
	// finished is gone. Up to ten Cs are started and killed until one does.
	require.Eventually(t, func() bool { return admitted.Load() >= users/3 }, 30*time.Second, 10*time.Millisecond)
	marker := "wr:{" + q + "}:round:C"
	kills, midRound := 0, 0
	victim := ins[2]
	for kills < 10 && midRound == 0 {
		if kills > 0 {
			victim = startInstance(t, "C", st.URL(), append(args, "--mark-rounds")...)
		}
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); {
			if rdb.Exists(ctx, marker).Val() == 1 {
				break
			}
		}
		require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
		killed.Store(true)
		<-victim.done
		kills++
		if rdb.Exists(ctx, marker).Val() == 1 {
			midRound++
		}
		rdb.Del(ctx, marker)
	}
	t.Logf("killed C %d times after %d admissions; %d kill(s) landed mid-round (store's view)", kills, admitted.Load(), midRound)
	require.Positive(t, midRound, "a kill landed while a round was in flight")

	wg.Wait()
	stopObserver()
	<-observed
	for i, r := range results {
		assert.Equal(t, "done", r, "user %d", i)
	}
	assert.LessOrEqual(t, maxActive.Load(), int64(slot), "the observer never saw more than the slot inside")
	_, info := call(ins[0].url, "GET", api, "", "")
	assert.EqualValues(t, 0, info["waiting"])
	assert.EqualValues(t, 0, info["active"])
	assert.EqualValues(t, users, info["admitted_total"])

	// SIGTERM: a graceful stop, exit status 0.
	require.NoError(t, ins[1].cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-ins[1].done:
		assert.Equal(t, 0, ins[1].cmd.ProcessState.ExitCode(), ins[1].log.String())
		assert.Contains(t, ins[1].log.String(), `msg="shutting down"`)
		assert.Contains(t, ins[1].log.String(), "msg=stopped")
	case <-time.After(15 * time.Second):
		t.Fatal("B did not stop within 15s of SIGTERM")
	}
}

// Flags: a missing or short secret is refused without --dev; bad values are
// usage errors (exit 2).
func TestFlags(t *testing.T) {
	bin := queueBinary(t)
	run := func(env []string, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run(nil, "--listen", "127.0.0.1:0")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "at least 32 bytes")
	code, out = run([]string{"QUEUE_SECRET=short"}, "--listen", "127.0.0.1:0")
	assert.Equal(t, 2, code, out)
	code, out = run([]string{"QUEUE_SECRET=" + testSecret, "QUEUE_STRATEGY=fast"})
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "QUEUE_STRATEGY")
	code, out = run(nil, "--dev", "--queue", "q:slot=0")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "slot")
	code, out = run(nil, "--dev", "--queue", "q:colour=blue")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "unknown setting")
	code, out = run([]string{"QUEUE_SECRET=" + testSecret, "QUEUE_ADMIN_TOKEN=short"})
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "--admin-token (QUEUE_ADMIN_TOKEN) must be at least 32 bytes")
	code, out = run([]string{"QUEUE_SECRET=" + testSecret}, "--trusted-proxies", "10.0.0.0/8,nonsense")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "not a CIDR")
	code, out = run(nil, "--dev", "--queue", "q:join-rate=-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "join-rate")
	code, out = run(nil, "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "QUEUE_SOME_FLAG")
}
