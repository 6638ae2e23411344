package queue

// Crash safety in process. Needs a store (see redis_test.go); the kills of
// real processes are in cmd/queue (TestSIGKILLAtManyMoments). An instance is killed at a
// random point of a round, 100 times, either at a named fail point (the
// instance stops sending commands there, as if SIGKILLed) or by cancelling
// its context at a random moment while its commands are in flight. After each
// kill the test counts every user: waiting + active + released by the test
// must equal joined; the difference is users the kill lost.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var failPoints = map[Strategy][]string{
	Optimistic: {"optimistic:reclaimed", "optimistic:popped", "optimistic:reserved",
		"optimistic:counted", "optimistic:unreserved"},
	Atomic: {"atomic:before", "atomic:after"},
}

// Points where dying loses the user in hand.
var losingPoints = map[string]bool{"optimistic:popped": true, "optimistic:unreserved": true}

type crashResult struct {
	rounds      int
	kills       map[string]int // by fail point; "cancel" for context cancellation
	lostAt      map[string]int // users lost, by what killed the instance
	dupAt       map[string]int // users found in two places, by what killed the instance
	lost, dup   int
	overCap     int // kills after which the active set stayed over the slot
	maxActive   int64
	admitted    int64
	rollbacks   uint64
	cancelRaces int // cancellations that hit a round while it ran
}

func (r crashResult) String() string {
	var ks []string
	for k, n := range r.kills {
		ks = append(ks, fmt.Sprintf("%s=%d(lost %d, dup %d)", k, n, r.lostAt[k], r.dupAt[k]))
	}
	sort.Strings(ks)
	return fmt.Sprintf("rounds=%d lost=%d dup=%d over_cap_after_kill=%d max_active=%d admitted=%d rollbacks=%d kills: %s",
		r.rounds, r.lost, r.dup, r.overCap, r.maxActive, r.admitted, r.rollbacks, strings.Join(ks, " "))
}

func runCrash(t *testing.T, tg target, s Strategy, rounds int) crashResult {
	const slot, users = 10, 600
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	rdb := tg.client(8)
	defer rdb.Close()
	q := testQueue(t)
	k := newKeys(q)
	opt := Options{Strategy: s, Defaults: Settings{Slot: slot, Session: 10 * time.Minute, TicketTTL: 10 * time.Minute}}
	ctl := newEngine(t, rdb, q, opt)
	var all []string
	for i := 0; i < users; i++ {
		st, err := ctl.Join(bg, "")
		require.NoError(t, err)
		all = append(all, st.Ticket)
	}
	res := crashResult{rounds: rounds, kills: map[string]int{}, lostAt: map[string]int{}, dupAt: map[string]int{}}
	released := map[string]bool{}
	// count checks every ticket: it must be in exactly one of waiting,
	// active, released by the test. Lost (in none) and duplicated (in more
	// than one) are counted apart, so they cannot cancel out.
	count := func() (lost, dup int) {
		w, err := rdb.ZRange(bg, k.waiting, 0, -1).Result()
		require.NoError(t, err)
		a, err := rdb.ZRange(bg, k.active, 0, -1).Result()
		require.NoError(t, err)
		res.maxActive = max(res.maxActive, int64(len(a)))
		if len(a) > slot {
			res.overCap++
		}
		seen := map[string]int{}
		for _, id := range w {
			seen[id]++
		}
		for _, id := range a {
			seen[id]++
		}
		for id := range released {
			seen[id]++
		}
		for _, id := range all {
			switch n := seen[id]; {
			case n == 0:
				lost++
			case n > 1:
				dup++
			}
		}
		return lost, dup
	}
	points := append(append([]string(nil), failPoints[s]...), "cancel", "cancel")
	for i := 0; i < rounds; i++ {
		// Free one to four places so the round has work, and usually a rollback.
		active, err := rdb.ZRange(bg, k.active, 0, -1).Result()
		require.NoError(t, err)
		rng.Shuffle(len(active), func(a, b int) { active[a], active[b] = active[b], active[a] })
		for _, id := range active[:min(len(active), 1+rng.IntN(4))] {
			ok, err := ctl.Release(bg, id)
			require.NoError(t, err)
			if ok {
				released[id] = true
			}
		}
		lostBefore, dupBefore := count()
		point := points[rng.IntN(len(points))]
		o := opt
		o.InstanceID = fmt.Sprintf("doomed-%d", i)
		ctx := bg
		if point != "cancel" {
			o.Hooks.FailPoint = func(p string) bool { return p == point }
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(bg)
			time.AfterFunc(time.Duration(rng.IntN(400))*time.Microsecond, cancel)
		}
		e := newEngine(t, rdb, q, o)
		r, err := e.Round(ctx)
		res.admitted += int64(len(r.Admitted))
		res.rollbacks += e.Counters().Rollbacks
		switch {
		case err == nil: // the kill came too late, or never: a whole round
			res.kills[point+"(missed)"]++
			continue
		case point == "cancel":
			require.ErrorIs(t, err, context.Canceled)
		default:
			require.ErrorIs(t, err, ErrKilled)
		}
		res.kills[point]++
		lost, dup := count()
		res.lostAt[point] += lost - lostBefore
		res.lost += lost - lostBefore
		res.dupAt[point] += dup - dupBefore
		res.dup += dup - dupBefore
	}
	return res
}

func TestCrashSafety(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range []Strategy{Optimistic, Atomic} {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				r := runCrash(t, tg, s, 100)
				t.Logf("%s: %s", s, r)
				require.Greater(t, r.admitted, int64(0), "the rounds admitted users")
				require.Zero(t, r.dup, "nobody is in two places after a kill")
				switch s {
				case Atomic:
					require.Zero(t, r.lost, "atomic loses nobody, whenever it dies")
					require.LessOrEqual(t, r.maxActive, int64(10), "and never leaves the room over the slot")
				case Optimistic:
					// Dying with a popped user in hand loses exactly that user;
					// dying anywhere else loses nobody.
					for p, n := range r.lostAt {
						if p == "cancel" {
							continue // reported: depends on where the cancel landed
						}
						want := 0
						if losingPoints[p] {
							want = r.kills[p]
						}
						require.Equal(t, want, n, "users lost by dying at %s", p)
					}
				}
			})
		}
	})
}
