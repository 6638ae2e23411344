package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// RoomParams are shared by the scenarios that drive real queue instances.
type RoomParams struct {
	// Store is what the bench starts: "myredis", "redis", or "auto" (MyRedis
	// when it has what the queue needs, else redis-server, said in the report).
	Store     string   `json:"store"`
	RedisURL  string   `json:"redis_url,omitempty"`
	QueueURLs []string `json:"queue_urls,omitempty"`
	Queue     string   `json:"queue,omitempty"` // queue name on given instances
}

// store starts (or wraps) the store a room scenario uses, noting in r any
// fallback from MyRedis to redis-server.
func (e *Env) store(ctx context.Context, p RoomParams, r *Report) (*Target, error) {
	if p.Store == "auto" && p.RedisURL == "" && len(p.QueueURLs) == 0 {
		t, err := e.StartMyRedis(ctx, 1)
		if err != nil {
			return nil, err
		}
		missing := storeMissing(ctx, t)
		if len(missing) == 0 || !e.HaveRedis() {
			return t, nil
		}
		t.Close()
		r.Notes = append(r.Notes, fmt.Sprintf("MyRedis lacks %s, which the queue needs: measured on redis-server instead (--store myredis to insist).",
			strings.Join(missing, ", ")))
		return e.StartRedis(ctx)
	}
	switch {
	case p.RedisURL != "":
		return URLTarget(ctx, p.RedisURL)
	case len(p.QueueURLs) > 0:
		return nil, nil // instances given without their store: observe through the API
	case p.Store == "redis":
		return e.StartRedis(ctx)
	case p.Store == "myredis" || p.Store == "auto" || p.Store == "":
		return e.StartMyRedis(ctx, 1)
	}
	return nil, fmt.Errorf("unknown store %q (want myredis, redis or auto)", p.Store)
}

// OvershootParams configure `bench overshoot`.
type OvershootParams struct {
	RoomParams
	Strategies []string      `json:"strategies"`
	Instances  []int         `json:"instances"`
	Slot       int           `json:"slot"`
	Stages     []stage       `json:"stages"`
	HoldMin    time.Duration `json:"hold_min_ns"`
	HoldMax    time.Duration `json:"hold_max_ns"`
	Abandon    float64       `json:"abandon"`
	Session    time.Duration `json:"session_ns"` // abandoned sessions end after this
	Period     time.Duration `json:"period_ns"`
	PollCap    time.Duration `json:"poll_cap_ns"`
	Drain      time.Duration `json:"drain_ns"` // how long to wait for the queue to empty after the last arrival
}

// DefaultOvershootParams: every strategy x 1, 3, 10 instances, slot 100,
// arrivals 20 -> 160 users/s in four 5 s stages, holds 0.5-2 s, 10% abandon.
func DefaultOvershootParams() OvershootParams {
	return OvershootParams{
		RoomParams: RoomParams{Store: "auto", Queue: "tickets"},
		Strategies: []string{"naive", "leader", "optimistic", "atomic"},
		Instances:  []int{1, 3, 10},
		Slot:       100,
		Stages:     []stage{{20, 5 * time.Second}, {40, 5 * time.Second}, {80, 5 * time.Second}, {160, 5 * time.Second}},
		HoldMin:    500 * time.Millisecond, HoldMax: 2 * time.Second,
		Abandon: 0.10, Session: 3 * time.Second, Period: 200 * time.Millisecond,
		PollCap: time.Second, Drain: 60 * time.Second,
	}
}

// ShortStages is the arrival plan of a short run.
var ShortStages = []stage{{40, 1200 * time.Millisecond}, {80, 1200 * time.Millisecond}, {160, 1200 * time.Millisecond}}

// OvershootCell is one strategy at one instance count.
type OvershootCell struct {
	Strategy       string   `json:"strategy"`
	Instances      int      `json:"instances"`
	Users          int      `json:"users"`
	Admitted       int      `json:"admitted"` // distinct users admitted
	MaxObserved    int64    `json:"max_observed_active"`
	Overshoot      int64    `json:"overshoot"`
	MaxConfirmed   int      `json:"max_confirmed_active"`
	ConfirmedOver  int      `json:"confirmed_overshoot"`
	Duplicates     int64    `json:"duplicate_admissions"` // store's admission count - users admitted
	Lost           int      `json:"lost"`
	LostReasons    []string `json:"lost_reasons,omitempty"`
	StillWaiting   int      `json:"still_waiting"` // drain ran out
	AdmittedPerSec float64  `json:"admitted_per_sec"`
	Join           Latency  `json:"join_latency"`
	Status         Latency  `json:"status_latency"`
	Requests       int      `json:"requests"`
	Errors         int      `json:"errors"`
	ErrorRate      float64  `json:"error_rate"`
	FirstError     string   `json:"first_error,omitempty"`
	ObserverReads  int      `json:"observer_reads"`
	Skipped        string   `json:"skipped,omitempty"`
	active         []sample
	joinLat        []float64
	statusLat      []float64
}

// OvershootResults is results.json's "results" for `bench overshoot`.
type OvershootResults struct {
	Store string          `json:"store"`
	Cells []OvershootCell `json:"cells"`
}

// Overshoot measures every strategy at every instance count through the HTTP API.
func (e *Env) Overshoot(ctx context.Context, p OvershootParams) (*Report, error) {
	if p.Slot < 1 || len(p.Stages) == 0 {
		return nil, errors.New("overshoot: need a slot and at least one stage")
	}
	r := e.newReport("overshoot", p)
	store, err := e.store(ctx, p.RoomParams, r)
	if err != nil {
		return nil, err
	}
	var res OvershootResults
	var missing []string
	if store != nil {
		defer store.Close()
		r.Machine.Servers[store.Name] = store.Version
		res.Store = store.Name
		missing = storeMissing(ctx, store)
		if len(missing) > 0 && !lacksEvalOnly(missing) {
			return nil, fmt.Errorf("overshoot: the store %s lacks %s; try --store redis", store.Name, strings.Join(missing, ", "))
		}
	}
	type cellSpec struct {
		strategy string
		n        int
	}
	var specs []cellSpec
	if len(p.QueueURLs) > 0 {
		specs = []cellSpec{{"", len(p.QueueURLs)}}
	} else {
		for _, s := range p.Strategies {
			for _, n := range p.Instances {
				specs = append(specs, cellSpec{s, n})
			}
		}
	}
	perCell := 0
	for _, st := range p.Stages {
		perCell += int(math.Ceil(st.Rate * st.For.Seconds()))
	}
	bar := e.bar(perCell*len(specs), "overshoot")
	defer bar.Finish()
	for _, cs := range specs {
		cell := OvershootCell{Strategy: cs.strategy, Instances: cs.n}
		if store != nil && needsEval(cs.strategy) && len(missing) > 0 {
			cell.Skipped = "the store has no EVAL"
			res.Cells = append(res.Cells, cell)
			bar.Add(perCell)
			continue
		}
		spec := roomSpec{Queue: fmt.Sprintf("os-%s-%d-%d", cs.strategy, cs.n, time.Now().UnixMilli()%100000),
			Strategy: cs.strategy, Instances: cs.n, Slot: p.Slot, Session: p.Session,
			TicketTTL: time.Minute, Period: p.Period}
		if len(p.QueueURLs) > 0 {
			spec.Queue = p.Queue
		}
		rm, err := e.openRoom(ctx, store, p.QueueURLs, spec)
		if err != nil {
			return nil, err
		}
		if len(p.QueueURLs) > 0 {
			info, err := rm.info(ctx)
			if err != nil {
				rm.close()
				return nil, err
			}
			cell.Strategy, spec.Slot = info.Strategy, info.Slot
			rm.spec.Slot = info.Slot
		}
		sim := rm.simulate(ctx, p.Stages, userSpec{Poll: true, PollCap: p.PollCap, HoldMin: p.HoldMin,
			HoldMax: p.HoldMax, Abandon: p.Abandon}, p.Drain, func() { bar.Add(1) })
		var admittedTotal int64 = -1
		if info, err := rm.info(ctx); err == nil {
			admittedTotal = info.AdmittedTotal
		}
		rm.close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fillOvershootCell(&cell, sim, spec.Slot, admittedTotal)
		res.Cells = append(res.Cells, cell)
	}
	r.Results = res
	overshootTables(r, &res, p)
	return r.finish(), nil
}

func fillOvershootCell(c *OvershootCell, sim *simResult, slot int, admittedTotal int64) {
	c.Users = len(sim.Users)
	var first, last time.Time
	reasons := map[string]int{}
	for _, u := range sim.Users {
		admitted := !u.Seen.IsZero() || u.Lost == "session ended"
		if admitted {
			c.Admitted++
			if !u.AdmittedAt.IsZero() {
				if first.IsZero() || u.AdmittedAt.Before(first) {
					first = u.AdmittedAt
				}
				if u.AdmittedAt.After(last) {
					last = u.AdmittedAt
				}
			}
		} else if u.Lost != "" {
			c.Lost++
			reasons[u.Lost]++
		}
	}
	for _, k := range sortedKeys(reasons) {
		c.LostReasons = append(c.LostReasons, fmt.Sprintf("%d %s", reasons[k], k))
	}
	c.StillWaiting = sim.TimedOut
	if last.After(first) {
		c.AdmittedPerSec = float64(c.Admitted) / last.Sub(sim.Start).Seconds()
	}
	c.MaxObserved = maxSample(sim.Active)
	c.Overshoot = max(0, c.MaxObserved-int64(slot))
	c.MaxConfirmed = confirmedMax(sim.Users)
	c.ConfirmedOver = max(0, c.MaxConfirmed-slot)
	if admittedTotal >= 0 {
		c.Duplicates = max(0, admittedTotal-int64(c.Admitted))
	}
	c.Join, c.Status = latencyOf(sim.JoinLat), latencyOf(sim.StatusLat)
	c.Requests, c.Errors, c.FirstError = sim.Requests, sim.Errors, sim.FirstError
	if c.Requests > 0 {
		c.ErrorRate = float64(c.Errors) / float64(c.Requests)
	}
	c.ObserverReads = sim.Reads
	c.active, c.joinLat, c.statusLat = sim.Active, sim.JoinLat, sim.StatusLat
}

func overshootTables(r *Report, res *OvershootResults, p OvershootParams) {
	var stages []string
	for _, s := range p.Stages {
		stages = append(stages, fmt.Sprintf("%g/s for %s", s.Rate, s.For))
	}
	t := Table{
		Title: fmt.Sprintf("admission overshoot, slot %d, store %s; arrivals %s; hold %s-%s, %.0f%% abandon",
			p.Slot, res.Store, strings.Join(stages, ", "), p.HoldMin, p.HoldMax, 100*p.Abandon),
		Header: []string{"strategy", "instances", "users", "max active", "overshoot", "max confirmed", "confirmed over",
			"duplicates", "lost", "admitted/s", "join p50/95/99 ms", "status p50/95/99 ms", "errors"},
	}
	for _, c := range res.Cells {
		if c.Skipped != "" {
			t.AddRow(c.Strategy, c.Instances, "skipped: "+c.Skipped, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-")
			continue
		}
		t.AddRow(c.Strategy, c.Instances, c.Users, c.MaxObserved, c.Overshoot, c.MaxConfirmed, c.ConfirmedOver,
			c.Duplicates, c.Lost, fmt.Sprintf("%.1f", c.AdmittedPerSec), percentiles(c.joinLat), percentiles(c.statusLat),
			pct(c.ErrorRate))
		if c.FirstError != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s x%d: %d of %d requests failed, first: %s", c.Strategy, c.Instances, c.Errors, c.Requests, c.FirstError))
		}
		if c.Lost > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s x%d: lost users: %s", c.Strategy, c.Instances, strings.Join(c.LostReasons, ", ")))
		}
		if c.StillWaiting > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s x%d: %d users still waiting when the drain (%s) ran out", c.Strategy, c.Instances, c.StillWaiting, p.Drain))
		}
	}
	r.Tables = append(r.Tables, t)
	r.Notes = append(r.Notes,
		"max active: the observer's highest ZCARD of the active set (read every millisecond); overshoot = max active - slot.",
		"max confirmed: most users holding an admission at once by their own account (from the answer saying admitted to the release they sent); a lower bound of the real count.",
		"duplicates: admissions the store counted minus users admitted; lost: users told their ticket expired while they were polling.")

	// Charts: active over time per strategy at each instance count; max active per cell; latency.
	var labels []string
	seenN := map[int]bool{}
	for _, c := range res.Cells {
		seenN[c.Instances] = true
	}
	for _, n := range p.Instances {
		if !seenN[n] {
			continue
		}
		var series []Series
		for _, c := range res.Cells {
			if c.Instances != n || c.Skipped != "" {
				continue
			}
			xs, ys := bucketMax(c.active, 0.05)
			series = append(series, Series{Name: c.Strategy, X: xs, Y: ys})
		}
		if len(series) > 0 {
			r.Charts = append(r.Charts, lineChart(fmt.Sprintf("overshoot-active-%d.png", n),
				fmt.Sprintf("Active users over time, %d instance(s) (max per 50 ms)", n), "seconds", "active (ZCARD)",
				series, float64(p.Slot), "slot "+strconv.Itoa(p.Slot)))
		}
	}
	var bars []Series
	for _, s := range p.Strategies {
		bars = append(bars, Series{Name: s})
	}
	for _, n := range p.Instances {
		if !seenN[n] {
			continue
		}
		labels = append(labels, strconv.Itoa(n)+" instance(s)")
		for i, s := range p.Strategies {
			v := 0.0
			for _, c := range res.Cells {
				if c.Strategy == s && c.Instances == n {
					v = float64(c.MaxObserved)
				}
			}
			bars[i].Y = append(bars[i].Y, v)
		}
	}
	if len(labels) > 0 && len(p.QueueURLs) == 0 {
		r.Charts = append(r.Charts, barChart("overshoot-max-active.png",
			fmt.Sprintf("Highest active count observed (slot %d)", p.Slot), "max active", labels, bars))
	}
	var cdf []Series
	colour := map[string]int{}
	for i, s := range p.Strategies {
		colour[s] = i
	}
	for _, c := range res.Cells {
		if c.Skipped != "" || len(c.statusLat) == 0 {
			continue
		}
		i := colour[c.Strategy]
		if len(p.Instances) > 1 && c.Instances != p.Instances[len(p.Instances)/2] {
			continue // the middle instance count keeps the chart readable
		}
		cdf = append(cdf, Series{Name: fmt.Sprintf("%s x%d join", c.Strategy, c.Instances), Y: c.joinLat, Color: i % 7, Dash: 1},
			Series{Name: fmt.Sprintf("%s x%d status", c.Strategy, c.Instances), Y: c.statusLat, Color: i % 7, Dash: 0})
	}
	if len(cdf) > 0 {
		r.Charts = append(r.Charts, cdfChart("overshoot-latency.png", "Join (dashed) and status (solid) latency", "ms", cdf))
	}
}

// ParseStages reads "20:5s,40:5s" (users per second : duration).
func ParseStages(s string) ([]stage, error) {
	var out []stage
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		rate, dur, ok := strings.Cut(f, ":")
		r, err1 := strconv.ParseFloat(rate, 64)
		d, err2 := time.ParseDuration(dur)
		if !ok || err1 != nil || err2 != nil || r <= 0 || d <= 0 {
			return nil, fmt.Errorf("bad stage %q (want rate:duration, e.g. 40:5s)", f)
		}
		out = append(out, stage{Rate: r, For: d})
	}
	if len(out) == 0 {
		return nil, errors.New("no stages")
	}
	return out, nil
}

// FormatStages writes stages as ParseStages reads them.
func FormatStages(st []stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = strconv.FormatFloat(s.Rate, 'f', -1, 64) + ":" + s.For.String()
	}
	return strings.Join(parts, ",")
}
