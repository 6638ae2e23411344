package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The admission rate is shared by all instances through the store: every
// admission adds to a per-second bucket in the hash wr:{q}:rate (HINCRBY,
// field = unix second). The rate is the sum of the buckets of the last minute
// divided by the time they span. Buckets older than two minutes are deleted
// when the rate is read.

const (
	rateWindow   = 60  // seconds
	rateKeep     = 120 // seconds a bucket is kept
	rateCacheFor = time.Second
)

type rateCache struct {
	at      time.Time
	perS    float64
	valid   bool
	reading bool // one caller is reading it from the store; the others use the old value meanwhile
}

// AdmitRate returns admissions per second over the last minute, as measured
// by all instances together. It is cached for a second per instance, and
// while one caller reads it from the store the others get the old value, so
// many event streams answering at once cost one read.
func (e *Engine) AdmitRate(ctx context.Context) (float64, error) {
	local := e.clock.Now()
	e.mu.Lock()
	rc := e.rate
	fresh := rc.valid && local.Sub(rc.at) < rateCacheFor && local.Sub(rc.at) >= 0
	if fresh || (rc.valid && rc.reading) {
		e.mu.Unlock()
		return rc.perS, nil
	}
	e.rate.reading = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.rate.reading = false
		e.mu.Unlock()
	}()
	// The buckets are the store's seconds, so the store's clock reads them.
	var hm *redis.MapStringStringCmd
	var tm *redis.TimeCmd
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		hm = p.HGetAll(ctx, e.k.rate)
		tm = p.Time(ctx)
		return nil
	})
	if err != nil {
		return 0, err
	}
	m, now := hm.Val(), tm.Val()
	nowS := now.Unix()
	var sum int64
	oldest := nowS + 1
	var stale []string
	for f, v := range m {
		sec, err := strconv.ParseInt(f, 10, 64)
		if err != nil || nowS-sec > rateKeep {
			stale = append(stale, f)
			continue
		}
		if nowS-sec >= rateWindow || sec > nowS {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		if n <= 0 {
			continue
		}
		sum += n
		if sec < oldest {
			oldest = sec
		}
	}
	if len(stale) > 0 {
		e.rdb.HDel(ctx, e.k.rate, stale...)
	}
	var r float64
	if sum > 0 {
		// The current second is partial: count it by the part elapsed.
		span := float64(nowS-oldest) + float64(now.Nanosecond())/1e9
		if span < 1 {
			span = 1
		}
		r = float64(sum) / span
	}
	e.mu.Lock()
	e.rate = rateCache{at: local, perS: r, valid: true}
	e.mu.Unlock()
	return r, nil
}

// fillETA sets the ETA of a waiting status from the shared admission rate.
func (e *Engine) fillETA(ctx context.Context, st *Status) {
	r, err := e.AdmitRate(ctx)
	if err != nil || r <= 0 {
		return
	}
	st.ETA = time.Duration(float64(st.Position+1) / r * float64(time.Second))
	st.HasETA = true
}

// recordAdmissions adds n admissions to the counter and the rate bucket and
// returns the counter's new value.
func (e *Engine) recordAdmissions(ctx context.Context, n int, now time.Time) (int64, error) {
	var total *redis.IntCmd
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		total = p.IncrBy(ctx, e.k.admitted, int64(n))
		p.HIncrBy(ctx, e.k.rate, strconv.FormatInt(now.Unix(), 10), int64(n))
		return nil
	})
	return total.Val(), err
}

// Stats is a snapshot of one queue.
type Stats struct {
	Name          string
	Strategy      Strategy
	Settings      Settings
	State         QueueState // the state now: open, paused, scheduled or closed
	Waiting       int64
	Active        int64
	PreQueue      int64 // joined before the opening, not drawn yet
	Draws         int64 // draws of pre-queues so far (one per opening)
	BypassUses    int64 // joins with a bypass code so far
	AdmittedTotal int64
	AdmitRate     float64 // per second over the last minute, all instances
}

// Stats reads the queue's counts and settings from the store (one script
// call, which also makes a draw that is due).
func (e *Engine) Stats(ctx context.Context) (Stats, error) {
	set, err := e.Settings(ctx)
	if err != nil {
		return Stats{}, err
	}
	res, err := e.script(ctx, "info").Slice()
	if err != nil {
		return Stats{}, err
	}
	if len(res) != 9 {
		return Stats{}, fmt.Errorf("queue: info script: unexpected reply %v", res)
	}
	r, err := e.AdmitRate(ctx)
	if err != nil {
		return Stats{}, err
	}
	return Stats{Name: e.name, Strategy: e.opt.Strategy, Settings: set, State: QueueState(fmt.Sprint(res[1])),
		Waiting: toInt(res[2]), Active: toInt(res[3]), AdmittedTotal: toInt(res[4]), PreQueue: toInt(res[5]),
		Draws: toInt(res[7]), BypassUses: toInt(res[8]), AdmitRate: r}, nil
}
