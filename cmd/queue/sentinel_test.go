package main_test

// The queue on a store replicated under Redis Sentinel: three instances, a
// crowd, and the master SIGKILLed mid-run. Needs redis-sentinel (skips
// without it) and builds cmd/myredis.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"waitroom/queue"
	"waitroom/queue/storetest"
)

// haNode is a store or a Sentinel process with its config file.
type haNode struct {
	cmd  *exec.Cmd
	port int
	addr string
}

func startHANode(t *testing.T, bin, conf string) *haNode {
	port, err := storetest.FreePort()
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "node.conf")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("port %d\ndir %s\n%s", port, dir, conf)), 0o644))
	cmd := exec.Command(bin, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	n := &haNode{cmd: cmd, port: port, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	t.Cleanup(n.kill)
	c := redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1})
	defer c.Close()
	require.Eventually(t, func() bool { return c.Ping(context.Background()).Err() == nil }, 10*time.Second, 20*time.Millisecond)
	return n
}

func (n *haNode) kill() {
	if n.cmd.ProcessState == nil {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
	}
}

// failoverReport are the figures of a failover under load.
type failoverReport struct {
	users, joined, done               int
	lost, admittedTwice, notJoined    int
	maxActive, slot                   int64
	admittedBeforeKill, admittedAfter int64
	waitShortLogs                     int
	retried                           map[string]int // calls answered only after retries, by route
	enterRepeated                     int            // enters answered again for their key (the first answer lost)
	orphans                           int64          // tickets left in line or active at the end that no user holds
	failoverSeconds                   float64
}

func (r failoverReport) String() string {
	return fmt.Sprintf("users %d, joined %d, done %d; lost %d, admitted twice %d, cap overshoot %d (max active %d, slot %d); "+
		"admissions before the kill %d, after %d; failover %.1fs; WAITs short of a replica %d; calls retried %v; enters repeated with their key %d; "+
		"orphan tickets %d",
		r.users, r.joined, r.done, r.lost, r.admittedTwice, max(r.maxActive-r.slot, 0), r.maxActive, r.slot,
		r.admittedBeforeKill, r.admittedAfter, r.failoverSeconds, r.waitShortLogs, r.retried, r.enterRepeated, r.orphans)
}

// startHACluster starts a MyRedis master, its replicas and three Sentinels
// watching it as "mymaster", and waits until the Sentinels see the replicas and
// each other. The caller closes the returned Sentinel client.
func startHACluster(t *testing.T, sentinelBin string, replicas int) (*haNode, []string, *redis.SentinelClient) {
	t.Helper()
	bin := myredisBinary(t)
	common := "repl-diskless-sync-delay 0\nsave \"\"\n"
	master := startHANode(t, bin, common)
	for range replicas {
		startHANode(t, bin, common+fmt.Sprintf("replicaof 127.0.0.1 %d\n", master.port))
	}
	var sentinelAddrs []string
	for range 3 {
		s := startHANode(t, sentinelBin, fmt.Sprintf("sentinel monitor mymaster 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 10000\n", master.port))
		sentinelAddrs = append(sentinelAddrs, s.addr)
	}
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinelAddrs[0]})
	require.Eventually(t, func() bool {
		reps, err := sc.Replicas(ctx, "mymaster").Result()
		others, err2 := sc.Sentinels(ctx, "mymaster").Result()
		return err == nil && err2 == nil && len(reps) == replicas && len(others) == 2
	}, 30*time.Second, 100*time.Millisecond, "the sentinels see the replicas and each other")
	return master, sentinelAddrs, sc
}

func TestQueueSurvivesStoreFailover(t *testing.T) {
	sentinelBin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel not found in PATH: install it (apt-get install redis-sentinel) to run the " +
			"failover test; .ci/run does")
	}
	master, sentinelAddrs, sc := startHACluster(t, sentinelBin, 2)
	defer sc.Close()
	ctx := context.Background()

	q := fmt.Sprintf("ha-%d", time.Now().UnixNano())
	const slot, users = 3, 60
	args := []string{"--queue", q, "--slot", fmt.Sprint(slot), "--period", "100ms", "--session", "1m",
		"--redis-sentinel", "mymaster", "--sentinel-addrs", strings.Join(sentinelAddrs, ","),
		"--wait-replicas", "1", "--wait-timeout", "100ms"}
	ins := []*instance{
		startInstance(t, "A", "redis://127.0.0.1:1/0", args...),
		startInstance(t, "B", "redis://127.0.0.1:1/0", args...),
		startInstance(t, "C", "redis://127.0.0.1:1/0", args...),
	}
	api := "/v1/queues/" + q
	store := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinelAddrs})
	defer store.Close()

	// An observer watches the active set on whichever node is master.
	obsCtx, stopObserver := context.WithCancel(ctx)
	var maxActive atomic.Int64
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		for obsCtx.Err() == nil {
			if n, err := store.ZCard(obsCtx, "wr:{"+q+"}:active").Result(); err == nil && n > maxActive.Load() {
				maxActive.Store(n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	// do calls a random instance until one answers (the store may be failing
	// over); a call that needed retries is noted in trace.
	do := func(trace *[]string, method, path, token, body string, hdr ...string) (int, map[string]any) {
		var failed []int
		defer func() {
			if len(failed) > 0 {
				*trace = append(*trace, fmt.Sprintf("%s %s: answers %v before the last", method, path[len(api)+1:], failed))
			}
		}()
		for attempt := 0; attempt < 200; attempt++ {
			code, m := call(ins[rand.IntN(len(ins))].url, method, path, token, body, hdr...)
			if code != 0 && code < 500 {
				return code, m
			}
			failed = append(failed, code)
			time.Sleep(50 * time.Millisecond)
		}
		return 0, nil
	}
	var admitted atomic.Int64
	var killedAt atomic.Int64 // admissions when the master died
	killedAt.Store(-1)
	type outcome struct {
		joined, done, lost bool
		passes             map[string]bool
		last               string   // the last answer, for a lost user
		trace              []string // calls that were retried, for a lost user
	}
	outcomes := make([]outcome, users)
	var wg sync.WaitGroup
	for i := 0; i < users; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outcomes[i]
			o.passes = map[string]bool{}
			time.Sleep(time.Duration(i*20) * time.Millisecond) // arrivals spread over the run
			// the page's retries of one join share its key: a retry after an
			// answer lost in the failover gets the ticket the first call made
			code, j := do(&o.trace, "POST", api+"/join", "", `{}`, "Idempotency-Key", fmt.Sprintf("user-%d-join", i))
			if code != 200 {
				return // never told it was in line: not a lost user
			}
			o.joined = true
			ticket := str(j, "ticket")
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
				code, s := do(&o.trace, "GET", api+"/status", ticket, "")
				switch {
				case code == 200 && str(s, "state") == "admitted":
					if !o.passes[str(s, "pass")] {
						o.passes[str(s, "pass")] = true
						admitted.Add(1)
					}
					// The site's retries of one enter share its key: a retry
					// after an answer lost in the failover (the pass consumed
					// and replicated, the reply cut off) gets the session.
					key := fmt.Sprintf("user-%d-pass-%d", i, len(o.passes))
					code, in := do(&o.trace, "POST", api+"/enter", "", `{"pass":"`+str(s, "pass")+`"}`, "Idempotency-Key", key)
					if code != 200 {
						o.last = fmt.Sprintf("enter: %d %v", code, in)
						time.Sleep(50 * time.Millisecond)
						continue // e.g. the admission was lost with the master: poll again
					}
					time.Sleep(time.Duration(50+rand.IntN(100)) * time.Millisecond)
					do(&o.trace, "POST", api+"/release", str(in, "session"), "")
					o.done = true
					return
				case code == 200:
					time.Sleep(30 * time.Millisecond)
				default:
					o.lost = true // the line forgot the ticket
					o.last = fmt.Sprintf("status: %d %v", code, s)
					return
				}
			}
			o.lost = true
		}()
	}

	require.Eventually(t, func() bool { return admitted.Load() >= users/4 }, 60*time.Second, 10*time.Millisecond)
	killedAt.Store(admitted.Load())
	killTime := time.Now()
	master.kill() // SIGKILL, mid-run
	require.Eventually(t, func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		return err == nil && len(a) == 2 && a[1] != fmt.Sprint(master.port)
	}, 60*time.Second, 50*time.Millisecond, "Sentinel promotes a replica")
	failover := time.Since(killTime)
	wg.Wait()
	stopObserver()
	<-observed

	r := failoverReport{users: users, slot: slot, maxActive: maxActive.Load(), failoverSeconds: failover.Seconds(),
		admittedBeforeKill: killedAt.Load(), admittedAfter: admitted.Load() - killedAt.Load()}
	// every user who joined released its session: a ticket still in line or
	// active is one nobody holds (a join retried without its key made two)
	for _, set := range []string{"waiting", "active"} {
		n, err := store.ZCard(ctx, "wr:{"+q+"}:"+set).Result()
		require.NoError(t, err)
		r.orphans += n
	}
	for _, in := range ins {
		for _, line := range strings.Split(in.log.String(), "\n") {
			if strings.Contains(line, "WAIT short") {
				r.waitShortLogs++
				t.Logf("%s: %s", in.name, line)
			}
			if strings.Contains(line, "enter repeated with its idempotency key") {
				r.enterRepeated++
			}
		}
	}
	r.retried = map[string]int{}
	for _, o := range outcomes {
		for _, c := range o.trace {
			r.retried[strings.TrimSuffix(strings.Fields(c)[1], ":")]++
		}
		switch {
		case !o.joined:
			r.notJoined++
			continue
		case o.lost:
			r.lost++
			t.Logf("lost user: %s (passes %v; retried calls %q)", o.last, o.passes, o.trace)
		}
		r.joined++
		if o.done {
			r.done++
		}
		if len(o.passes) > 1 {
			r.admittedTwice++
		}
	}
	t.Logf("failover under load: %s", r)
	require.Positive(t, r.admittedAfter, "the queue keeps admitting after the failover")
	require.LessOrEqual(t, r.maxActive, r.slot, "cap overshoot: %s", r)
	require.Zero(t, r.admittedTwice, "admitted twice: %s", r)
	// A lost user was, in about 1 run in 3, an enter whose answer the kill cut
	// off after the pass was consumed: retried, it got 409 and no session.
	// With the Idempotency-Key the retry gets the session; none is lost.
	require.Zero(t, r.lost, "users lost: %s", r)
	require.Zero(t, r.orphans, "orphan tickets: %s", r)
}

// The events subscription through a Sentinel failover client follows a
// failover: the master is SIGKILLed, the subscription drops, and it comes
// back on the promoted replica, where round events flow again.
func TestEventsFollowFailover(t *testing.T) {
	sentinelBin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel not found in PATH (apt-get install redis-sentinel)")
	}
	master, sentinelAddrs, sc := startHACluster(t, sentinelBin, 1)
	defer sc.Close()
	ctx := context.Background()

	store := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinelAddrs})
	defer store.Close()
	eng, err := queue.New(store, fmt.Sprintf("ha-ev-%d", time.Now().UnixNano()), queue.Options{
		Secret: []byte("sentinel-events-secret-sentinel-events"), Defaults: queue.Settings{Slot: 1}})
	require.NoError(t, err)
	require.NoError(t, eng.Init(ctx))
	events, ups := make(chan queue.Event, 100), make(chan bool, 100)
	wctx, stop := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		eng.Watch(wctx, func(ev queue.Event) { events <- ev }, func(up bool) { ups <- up })
	}()
	defer func() { stop(); <-watching }()
	waitUp := func(want bool) {
		t.Helper()
		select {
		case got := <-ups:
			require.Equal(t, want, got)
		case <-time.After(60 * time.Second):
			t.Fatalf("subscription never became up=%v", want)
		}
	}
	cur, err := eng.Join(ctx, "") // admitted by the join itself (slot 1)
	require.NoError(t, err)
	// admitNext lines a user up behind cur, releases cur, and runs rounds
	// until the subscription delivers the round that admitted the new user.
	admitNext := func() {
		t.Helper()
		next, err := eng.Join(ctx, "")
		require.NoError(t, err)
		_, err = eng.Release(ctx, cur.Ticket)
		require.NoError(t, err)
		for deadline := time.Now().Add(60 * time.Second); ; {
			_, _ = eng.Round(ctx)
			select {
			case ev := <-events:
				if len(ev.Admitted) == 1 && ev.Admitted[0] == next.Ticket {
					cur = next
					return
				}
			case <-time.After(200 * time.Millisecond):
			}
			require.True(t, time.Now().Before(deadline), "no round event admitting %s", next.Ticket)
		}
	}
	waitUp(true)
	admitNext()

	master.kill()
	waitUp(false)
	require.Eventually(t, func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		return err == nil && len(a) == 2 && a[1] != fmt.Sprint(master.port)
	}, 60*time.Second, 50*time.Millisecond, "Sentinel promotes the replica")
	waitUp(true)
	admitNext()
}
