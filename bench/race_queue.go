package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"waitroom/queue"
)

// raceQueue runs p.Instances admission engines with the optimistic strategy
// (the design note's) in this process, each with its own connection pool,
// against t, while p.Users join, hold for a moment and release (10% abandon and
// are reclaimed when their session ends). The engines' OnAdmit hook tells
// exactly who was admitted and how often; an observer reads the active set in
// a tight loop. It returns the figures, or why it was not run.
func (e *Env) raceQueue(ctx context.Context, t *Target, p RaceParams) (*QueueRace, string) {
	if missing := storeMissing(ctx, t); len(missing) > 0 && !lacksEvalOnly(missing) {
		return nil, "the store lacks " + strings.Join(missing, ", ")
	}
	name := "race-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	res := &QueueRace{Instances: p.Instances, Slot: p.Slot, Users: p.Users}
	var (
		mu        sync.Mutex
		admits    = map[string]int{}
		confirmed sync.Map // ticket -> confirmation sequence
		confSeq   atomic.Int64
		distinct  atomic.Int64
		errs      atomic.Int64
		firstErr  atomic.Value
	)
	noteErr := func(err error) {
		if err != nil && ctx.Err() == nil {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
		}
	}
	const session = 400 * time.Millisecond
	engines := make([]*queue.Engine, p.Instances)
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	bar := e.bar(p.Users, "optimistic "+t.Name)
	defer bar.Finish()
	onAdmit := func(as []queue.Admission) {
		for _, a := range as {
			confirmed.Store(a.Ticket, confSeq.Add(1))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range as {
			admits[a.Ticket]++
			if admits[a.Ticket] > 1 {
				continue
			}
			distinct.Add(1)
			bar.Add(1)
			if rand.Float64() < 0.10 {
				continue // abandons: reclaimed when the session ends
			}
			by := engines[rand.IntN(len(engines))]
			ticket := a.Ticket
			hold := time.Millisecond + rand.N(20*time.Millisecond)
			time.AfterFunc(hold, func() {
				if _, err := by.Release(context.Background(), ticket); err != nil {
					noteErr(err)
				}
			})
		}
	}
	for i := range engines {
		c := t.Client(16)
		closers = append(closers, c.Close)
		eng, err := queue.New(c, name, queue.Options{Strategy: queue.Optimistic, Period: 50 * time.Millisecond,
			InstanceID: "i" + strconv.Itoa(i), Secret: []byte(benchSecret),
			Defaults: queue.Settings{Slot: p.Slot, Session: session, TicketTTL: 10 * time.Minute},
			Hooks:    queue.Hooks{OnAdmit: onAdmit}})
		if err != nil {
			return nil, err.Error()
		}
		engines[i] = eng
	}
	obs := t.Client(1)
	closers = append(closers, obs.Close)
	active, waiting := "wr:{"+name+"}:active", "wr:{"+name+"}:waiting"

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var loops sync.WaitGroup
	for _, eng := range engines {
		loops.Go(func() { eng.Run(runCtx) })
	}
	obsDone := make(chan struct{})
	go func() {
		defer close(obsDone)
		for i := 0; runCtx.Err() == nil; i++ {
			if i%8 != 7 {
				if n, err := obs.ZCard(runCtx, active).Result(); err == nil {
					res.ObserverReads++
					res.MaxObserved = max(res.MaxObserved, int(n))
				}
				continue
			}
			// Every few reads, count the members whose admission was confirmed
			// before the read was sent: a lower bound of confirmed admissions.
			before := confSeq.Load()
			ms, err := obs.ZRange(runCtx, active, 0, -1).Result()
			if err != nil {
				continue
			}
			res.ObserverReads++
			res.MaxObserved = max(res.MaxObserved, len(ms))
			c := 0
			for _, m := range ms {
				if s, ok := confirmed.Load(m); ok && s.(int64) <= before {
					c++
				}
			}
			res.MaxConfirmed = max(res.MaxConfirmed, c)
		}
	}()

	start := time.Now()
	var joiners sync.WaitGroup
	var next, joined atomic.Int64
	for range 8 {
		joiners.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(p.Users) || runCtx.Err() != nil {
					return
				}
				if _, err := engines[int(i)%len(engines)].Join(runCtx, "u"+strconv.FormatInt(i, 10)); err != nil {
					noteErr(err)
					continue
				}
				joined.Add(1)
			}
		})
	}
	joiners.Wait()
	// Wait until every joined user is admitted, or nothing moves for 5 s.
	last, lastMove := int64(-1), time.Now()
	for ctx.Err() == nil {
		d := distinct.Load()
		if d >= joined.Load() {
			break
		}
		if d != last {
			last, lastMove = d, time.Now()
		} else if time.Since(lastMove) > 5*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	res.Seconds = time.Since(start).Seconds()
	var roundErrs uint64 // before cancel: rounds cut short by it are not store errors
	for _, eng := range engines {
		roundErrs += eng.Counters().Errors
	}
	cancel()
	loops.Wait()
	<-obsDone
	if ctx.Err() != nil {
		return nil, "interrupted"
	}

	left, err := obs.ZCard(ctx, waiting).Result()
	noteErr(err)
	mu.Lock()
	defer mu.Unlock()
	res.Admitted = len(admits)
	for _, n := range admits {
		res.Duplicates += n - 1
	}
	res.Lost = max(0, int(joined.Load())-res.Admitted-int(left))
	res.Errors = int(errs.Load()) + int(roundErrs)
	if s, ok := firstErr.Load().(string); ok {
		res.FirstErrorText = s
	}
	res.Overshoot = max(0, res.MaxObserved-p.Slot)
	res.ConfirmedOver = max(0, res.MaxConfirmed-p.Slot)
	if int(joined.Load()) < p.Users {
		res.FirstErrorText = strings.TrimSpace(fmt.Sprintf("%d of %d joins failed; %s", p.Users-int(joined.Load()), p.Users, res.FirstErrorText))
	}
	return res, ""
}
