package queue

import (
	"math"
	"sync/atomic"
	"time"
)

// waitBuckets are the upper bounds, in seconds, of the wait histogram
// (Engine.Waits): from a fraction of a second (a free place) to two hours (a
// ticket drop's backlog).
var waitBuckets = [...]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}

// Waits is a snapshot of the waits from join to admission of the users this
// instance admitted (its rounds, and bypass joins it admitted at once).
type Waits struct {
	Count   uint64
	Sum     float64            // seconds
	Buckets map[float64]uint64 // upper bound (seconds) -> admissions that waited at most that long
}

// waitHist counts waits in WaitBuckets; safe for concurrent use.
type waitHist struct {
	counts [len(waitBuckets) + 1]atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sumMs  atomic.Uint64
	n      atomic.Uint64
}

func (h *waitHist) observe(d time.Duration) {
	if d < 0 {
		return // unknown
	}
	s := d.Seconds()
	i := len(waitBuckets)
	for j, ub := range waitBuckets {
		if s <= ub {
			i = j
			break
		}
	}
	h.counts[i].Add(1)
	h.sumMs.Add(uint64(d.Milliseconds()))
	h.n.Add(1)
}

// Waits returns the histogram of waits from join to admission on this
// instance (cumulative buckets, as Prometheus wants them).
func (e *Engine) Waits() Waits {
	h := &e.waits
	w := Waits{Buckets: make(map[float64]uint64, len(waitBuckets))}
	var cum uint64
	for i, ub := range waitBuckets {
		cum += h.counts[i].Load()
		w.Buckets[ub] = cum
	}
	// Count and Sum are read after the buckets: an observation that lands
	// meanwhile shows in them but not in the buckets, never the other way.
	w.Count = max(h.n.Load(), cum+h.counts[len(waitBuckets)].Load())
	w.Sum = float64(h.sumMs.Load()) / 1000
	return w
}

// observeWaits records the waits of admissions.
func (e *Engine) observeWaits(adm []Admission) {
	for _, a := range adm {
		e.waits.observe(a.Waited)
	}
}

// waitedMs turns a script's wait in ms (-1: unknown) into a duration.
func waitedMs(ms int64) time.Duration {
	if ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}
