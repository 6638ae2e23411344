package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// EtaParams configure `bench eta`.
type EtaParams struct {
	RoomParams
	Slot      int           `json:"slot"`
	Stages    []stage       `json:"stages"`
	HoldMin   time.Duration `json:"hold_min_ns"`
	HoldMax   time.Duration `json:"hold_max_ns"`
	Session   time.Duration `json:"session_ns"`
	Period    time.Duration `json:"period_ns"`
	Strategy  string        `json:"strategy"`
	Instances int           `json:"instances"`
	Drain     time.Duration `json:"drain_ns"`
}

// DefaultEtaParams: slot 20, holds 0.5-1.5 s (about 20 admissions/s), arrivals
// at 10/s then 30/s so a queue builds, 3 atomic instances.
func DefaultEtaParams() EtaParams {
	return EtaParams{
		RoomParams: RoomParams{Store: "auto", Queue: "tickets"},
		Slot:       20,
		Stages:     []stage{{10, 10 * time.Second}, {30, 20 * time.Second}},
		HoldMin:    500 * time.Millisecond, HoldMax: 1500 * time.Millisecond,
		Session: 10 * time.Second, Period: 200 * time.Millisecond,
		Strategy: "atomic", Instances: 3, Drain: 60 * time.Second,
	}
}

// EtaResults is results.json's "results" for `bench eta`.
type EtaResults struct {
	Store       string      `json:"store"`
	Strategy    string      `json:"strategy"`
	Users       int         `json:"users"`
	WithETA     int         `json:"with_eta"`    // shown an estimate and admitted
	WithoutETA  int         `json:"without_eta"` // joined before there was a rate (null)
	NotAdmitted int         `json:"not_admitted"`
	MedianAbs   float64     `json:"median_abs_error_s"`
	P90Abs      float64     `json:"p90_abs_error_s"`
	MedianBias  float64     `json:"median_signed_error_s"` // > 0: the wait was longer than shown
	MedianRel   float64     `json:"median_relative_error"` // |error| / actual wait
	MedianWait  float64     `json:"median_wait_s"`
	ByPosition  []EtaBucket `json:"by_position"`
	Errors      int         `json:"errors"`
	FirstError  string      `json:"first_error,omitempty"`
	shown, real []float64
}

// EtaBucket is the error for users who joined at positions [From, To].
type EtaBucket struct {
	From, To  int64
	Users     int     `json:"users"`
	MedianAbs float64 `json:"median_abs_error_s"`
	P90Abs    float64 `json:"p90_abs_error_s"`
}

// Eta compares the ETA each user was shown at join with the wait that followed
// (admission time from the pass's expiry minus the session, so polling lag
// does not count).
func (e *Env) Eta(ctx context.Context, p EtaParams) (*Report, error) {
	if p.Slot < 1 || len(p.Stages) == 0 {
		return nil, errors.New("eta: need a slot and stages")
	}
	r := e.newReport("eta", p)
	store, err := e.store(ctx, p.RoomParams, r)
	if err != nil {
		return nil, err
	}
	res := EtaResults{Strategy: p.Strategy}
	if store != nil {
		defer store.Close()
		r.Machine.Servers[store.Name] = store.Version
		res.Store = store.Name
		if missing := storeMissing(ctx, store); len(missing) > 0 {
			if !lacksEvalOnly(missing) {
				return nil, fmt.Errorf("eta: the store %s lacks %v; try --store redis", store.Name, missing)
			}
			if needsEval(p.Strategy) {
				res.Strategy = "optimistic"
				r.Notes = append(r.Notes, "the store has no EVAL: ran the optimistic strategy instead of atomic.")
			}
		}
	}
	spec := roomSpec{Queue: fmt.Sprintf("eta-%d", time.Now().UnixMilli()%100000), Strategy: res.Strategy,
		Instances: p.Instances, Slot: p.Slot, Session: p.Session, TicketTTL: 10 * time.Minute, Period: p.Period}
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
		res.Strategy = info.Strategy
		// The admission time is read from expires_at - session: ask for it.
		var full struct {
			SessionSeconds float64 `json:"session_seconds"`
		}
		if err := rm.getJSON(ctx, rm.path(rm.urls[0], ""), &full); err == nil && full.SessionSeconds > 0 {
			rm.spec.Session = time.Duration(full.SessionSeconds * float64(time.Second))
		}
	}
	total := 0
	for _, st := range p.Stages {
		total += int(math.Ceil(st.Rate * st.For.Seconds()))
	}
	bar := e.bar(total, "eta")
	sim := rm.simulate(ctx, p.Stages, userSpec{Poll: true, PollCap: time.Second, HoldMin: p.HoldMin, HoldMax: p.HoldMax},
		p.Drain, func() { bar.Add(1) })
	bar.Finish()
	rm.close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fillEta(&res, sim)
	r.Results = res
	etaTables(r, &res, p)
	return r.finish(), nil
}

type etaPoint struct {
	pos         int64
	shown, real float64
}

func fillEta(res *EtaResults, sim *simResult) {
	res.Users = len(sim.Users)
	res.Errors, res.FirstError = sim.Errors, sim.FirstError
	var pts []etaPoint
	for _, u := range sim.Users {
		switch {
		case u.JoinFailed || u.AdmittedAt.IsZero():
			res.NotAdmitted++
		case u.ETA == nil:
			res.WithoutETA++
		default:
			pts = append(pts, etaPoint{u.JoinPosition, *u.ETA, math.Max(0, u.AdmittedAt.Sub(u.Joined).Seconds())})
		}
	}
	res.WithETA = len(pts)
	abs, signed, rel, wait := errorsOf(pts)
	res.MedianAbs, res.P90Abs = quantile(abs, 0.5), quantile(abs, 0.9)
	res.MedianBias, res.MedianRel, res.MedianWait = quantile(signed, 0.5), quantile(rel, 0.5), quantile(wait, 0.5)
	for _, pt := range pts {
		res.shown = append(res.shown, pt.shown)
		res.real = append(res.real, pt.real)
	}
	// Buckets by position at join: 1-10, 11-50, 51-200, 201+.
	for _, b := range [][2]int64{{1, 10}, {11, 50}, {51, 200}, {201, math.MaxInt64}} {
		var in []etaPoint
		for _, pt := range pts {
			if pt.pos >= b[0] && pt.pos <= b[1] {
				in = append(in, pt)
			}
		}
		if len(in) == 0 {
			continue
		}
		a, _, _, _ := errorsOf(in)
		res.ByPosition = append(res.ByPosition, EtaBucket{From: b[0], To: b[1], Users: len(in),
			MedianAbs: quantile(a, 0.5), P90Abs: quantile(a, 0.9)})
	}
}

func errorsOf(pts []etaPoint) (abs, signed, rel, wait []float64) {
	for _, pt := range pts {
		d := pt.real - pt.shown
		abs = append(abs, math.Abs(d))
		signed = append(signed, d)
		wait = append(wait, pt.real)
		if pt.real > 0.5 {
			rel = append(rel, math.Abs(d)/pt.real)
		}
	}
	return
}

func etaTables(r *Report, res *EtaResults, p EtaParams) {
	var stages []string
	for _, s := range p.Stages {
		stages = append(stages, fmt.Sprintf("%g/s for %s", s.Rate, s.For))
	}
	t := Table{
		Title: fmt.Sprintf("ETA at join vs actual wait: slot %d, %s x%d on %s, arrivals %s, holds %s-%s",
			p.Slot, res.Strategy, p.Instances, res.Store, strings.Join(stages, ", "), p.HoldMin, p.HoldMax),
		Header: []string{"users", "with ETA", "ETA null", "not admitted", "median wait s", "median |error| s", "p90 |error| s", "median error s", "median |error|/wait"},
	}
	t.AddRow(res.Users, res.WithETA, res.WithoutETA, res.NotAdmitted, f1(res.MedianWait), f1(res.MedianAbs), f1(res.P90Abs),
		fmt.Sprintf("%+.1f", res.MedianBias), pct(res.MedianRel))
	r.Tables = append(r.Tables, t)
	bt := Table{Title: "by position at join", Header: []string{"position", "users", "median |error| s", "p90 |error| s"}}
	for _, b := range res.ByPosition {
		label := fmt.Sprintf("%d-%d", b.From, b.To)
		if b.To == math.MaxInt64 {
			label = fmt.Sprintf("%d+", b.From)
		}
		bt.AddRow(label, b.Users, f1(b.MedianAbs), f1(b.P90Abs))
	}
	if len(bt.Rows) > 0 {
		r.Tables = append(r.Tables, bt)
	}
	r.Notes = append(r.Notes,
		"error = actual wait - ETA shown at join (positive: waited longer than told). The wait ends when the store admitted the user (expires_at - session), not when their next poll noticed.",
		"ETA is null until the queue has measured an admission rate; those users are counted apart.")
	if res.FirstError != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("%d requests failed, first: %s", res.Errors, res.FirstError))
	}
	if len(res.shown) > 0 {
		r.Charts = append(r.Charts, scatterChart("eta-scatter.png", "ETA shown at join vs actual wait", "ETA shown (s)", "actual wait (s)",
			[]Series{{Name: "users", X: res.shown, Y: res.real}}, true))
	}
}

func f1(f float64) string { return fmt.Sprintf("%.1f", f) }
