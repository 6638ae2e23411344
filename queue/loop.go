package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// RoundResult tells what one admission round did.
type RoundResult struct {
	Reclaimed int64       // expired sessions removed from the active set
	Admitted  []Admission // confirmed admissions, in admission order
	Dropped   int         // dead tickets (liveness ran out) discarded at the head
	// Left is the arrival numbers of the waiting tickets the round ended
	// (swept or dropped), for the round event.
	Left      []int64
	Rollbacks int  // optimistic: reservations undone because the slot was full
	Leader    bool // leader: this instance held the lease this round
	LostLease bool // leader: the lease was not ours any more after admitting
}

// Counters are cumulative event counts of one engine, for metrics and the bench.
type Counters struct {
	Rounds       uint64
	Admitted     uint64
	Dropped      uint64
	Reclaimed    uint64
	Rollbacks    uint64
	LeaderRounds uint64
	LostLeases   uint64
	Errors       uint64 // rounds that failed with a store error
	Joins        uint64
	Releases     uint64 // releases of admitted users
	Enters       uint64 // passes consumed
	// Round events (events.go): published by this instance, failed to
	// publish, subscriptions established, events received; holds of open
	// pages' tickets made (Hold).
	Published, PublishErrors, Subscribed, Received, Holds uint64
}

type counters struct {
	rounds, admitted, dropped, reclaimed, rollbacks, leaderRounds, lostLeases,
	errors, joins, releases, enters atomic.Uint64
	published, publishErrors, subscribed, received, holds atomic.Uint64
}

// Counters returns a snapshot of the engine's counters.
func (e *Engine) Counters() Counters {
	c := &e.c
	return Counters{
		Rounds: c.rounds.Load(), Admitted: c.admitted.Load(), Dropped: c.dropped.Load(),
		Reclaimed: c.reclaimed.Load(), Rollbacks: c.rollbacks.Load(),
		LeaderRounds: c.leaderRounds.Load(), LostLeases: c.lostLeases.Load(),
		Errors: c.errors.Load(), Joins: c.joins.Load(), Releases: c.releases.Load(),
		Enters: c.enters.Load(), Published: c.published.Load(), PublishErrors: c.publishErrors.Load(),
		Subscribed: c.subscribed.Load(), Received: c.received.Load(), Holds: c.holds.Load(),
	}
}

// Trigger asks the running loop for a round now (Release calls it).
func (e *Engine) Trigger() {
	select {
	case e.trigger <- struct{}{}:
	default:
	}
}

// Dead reports whether a fail point killed this engine.
func (e *Engine) Dead() bool { return e.dead.Load() }

// fail consults the FailPoint hook; true means the instance is now dead.
func (e *Engine) fail(point string) bool {
	if e.dead.Load() {
		return true
	}
	if f := e.opt.Hooks.FailPoint; f != nil && f(point) {
		e.dead.Store(true)
		return true
	}
	return false
}

// Round runs one admission round: reclaim expired sessions, sweep dead
// tickets, admit by the strategy, all by the store's clock. Run calls it every
// period; tests and the bench may call it directly.
func (e *Engine) Round(ctx context.Context) (RoundResult, error) {
	var r RoundResult
	if e.fail("round:start") {
		return r, ErrKilled
	}
	if e.opt.MarkRounds {
		if err := e.rdb.Set(ctx, e.k.roundMark(e.opt.InstanceID), 1, 10*time.Second).Err(); err != nil {
			e.roundFailed(err)
			return r, err
		}
	}
	err := e.strategy.admit(ctx, e, &r)
	if err == nil && e.opt.MarkRounds {
		err = e.rdb.Del(ctx, e.k.roundMark(e.opt.InstanceID)).Err()
	}
	e.c.rounds.Add(1)
	e.c.admitted.Add(uint64(len(r.Admitted)))
	e.observeWaits(r.Admitted)
	e.c.dropped.Add(uint64(r.Dropped))
	e.c.reclaimed.Add(uint64(r.Reclaimed))
	e.c.rollbacks.Add(uint64(r.Rollbacks))
	if r.Leader {
		e.c.leaderRounds.Add(1)
	}
	if r.LostLease {
		e.c.lostLeases.Add(1)
	}
	if len(r.Admitted) > 0 {
		e.mu.Lock()
		e.rate.valid = false // this instance just changed the rate
		e.mu.Unlock()
		if e.opt.Hooks.OnAdmit != nil {
			e.opt.Hooks.OnAdmit(r.Admitted)
		}
	}
	if ev, changed := roundEvent(r); changed && !errors.Is(err, ErrKilled) {
		e.publish(ctx, ev)
	}
	switch {
	case err == nil:
		e.failing.Store(0)
	case !errors.Is(err, ErrKilled):
		e.roundFailed(err)
	}
	return r, err
}

func (e *Engine) roundFailed(err error) {
	e.c.errors.Add(1)
	e.failing.Add(1)
	e.lastErr.Store(errBox{err})
}

// prepare starts a round of a plain-command strategy: the store's time and
// settings (written back if lost), expired sessions reclaimed, dead waiting
// tickets swept, in one script call.
func (e *Engine) prepare(ctx context.Context, r *RoundResult) (now time.Time, set Settings, err error) {
	res, err := e.script(ctx, "prepare", maxDropsPerRound).Int64Slice()
	if err != nil {
		return time.Time{}, Settings{}, err
	}
	if len(res) < 8 {
		return time.Time{}, Settings{}, fmt.Errorf("queue: prepare script: unexpected reply %v", res)
	}
	r.Left = append(r.Left, res[8:]...)
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	set = e.cachedSettings()
	set.Slot, set.Session, set.TicketTTL, set.MaxSession = int(res[1]), ms(res[2]), ms(res[3]), ms(res[4])
	r.Reclaimed = res[5]
	r.Dropped = int(res[6])
	if res[7] == 0 {
		set.Slot = 0 // paused, scheduled or closed: admit nobody this round
	}
	return time.UnixMilli(res[0]), set, nil
}

// Run initialises the queue in the store and runs admission rounds every
// period and after every Release on this instance, until ctx is done (it then
// returns nil) or a fail point kills the instance (ErrKilled). Store errors
// are logged and the loop goes on, so it recovers when the store returns.
func (e *Engine) Run(ctx context.Context) error {
	for {
		err := e.Init(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		e.log.Warn("init failed", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(e.opt.Period):
		}
	}
	t := time.NewTicker(e.opt.Period)
	defer t.Stop()
	var lastErr time.Time
	var histAt time.Time // when this instance last offered a history point
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-e.trigger:
		}
		_, err := e.Round(ctx)
		if err == nil && time.Since(histAt) >= HistoryStep/2 {
			histAt = time.Now()
			if herr := e.recordHistory(ctx); herr != nil {
				e.log.Debug("history point not written", "err", herr)
			}
		}
		if err == nil && e.failing.Load() == 0 && !lastErr.IsZero() {
			e.log.Info("admission rounds succeed again")
			lastErr = time.Time{}
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrKilled):
			return ErrKilled
		case ctx.Err() != nil:
			return nil
		default:
			if time.Since(lastErr) > 5*time.Second { // do not flood the log while the store is down
				e.log.Warn("admission round failed", "err", err)
				lastErr = time.Now()
			}
		}
	}
}

func isNil(err error) bool { return err == redis.Nil }
