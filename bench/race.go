package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RaceParams configure `bench race`.
type RaceParams struct {
	Contenders int           `json:"contenders"` // clients racing SET NX each round
	Rounds     int           `json:"rounds"`
	Workers    int           `json:"workers"` // MyRedis executor workers of the broken target
	LeaseTTL   time.Duration `json:"lease_ttl_ns"`
	// The optimistic-admission part (needs the queue engine).
	Instances int `json:"instances"` // queue instances running optimistic
	Slot      int `json:"slot"`
	Users     int `json:"users"` // users pushed through admission per target
	// RedisURLs replace the started servers when given.
	RedisURLs []string `json:"redis_urls,omitempty"`
}

// DefaultRaceParams are the issue's: 16 contenders, 10,000 rounds, 4 workers.
func DefaultRaceParams() RaceParams {
	return RaceParams{Contenders: 16, Rounds: 10000, Workers: 4, LeaseTTL: time.Second,
		Instances: 3, Slot: 100, Users: 3000}
}

// RaceCounter tallies the winners of each round of a SET NX race.
type RaceCounter struct {
	Rounds      int         `json:"rounds"`
	MultiWinner int         `json:"multi_winner_rounds"` // rounds with more than one winner
	NoWinner    int         `json:"no_winner_rounds"`    // rounds nobody won (errors)
	ExtraWins   int         `json:"extra_wins"`          // sum over rounds of winners-1
	MaxWinners  int         `json:"max_winners"`
	Errors      int         `json:"errors"`
	Winners     map[int]int `json:"winners_histogram"` // winners -> rounds
}

// Add records one round with the given number of winners and failed commands.
func (c *RaceCounter) Add(winners, errs int) {
	if c.Winners == nil {
		c.Winners = map[int]int{}
	}
	c.Rounds++
	c.Errors += errs
	c.Winners[winners]++
	c.MaxWinners = max(c.MaxWinners, winners)
	switch {
	case winners == 0:
		c.NoWinner++
	case winners > 1:
		c.MultiWinner++
		c.ExtraWins += winners - 1
	}
}

// Rate is the fraction of rounds with more than one winner.
func (c *RaceCounter) Rate() float64 {
	if c.Rounds == 0 {
		return 0
	}
	return float64(c.MultiWinner) / float64(c.Rounds)
}

// RaceTargetResult is one store's figures.
type RaceTargetResult struct {
	Target       string      `json:"target"`
	Version      string      `json:"version"`
	Workers      int         `json:"workers"`
	Leader       RaceCounter `json:"leader"`
	RoundsPerSec float64     `json:"rounds_per_sec"`
	Queue        *QueueRace  `json:"optimistic,omitempty"`
	QueueSkipped string      `json:"optimistic_skipped,omitempty"`
}

// QueueRace is the optimistic admission run against one store.
type QueueRace struct {
	Instances      int     `json:"instances"`
	Slot           int     `json:"slot"`
	Users          int     `json:"users"`
	Admitted       int     `json:"admitted"`             // distinct users admitted
	Duplicates     int     `json:"duplicate_admissions"` // admissions of an already admitted user
	Lost           int     `json:"lost"`                 // neither admitted nor waiting at the end
	MaxObserved    int     `json:"max_observed_active"`  // observer's ZCARD maximum
	Overshoot      int     `json:"overshoot"`            // MaxObserved - slot (>= 0)
	MaxConfirmed   int     `json:"max_confirmed_active"` // most admissions held at once
	ConfirmedOver  int     `json:"confirmed_overshoot"`
	ObserverReads  int     `json:"observer_reads"`
	Seconds        float64 `json:"seconds"`
	Errors         int     `json:"errors"`
	FirstErrorText string  `json:"first_error,omitempty"`
}

// RaceResults is results.json's "results" for `bench race`.
type RaceResults struct {
	Targets []RaceTargetResult `json:"targets"`
}

// Race runs the leader race (and the optimistic admission) on each target.
func (e *Env) Race(ctx context.Context, p RaceParams) (*Report, error) {
	if p.Contenders < 2 || p.Rounds < 1 {
		return nil, errors.New("race: need at least 2 contenders and 1 round")
	}
	r := e.newReport("race", p)
	targets, err := e.DefaultTargets(ctx, p.RedisURLs, p.Workers)
	if err != nil {
		return nil, err
	}
	defer closeAll(targets)
	var res RaceResults
	for _, t := range targets {
		r.Machine.Servers[t.Name] = t.Version
		tr := RaceTargetResult{Target: t.Name, Version: t.Version, Workers: t.Workers}
		start := time.Now()
		tr.Leader, err = e.raceLeader(ctx, t, p)
		if err != nil {
			return nil, fmt.Errorf("race on %s: %w", t.Name, err)
		}
		tr.RoundsPerSec = float64(tr.Leader.Rounds) / time.Since(start).Seconds()
		if p.Instances > 0 && p.Users > 0 {
			tr.Queue, tr.QueueSkipped = e.raceQueue(ctx, t, p)
		}
		res.Targets = append(res.Targets, tr)
	}
	r.Results = res
	raceTables(r, &res, p)
	return r.finish(), nil
}

// raceRound is one round: every contender waits on start, then races.
type raceRound struct {
	key   string
	start chan struct{}
	wins  atomic.Int32
	errs  atomic.Int32
	wg    sync.WaitGroup
}

// raceLeader runs p.Rounds rounds of K contenders racing SET key id NX PX ttl on a
// fresh key. Each contender has its own connection; all are released together
// each round, as instances whose period timers fire at the same moment. Nothing
// else is done to provoke a race: a double win here is the server's.
func (e *Env) raceLeader(ctx context.Context, t *Target, p RaceParams) (RaceCounter, error) {
	ins := make([]chan *raceRound, p.Contenders)
	var wg sync.WaitGroup
	for i := range ins {
		ins[i] = make(chan *raceRound, 1)
		c := t.Client(1)
		if err := c.Ping(ctx).Err(); err != nil { // connect before the first round
			return RaceCounter{}, err
		}
		id := strconv.Itoa(i)
		ttl := p.LeaseTTL.Milliseconds()
		wg.Go(func() {
			defer c.Close()
			for rd := range ins[i] {
				<-rd.start
				err := c.Do(ctx, "SET", rd.key, id, "NX", "PX", ttl).Err()
				switch {
				case err == nil:
					rd.wins.Add(1)
				case errors.Is(err, redis.Nil):
				default:
					rd.errs.Add(1)
				}
				rd.wg.Done()
			}
		})
	}
	defer func() {
		for _, in := range ins {
			close(in)
		}
		wg.Wait()
	}()
	var cnt RaceCounter
	bar := e.bar(p.Rounds, "race "+t.Name)
	defer bar.Finish()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i := range p.Rounds {
		if err := ctx.Err(); err != nil {
			return cnt, err
		}
		rd := &raceRound{key: "bench:leader:" + run + ":" + strconv.Itoa(i), start: make(chan struct{})}
		rd.wg.Add(p.Contenders)
		for _, in := range ins {
			in <- rd
		}
		close(rd.start)
		rd.wg.Wait()
		cnt.Add(int(rd.wins.Load()), int(rd.errs.Load()))
		bar.Add(1)
	}
	return cnt, nil
}

func raceTables(r *Report, res *RaceResults, p RaceParams) {
	lt := Table{
		Title:  fmt.Sprintf("SET NX PX %d race: %d contenders x %d rounds", p.LeaseTTL.Milliseconds(), p.Contenders, p.Rounds),
		Header: []string{"server", "workers", "rounds", ">1 winner", "rate", "max winners", "extra leaders", "errors", "rounds/s"},
	}
	var labels []string
	var rates []float64
	for _, t := range res.Targets {
		c := t.Leader
		lt.AddRow(t.Target, workersCell(t.Workers), c.Rounds, c.MultiWinner, pct(c.Rate()), c.MaxWinners, c.ExtraWins, c.Errors, fmt.Sprintf("%.0f", t.RoundsPerSec))
		labels = append(labels, t.Target)
		rates = append(rates, 100*c.Rate())
		if c.MultiWinner == 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: no round with more than one winner in %d rounds of %d contenders.", t.Target, c.Rounds, p.Contenders))
		} else {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d of %d rounds (%s) elected more than one leader, up to %d at once.", t.Target, c.MultiWinner, c.Rounds, pct(c.Rate()), c.MaxWinners))
		}
		if c.Errors > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d commands failed; their rounds count with the winners that did answer.", t.Target, c.Errors))
		}
	}
	r.Tables = append(r.Tables, lt)
	r.Charts = append(r.Charts, barChart("race-leaders.png", "Rounds electing more than one leader (SET NX PX)", "% of rounds", labels, []Series{{Name: "rounds with >1 winner", Y: rates}}))

	qt := Table{
		Title:  fmt.Sprintf("optimistic admission: %d instances, slot %d", p.Instances, p.Slot),
		Header: []string{"server", "workers", "users", "admitted", "duplicates", "lost", "max active (observed)", "overshoot", "max active (confirmed)", "confirmed overshoot", "errors"},
	}
	for _, t := range res.Targets {
		q := t.Queue
		if q == nil {
			if t.QueueSkipped != "" {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: optimistic admission not run: %s", t.Target, t.QueueSkipped))
			}
			continue
		}
		qt.AddRow(t.Target, workersCell(t.Workers), q.Users, q.Admitted, q.Duplicates, q.Lost, q.MaxObserved, q.Overshoot, q.MaxConfirmed, q.ConfirmedOver, q.Errors)
		if q.FirstErrorText != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: optimistic run saw %d errors, first: %s", t.Target, q.Errors, q.FirstErrorText))
		}
	}
	if len(qt.Rows) > 0 {
		r.Tables = append(r.Tables, qt)
	}
}

func workersCell(w int) string {
	if w == 0 {
		return "-"
	}
	return strconv.Itoa(w)
}

func pct(f float64) string {
	if f == 0 {
		return "0%"
	}
	if f < 0.001 {
		return fmt.Sprintf("%.3f%%", 100*f)
	}
	return fmt.Sprintf("%.2f%%", 100*f)
}

func closeAll(ts []*Target) {
	for _, t := range ts {
		t.Close()
	}
}
