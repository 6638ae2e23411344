package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// PeriodParams configure `bench period`.
type PeriodParams struct {
	RoomParams
	Slot      int             `json:"slot"`
	Arrival   float64         `json:"arrival_per_sec"`
	Session   time.Duration   `json:"session_ns"` // every admitted user stays exactly this long
	Periods   []time.Duration `json:"periods_ns"`
	Event     bool            `json:"event_driven"`    // also run with releases triggering admission
	EventBase time.Duration   `json:"event_period_ns"` // the timer period of the event-driven run
	Duration  time.Duration   `json:"arrivals_for_ns"` // how long users arrive
	Strategy  string          `json:"strategy"`        // atomic unless the store has no EVAL
	Instances int             `json:"instances"`
	// Backlog users join in a burst at the start, so each run begins, as in
	// the notes, with a queue to drain. Without one, the service admits a
	// user who joins at the head of an empty queue at once (a join at
	// position 0 triggers a round), and the period would hardly matter.
	Backlog int `json:"initial_backlog"`
}

// DefaultPeriodParams are the notes' experiment: slot 40, 19 users/s, 2 s
// sessions, admit period 2 s down to 100 ms, and event-driven admission.
func DefaultPeriodParams() PeriodParams {
	return PeriodParams{
		RoomParams: RoomParams{Store: "auto"},
		Slot:       40, Arrival: 19, Session: 2 * time.Second,
		Periods: []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond},
		Event:   true, EventBase: 2 * time.Second,
		Duration: 30 * time.Second, Strategy: "atomic", Instances: 1, Backlog: 60,
	}
}

// PeriodRun is one admission period (or the event-driven run).
type PeriodRun struct {
	Label          string  `json:"label"`
	Period         string  `json:"period"`
	EventDriven    bool    `json:"event_driven"`
	Users          int     `json:"users"`
	AdmittedPerSec float64 `json:"admitted_per_sec"` // over periodWindow
	ModelPerSec    float64 `json:"model_per_sec"`    // slot / (session + period/2), or slot/session
	BacklogEnd     int64   `json:"backlog_at_end"`
	BacklogSlope   float64 `json:"backlog_growth_per_sec"` // least squares over periodWindow
	Grows          bool    `json:"backlog_grows"`
	Errors         int     `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	waiting        []sample
}

// PeriodResults is results.json's "results" for `bench period`.
type PeriodResults struct {
	Store    string      `json:"store"`
	Strategy string      `json:"strategy"`
	Runs     []PeriodRun `json:"runs"`
}

// growthThreshold is the backlog slope (users/s) above which the backlog grows.
const growthThreshold = 0.5

// Period runs the queue at each admit period with users who stay exactly one
// session and never release (their sessions run out and the next round
// reclaims them), then once event-driven: users release at the end of their
// session, which triggers a round at once.
func (e *Env) Period(ctx context.Context, p PeriodParams) (*Report, error) {
	if p.Slot < 1 || p.Arrival <= 0 || p.Session <= 0 || p.Duration <= 0 {
		return nil, errors.New("period: need slot, arrival rate, session and duration")
	}
	if len(p.QueueURLs) > 0 {
		return nil, errors.New("period: sets the period of each run, so it starts its own instances (no --queue-urls)")
	}
	r := e.newReport("period", p)
	store, err := e.store(ctx, p.RoomParams, r)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	r.Machine.Servers[store.Name] = store.Version
	res := PeriodResults{Store: store.Name, Strategy: p.Strategy}
	if missing := storeMissing(ctx, store); len(missing) > 0 {
		if !lacksEvalOnly(missing) {
			return nil, fmt.Errorf("period: the store %s lacks %v; try --store redis", store.Name, missing)
		}
		if needsEval(p.Strategy) {
			res.Strategy = "optimistic"
			r.Notes = append(r.Notes, "the store has no EVAL: ran the optimistic strategy instead of atomic.")
		}
	}
	type run struct {
		period time.Duration
		event  bool
	}
	var runs []run
	for _, d := range p.Periods {
		runs = append(runs, run{d, false})
	}
	if p.Event {
		runs = append(runs, run{p.EventBase, true})
	}
	stages := []stage{{p.Arrival, p.Duration}}
	if p.Backlog > 0 {
		const burst = 200.0 // users per second
		stages = []stage{{burst, time.Duration(float64(p.Backlog) / burst * float64(time.Second))}, {p.Arrival, p.Duration}}
	}
	users := 0
	for _, st := range stages {
		users += int(math.Ceil(st.Rate * st.For.Seconds()))
	}
	bar := e.bar(users*len(runs), "period")
	defer bar.Finish()
	for i, rn := range runs {
		spec := roomSpec{Queue: fmt.Sprintf("period-%d-%d", i, time.Now().UnixMilli()%100000), Strategy: res.Strategy,
			Instances: p.Instances, Slot: p.Slot, Session: p.Session, TicketTTL: 10 * time.Minute, Period: rn.period}
		rm, err := e.openRoom(ctx, store, nil, spec)
		if err != nil {
			return nil, err
		}
		us := userSpec{} // join only: sessions run out by themselves
		if rn.event {
			us = userSpec{Poll: true, PollCap: 250 * time.Millisecond, ReleaseAtDeadline: true}
		}
		sim := rm.simulate(ctx, stages, us, p.Duration+p.Session, func() { bar.Add(1) })
		rm.close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr := PeriodRun{Period: rn.period.String(), EventDriven: rn.event, Users: len(sim.Users),
			Errors: sim.Errors, FirstError: sim.FirstError, waiting: sim.Waiting}
		pr.Label = "period " + pr.Period
		pr.ModelPerSec = float64(p.Slot) / (p.Session.Seconds() + rn.period.Seconds()/2)
		if rn.event {
			pr.Label = "event-driven (timer " + pr.Period + ")"
			pr.ModelPerSec = float64(p.Slot) / p.Session.Seconds()
		}
		pr.ModelPerSec = math.Min(pr.ModelPerSec, p.Arrival)
		from, to := periodWindow(p)
		pr.AdmittedPerSec = slopeBetween(sim.Admitted, from, to) // admissions come in waves: fit, do not difference
		pr.BacklogSlope = slopeBetween(sim.Waiting, from, to)
		pr.BacklogEnd = valueAt(sim.Waiting, to)
		pr.Grows = pr.BacklogSlope > growthThreshold
		res.Runs = append(res.Runs, pr)
	}
	r.Results = res
	periodTables(r, &res, p)
	return r.finish(), nil
}

// periodWindow is the stretch of each run that is measured: from two
// sessions (or a quarter of the run) in, when the first waves are over, to
// the last arrival.
func periodWindow(p PeriodParams) (from, to float64) {
	end := p.Duration.Seconds() + float64(p.Backlog)/200
	return math.Max(end/4, 2*p.Session.Seconds()), end
}

// valueAt is the last sample at or before t.
func valueAt(s []sample, t float64) int64 {
	var v int64
	for _, x := range s {
		if x.T > t {
			break
		}
		v = x.N
	}
	return v
}

// slopeBetween is the least-squares slope of the samples in [a, b].
func slopeBetween(s []sample, a, b float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, x := range s {
		if x.T < a || x.T > b {
			continue
		}
		n++
		sx += x.T
		sy += float64(x.N)
		sxx += x.T * x.T
		sxy += x.T * float64(x.N)
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

func periodTables(r *Report, res *PeriodResults, p PeriodParams) {
	t := Table{
		Title: fmt.Sprintf("admit period vs throughput: slot %d, %d users waiting at the start, then %g users/s for %s, sessions of %s, %s x%d on %s",
			p.Slot, p.Backlog, p.Arrival, p.Duration, p.Session, res.Strategy, p.Instances, res.Store),
		Header: []string{"admission", "users", "admitted/s", "model/s", "backlog at end", "backlog growth/s", "backlog", "errors"},
	}
	var labels []string
	var got, model []float64
	var series []Series
	for _, pr := range res.Runs {
		verdict := "steady"
		if pr.Grows {
			verdict = "grows"
		}
		t.AddRow(pr.Label, pr.Users, fmt.Sprintf("%.1f", pr.AdmittedPerSec), fmt.Sprintf("%.1f", pr.ModelPerSec),
			pr.BacklogEnd, fmt.Sprintf("%+.2f", pr.BacklogSlope), verdict, pr.Errors)
		if pr.FirstError != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d requests failed, first: %s", pr.Label, pr.Errors, pr.FirstError))
		}
		labels = append(labels, shortLabel(pr))
		got = append(got, pr.AdmittedPerSec)
		model = append(model, pr.ModelPerSec)
		xs, ys := bucketMax(pr.waiting, 0.2)
		series = append(series, Series{Name: pr.Label, X: xs, Y: ys})
	}
	r.Tables = append(r.Tables, t)
	from, to := periodWindow(p)
	r.Notes = append(r.Notes,
		fmt.Sprintf("admitted/s and backlog growth (least squares) are measured from %.1f s to %.1f s; the backlog grows when it rises faster than %.1f users/s.",
			from, to, growthThreshold),
		"users never release in the timed runs: a session ends by its deadline and the next round reclaims it. A user joining at the head of the queue triggers a round at once, so a run that drains its backlog then admits on joins and no longer depends on the period.",
		"model/s: a place freed by an expired session waits on average half a period for the next round, so a user occupies it session + period/2: slot / (session + period/2), capped by the arrival rate. Event-driven: users release at the end of their session and the release runs a round at once: slot / session.")
	r.Charts = append(r.Charts,
		lineChart("period-backlog.png", "Waiting users over time by admission period", "seconds", "waiting (ZCARD)", series, math.NaN(), ""),
		barChart("period-throughput.png", fmt.Sprintf("Admitted per second (arrivals %g/s)", p.Arrival), "users/s", labels,
			[]Series{{Name: "measured", Y: got}, {Name: "model", Y: model}}))
}

func shortLabel(pr PeriodRun) string {
	if pr.EventDriven {
		return "event"
	}
	return pr.Period
}
