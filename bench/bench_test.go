// Tests of the bench scenarios in tiny configurations. They build bin/myredis
// (and bin/queue) into a temporary directory and start real processes; the real
// redis-server parts run only where /usr/bin/redis-server exists.
package bench

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/redcon"
)

var testBin string // directory holding the binaries built for the tests

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		panic(err)
	}
	testBin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func testEnv(t *testing.T) *Env {
	t.Helper()
	e := &Env{BinDir: testBin, RedisServer: "", LogDir: t.TempDir()}
	if testing.Verbose() {
		e.Log = os.Stderr
	}
	return e
}

func TestRaceCounterCountsManufacturedDoubleWin(t *testing.T) {
	var c RaceCounter
	c.Add(1, 0) // one leader: fine
	c.Add(2, 0) // manufactured double win
	c.Add(0, 1) // nobody won, one command failed
	c.Add(3, 0) // three leaders
	c.Add(1, 0)
	want := RaceCounter{Rounds: 5, MultiWinner: 2, NoWinner: 1, ExtraWins: 3, MaxWinners: 3, Errors: 1,
		Winners: map[int]int{0: 1, 1: 2, 2: 1, 3: 1}}
	if c.Rounds != want.Rounds || c.MultiWinner != want.MultiWinner || c.NoWinner != want.NoWinner ||
		c.ExtraWins != want.ExtraWins || c.MaxWinners != want.MaxWinners || c.Errors != want.Errors {
		t.Fatalf("counter = %+v, want %+v", c, want)
	}
	for w, n := range want.Winners {
		if c.Winners[w] != n {
			t.Errorf("rounds with %d winners = %d, want %d", w, c.Winners[w], n)
		}
	}
	if got := c.Rate(); got != 0.4 {
		t.Errorf("rate = %v, want 0.4", got)
	}
}

// fakeStore is a RESP server whose SET always succeeds (reply) or never does:
// it manufactures the double wins, or the empty rounds, the counter must see.
func fakeStore(t *testing.T, setReply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := redcon.NewServer(ln.Addr().String(), func(conn redcon.Conn, cmd redcon.Command) {
		switch strings.ToUpper(string(cmd.Args[0])) {
		case "PING":
			conn.WriteString("PONG")
		case "SET":
			if setReply == "OK" {
				conn.WriteString("OK")
			} else {
				conn.WriteNull()
			}
		case "INFO":
			conn.WriteBulkString("# Server\r\nredis_version:0.0.0\r\n")
		default:
			conn.WriteError("ERR unknown command")
		}
	}, nil, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "redis://" + ln.Addr().String() + "/0"
}

func TestRaceLeaderCountsEveryWinnerThroughTheWire(t *testing.T) {
	ctx := context.Background()
	e := testEnv(t)
	p := RaceParams{Contenders: 5, Rounds: 20, LeaseTTL: time.Second}
	for _, tc := range []struct {
		reply             string
		multi, none, maxW int
	}{
		{"OK", 20, 0, 5}, // everyone wins every round
		{"nil", 0, 20, 0},
	} {
		target, err := URLTarget(ctx, fakeStore(t, tc.reply))
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.raceLeader(ctx, target, p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Rounds != 20 || c.MultiWinner != tc.multi || c.NoWinner != tc.none || c.MaxWinners != tc.maxW || c.Errors != 0 {
			t.Errorf("SET replies %s: counter %+v, want %d multi, %d empty, max %d", tc.reply, c, tc.multi, tc.none, tc.maxW)
		}
	}
}

// TestRaceTiny runs `bench race` small against MyRedis with 1 and 2 workers
// (and real Redis when present). One executor never elects two leaders.
func TestRaceTiny(t *testing.T) {
	e := testEnv(t)
	e.RedisServer = DefaultRedisServer
	p := RaceParams{Contenders: 4, Rounds: 200, Workers: 2, LeaseTTL: time.Second}
	r, err := e.Race(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(RaceResults)
	want := 2
	if e.HaveRedis() {
		want = 3
	}
	if len(res.Targets) != want {
		t.Fatalf("%d targets, want %d", len(res.Targets), want)
	}
	for _, tr := range res.Targets {
		c := tr.Leader
		if c.Rounds != p.Rounds || c.Errors != 0 || c.NoWinner != 0 {
			t.Errorf("%s: %+v, want %d clean rounds each with a winner", tr.Target, c, p.Rounds)
		}
		if tr.Workers <= 1 && c.MultiWinner != 0 {
			t.Errorf("%s: %d rounds with several winners on a serial server", tr.Target, c.MultiWinner)
		}
	}
	checkWritten(t, r, "race-leaders.png")
}

// TestServerTiny runs `bench server` small: every request answered, a ratio
// when real Redis is present.
func TestServerTiny(t *testing.T) {
	e := testEnv(t)
	e.RedisServer = DefaultRedisServer
	p := ServerParams{Clients: 3, Requests: 300, Runs: 2, Pipeline: 1, Commands: []string{"SETNXPX", "GETDEL"}}
	r, err := e.Server(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(ServerResults)
	for _, c := range res.Cells {
		if c.Errors != 0 || c.OpsPerSec <= 0 || len(c.Runs) != p.Runs || c.Requests != p.Runs*p.Requests {
			t.Errorf("%s on %s: %+v", c.Command, c.Target, c)
		}
	}
	if e.HaveRedis() && len(res.Ratios) != 2 {
		t.Errorf("ratios %v, want one per command", res.Ratios)
	}
	checkWritten(t, r, "server-throughput.png", "server-latency.png")
}

// checkWritten writes the report and checks its files.
func checkWritten(t *testing.T, r *Report, charts ...string) {
	t.Helper()
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	for _, k := range []string{"machine", "params", "results", "tables"} {
		if back[k] == nil {
			t.Errorf("results.json lacks %q", k)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "# bench "+r.Scenario) {
		t.Errorf("report.md: %v %q", err, md)
	}
	for _, c := range charts {
		st, err := os.Stat(filepath.Join(dir, c))
		if err != nil || st.Size() < 1000 {
			t.Errorf("chart %s: %v", c, err)
		}
	}
}

// roomStore picks the store for the queue scenarios' tests: MyRedis when it
// has what the queue needs (sorted sets, hashes, EVAL), else real Redis, else
// the test is skipped.
func roomStore(t *testing.T, e *Env) string {
	t.Helper()
	ctx := context.Background()
	my, err := e.StartMyRedis(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	missing := storeMissing(ctx, my)
	my.Close()
	if len(missing) == 0 {
		return "myredis"
	}
	e.RedisServer = DefaultRedisServer
	if !e.HaveRedis() {
		t.Skipf("MyRedis lacks %v and redis-server is not at %s", missing, DefaultRedisServer)
	}
	t.Logf("MyRedis lacks %v: using redis-server", missing)
	return "redis"
}

// TestOvershootTiny: 40 users through 3 instances of atomic and optimistic.
// On a serial store atomic never lets the active set pass the slot, and no
// strategy admits anyone twice or loses anyone.
func TestOvershootTiny(t *testing.T) {
	e := testEnv(t)
	p := DefaultOvershootParams()
	p.Store = roomStore(t, e)
	p.Strategies, p.Instances, p.Slot = []string{"atomic", "optimistic"}, []int{3}, 5
	p.Stages = []stage{{40, time.Second}}
	p.HoldMin, p.HoldMax, p.Session, p.Period, p.PollCap, p.Drain = 20*time.Millisecond, 60*time.Millisecond, time.Second, 50*time.Millisecond, 100*time.Millisecond, 20*time.Second
	r, err := e.Overshoot(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(OvershootResults)
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(res.Cells))
	}
	for _, c := range res.Cells {
		t.Logf("%+v", c)
		if c.Skipped != "" {
			t.Fatalf("%s skipped: %s", c.Strategy, c.Skipped)
		}
		if c.Users != 40 || c.Admitted != 40 || c.Lost != 0 || c.Duplicates != 0 || c.Errors != 0 || c.StillWaiting != 0 {
			t.Errorf("%s: users %d admitted %d lost %d duplicates %d errors %d (%s) still waiting %d",
				c.Strategy, c.Users, c.Admitted, c.Lost, c.Duplicates, c.Errors, c.FirstError, c.StillWaiting)
		}
		if c.ObserverReads == 0 {
			t.Errorf("%s: the observer read nothing", c.Strategy)
		}
		if c.ConfirmedOver != 0 {
			t.Errorf("%s: %d users held an admission beyond the slot", c.Strategy, c.ConfirmedOver)
		}
		if c.Strategy == "atomic" && c.MaxObserved > int64(p.Slot) {
			t.Errorf("atomic: observer saw %d active, slot %d", c.MaxObserved, p.Slot)
		}
	}
	checkWritten(t, r, "overshoot-active-3.png", "overshoot-max-active.png", "overshoot-latency.png")
}

// TestPeriodTiny: one timed period and the event-driven run, every user admitted.
func TestPeriodTiny(t *testing.T) {
	e := testEnv(t)
	p := DefaultPeriodParams()
	p.Store = roomStore(t, e)
	p.Slot, p.Arrival, p.Session, p.Duration = 5, 10, 300*time.Millisecond, 2*time.Second
	p.Periods, p.EventBase, p.Backlog = []time.Duration{500 * time.Millisecond}, time.Second, 0
	r, err := e.Period(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(PeriodResults)
	if len(res.Runs) != 2 || !res.Runs[1].EventDriven {
		t.Fatalf("runs %+v, want a timed and an event-driven one", res.Runs)
	}
	for _, pr := range res.Runs {
		t.Logf("%+v", pr)
		if pr.Users != 20 || pr.Errors != 0 || pr.AdmittedPerSec <= 0 || pr.ModelPerSec <= 0 {
			t.Errorf("%s: %+v", pr.Label, pr)
		}
	}
	checkWritten(t, r, "period-backlog.png", "period-throughput.png")
}

// TestEtaTiny: every user admitted; each counted once, with or without an ETA.
func TestEtaTiny(t *testing.T) {
	e := testEnv(t)
	p := DefaultEtaParams()
	p.Store = roomStore(t, e)
	p.Slot, p.Instances, p.Period = 5, 1, 50*time.Millisecond
	p.Stages = []stage{{20, 1500 * time.Millisecond}}
	p.HoldMin, p.HoldMax, p.Drain = 50*time.Millisecond, 150*time.Millisecond, 20*time.Second
	r, err := e.Eta(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(EtaResults)
	t.Logf("%+v", res)
	if res.Users != 30 || res.NotAdmitted != 0 || res.WithETA+res.WithoutETA != res.Users || res.Errors != 0 {
		t.Errorf("users %d, with ETA %d, without %d, not admitted %d, errors %d (%s)",
			res.Users, res.WithETA, res.WithoutETA, res.NotAdmitted, res.Errors, res.FirstError)
	}
	if res.P90Abs < res.MedianAbs {
		t.Errorf("p90 |error| %v < median %v", res.P90Abs, res.MedianAbs)
	}
}

// TestRaceOptimisticTiny: the optimistic part of `bench race` on a serial
// store admits everyone once, loses nobody and never confirms beyond the slot.
func TestRaceOptimisticTiny(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	var target *Target
	var err error
	if roomStore(t, e) == "myredis" {
		target, err = e.StartMyRedis(ctx, 1)
	} else {
		target, err = e.StartRedis(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	q, skipped := e.raceQueue(ctx, target, RaceParams{Instances: 3, Slot: 10, Users: 300})
	if skipped != "" {
		t.Fatal(skipped)
	}
	t.Logf("%+v", *q)
	if q.Admitted != 300 || q.Duplicates != 0 || q.Lost != 0 || q.ConfirmedOver != 0 || q.Errors != 0 || q.ObserverReads == 0 {
		t.Errorf("%+v", *q)
	}
}

// TestPagesTiny: both modes open every page, every release reaches the next
// user's page, only push mode publishes round events, and the report has
// one row per mode.
func TestPagesTiny(t *testing.T) {
	e := testEnv(t)
	p := DefaultPagesParams()
	p.Pages, p.Window, p.Every = []int{20}, 2*time.Second, 100*time.Millisecond
	r, err := e.Pages(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	runs := r.Results.([]*PagesRun)
	if len(runs) != 2 || len(r.Tables) != 2 || len(r.Tables[0].Rows) != 2 || len(r.Tables[1].Rows) != 2 {
		t.Fatalf("runs %d, tables %+v: want poll and push on MyRedis, in both tables", len(runs), r.Tables)
	}
	for _, x := range runs {
		t.Logf("%s: %+v", x.Mode, *x)
		if x.OpenErrors != 0 || x.Streams != 21 || x.Releases < 1 || x.Missed != 0 || x.Latency.N != x.Releases {
			t.Errorf("%s: streams %d, open errors %d (%s), releases %d, missed %d, latencies %d",
				x.Mode, x.Streams, x.OpenErrors, x.FirstError, x.Releases, x.Missed, x.Latency.N)
		}
		if published := x.SPublish > 0; published != (x.Mode == "push") {
			t.Errorf("%s: %.1f SPUBLISH/s", x.Mode, x.SPublish)
		}
		if x.ServerReleases != x.Releases || x.ReleaseCall.N != x.Releases {
			t.Errorf("%s: %d releases, the instances counted %d, %d release calls timed", x.Mode, x.Releases,
				x.ServerReleases, x.ReleaseCall.N)
		}
		if x.Mode == "push" && (x.ToEvent.N != x.Releases || x.EventToPage.N != x.Releases) {
			t.Errorf("push: %d releases, %d release->event and %d event->page times", x.Releases, x.ToEvent.N,
				x.EventToPage.N)
		}
	}
}
