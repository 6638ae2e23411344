package queue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// minWait is how long the test keeps a user in line: the measured wait must
// be at least this (the store's clock counts whole milliseconds, so 1 ms less).
const minWait = 300 * time.Millisecond

// admitOne runs a round and returns its one admission.
func admitOne(t *testing.T, e *Engine) Admission {
	t.Helper()
	r, err := e.Round(bg)
	require.NoError(t, err)
	require.Len(t, r.Admitted, 1)
	return r.Admitted[0]
}

// TestWaitsAreMeasured: with every strategy, an admission carries the time
// its user stood in line by the store's clock (at least the time the test
// held them there, at most the time from before the join to after the
// round), and the engine's histogram holds every wait.
func TestWaitsAreMeasured(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				e := newEngine(t, rdb, testQueue(t), Options{Strategy: s, Defaults: Settings{Slot: 1, TicketTTL: time.Hour}})
				require.Zero(t, e.Waits().Count)

				a, err := e.Join(bg, "")
				require.NoError(t, err)
				first := admitOne(t, e)
				require.Equal(t, a.Ticket, first.Ticket)

				before := time.Now()
				b, err := e.Join(bg, "")
				require.NoError(t, err)
				time.Sleep(minWait) // b stands in line at least this long
				_, err = e.Release(bg, a.Ticket)
				require.NoError(t, err)
				second := admitOne(t, e)
				elapsed := time.Since(before)
				require.Equal(t, b.Ticket, second.Ticket)
				require.GreaterOrEqual(t, second.Waited, minWait-time.Millisecond)
				require.LessOrEqual(t, second.Waited, elapsed+time.Millisecond)
				require.GreaterOrEqual(t, first.Waited, time.Duration(0))
				// Exactly the admission's time less the join's, as the store kept them.
				tk, err := rdb.HMGet(bg, newKeys(e.Name()).ticket(b.Ticket), "j", "a").Result()
				require.NoError(t, err)
				require.Equal(t, time.Duration(toInt(tk[1])-toInt(tk[0]))*time.Millisecond, second.Waited)

				w := e.Waits()
				require.EqualValues(t, 2, w.Count)
				require.InDelta(t, (first.Waited + second.Waited).Seconds(), w.Sum, 1e-6)
				requireBuckets(t, w, first.Waited, second.Waited)
			})
		}
	})
}

// requireBuckets checks that every bucket of w counts exactly the waits at
// or under its bound.
func requireBuckets(t *testing.T, w Waits, waits ...time.Duration) {
	t.Helper()
	require.Len(t, w.Buckets, len(waitBuckets))
	for ub, n := range w.Buckets {
		var want uint64
		for _, d := range waits {
			if d.Seconds() <= ub {
				want++
			}
		}
		require.Equal(t, want, n, "bucket le=%v", ub)
	}
}

// TestWaitOfPreQueueAndBypass: a pre-queue ticket's wait counts from the
// draw, not from its early join; a bypass code that finds a free place is a
// wait of zero.
func TestWaitOfPreQueueAndBypass(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		needEval(t, tg, Atomic)
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Strategy: Atomic, Defaults: Settings{Slot: 1, TicketTTL: time.Hour}})
		scheduled(t, e)
		early, err := e.Join(bg, "")
		require.NoError(t, err)
		require.Equal(t, StatePreQueue, early.State)
		time.Sleep(minWait) // an early arrival: this is not a wait in line

		opening := time.Now()
		openNow(t, e, opening.Add(-time.Second)) // the draw is due at once
		adm := admitOne(t, e)
		require.Equal(t, early.Ticket, adm.Ticket)
		require.LessOrEqual(t, adm.Waited, time.Since(opening)+time.Millisecond,
			"counted from the draw, which came after the opening was set")
		// Exactly: the admission's time less the draw's, both in the store.
		k := newKeys(e.Name())
		drawn, err := rdb.HGet(bg, k.settings, "drawn_ms").Int64()
		require.NoError(t, err)
		tk, err := rdb.HMGet(bg, k.ticket(adm.Ticket), "j", "a").Result()
		require.NoError(t, err)
		require.Less(t, toInt(tk[0]), drawn, "joined before the draw")
		require.Equal(t, time.Duration(toInt(tk[1])-drawn)*time.Millisecond, adm.Waited)

		_, err = e.Release(bg, adm.Ticket)
		require.NoError(t, err)
		codes, err := e.IssueCodes(bg, 1, 1)
		require.NoError(t, err)
		st, err := e.JoinCode(bg, "", codes[0])
		require.NoError(t, err)
		require.Equal(t, StateAdmitted, st.State)
		w := e.Waits()
		require.EqualValues(t, 2, w.Count)
		requireBuckets(t, w, adm.Waited, 0)
	})
}
