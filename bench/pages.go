package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/queue"
)

// `bench pages` (issue 17): what open waiting-room pages cost the store, and
// how soon a page learns it is admitted. Per store and events mode (poll:
// every page's status read from the store on a schedule; push: round events
// on the queue's shard channel, one subscription per queue per instance) and
// page count, the bench starts cmd/queue instances (slot 1), joins the users
// in process, opens one event stream (the page's EventSource) per user spread
// over the instances, and then releases the admitted user at a fixed pace:
// each release lets the next user in, whose page is waiting for it. It counts
// the store's commands (INFO commandstats, commands inside scripts included)
// over the releasing window and times each release to the moment the next
// user's page receives "admitted".

// PagesParams configure `bench pages`.
type PagesParams struct {
	Pages     []int         `json:"pages"`      // open pages per run
	Modes     []string      `json:"modes"`      // poll, push
	Instances int           `json:"instances"`  // queue instances (processes)
	Window    time.Duration `json:"window_ns"`  // releasing and counting
	Every     time.Duration `json:"every_ns"`   // one release per Every, when the last admitted page saw it
	TicketTTL time.Duration `json:"ticket_ttl"` // push mode holds the open pages' tickets every TTL/3
	Period    time.Duration `json:"period_ns"`
	RedisURLs []string      `json:"redis_urls,omitempty"`
}

// DefaultPagesParams: 1,000 and 10,000 pages on 3 instances, a release every
// 250 ms for 30 s, ticket TTL 60 s (push holds the pages' tickets every 20 s, so
// the window holds a whole cycle of them).
func DefaultPagesParams() PagesParams {
	return PagesParams{Pages: []int{1000, 10000}, Modes: []string{"poll", "push"}, Instances: 3,
		Window: 30 * time.Second, Every: 250 * time.Millisecond, TicketTTL: time.Minute,
		Period: 200 * time.Millisecond}
}

// PagesRun is one store x mode x page count.
type PagesRun struct {
	Store     string             `json:"store"`
	Mode      string             `json:"mode"`
	Pages     int                `json:"pages"`
	Seconds   float64            `json:"seconds"`            // the counting window
	Commands  float64            `json:"commands_per_s"`     // every command the store ran, scripts' included
	ZRank     float64            `json:"zrank_per_s"`        // ticket reads (one ZRANK each in the status script)
	EvalSHA   float64            `json:"evalsha_per_s"`      // script calls
	SPublish  float64            `json:"spublish_per_s"`     // round events
	ByCommand map[string]float64 `json:"by_command_per_s"`   // the rest
	Releases  int                `json:"releases"`           // samples
	Latency   Latency            `json:"release_to_page_ms"` // release sent -> next user's page has "admitted"
	MaxMs     float64            `json:"release_to_page_max_ms"`
	// Where the time goes (the bench subscribes to the round events itself):
	// release sent -> its answer; release sent -> the round event admitting
	// the next user seen by the bench; that event -> the page has "admitted".
	ReleaseCall Latency `json:"release_call_ms"`
	ToEvent     Latency `json:"release_to_event_ms"`
	EventToPage Latency `json:"event_to_page_ms"`
	// The instances' own count of release requests (their /metrics histogram):
	// how many there were in the window and how many took 25 ms or more
	// inside the instance, which tells the instances' time from the bench's.
	ServerReleases     int    `json:"server_releases"`
	ServerSlowReleases int    `json:"server_releases_over_25ms"`
	Missed             int    `json:"missed"`      // pages that did not see their admission within 10 s
	OpenErrors         int    `json:"open_errors"` // pages that could not be opened
	FirstError         string `json:"first_error,omitempty"`
	Streams            int    `json:"streams"`     // pages open when the window started
	Moved              int    `json:"pages_moved"` // far pages that saw their position change in the window
	lat                []float64
	call               []float64
	evs                *eventTimes
}

// eventTimes is when the bench's own subscription saw each ticket admitted
// by a round event (unix ns).
type eventTimes struct {
	mu sync.Mutex
	at map[string]int64
}

func (t *eventTimes) get(id string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at[id]
}

// watchEvents subscribes to the queue's round events and records when each
// admitted ticket was named; it returns once the subscription is up.
func watchEvents(ctx context.Context, rdb *redis.Client, q string) (*eventTimes, func(), error) {
	t := &eventTimes{at: map[string]int64{}}
	ps := rdb.SSubscribe(ctx, "wr:{"+q+"}:events")
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, nil, err
	}
	go func() {
		for m := range ps.Channel() {
			now := time.Now().UnixNano()
			var ev queue.Event
			if json.Unmarshal([]byte(m.Payload), &ev) != nil {
				continue
			}
			t.mu.Lock()
			for _, id := range ev.Admitted {
				if t.at[id] == 0 {
					t.at[id] = now
				}
			}
			t.mu.Unlock()
		}
	}()
	return t, func() { ps.Close() }, nil
}

// Pages runs the scenario.
func (e *Env) Pages(ctx context.Context, p PagesParams) (*Report, error) {
	if len(p.Pages) == 0 || len(p.Modes) == 0 || p.Instances < 1 {
		return nil, errors.New("pages: need page counts, modes and instances")
	}
	for _, m := range p.Modes {
		if m != "poll" && m != "push" {
			return nil, fmt.Errorf("pages: mode %q (want poll or push)", m)
		}
	}
	r := e.newReport("pages", p)
	stores, err := e.DefaultTargets(ctx, p.RedisURLs, 1)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	var runs []*PagesRun
	for _, st := range stores {
		r.Machine.Servers[st.Name] = st.Version
		for _, n := range p.Pages {
			for _, mode := range p.Modes {
				e.logf("pages: %s, %s, %d pages", st.Name, mode, n)
				run, err := e.pagesRun(ctx, st, p, mode, n)
				if err != nil {
					return nil, fmt.Errorf("pages: %s %s %d: %w", st.Name, mode, n, err)
				}
				runs = append(runs, run)
				e.logf("pages: %s %s %d: %.0f commands/s, %.0f ZRANK/s, release->page p50 %s p99 %s (%d releases, %d missed); release call p50 %s p99 %s, release->event p50 %s p99 %s, event->page p50 %s p99 %s",
					st.Name, mode, n, run.Commands, run.ZRank, ms(run.Latency.P50), ms(run.Latency.P99),
					run.Releases, run.Missed, ms(run.ReleaseCall.P50), ms(run.ReleaseCall.P99),
					ms(run.ToEvent.P50), ms(run.ToEvent.P99), ms(run.EventToPage.P50), ms(run.EventToPage.P99))
				e.logf("pages: %s %s %d: the instances counted %d release requests, %d of them 25 ms or more inside the instance",
					st.Name, mode, n, run.ServerReleases, run.ServerSlowReleases)
			}
		}
	}
	t := Table{Title: fmt.Sprintf("Open pages on %d instances: store load and release -> page latency", p.Instances),
		Header: []string{"store", "mode", "pages", "store commands/s", "ZRANK/s (ticket reads)", "EVALSHA/s",
			"SPUBLISH/s", "release->admitted p50", "p99", "max", "releases", "missed"}}
	for _, x := range runs {
		t.AddRow(x.Store, x.Mode, x.Pages, fmt.Sprintf("%.0f", x.Commands), fmt.Sprintf("%.0f", x.ZRank),
			fmt.Sprintf("%.1f", x.EvalSHA), fmt.Sprintf("%.1f", x.SPublish), ms(x.Latency.P50), ms(x.Latency.P99),
			ms(x.MaxMs), x.Releases, x.Missed)
	}
	r.Tables = append(r.Tables, t)
	w := Table{Title: "Where the release -> page time goes (push: the bench subscribes to the round events too)",
		Header: []string{"store", "mode", "pages", "release call p50", "p99", "release->event p50", "p99",
			"event->page p50", "p99", "release requests", "of them >= 25 ms inside the instance"}}
	for _, x := range runs {
		w.AddRow(x.Store, x.Mode, x.Pages, ms(x.ReleaseCall.P50), ms(x.ReleaseCall.P99), ms(x.ToEvent.P50),
			ms(x.ToEvent.P99), ms(x.EventToPage.P50), ms(x.EventToPage.P99), x.ServerReleases, x.ServerSlowReleases)
	}
	r.Tables = append(r.Tables, w)
	r.Notes = append(r.Notes,
		"store commands/s counts every command the store ran in the window (INFO commandstats, commands run by scripts included), the bench's own INFO calls excluded.",
		fmt.Sprintf("slot 1, one release every %v (when the previous admission had reached its page), ticket TTL %v, admission period %v; users joined in process, pages are event streams spread round-robin over the instances.",
			p.Every, p.TicketTTL, p.Period))
	r.Results = runs
	return r.finish(), nil
}

// pagesRun is one store x mode x page count, on a fresh queue.
func (e *Env) pagesRun(ctx context.Context, st *Target, p PagesParams, mode string, n int) (*PagesRun, error) {
	run := &PagesRun{Store: st.Name, Mode: mode, Pages: n}
	spec := roomSpec{Queue: fmt.Sprintf("pages-%s-%d-%d", mode, n, time.Now().UnixMilli()%100000),
		Strategy: "atomic", Instances: p.Instances, Slot: 1, Session: 10 * time.Minute, TicketTTL: p.TicketTTL,
		Period: p.Period, Events: mode, MaxStreams: n}
	rm, err := e.openRoom(ctx, st, nil, spec)
	if err != nil {
		return nil, err
	}
	defer rm.close()
	rdb := st.Client(64)
	defer rdb.Close()

	tokens, err := joinUsers(ctx, rdb, spec, n+1)
	if err != nil {
		return nil, err
	}
	pg := newPageSet(n + 1)
	defer pg.close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	defer hc.CloseIdleConnections()
	pg.open(ctx, hc, rm.urls, spec.Queue, tokens, run)
	run.Streams = n + 1 - run.OpenErrors

	before, err := commandStats(ctx, rdb)
	if err != nil {
		return nil, err
	}
	if mode == "push" {
		evs, stop, err := watchEvents(ctx, rdb, spec.Queue)
		if err != nil {
			return nil, err
		}
		defer stop()
		run.evs = evs
	}
	rel0, slow0 := releaseMetrics(ctx, hc, rm.urls)
	start := time.Now()
	moved0 := pg.updates()
	e.releases(ctx, hc, rm, spec.Queue, tokens, pg, p, run)
	took := time.Since(start)
	rel1, slow1 := releaseMetrics(ctx, hc, rm.urls)
	run.ServerReleases, run.ServerSlowReleases = rel1-rel0, slow1-slow0
	after, err := commandStats(ctx, rdb)
	if err != nil {
		return nil, err
	}
	run.Seconds = took.Seconds()
	run.ByCommand = map[string]float64{}
	var total int64
	for name, c := range after {
		d := c - before[name]
		if name == "info" {
			d -= 2 // the bench's own
		}
		if d <= 0 {
			continue
		}
		total += d
		rate := float64(d) / run.Seconds
		switch name {
		case "zrank":
			run.ZRank = rate
		case "evalsha":
			run.EvalSHA = rate
		case "spublish":
			run.SPublish = rate
		}
		run.ByCommand[name] = rate
	}
	run.Commands = float64(total) / run.Seconds
	run.Moved = pg.updates() - moved0
	run.Latency = latencyOf(run.lat)
	if len(run.lat) > 0 {
		run.MaxMs = run.lat[len(run.lat)-1]
	}
	return run, nil
}

// joinUsers joins n users in process (the queue's Join, as the instances
// would) and returns their signed tickets in arrival order.
func joinUsers(ctx context.Context, rdb *redis.Client, spec roomSpec, n int) ([]string, error) {
	eng, err := queue.New(rdb, spec.Queue, queue.Options{Secret: []byte(benchSecret), NoEvents: true,
		Defaults: queue.Settings{Slot: spec.Slot, Session: spec.Session, TicketTTL: spec.TicketTTL}})
	if err != nil {
		return nil, err
	}
	if err := eng.Init(ctx); err != nil {
		return nil, err
	}
	tokens := make([]string, n)
	for i := range tokens { // one at a time: arrival order is the order of the slice
		st, err := eng.Join(ctx, "")
		if err != nil {
			return nil, fmt.Errorf("join %d: %w", i, err)
		}
		tokens[i] = eng.SignTicket(st.Ticket)
	}
	return tokens, nil
}

// pageSet is the open pages: when each saw "admitted", and how many statuses
// they received.
type pageSet struct {
	admitted []atomic.Int64 // unix ns
	statuses atomic.Int64
	mu       sync.Mutex
	bodies   []func() error
}

func newPageSet(n int) *pageSet { return &pageSet{admitted: make([]atomic.Int64, n)} }

func (s *pageSet) updates() int { return int(s.statuses.Load()) }

func (s *pageSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.bodies {
		c()
	}
}

// open opens every page (64 at a time), round-robin over the instances, and
// returns when all are open and have their first status.
func (s *pageSet) open(ctx context.Context, hc *http.Client, urls []string, q string, tokens []string, run *PagesRun) {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, tok := range tokens {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			first, err := s.openOne(ctx, hc, urls[i%len(urls)]+"/v1/queues/"+q+"/events", tok, i)
			if err == nil {
				<-first
				return
			}
			mu.Lock()
			run.OpenErrors++
			if run.FirstError == "" {
				run.FirstError = err.Error()
			}
			mu.Unlock()
		})
	}
	wg.Wait()
}

// openOne opens page i and reads its events in a goroutine; first is closed
// at its first status.
func (s *pageSet) openOne(ctx context.Context, hc *http.Client, url, token string, i int) (<-chan struct{}, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.AddCookie(&http.Cookie{Name: "wr_ticket", Value: token})
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("page %d: %s", i, resp.Status)
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, resp.Body.Close)
	s.mu.Unlock()
	first := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			if strings.Contains(line, `"state":"admitted"`) {
				s.admitted[i].CompareAndSwap(0, time.Now().UnixNano())
			}
			if strings.Contains(line, `"state":"`) {
				s.statuses.Add(1)
				if !seen {
					seen = true
					close(first)
				}
			}
		}
		if !seen {
			close(first)
		}
	}()
	return first, nil
}

// releases lets users in one after another for the window: every p.Every,
// when the user admitted last has seen it on their page, it releases that
// user through the next instance in turn and notes when the following
// user's page sees "admitted".
func (e *Env) releases(ctx context.Context, hc *http.Client, rm *room, q string, tokens []string, pg *pageSet,
	p PagesParams, run *PagesRun) {
	sent := make([]int64, len(tokens))
	cur := 0 // the user admitted last (the first by the instances' first rounds)
	sent[0] = time.Now().UnixNano()
	tick := time.NewTicker(p.Every)
	defer tick.Stop()
	end := time.Now().Add(p.Window)
	for time.Now().Before(end) && cur+1 < len(tokens) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if pg.admitted[cur].Load() == 0 {
			if time.Since(time.Unix(0, sent[cur])) > 10*time.Second {
				run.Missed++ // its page never saw it: release it anyway and go on
			} else {
				continue
			}
		}
		url := rm.urls[(cur)%len(rm.urls)] + "/v1/queues/" + q + "/release"
		req, _ := http.NewRequestWithContext(ctx, "POST", url, nil)
		req.Header.Set("Authorization", "Bearer "+tokens[cur])
		sent[cur+1] = time.Now().UnixNano()
		resp, err := hc.Do(req)
		if err != nil {
			run.FirstError = err.Error()
			return
		}
		resp.Body.Close()
		run.call = append(run.call, float64(time.Now().UnixNano()-sent[cur+1])/1e6)
		cur++
	}
	// The last release's page gets a little time to see it.
	for deadline := time.Now().Add(10 * time.Second); pg.admitted[cur].Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	var toEvent, eventToPage []float64
	for i := 1; i <= cur; i++ {
		at := pg.admitted[i].Load()
		if at != 0 && sent[i] != 0 {
			run.lat = append(run.lat, float64(at-sent[i])/1e6)
		}
		if run.evs == nil || sent[i] == 0 {
			continue
		}
		id, _, _ := strings.Cut(tokens[i], ".")
		if ev := run.evs.get(id); ev != 0 {
			toEvent = append(toEvent, float64(ev-sent[i])/1e6)
			if at != 0 {
				eventToPage = append(eventToPage, float64(at-ev)/1e6)
			}
		}
	}
	slices.Sort(run.lat)
	slices.Sort(run.call)
	slices.Sort(toEvent)
	slices.Sort(eventToPage)
	run.ReleaseCall, run.ToEvent, run.EventToPage = latencyOf(run.call), latencyOf(toEvent), latencyOf(eventToPage)
	run.Releases = cur
}

// commandStats reads INFO commandstats: calls per command.
func commandStats(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err == nil {
			out[strings.TrimPrefix(name, "cmdstat_")] = n
		}
	}
	return out, nil
}

// releaseMetrics sums, over the instances' /metrics, the release requests
// answered and those that took more than 25 ms inside the instance.
func releaseMetrics(ctx context.Context, hc *http.Client, urls []string) (total, slow int) {
	const series = `queue_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/queues/{q}/release",le="0.025"} `
	const count = `queue_http_request_duration_seconds_count{code="200",method="POST",route="/v1/queues/{q}/release"} `
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, "GET", u+"/metrics", nil)
		if err != nil {
			continue
		}
		resp, err := hc.Do(req)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		fast, all := 0, 0
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, series); ok {
				fast, _ = strconv.Atoi(v)
			} else if v, ok := strings.CutPrefix(line, count); ok {
				all, _ = strconv.Atoi(v)
			}
		}
		resp.Body.Close()
		total += all
		slow += all - fast
	}
	return total, slow
}
