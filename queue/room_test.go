package queue

// Issue 19 in the engine: queue states (open, paused, closed), the pre-queue
// of a scheduled queue and its draw at opens_at.

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func setState(t *testing.T, e *Engine, st QueueState, msg string) {
	t.Helper()
	_, err := e.SetSettingFields(bg, SettingsPatch{State: &st, Message: &msg})
	require.NoError(t, err)
}

// TestPausedAndClosed: a paused queue admits nobody and keeps everyone's
// place (and answers status); a closed one refuses joins and ends waiting
// tickets with reason closed. Every strategy.
func TestPausedAndClosed(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				e := newEngine(t, rdb, testQueue(t), Options{Strategy: s, Defaults: Settings{Slot: 1}})
				setState(t, e, QueuePaused, "back at noon")
				a, err := e.Join(bg, "")
				require.NoError(t, err)
				require.Equal(t, QueuePaused, a.QueueState)
				b, err := e.Join(bg, "")
				require.NoError(t, err)
				for range 3 {
					_, err := e.Round(bg)
					require.NoError(t, err)
				}
				st, err := e.Status(bg, a.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateWaiting, st.State, "paused: nobody admitted")
				require.Equal(t, QueuePaused, st.QueueState)
				require.EqualValues(t, 0, st.Position, "and the place is kept")
				stats, err := e.Stats(bg)
				require.NoError(t, err)
				require.Equal(t, QueuePaused, stats.State)
				require.Equal(t, "back at noon", stats.Settings.Message)

				setState(t, e, QueueOpen, "")
				_, err = e.Round(bg)
				require.NoError(t, err)
				st, err = e.Status(bg, a.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateAdmitted, st.State, "open again: the head is admitted")

				setState(t, e, QueueClosed, "sold out")
				_, err = e.Join(bg, "")
				require.ErrorIs(t, err, ErrClosed)
				st, err = e.Status(bg, b.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateExpired, st.State)
				require.Equal(t, ReasonClosed, st.Reason)
				st, err = e.Status(bg, a.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateAdmitted, st.State, "an admitted user keeps the session")
			})
		}
	})
}

// TestClosingEndsTheLine: a round of a closed queue ends waiting tickets
// (without their polls) and closes_at closes the queue by the store's clock.
func TestClosingEndsTheLine(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		setState(t, e, QueuePaused, "")
		var ids []string
		for range 5 {
			st, err := e.Join(bg, "")
			require.NoError(t, err)
			ids = append(ids, st.Ticket)
		}
		_, err := e.SetSettingFields(bg, SettingsPatch{ClosesAt: ptr(time.Now().Add(-time.Second))})
		require.NoError(t, err)
		_, err = e.Round(bg)
		require.NoError(t, err)
		stats, err := e.Stats(bg)
		require.NoError(t, err)
		require.Equal(t, QueueClosed, stats.State)
		require.EqualValues(t, 0, stats.Waiting, "the round ended the line")
		raw, err := rdb.HGet(bg, e.k.ticket(ids[3]), "x").Result()
		require.NoError(t, err)
		require.Equal(t, ReasonClosed, raw)
	})
}

// scheduled sets opens_at an hour ahead: joins go to the pre-queue.
func scheduled(t *testing.T, e *Engine) {
	t.Helper()
	_, err := e.SetSettingFields(bg, SettingsPatch{OpensAt: ptr(time.Now().Add(time.Hour))})
	require.NoError(t, err)
}

func openNow(t *testing.T, e *Engine, at time.Time) {
	t.Helper()
	_, err := e.SetSettingFields(bg, SettingsPatch{OpensAt: &at})
	require.NoError(t, err)
}

// TestDrawIsOnePermutation: 1,000 pre-queue joins, then the opening moves to
// 300 ms ahead while four instances run rounds and take joins as fast as
// they can: the draw happens once, the line is a permutation of the
// pre-queue (nobody lost or duplicated), every instance tells every ticket
// the same place, and joins after the opening are behind, in arrival order.
func TestDrawIsOnePermutation(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		q := testQueue(t)
		var engs []*Engine
		for i := range 4 {
			rdb := tg.client(4)
			defer rdb.Close()
			engs = append(engs, newEngine(t, rdb, q, Options{InstanceID: "i" + string(rune('0'+i)),
				Defaults: Settings{Slot: 1, TicketTTL: time.Hour}}))
		}
		setState(t, engs[0], QueuePaused, "") // nobody admitted: the whole line stays to be read
		scheduled(t, engs[0])
		n := 1000
		if testing.Short() {
			n = 200
		}
		pre := map[string]bool{}
		for i := range n {
			st, err := engs[i%4].Join(bg, "")
			require.NoError(t, err)
			require.Equal(t, StatePreQueue, st.State)
			require.EqualValues(t, i+1, st.PreQueue)
			pre[st.Ticket] = true
		}
		openAt := time.Now().Add(300 * time.Millisecond)
		openNow(t, engs[0], openAt)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var late []string // joined after the opening, in the order their joins returned
		for _, e := range engs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(openAt.Add(300 * time.Millisecond)) {
					_, err := e.Round(bg)
					require.NoError(t, err)
					if time.Now().After(openAt.Add(50 * time.Millisecond)) {
						mu.Lock() // one join at a time, so return order is arrival order
						st, err := e.Join(bg, "")
						require.NoError(t, err)
						require.Equal(t, StateWaiting, st.State)
						late = append(late, st.Ticket)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		stats, err := engs[0].Stats(bg)
		require.NoError(t, err)
		require.EqualValues(t, 1, stats.Draws, "drawn exactly once")
		require.EqualValues(t, 0, stats.PreQueue)
		line, err := engs[0].rdb.ZRange(bg, engs[0].k.waiting, 0, -1).Result()
		require.NoError(t, err)
		require.Len(t, line, n+len(late))
		drawn := map[string]bool{}
		for _, id := range line[:n] {
			require.True(t, pre[id], "a pre-queue ticket at the front")
			require.False(t, drawn[id], "nobody twice")
			drawn[id] = true
		}
		require.Len(t, drawn, n, "nobody lost")
		require.Equal(t, late, line[n:], "later arrivals behind, in arrival order")
		require.NotEqual(t, slices.Sorted(maps(pre)), line[:n], "shuffled")

		// Every instance tells every ticket the same place.
		for _, e := range engs {
			sts, err := e.Statuses(bg, line[:n])
			require.NoError(t, err)
			for i, st := range sts {
				require.Equal(t, StateWaiting, st.State)
				require.EqualValues(t, i, st.Position)
			}
		}
	})
}

func maps(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestOpensAtInThePastDrawsAtOnce: moving the opening to the past draws at
// the next call, whichever it is.
func TestOpensAtInThePastDrawsAtOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		setState(t, e, QueuePaused, "")
		scheduled(t, e)
		var ids []string
		for range 3 {
			st, err := e.Join(bg, "")
			require.NoError(t, err)
			ids = append(ids, st.Ticket)
		}
		st, err := e.Status(bg, ids[0])
		require.NoError(t, err)
		require.Equal(t, StatePreQueue, st.State)
		require.EqualValues(t, 3, st.PreQueue)
		openNow(t, e, time.Now().Add(-time.Hour))
		st, err = e.Status(bg, ids[0]) // the status call itself draws
		require.NoError(t, err)
		require.Equal(t, StateWaiting, st.State)
		stats, err := e.Stats(bg)
		require.NoError(t, err)
		require.EqualValues(t, 1, stats.Draws)
		require.EqualValues(t, 3, stats.Waiting)
	})
}

// TestDrawIsUniform: over many draws of a pre-queue of five, each of the
// 120 orders comes up about equally often (chi-square, alpha 0.001). The
// seeds come from a seeded generator, so the test gives the same answer on
// every run: it cannot flake, and it fails if the shuffle is biased.
func TestDrawIsUniform(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		draws := 3000
		if testing.Short() {
			draws = 1200
		}
		src := rand.NewChaCha8([32]byte{19})
		e := newEngine(t, rdb, testQueue(t), Options{DrawRand: src, Defaults: Settings{Slot: 1}})
		setState(t, e, QueuePaused, "")
		const k = 5
		counts := map[string]int{}
		pos := [k][k]int{} // arrival i drawn at place j
		for range draws {
			scheduled(t, e)
			idx := map[string]int{}
			for i := range k {
				st, err := e.Join(bg, "")
				require.NoError(t, err)
				idx[st.Ticket] = i
			}
			openNow(t, e, time.Now().Add(-time.Second))
			line, err := e.rdb.ZRange(bg, e.k.waiting, 0, -1).Result() // no draw yet: nothing called since
			require.NoError(t, err)
			require.Empty(t, line)
			_, err = e.Stats(bg) // draws
			require.NoError(t, err)
			line, err = e.rdb.ZRange(bg, e.k.waiting, 0, -1).Result()
			require.NoError(t, err)
			require.Len(t, line, k)
			key := make([]byte, k)
			for j, id := range line {
				key[j] = byte('0' + idx[id])
				pos[idx[id]][j]++
			}
			counts[string(key)]++
			require.NoError(t, e.rdb.Del(bg, e.k.waiting, e.k.expiry).Err())
		}
		require.Len(t, counts, 120, "every order comes up")
		exp := float64(draws) / 120
		chi := 0.0
		for _, c := range counts {
			chi += (float64(c) - exp) * (float64(c) - exp) / exp
		}
		crit := chiSquareCritical(119, 3.09) // alpha 0.001
		t.Logf("%d draws: chi-square %.1f over 120 orders (critical %.1f at alpha 0.001)", draws, chi, crit)
		require.Less(t, chi, crit, "the draw is not uniform")
		// The place of each arrival, alone: 5 x 5 cells, df 16.
		chiPos, exp := 0.0, float64(draws)/k
		for i := range k {
			for j := range k {
				d := float64(pos[i][j]) - exp
				chiPos += d * d / exp
			}
		}
		require.Less(t, chiPos, chiSquareCritical(16, 3.09), "arrival order leaks into the draw: %v", pos)
	})
}

// chiSquareCritical approximates the chi-square quantile with df degrees
// of freedom at the normal quantile z (Wilson-Hilferty).
func chiSquareCritical(df, z float64) float64 {
	a := 2 / (9 * df)
	return df * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// TestBypassCodes: a code's N uses let exactly N joins through, however many
// try at once; with a free place the holder is admitted at once, without one
// they go to the head of the line, bypass joins in their order; a malformed
// or forged code spends nothing.
func TestBypassCodes(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(8)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		codes, err := e.IssueCodes(bg, 2, 3)
		require.NoError(t, err)
		require.Len(t, codes, 2)

		vip, err := e.JoinCode(bg, "", codes[0])
		require.NoError(t, err)
		require.Equal(t, StateAdmitted, vip.State, "a free place: in at once")
		require.NotEmpty(t, vip.Pass)
		a, err := e.Join(bg, "")
		require.NoError(t, err)
		b, err := e.Join(bg, "")
		require.NoError(t, err)
		v2, err := e.JoinCode(bg, "", codes[0])
		require.NoError(t, err)
		require.Equal(t, StateWaiting, v2.State, "no free place: the head of the line")
		require.EqualValues(t, 0, v2.Position)
		v3, err := e.JoinCode(bg, "", codes[0])
		require.NoError(t, err)
		require.EqualValues(t, 1, v3.Position, "bypass joins in their order")
		st, err := e.Status(bg, a.Ticket)
		require.NoError(t, err)
		require.EqualValues(t, 2, st.Position, "the line moved back by two")
		_, err = e.JoinCode(bg, "", codes[0])
		require.ErrorIs(t, err, ErrCodeUsed, "three uses, no fourth")

		for _, bad := range []string{"", "x", ".", "abc.def", codes[1] + "x", "0123456789abcdef.AAAA",
			flipFirstHex(codes[1]), e.SignTicket(a.Ticket), "\x00.\xff"} {
			_, err := e.JoinCode(bg, "", bad)
			require.ErrorIs(t, err, ErrBadCode, "%q", bad)
		}
		// Concurrent joins with the second code: exactly three get through.
		var wg sync.WaitGroup
		var okN, usedN atomic.Int64
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := e.JoinCode(bg, "", codes[1])
				switch {
				case err == nil:
					okN.Add(1)
				case errors.Is(err, ErrCodeUsed):
					usedN.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 3, okN.Load())
		require.EqualValues(t, 17, usedN.Load())
		stats, err := e.Stats(bg)
		require.NoError(t, err)
		require.EqualValues(t, 6, stats.BypassUses)
		uses, err := e.CodeUses(bg)
		require.NoError(t, err)
		require.Len(t, uses, 2)
		for _, u := range uses {
			require.EqualValues(t, 0, u.Left)
			require.EqualValues(t, 3, u.Used)
		}
		_ = b
	})
}

// TestProofOfWork: a solution must meet the difficulty the challenge was
// issued with and the queue's, before the challenge expires, once.
func TestProofOfWork(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		e := newEngine(t, rdb, q, Options{})
		solve := func(ch string, bits int) string {
			for n := 0; ; n++ {
				if s := strconv.Itoa(n); LeadingZeroBits(ch, s) >= bits {
					return s
				}
			}
		}
		ch, exp := e.Challenge(10)
		require.WithinDuration(t, time.Now().Add(PowTTL), exp, time.Second)
		sol := solve(ch, 10)
		require.ErrorIs(t, e.CheckPoW(bg, ch, sol, 11), ErrBadPoW, "below the queue's difficulty")
		require.NoError(t, e.CheckPoW(bg, ch, sol, 10))
		require.ErrorIs(t, e.CheckPoW(bg, ch, sol, 10), ErrPoWUsed, "once")

		old := newEngine(t, rdb, q, Options{Clock: skewed(-PowTTL - time.Second)})
		ch, _ = old.Challenge(4)
		require.ErrorIs(t, e.CheckPoW(bg, ch, solve(ch, 4), 4), ErrBadPoW, "expired")
		other := newEngine(t, rdb, q, Options{Secret: []byte("another-secret-another-secret-another")})
		ch, _ = other.Challenge(4)
		require.ErrorIs(t, e.CheckPoW(bg, ch, solve(ch, 4), 4), ErrBadPoW, "forged")
	})
}

// FuzzCodeAndPoW: any bypass code or proof of work is refused or accepted,
// never a panic.
func FuzzCodeAndPoW(f *testing.F) {
	e, err := New(nil, "fuzz", Options{Secret: testSecret})
	if err != nil {
		f.Fatal(err)
	}
	ch, _ := e.Challenge(1)
	f.Add(ch, "1")
	f.Add(e.sig.sign(domainCode, "0123456789abcdef"), "")
	f.Add("a.b.c.d", "\x00")
	f.Fuzz(func(t *testing.T, a, b string) {
		e.verifyPoW(a, b, 0)
		if id, ok := e.sig.verify(domainCode, a); ok && !validCodeID(id) && len(id) == 16 {
			t.Fatalf("code id %q", id)
		}
		LeadingZeroBits(a, b)
	})
}

// flipFirstHex changes the code's first hex digit to a different one, so
// the id no longer matches its signature (a plain replace by "f" was a no-op
// on the one code in sixteen that starts with f).
func flipFirstHex(code string) string {
	c := byte('0')
	if code[0] == '0' {
		c = '1'
	}
	return string(c) + code[1:]
}
