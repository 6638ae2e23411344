package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"waitroom/queue"
)

// The sale: a backlog is waiting when the sale opens, the admission loops of
// every instance start at the opening (each process starts its own, on its own
// timer: same period, phases as they fall), every admitted user stays exactly
// one session and releases at its end (a share abandons and is reclaimed at the
// same moment), so whole waves of sessions end together; then users arrive in
// stages of rising rate, k6-style. Nothing is slowed, paused or hooked.

// SaleParams configure `bench sale`.
type SaleParams struct {
	RoomParams
	Strategies []string      `json:"strategies"`
	Instances  []int         `json:"instances"`
	Slot       int           `json:"slot"`
	Users      int           `json:"users"`      // waiting when the sale opens
	Session    time.Duration `json:"session_ns"` // every admitted user stays exactly this long
	Abandon    float64       `json:"abandon"`    // share of admitted users who never release
	Period     time.Duration `json:"period_ns"`
	PollCap    time.Duration `json:"poll_cap_ns"` // poll at least this often
	TicketTTL  time.Duration `json:"ticket_ttl_ns"`
	Stages     []stage       `json:"stages"` // arrivals after the backlog is in
	Drain      time.Duration `json:"drain_ns"`
	// The --workers runs: BreakStrategies through the same sale with
	// BreakInstances instances on MyRedis --workers BreakWorkers; the leader
	// also on --workers 1 and real Redis.
	BreakWorkers    int      `json:"break_workers"`
	BreakInstances  int      `json:"break_instances"`
	BreakStrategies []string `json:"break_strategies"`
	BreakRedis      bool     `json:"break_redis"` // the leader on redis-server too
}

// DefaultSaleParams: 2,000 users waiting, slot 100, 2 s sessions, 200 ms period,
// every strategy x 1, 3, 10 instances, then 20 -> 160 users/s in 5 s stages.
func DefaultSaleParams() SaleParams {
	return SaleParams{
		RoomParams: RoomParams{Store: "auto"},
		Strategies: []string{"naive", "leader", "optimistic", "atomic"},
		Instances:  []int{1, 3, 10},
		Slot:       100, Users: 2000, Session: 2 * time.Second, Abandon: 0.10,
		Period: 200 * time.Millisecond, PollCap: time.Second, TicketTTL: 2 * time.Minute,
		Stages:       []stage{{20, 5 * time.Second}, {40, 5 * time.Second}, {80, 5 * time.Second}, {160, 5 * time.Second}},
		Drain:        90 * time.Second,
		BreakWorkers: 4, BreakInstances: 3, BreakStrategies: []string{"leader", "optimistic", "atomic"}, BreakRedis: true,
	}
}

// ShortSaleParams is `make bench`'s size: 200 users, 1 s sessions (polls at
// least every 500 ms), 3 instances, one short stage, and the --workers runs
// on MyRedis.
func ShortSaleParams() SaleParams {
	p := DefaultSaleParams()
	p.Users, p.Session, p.PollCap, p.Instances = 200, time.Second, 500*time.Millisecond, []int{3}
	p.Stages = []stage{{80, time.Second}}
	p.Drain, p.BreakRedis = 20*time.Second, false
	return p
}

// SalePhase is one stretch of a sale run: the opening (until the backlog is
// admitted), each arrival stage, the drain.
type SalePhase struct {
	Name      string  `json:"name"`
	Rate      float64 `json:"arrivals_per_sec"`
	Seconds   float64 `json:"seconds"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	Latency   Latency `json:"latency"` // every API request sent in the phase
	Admitted  int     `json:"admitted"`
	MaxActive int64   `json:"max_active"`
	lat       []float64
}

// SaleCell is one strategy at one instance count on one store.
type SaleCell struct {
	Strategy       string      `json:"strategy"`
	Instances      int         `json:"instances"`
	Store          string      `json:"store"`
	Workers        int         `json:"workers"`
	Backlog        int         `json:"backlog"`
	Users          int         `json:"users"` // backlog + stage arrivals
	Admitted       int         `json:"admitted"`
	MaxObserved    int64       `json:"max_observed_active"`
	Overshoot      int64       `json:"overshoot"`
	MaxHeld        int64       `json:"max_held_one_period"` // highest count held for a whole period
	HeldOver       int64       `json:"held_overshoot"`
	MaxConfirmed   int         `json:"max_confirmed_active"`
	ConfirmedOver  int         `json:"confirmed_overshoot"`
	Duplicates     int64       `json:"duplicate_admissions"`
	Lost           int         `json:"lost"`         // joined, never in the active set, not waiting at the end
	Unseen         int         `json:"told_expired"` // users told their ticket was over before seeing an admission
	LostReasons    []string    `json:"told_expired_reasons,omitempty"`
	StillWaiting   int         `json:"still_waiting"`
	OpeningSeconds float64     `json:"opening_seconds"` // until every backlog user was done waiting
	OpeningRate    float64     `json:"opening_admitted_per_sec"`
	Phases         []SalePhase `json:"phases"`
	Requests       int         `json:"requests"`
	Errors         int         `json:"errors"`
	ErrorRate      float64     `json:"error_rate"`
	FirstError     string      `json:"first_error,omitempty"`
	ObserverReads  int         `json:"observer_reads"`
	ObserverMaxGap float64     `json:"observer_max_gap_seconds"` // longest time between two reads
	// From each instance's /metrics at the end.
	InstanceAdmissions []int64 `json:"instance_admissions"`
	LostLeases         int64   `json:"lost_leases"`
	Rollbacks          int64   `json:"rollbacks"`
	RoundErrors        int64   `json:"round_errors"`
	// Leader only: /metrics scraped every 50 ms; periods in which more than one
	// instance's admission counter moved.
	Periods           int    `json:"periods,omitempty"`
	MultiAdmitPeriods int    `json:"multi_admitter_periods,omitempty"`
	Skipped           string `json:"skipped,omitempty"`
	active            []sample
	version           string // the store's, for the report
}

// SaleResults is results.json's "results" for `bench sale`.
type SaleResults struct {
	Store string     `json:"store"`
	Cells []SaleCell `json:"cells"`
	Break []SaleCell `json:"workers_runs"`
}

// Sale runs the sale for every strategy and instance count, then the
// --workers runs.
func (e *Env) Sale(ctx context.Context, p SaleParams) (*Report, error) {
	if p.Slot < 1 || p.Users < 1 || p.Session <= 0 || p.Period <= 0 {
		return nil, errors.New("sale: need a slot, users, a session and a period")
	}
	if len(p.QueueURLs) > 0 {
		return nil, errors.New("sale: starts its own instances at the opening; --queue-urls is not supported")
	}
	r := e.newReport("sale", p)
	store, err := e.store(ctx, p.RoomParams, r)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	r.Machine.Servers[store.Name] = store.Version
	res := SaleResults{Store: store.Name}
	perCell := p.Users
	for _, st := range p.Stages {
		perCell += int(st.Rate * st.For.Seconds())
	}
	bar := e.bar(perCell*(len(p.Strategies)*len(p.Instances)+len(p.BreakStrategies)+2), "sale")
	defer bar.Finish()
	progress := func() { bar.Add(1) }
	for _, s := range p.Strategies {
		for _, n := range p.Instances {
			c, err := e.saleCell(ctx, store, p, s, n, progress)
			if err != nil {
				return nil, err
			}
			res.Cells = append(res.Cells, c)
		}
	}
	if p.BreakWorkers > 1 && p.BreakInstances > 0 && p.RedisURL == "" {
		res.Break, err = e.saleBreak(ctx, p, &res, progress)
		if err != nil {
			return nil, err
		}
		for _, c := range res.Break {
			r.Machine.Servers[c.Store] = c.version
		}
	}
	r.Results = res
	saleTables(r, &res, p)
	return r.finish(), nil
}

// saleBreak runs the --workers part: the leader on MyRedis --workers 1 (the
// matrix's cell when it has one), --workers N and real Redis; the other
// strategies on --workers N.
func (e *Env) saleBreak(ctx context.Context, p SaleParams, res *SaleResults, progress func()) ([]SaleCell, error) {
	var out []SaleCell
	runOn := func(t *Target, strategy string) error {
		c, err := e.saleCell(ctx, t, p, strategy, p.BreakInstances, progress)
		out = append(out, c)
		return err
	}
	wN, err := e.StartMyRedis(ctx, p.BreakWorkers)
	if err != nil {
		return nil, err
	}
	defer wN.Close()
	for _, s := range p.BreakStrategies {
		if s == "leader" {
			reused := false
			for _, c := range res.Cells {
				if c.Strategy == s && c.Instances == p.BreakInstances && c.Store == "myredis" {
					out, reused = append(out, c), true
				}
			}
			if !reused {
				w1, err := e.StartMyRedis(ctx, 1)
				if err != nil {
					return nil, err
				}
				err = runOn(w1, s)
				w1.Close()
				if err != nil {
					return nil, err
				}
			}
		}
		if err := runOn(wN, s); err != nil {
			return nil, err
		}
		if s == "leader" && p.BreakRedis && e.HaveRedis() {
			rs, err := e.StartRedis(ctx)
			if err != nil {
				return nil, err
			}
			err = runOn(rs, s)
			rs.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// saleCell runs one sale: the backlog joins, the instances start (the
// opening), the backlog is admitted wave by wave, then the stages arrive.
func (e *Env) saleCell(ctx context.Context, store *Target, p SaleParams, strategy string, n int, progress func()) (SaleCell, error) {
	cell := SaleCell{Strategy: strategy, Instances: n, Store: store.Name, Workers: store.Workers, Backlog: p.Users,
		version: store.Version}
	if missing := storeMissing(ctx, store); len(missing) > 0 {
		if !lacksEvalOnly(missing) {
			return cell, fmt.Errorf("sale: the store %s lacks %s; try --store redis", store.Name, strings.Join(missing, ", "))
		}
		if needsEval(strategy) {
			cell.Skipped = "the store has no EVAL"
			return cell, nil
		}
	}
	spec := roomSpec{Queue: fmt.Sprintf("sale-%s-%d-%d", strategy, n, rand.IntN(1e9)),
		Strategy: strategy, Instances: n, Slot: p.Slot, Session: p.Session, TicketTTL: p.TicketTTL, Period: p.Period}
	tickets, err := e.saleJoin(ctx, store, spec, p.Users)
	if err != nil {
		return cell, err
	}

	obsCtx, stopObs := context.WithCancel(ctx)
	defer stopObs()
	probe := &room{spec: spec, store: store}
	obs := store.Client(2)
	defer obs.Close()
	opening := time.Now()
	var obsWG sync.WaitGroup
	var active []sample
	var members map[string]bool
	obsWG.Go(func() { active, members, cell.ObserverReads = probe.observeMembers(obsCtx, obs, opening) })

	rm, err := e.openRoom(ctx, store, nil, spec) // the opening: every instance starts its loop
	if err != nil {
		return cell, err
	}
	defer rm.close()
	var scr *scraper
	if strategy == "leader" && n > 1 {
		scr = &scraper{rm: rm, start: opening}
		obsWG.Go(func() { scr.run(obsCtx, 50*time.Millisecond) })
	}

	cnt := &simCounters{keepLog: true}
	us := userSpec{Poll: true, PollCap: p.PollCap, Abandon: p.Abandon, ReleaseAtDeadline: true}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	users := make([]*userResult, len(tickets))
	var backlog sync.WaitGroup
	for i, tk := range tickets {
		u := &userResult{Joined: opening}
		users[i] = u
		first := apiReply{State: "waiting", PollAfterMs: 1 + rand.Int64N(max(p.PollCap.Milliseconds(), 1))}
		backlog.Go(func() { rm.follow(runCtx, tk, first, u, us, cnt); progress() })
	}
	timedOut := !waitFor(ctx, &backlog, p.Drain)
	stagesAt := time.Now()
	var arrived sync.WaitGroup
	var mu sync.Mutex
	if !timedOut {
		arrivals(ctx, stagesAt, p.Stages, func(i int) {
			u := &userResult{}
			mu.Lock()
			users = append(users, u)
			mu.Unlock()
			arrived.Go(func() { rm.user(runCtx, "a"+strconv.Itoa(i), u, us, cnt); progress() })
		})
		timedOut = !waitFor(ctx, &arrived, p.Drain)
	}
	if timedOut {
		cancel()
		backlog.Wait()
		arrived.Wait()
	}
	end := time.Now()
	stopObs()
	obsWG.Wait()
	if err := ctx.Err(); err != nil {
		return cell, err
	}
	var admittedTotal, waitingAtEnd int64 = -1, 0
	if info, err := rm.info(ctx); err == nil {
		admittedTotal, waitingAtEnd = info.AdmittedTotal, info.Waiting
	}
	for _, u := range rm.urls {
		m, err := scrapeMetrics(ctx, rm.hc, u, spec.Queue)
		if err != nil {
			continue
		}
		cell.InstanceAdmissions = append(cell.InstanceAdmissions, int64(m["queue_admissions_total"]))
		cell.LostLeases += int64(m["queue_lost_leases_total"])
		cell.Rollbacks += int64(m["queue_rollbacks_total"])
		cell.RoundErrors += int64(m["queue_admit_round_errors_total"])
	}
	if scr != nil {
		cell.Periods, cell.MultiAdmitPeriods = scr.multiAdmitPeriods(p.Period)
	}
	sim := &simResult{Start: opening, Users: users, Active: active, JoinLat: cnt.joinLat, StatusLat: cnt.statusLat,
		Requests: cnt.requests, Errors: cnt.errors, FirstError: cnt.firstError, Reads: cell.ObserverReads}
	for _, u := range users {
		if !u.JoinFailed && u.Seen.IsZero() && u.Lost == "" {
			sim.TimedOut++
		}
	}
	var oc OvershootCell
	fillOvershootCell(&oc, sim, p.Slot, admittedTotal)
	cell.Users, cell.MaxObserved, cell.Overshoot = oc.Users, oc.MaxObserved, oc.Overshoot
	cell.MaxConfirmed, cell.ConfirmedOver, cell.StillWaiting = oc.MaxConfirmed, oc.ConfirmedOver, oc.StillWaiting
	// Who was admitted is read from the store (every member the observer saw in
	// the active set; a session lasts far longer than its reads are apart), not
	// from the users: one who polls after the end of a short session never
	// sees the admission.
	joined := 0
	for _, u := range users {
		if !u.JoinFailed {
			joined++
		}
		if u.Seen.IsZero() && u.Lost != "" {
			cell.Unseen++
		}
	}
	cell.Admitted = len(members)
	cell.ObserverMaxGap = maxGap(active, opening, end)
	if cell.ObserverMaxGap < p.Session.Seconds() {
		if admittedTotal >= 0 {
			cell.Duplicates = max(0, admittedTotal-int64(cell.Admitted))
		}
		cell.Lost = max(0, joined-cell.Admitted-int(waitingAtEnd))
	} else {
		cell.Duplicates, cell.Lost = -1, -1 // a whole session may have passed unseen
	}
	cell.LostReasons = oc.LostReasons
	cell.Requests, cell.Errors, cell.ErrorRate, cell.FirstError = oc.Requests, oc.Errors, oc.ErrorRate, oc.FirstError
	cell.MaxHeld = maxHeld(active, p.Period.Seconds())
	cell.HeldOver = max(0, cell.MaxHeld-int64(p.Slot))
	cell.OpeningSeconds = stagesAt.Sub(opening).Seconds()
	backlogAdmitted := 0
	for _, u := range users[:len(tickets)] {
		if !u.Seen.IsZero() || u.Lost == "session ended" {
			backlogAdmitted++
		}
	}
	if cell.OpeningSeconds > 0 {
		cell.OpeningRate = float64(backlogAdmitted) / cell.OpeningSeconds
	}
	cell.Phases = salePhases(opening, stagesAt, end, p.Stages, cnt.log, users, active)
	cell.active = active
	return cell, nil
}

// maxGap is the longest stretch (seconds) without a sample between from and to.
func maxGap(s []sample, from, to time.Time) float64 {
	last, gap := 0.0, 0.0
	for _, x := range s {
		gap = max(gap, x.T-last)
		last = x.T
	}
	return max(gap, to.Sub(from).Seconds()-last)
}

// saleJoin puts n users in the queue before the opening, through the queue's
// own Join (the HTTP join calls the same), and returns their signed tickets.
// No instance runs yet, so nobody is admitted.
func (e *Env) saleJoin(ctx context.Context, store *Target, spec roomSpec, n int) ([]string, error) {
	c := store.Client(16)
	defer c.Close()
	eng, err := queue.New(c, spec.Queue, queue.Options{Strategy: queue.Strategy(spec.Strategy), Period: spec.Period,
		InstanceID: "bench-joiner", Secret: []byte(benchSecret),
		Defaults: queue.Settings{Slot: spec.Slot, Session: spec.Session, TicketTTL: spec.TicketTTL}})
	if err != nil {
		return nil, err
	}
	if err := eng.Init(ctx); err != nil {
		return nil, err
	}
	tickets := make([]string, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				st, err := eng.Join(ctx, "")
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				tickets[i] = eng.SignTicket(st.Ticket)
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return nil, fmt.Errorf("sale: joining the backlog: %w", err)
	}
	return tickets, ctx.Err()
}

// waitFor waits for wg, at most d; false when d ran out.
func waitFor(ctx context.Context, wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	case <-ctx.Done():
		return false
	}
}

// salePhases splits the run into the opening, the stages and the drain, and
// gathers each one's requests (by the time they were sent), admissions and
// highest active count.
func salePhases(opening, stagesAt, end time.Time, stages []stage, log []request, users []*userResult, active []sample) []SalePhase {
	type window struct {
		name     string
		rate     float64
		from, to time.Time
	}
	ws := []window{{name: "opening", from: opening, to: stagesAt}}
	at := stagesAt
	for i, st := range stages {
		ws = append(ws, window{name: fmt.Sprintf("stage %d", i+1), rate: st.Rate, from: at, to: at.Add(st.For)})
		at = at.Add(st.For)
	}
	ws = append(ws, window{name: "drain", from: at, to: end})
	phases := make([]SalePhase, len(ws))
	for i, w := range ws {
		ph := &phases[i]
		ph.Name, ph.Rate, ph.Seconds = w.name, w.rate, max(0, w.to.Sub(w.from).Seconds())
		in := func(t time.Time) bool {
			return !t.Before(w.from) && (t.Before(w.to) || (i == len(ws)-1 && !t.After(w.to)))
		}
		for _, rq := range log {
			if in(rq.Sent) {
				ph.Requests++
				ph.lat = append(ph.lat, rq.Ms)
				if !rq.OK {
					ph.Errors++
				}
			}
		}
		for _, u := range users {
			if !u.AdmittedAt.IsZero() && in(u.AdmittedAt) {
				ph.Admitted++
			}
		}
		lo, hi := w.from.Sub(opening).Seconds(), w.to.Sub(opening).Seconds()
		for _, s := range active {
			if s.T >= lo && s.T < hi {
				ph.MaxActive = max(ph.MaxActive, s.N)
			}
		}
		if ph.Requests > 0 {
			ph.ErrorRate = float64(ph.Errors) / float64(ph.Requests)
		}
		ph.Latency = latencyOf(ph.lat)
	}
	return phases
}

// maxHeld is the highest count the samples stayed at or above for at least w
// seconds without a break: a transient peak (a reservation about to be undone)
// does not count, an overshoot that lasts a session does.
func maxHeld(s []sample, w float64) int64 {
	var best int64
	var dq []int // indices of a window, values increasing
	next := 0
	for i := range s {
		for next < len(s) && (next <= i || s[next-1].T < s[i].T+w) {
			for len(dq) > 0 && s[dq[len(dq)-1]].N >= s[next].N {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
			next++
		}
		if s[next-1].T < s[i].T+w {
			break // not a whole window left
		}
		for dq[0] < i {
			dq = dq[1:]
		}
		best = max(best, s[dq[0]].N)
	}
	return best
}

// observeMembers reads ZCARD of the active set every millisecond and, when
// 20 ms have passed since the last listing, its members instead, collecting
// every ticket ever seen there.
func (r *room) observeMembers(ctx context.Context, c *redis.Client, start time.Time) ([]sample, map[string]bool, int) {
	var out []sample
	seen := map[string]bool{}
	reads := 0
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	key := r.key("active")
	var listed time.Time
	for {
		select {
		case <-ctx.Done():
			return out, seen, reads
		case <-t.C:
		}
		var n int64
		if time.Since(listed) >= 20*time.Millisecond {
			listed = time.Now()
			ms, err := c.ZRange(ctx, key, 0, -1).Result()
			if err != nil {
				continue
			}
			for _, m := range ms {
				seen[m] = true
			}
			n = int64(len(ms))
		} else {
			var err error
			if n, err = c.ZCard(ctx, key).Result(); err != nil {
				continue
			}
		}
		reads++
		out = append(out, sample{time.Since(start).Seconds(), n})
	}
}

// scrapeMetrics reads the queue's counters from an instance's /metrics.
func scrapeMetrics(ctx context.Context, hc *http.Client, base, queueName string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s/metrics: status %d", base, resp.StatusCode)
	}
	m := map[string]float64{}
	label := `queue="` + queueName + `"`
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, "queue_") || !strings.Contains(rest, label) {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if v, err := strconv.ParseFloat(rest[i+1:], 64); err == nil {
			m[name] += v
		}
	}
	return m, sc.Err()
}

// scraper reads every instance's admission counter at a fixed interval, to
// tell which instances admitted in which period.
type scraper struct {
	rm     *room
	start  time.Time
	series [][]sample // per instance: (seconds since start, admissions)
}

func (s *scraper) run(ctx context.Context, every time.Duration) {
	s.series = make([][]sample, len(s.rm.urls))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i, u := range s.rm.urls {
			m, err := scrapeMetrics(ctx, s.rm.hc, u, s.rm.spec.Queue)
			if err != nil {
				continue
			}
			s.series[i] = append(s.series[i], sample{time.Since(s.start).Seconds(), int64(m["queue_admissions_total"])})
		}
	}
}

// multiAdmitPeriods counts the periods (bins of one period from the opening)
// and those in which the admission counter of more than one instance moved.
// A rise between two reads counts in the bin of the later read.
func (s *scraper) multiAdmitPeriods(period time.Duration) (periods, multi int) {
	admitters := map[int]map[int]bool{}
	last := 0.0
	for i, ser := range s.series {
		for k := 1; k < len(ser); k++ {
			last = max(last, ser[k].T)
			if ser[k].N > ser[k-1].N {
				b := int(ser[k].T / period.Seconds())
				if admitters[b] == nil {
					admitters[b] = map[int]bool{}
				}
				admitters[b][i] = true
			}
		}
	}
	for _, who := range admitters {
		if len(who) > 1 {
			multi++
		}
	}
	return int(last / period.Seconds()), multi
}

func saleTables(r *Report, res *SaleResults, p SaleParams) {
	var stages []string
	for _, s := range p.Stages {
		stages = append(stages, fmt.Sprintf("%g/s for %s", s.Rate, s.For))
	}
	t := Table{
		Title: fmt.Sprintf("the sale: %d waiting at the opening, slot %d, store %s, period %s, sessions of exactly %s (%.0f%% abandon), then %s",
			p.Users, p.Slot, res.Store, p.Period, p.Session, 100*p.Abandon, strings.Join(stages, ", ")),
		Header: []string{"strategy", "instances", "users", "max active", "overshoot", "held 1 period", "max confirmed",
			"confirmed over", "duplicates", "lost", "backlog admitted/s", "errors", "observer max gap ms"},
	}
	for _, c := range res.Cells {
		if c.Skipped != "" {
			t.AddRow(c.Strategy, c.Instances, "skipped: "+c.Skipped, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")
			continue
		}
		t.AddRow(c.Strategy, c.Instances, c.Users, c.MaxObserved, c.Overshoot, c.MaxHeld, c.MaxConfirmed, c.ConfirmedOver,
			known(c.Duplicates), known(int64(c.Lost)), fmt.Sprintf("%.1f", c.OpeningRate), pct(c.ErrorRate), fmt.Sprintf("%.0f", 1000*c.ObserverMaxGap))
		saleCellNotes(r, c, p)
	}
	r.Tables = append(r.Tables, t)

	// The notes' table: latency and error rate per stage, at the notes' 3 instances.
	notesN := p.Instances[0]
	for _, n := range p.Instances {
		if n == 3 {
			notesN = n
		}
	}
	st := Table{
		Title:  fmt.Sprintf("stepped load, %d instances: every API request (join, status, release) by the phase it was sent in", notesN),
		Header: []string{"strategy", "phase", "arrivals/s", "seconds", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "error rate", "admitted", "max active"},
	}
	var labels []string
	var p99 []Series
	for _, c := range res.Cells {
		if c.Instances != notesN || c.Skipped != "" {
			continue
		}
		ser := Series{Name: c.Strategy}
		for _, ph := range c.Phases {
			rate := "-"
			if ph.Rate > 0 {
				rate = fmt.Sprintf("%g", ph.Rate)
			}
			rps := 0.0
			if ph.Seconds > 0 {
				rps = float64(ph.Requests) / ph.Seconds
			}
			st.AddRow(c.Strategy, ph.Name, rate, fmt.Sprintf("%.1f", ph.Seconds), ph.Requests, fmt.Sprintf("%.0f", rps),
				ms(ph.Latency.P50), ms(ph.Latency.P95), ms(ph.Latency.P99), pct(ph.ErrorRate), ph.Admitted, ph.MaxActive)
			ser.Y = append(ser.Y, ph.Latency.P99)
			if len(p99) == 0 {
				labels = append(labels, ph.Name)
			}
		}
		p99 = append(p99, ser)
	}
	if len(st.Rows) > 0 {
		r.Tables = append(r.Tables, st)
		r.Charts = append(r.Charts, barChart("sale-latency-stages.png",
			fmt.Sprintf("p99 latency of API requests by phase, %d instances", notesN), "p99 ms", labels, p99))
	}

	if len(res.Break) > 0 {
		bt := Table{
			Title: fmt.Sprintf("the same sale, %d instances, on MyRedis --workers 1 / --workers %d and redis-server", p.BreakInstances, p.BreakWorkers),
			Header: []string{"strategy", "store", "workers", "max active", "overshoot", "held 1 period", "confirmed over",
				"duplicates", "lost", "lost leases", "periods with >1 admitter", "rollbacks", "errors", "observer max gap ms"},
		}
		for _, c := range res.Break {
			if c.Skipped != "" {
				bt.AddRow(c.Strategy, c.Store, workersCell(c.Workers), "skipped: "+c.Skipped, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")
				continue
			}
			multi := "-"
			if c.Strategy == "leader" {
				multi = fmt.Sprintf("%d of %d", c.MultiAdmitPeriods, c.Periods)
			}
			bt.AddRow(c.Strategy, c.Store, workersCell(c.Workers), c.MaxObserved, c.Overshoot, c.MaxHeld, c.ConfirmedOver,
				known(c.Duplicates), known(int64(c.Lost)), c.LostLeases, multi, c.Rollbacks, pct(c.ErrorRate), fmt.Sprintf("%.0f", 1000*c.ObserverMaxGap))
			if c.Store != res.Store {
				saleCellNotes(r, c, p)
			}
		}
		r.Tables = append(r.Tables, bt)
		var series []Series
		for _, c := range res.Break {
			if c.Skipped == "" {
				xs, ys := bucketMax(c.active, 0.05)
				series = append(series, Series{Name: c.Strategy + " " + c.Store, X: xs, Y: ys})
			}
		}
		r.Charts = append(r.Charts, lineChart("sale-workers-active.png",
			fmt.Sprintf("Active users over time, %d instances, by store (max per 50 ms)", p.BreakInstances),
			"seconds from the opening", "active (ZCARD)", series, float64(p.Slot), "slot "+strconv.Itoa(p.Slot)))
	}

	r.Notes = append(r.Notes,
		"max active: the observer's highest ZCARD of the active set, read in a loop every millisecond from before the opening; overshoot = max active - slot.",
		fmt.Sprintf("held 1 period: the highest count the active set stayed at or above for a whole period (%s) without a break; a transient reservation about to be undone does not count, an admission that lasts a session does.", p.Period),
		"max confirmed: most users holding an admission at once by their own account (from the answer saying admitted to the release they sent); a lower bound, since a user sees the admission only at the next poll.",
		"admitted: distinct tickets the observer saw in the active set (it lists the members instead of counting them when 20 ms have passed since the last listing); duplicates: admissions the store counted (wr:{q}:admitted) minus those; lost: users who joined, were never in the active set and were not waiting at the end. Both read n/a when the observer's longest gap between two reads (last column; the load generator shares its CPU with every simulated user) reached a session, since a whole session could then pass unseen.",
		"lost leases: leader rounds that found the lease in another instance's hands after admitting (the engine's own count, queue_lost_leases_total); periods with >1 admitter: 200 ms bins in which the admission counters (/metrics, read every 50 ms) of more than one instance rose.",
		"the backlog joins through the queue's Join (package queue, as the HTTP join does) before any instance runs; the opening starts every instance process at once; users poll as told by poll_after_ms, at least every "+p.PollCap.String()+", and release exactly at the end of their session.")

	seenN := map[int]bool{}
	for _, c := range res.Cells {
		seenN[c.Instances] = true
	}
	var bars []Series
	var labelsN []string
	for _, s := range p.Strategies {
		bars = append(bars, Series{Name: s})
	}
	for _, n := range p.Instances {
		if !seenN[n] {
			continue
		}
		labelsN = append(labelsN, strconv.Itoa(n)+" instance(s)")
		var series []Series
		for i, s := range p.Strategies {
			v := 0.0
			for _, c := range res.Cells {
				if c.Strategy == s && c.Instances == n && c.Skipped == "" {
					v = float64(c.MaxObserved)
					xs, ys := bucketMax(c.active, 0.05)
					series = append(series, Series{Name: s, X: xs, Y: ys})
				}
			}
			bars[i].Y = append(bars[i].Y, v)
		}
		r.Charts = append(r.Charts, lineChart(fmt.Sprintf("sale-active-%d.png", n),
			fmt.Sprintf("Active users over time from the opening, %d instance(s) (max per 50 ms)", n), "seconds from the opening",
			"active (ZCARD)", series, float64(p.Slot), "slot "+strconv.Itoa(p.Slot)))
	}
	if len(labelsN) > 0 {
		r.Charts = append(r.Charts, barChart("sale-max-active.png",
			fmt.Sprintf("Highest active count observed in the sale (slot %d)", p.Slot), "max active", labelsN, bars))
	}
}

func saleCellNotes(r *Report, c SaleCell, p SaleParams) {
	who := fmt.Sprintf("%s x%d on %s", c.Strategy, c.Instances, c.Store)
	if c.FirstError != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d of %d requests failed, first: %s", who, c.Errors, c.Requests, c.FirstError))
	}
	if c.Unseen > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d users were told their ticket was over before they saw an admission (%s): admitted while they waited for their next poll (the session ended first), or lost (lost: %s)",
			who, c.Unseen, strings.Join(c.LostReasons, ", "), known(int64(c.Lost))))
	}
	if c.StillWaiting > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d users still waiting when the drain (%s) ran out", who, c.StillWaiting, p.Drain))
	}
	if c.RoundErrors > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %d admission rounds failed on the store", who, c.RoundErrors))
	}
}

// known formats a count, or n/a for -1.
func known(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return strconv.FormatInt(n, 10)
}
