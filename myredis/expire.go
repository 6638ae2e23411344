package myredis

import (
	"math/rand/v2"
	"time"
)

// Active expiry as Redis 7.0's activeExpireCycle (expire.c). Keys with a TTL that
// nobody reads again are reclaimed by sampling:
//
//   - the slow cycle, an executor job hz times a second, may take
//     cycle_slow_time_perc (25%) of a tick: 25 ms at hz 10;
//   - the fast cycle runs when the executor is about to wait for work (Redis's
//     beforeSleep), for at most cycle_fast_duration (1 ms), at most once per two of
//     those, and only while the last cycle ran out of time or the estimated share
//     of stale keys is above the acceptable one.
//
// In both, each database is sampled keys_per_loop (20) keys at a time, again and
// again while more than acceptable_stale (10%) of a sample had expired, checking
// the time every 16 samples. active-expire-effort (1..10) raises all of these as
// Redis does.

// expireCycle is the state active expiry keeps between cycles. Executor only.
type expireCycle struct {
	nextDB        int       // the database the next cycle starts with
	timelimitExit bool      // the last cycle stopped for lack of time
	lastFast      time.Time // when the last fast cycle started
	stalePerc     float64   // running estimate of the expired share of keys with a TTL, % (INFO expired_stale_perc)
	disabled      bool      // DEBUG SET-ACTIVE-EXPIRE 0 (cmd_debug.go)
	now           func() time.Time
	// INFO stats, zeroed by CONFIG RESETSTAT as Redis's stat_expired_*
	timeCapReached int64         // expired_time_cap_reached_count: cycles stopped by their budget
	timeUsed       time.Duration // expire_cycle_cpu_milliseconds: the cycles' run time
}

// resetStats is CONFIG RESETSTAT's share: Redis zeroes the stale estimate too.
func (st *expireCycle) resetStats() {
	st.stalePerc, st.timeCapReached, st.timeUsed = 0, 0, 0
}

// expireTunables are the limits one cycle works with, from active-expire-effort.
type expireTunables struct {
	keysPerLoop     int
	fastDuration    time.Duration
	slowTimePerc    int
	acceptableStale int
}

func expireTunablesFor(effort int) expireTunables {
	e := min(max(effort, 1), 10) - 1
	return expireTunables{
		keysPerLoop:     20 + 20/4*e,
		fastDuration:    time.Duration(1000+1000/4*e) * time.Microsecond,
		slowTimePerc:    25 + 2*e,
		acceptableStale: 10 - e,
	}
}

// activeExpireSlow is the hz job. Runs on the executor.
func (s *Server) activeExpireSlow() { s.activeExpireCycle(false) }

// activeExpireFast is the cycle run before the executor waits. Runs on the executor.
func (s *Server) activeExpireFast() { s.activeExpireCycle(true) }

// activeExpireCycle reclaims expired keys within its time budget. Runs on the executor.
func (s *Server) activeExpireCycle(fast bool) {
	if s.par.on || s.loading || s.expire.disabled || s.isReplica() || s.paused() { // a replica's keys expire by its master's DELs; a pause keeps the data still (pause.go)
		return
	}
	st := &s.expire
	tun := expireTunablesFor(s.cfg.ActiveExpireEffort)
	clock := st.now
	if clock == nil {
		clock = time.Now // the budget is CPU time on this machine, not the data's clock
	}
	start := clock()
	limit := time.Second * time.Duration(tun.slowTimePerc) / time.Duration(max(s.cfg.Hz, 1)) / 100
	if fast {
		if !st.timelimitExit && st.stalePerc < float64(tun.acceptableStale) {
			return
		}
		if start.Before(st.lastFast.Add(2 * tun.fastDuration)) {
			return
		}
		st.lastFast = start
		limit = tun.fastDuration
	}
	st.timelimitExit = false
	sampled, expired, iteration := 0, 0, 0
	for n := 0; n < len(s.dbs) && !st.timelimitExit; n++ {
		db := s.dbs[st.nextDB%len(s.dbs)]
		st.nextDB++
		for db.Volatile() > 0 {
			got, dead := db.expireSample(tun.keysPerLoop)
			sampled, expired = sampled+got, expired+dead
			iteration++
			if iteration&0xf == 0 && clock().Sub(start) > limit {
				st.timelimitExit = true
				st.timeCapReached++
				break
			}
			if got > 0 && dead*100/got <= tun.acceptableStale {
				break
			}
		}
	}
	if st.timelimitExit {
		st.nextDB-- // continue with this database next time
	}
	perc := 0.0
	if sampled > 0 {
		perc = float64(expired) * 100 / float64(sampled)
	}
	st.stalePerc = perc*0.05 + st.stalePerc*0.95
	elapsed := clock().Sub(start)
	st.timeUsed += elapsed
	s.latencyAddIfNeeded("expire-cycle", elapsed.Milliseconds()) // latency.go
}

// expireSample looks at up to n keys with a TTL and deletes the expired ones:
// n entries of the volatile list in a row from a random place, wrapping around.
// Runs on the executor.
func (db *DB) expireSample(n int) (sampled, expired int) {
	now := db.s.nowMs()
	var deadBuf [64]string
	dead := deadBuf[:0]
	vol := db.volatile
	start := rand.IntN(len(vol))
	for ; sampled < min(n, len(vol)); sampled++ {
		if v := vol[(start+sampled)%len(vol)]; v.when <= now {
			dead = append(dead, v.e.key)
		}
	}
	for _, key := range dead {
		if db.expireIfNeeded(key) {
			expired++
		}
	}
	return sampled, expired
}
