package queue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var bg = context.Background()

func TestJoinIsIdempotentPerUser(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{})

		a1, err := e.Join(bg, "alice")
		require.NoError(t, err)
		b, err := e.Join(bg, "bob")
		require.NoError(t, err)
		a2, err := e.Join(bg, "alice")
		require.NoError(t, err)

		require.Equal(t, a1.Ticket, a2.Ticket, "second join of alice returns her ticket")
		require.Equal(t, StateWaiting, a2.State)
		require.EqualValues(t, 0, a2.Position)
		require.EqualValues(t, 1, b.Position)
		require.NotEqual(t, a1.Ticket, b.Ticket)

		// Concurrent joins of one user: one ticket.
		var wg sync.WaitGroup
		tickets := make([]string, 20)
		for i := range tickets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := e.Join(bg, "carol")
				if err == nil {
					tickets[i] = st.Ticket
				}
			}()
		}
		wg.Wait()
		for _, tk := range tickets {
			require.Equal(t, tickets[0], tk, "concurrent joins of carol")
		}
		st, err := e.Stats(bg)
		require.NoError(t, err)
		require.EqualValues(t, 3, st.Waiting, "alice, bob, carol")

		// Once alice's ticket is over, joining again gives her a new one.
		_, err = e.Release(bg, a1.Ticket)
		require.NoError(t, err)
		a3, err := e.Join(bg, "alice")
		require.NoError(t, err)
		require.NotEqual(t, a1.Ticket, a3.Ticket)
		require.EqualValues(t, 2, a3.Position, "behind bob and carol")

		// Anonymous joins always get a new ticket.
		x, _ := e.Join(bg, "")
		y, _ := e.Join(bg, "")
		require.NotEqual(t, x.Ticket, y.Ticket)
	})
}

func TestPositionAfterOthersLeave(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		var ids []string
		for i := 0; i < 5; i++ {
			st, err := e.Join(bg, "")
			require.NoError(t, err)
			require.EqualValues(t, i, st.Position)
			ids = append(ids, st.Ticket)
		}
		// Two ahead of the last one leave the queue.
		ok, err := e.Release(bg, ids[1])
		require.NoError(t, err)
		require.True(t, ok)
		_, err = e.Release(bg, ids[2])
		require.NoError(t, err)
		st, err := e.Status(bg, ids[4])
		require.NoError(t, err)
		require.Equal(t, StateWaiting, st.State)
		require.EqualValues(t, 2, st.Position)

		// The head is admitted: everyone moves up by one.
		_, err = e.Round(bg)
		require.NoError(t, err)
		st, _ = e.Status(bg, ids[0])
		require.Equal(t, StateAdmitted, st.State)
		st, _ = e.Status(bg, ids[3])
		require.EqualValues(t, 0, st.Position)
		st, _ = e.Status(bg, ids[4])
		require.EqualValues(t, 1, st.Position)
		require.True(t, st.HasETA, "an admission happened, so there is a rate")
		require.Greater(t, st.ETA, time.Duration(0))

		st, err = e.Status(bg, ids[1])
		require.NoError(t, err)
		require.Equal(t, StateExpired, st.State, "released ticket")
		stats, err := e.Stats(bg)
		require.NoError(t, err)
		require.EqualValues(t, 1, stats.Active)
		require.EqualValues(t, 2, stats.Waiting)
		require.EqualValues(t, 1, stats.AdmittedTotal)
		require.Greater(t, stats.AdmitRate, 0.0)
		require.Equal(t, 1, stats.Settings.Slot)
	})
}

func TestStoppedPollingIsSkipped(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				e := newEngine(t, rdb, testQueue(t), Options{Strategy: s,
					Defaults: Settings{Slot: 1, TicketTTL: time.Second}})
				gone, _ := e.Join(bg, "gone")
				polls, _ := e.Join(bg, "polls")
				// "polls" keeps polling; "gone" closed the tab. The TTL is long against
				// the poll interval so a loaded machine cannot expire the live ticket.
				for i := 0; i < 24; i++ {
					time.Sleep(50 * time.Millisecond)
					st, err := e.Status(bg, polls.Ticket)
					require.NoError(t, err)
					require.Equal(t, StateWaiting, st.State)
				}
				r, err := e.Round(bg)
				require.NoError(t, err)
				require.Len(t, r.Admitted, 1)
				require.Equal(t, polls.Ticket, r.Admitted[0].Ticket, "the live ticket behind the dead one")
				require.Equal(t, 1, r.Dropped)
				st, _ := e.Status(bg, gone.Ticket)
				require.Equal(t, StateExpired, st.State)
			})
		}
	})
}

func TestTTLReclaimWithinOnePeriod(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				q := testQueue(t)
				e := newEngine(t, rdb, q, Options{Strategy: s,
					Period: 200 * time.Millisecond, Defaults: Settings{Slot: 1, Session: time.Minute}})
				a, _ := e.Join(bg, "")
				b, _ := e.Join(bg, "")
				r, err := e.Round(bg)
				require.NoError(t, err)
				require.Len(t, r.Admitted, 1)

				// a abandons. Until the deadline the place stays taken.
				r, err = e.Round(bg)
				require.NoError(t, err)
				require.Empty(t, r.Admitted)
				st, _ := e.Status(bg, a.Ticket)
				require.Equal(t, StateAdmitted, st.State)

				// The deadline passes (by the store's clock): the first round
				// after it frees the place.
				setDeadline(t, rdb, q, a.Ticket, -time.Millisecond)
				r, err = e.Round(bg)
				require.NoError(t, err)
				require.EqualValues(t, 1, r.Reclaimed)
				require.Len(t, r.Admitted, 1)
				require.Equal(t, b.Ticket, r.Admitted[0].Ticket)
				st, _ = e.Status(bg, a.Ticket)
				require.Equal(t, StateExpired, st.State)
				require.Equal(t, ReasonSessionOver, st.Reason)
			})
		}
	})
}

func TestEnterExactlyOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(64)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Strategy: Optimistic})
		u, _ := e.Join(bg, "u")
		_, err := e.Round(bg)
		require.NoError(t, err)
		st, err := e.Status(bg, u.Ticket)
		require.NoError(t, err)
		require.Equal(t, StateAdmitted, st.State)

		var ok, used, other int
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 60; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, err := e.Enter(bg, st.Pass)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrPassUsed):
					used++
				default:
					other++
				}
			}()
		}
		close(start)
		wg.Wait()
		require.Equal(t, 1, ok, "successes")
		require.Equal(t, 59, used, "refused as used")
		require.Equal(t, 0, other)

		_, _, err = e.Enter(bg, st.Pass[:len(st.Pass)-2]+"xx")
		require.ErrorIs(t, err, ErrForged)
		_, _, err = e.Enter(bg, e.SignTicket(u.Ticket))
		require.ErrorIs(t, err, ErrForged, "a ticket token is not a pass")
		_, err = e.Release(bg, u.Ticket)
		require.NoError(t, err)
		_, _, err = e.Enter(bg, st.Pass)
		require.ErrorIs(t, err, ErrPassExpired, "after the session ended")
	})
}

// A retry of Enter with the idempotency key of the call that entered (its
// answer lost, e.g. in a failover) gets the same session; every other call
// with the used pass, with another key or none, is refused as used.
func TestEnterKeyRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		u, _ := e.Join(bg, "")
		_, err := e.Round(bg)
		require.NoError(t, err)
		st, err := e.Status(bg, u.Ticket)
		require.NoError(t, err)
		require.Equal(t, StateAdmitted, st.State)

		_, _, err = e.EnterKey(bg, st.Pass, "bad key")
		require.ErrorIs(t, err, ErrBadKey)
		_, _, err = e.EnterKey(bg, st.Pass, strings.Repeat("k", MaxIdempotencyKey+1))
		require.ErrorIs(t, err, ErrBadKey)

		session, deadline, err := e.EnterKey(bg, st.Pass, "try-1")
		require.NoError(t, err)
		again, deadline2, err := e.EnterKey(bg, st.Pass, "try-1")
		require.NoError(t, err, "the same key: the first call's answer again")
		require.Equal(t, session, again)
		require.Equal(t, deadline, deadline2)
		_, _, err = e.EnterKey(bg, st.Pass, "try-2")
		require.ErrorIs(t, err, ErrPassUsed, "another key")
		_, _, err = e.Enter(bg, st.Pass)
		require.ErrorIs(t, err, ErrPassUsed, "no key")
		_, err = e.Heartbeat(bg, again)
		require.NoError(t, err, "the retry's session token is the session's")

		_, err = e.ReleaseSession(bg, session)
		require.NoError(t, err)
		_, _, err = e.EnterKey(bg, st.Pass, "try-1")
		require.ErrorIs(t, err, ErrPassExpired, "after the session ended, the key enters nothing")
	})
}

// TestJoinKeyRetry: an anonymous join retried with its idempotency key gets
// the first call's ticket while it is live, not a second one; another key, no
// key, or the key after the ticket ended make a new ticket.
func TestJoinKeyRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Defaults: Settings{Slot: 1}})
		_, err := e.JoinKey(bg, "", "", "bad key")
		require.ErrorIs(t, err, ErrBadKey)

		first, err := e.JoinKey(bg, "", "", "join-1")
		require.NoError(t, err)
		again, err := e.JoinKey(bg, "", "", "join-1")
		require.NoError(t, err)
		require.Equal(t, first.Ticket, again.Ticket, "the same key: the same ticket")
		other, err := e.JoinKey(bg, "", "", "join-2")
		require.NoError(t, err)
		require.NotEqual(t, first.Ticket, other.Ticket, "another key")
		plain, err := e.Join(bg, "")
		require.NoError(t, err)
		require.NotEqual(t, first.Ticket, plain.Ticket, "no key")
		require.Equal(t, int64(2), plain.Position, "three tickets in line, not four")

		_, err = e.Round(bg) // admits the first
		require.NoError(t, err)
		again, err = e.JoinKey(bg, "", "", "join-1")
		require.NoError(t, err)
		require.Equal(t, first.Ticket, again.Ticket, "admitted: still the same ticket")
		require.Equal(t, StateAdmitted, again.State)

		user, err := e.JoinKey(bg, "alice", "", "join-1")
		require.NoError(t, err)
		require.NotEqual(t, first.Ticket, user.Ticket, "a user id: the user's own ticket, the key aside")

		_, err = e.Release(bg, first.Ticket)
		require.NoError(t, err)
		after, err := e.JoinKey(bg, "", "", "join-1")
		require.NoError(t, err)
		require.NotEqual(t, first.Ticket, after.Ticket, "after the ticket ended, the key joins anew")
	})
}

func TestHeartbeatNeverShortens(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		e := newEngine(t, rdb, q, Options{Strategy: Naive,
			Defaults: Settings{Slot: 5, Session: 10 * time.Second}})
		u, _ := e.Join(bg, "")
		w, _ := e.Join(bg, "")
		r, err := e.Round(bg)
		require.NoError(t, err)
		dl := r.Admitted[0].Deadline
		su, _ := e.Status(bg, u.Ticket)
		sess, _, err := e.Enter(bg, su.Pass)
		require.NoError(t, err)

		require.NoError(t, e.SetSettings(bg, Settings{Slot: 5, Session: time.Second, TicketTTL: time.Minute, MaxSession: time.Hour}))
		got, err := e.Heartbeat(bg, sess)
		require.NoError(t, err)
		require.Equal(t, dl, got, "a shorter session setting does not shorten a session")

		// Half a second before the end a heartbeat extends it to now + 1 s.
		before := setDeadline(t, rdb, q, u.Ticket, 500*time.Millisecond)
		got, err = e.Heartbeat(bg, sess)
		require.NoError(t, err)
		require.Greater(t, got.UnixMilli(), before.UnixMilli())
		st, _ := e.Status(bg, u.Ticket)
		require.Equal(t, got, st.ExpiresAt)

		_, err = e.Heartbeat(bg, e.SignTicket(u.Ticket))
		require.ErrorIs(t, err, ErrForged, "the waiting-room ticket cannot heartbeat")
		_, err = e.Heartbeat(bg, su.Pass)
		require.ErrorIs(t, err, ErrForged, "nor can the pass")

		_, err = e.Release(bg, w.Ticket)
		require.NoError(t, err)
		setDeadline(t, rdb, q, u.Ticket, -time.Millisecond)
		_, err = e.Heartbeat(bg, sess)
		require.ErrorIs(t, err, ErrNotAdmitted, "the session ran out")
	})
}

// setDeadline moves a session's deadline to the store's now + d and returns it.
func setDeadline(t *testing.T, rdb *redis.Client, q, id string, d time.Duration) time.Time {
	t.Helper()
	now, err := rdb.Time(bg).Result()
	require.NoError(t, err)
	dl := now.Add(d).UnixMilli()
	n, err := rdb.ZAddXX(bg, newKeys(q).active, redis.Z{Score: float64(dl), Member: id}).Result()
	require.NoError(t, err)
	_ = n
	return time.UnixMilli(dl)
}

func TestSettingsAreShared(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		a := newEngine(t, rdb, q, Options{Defaults: Settings{Slot: 7}})
		b := newEngine(t, rdb, q, Options{Defaults: Settings{Slot: 50}})
		s, err := b.Settings(bg)
		require.NoError(t, err)
		require.Equal(t, 7, s.Slot, "the first instance's defaults win")
		require.NoError(t, b.SetSettings(bg, Settings{Slot: 3, Session: time.Minute, TicketTTL: time.Minute}))
		_, err = a.Round(bg)
		require.NoError(t, err)
		st, err := a.Stats(bg)
		require.NoError(t, err)
		require.Equal(t, 3, st.Settings.Slot)
		require.Error(t, a.SetSettings(bg, Settings{Slot: 0, Session: time.Minute, TicketTTL: time.Minute}))
	})
}

func TestReleaseTriggersRound(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		admitted := make(chan Admission, 10)
		e := newEngine(t, rdb, testQueue(t), Options{Period: time.Hour, Defaults: Settings{Slot: 1},
			Hooks: Hooks{OnAdmit: func(a []Admission) {
				for _, x := range a {
					admitted <- x
				}
			}}})
		u, _ := e.Join(bg, "u")
		v, _ := e.Join(bg, "v")
		_, err := e.Round(bg)
		require.NoError(t, err)
		require.Equal(t, u.Ticket, (<-admitted).Ticket)

		ctx, cancel := context.WithCancel(bg)
		done := make(chan error)
		go func() { done <- e.Run(ctx) }()
		_, err = e.Release(bg, u.Ticket)
		require.NoError(t, err)
		select {
		case a := <-admitted:
			require.Equal(t, v.Ticket, a.Ticket)
		case <-time.After(30 * time.Second): // the period is an hour: only the trigger can do it
			t.Fatal("release did not trigger a round")
		}
		cancel()
		require.NoError(t, <-done)
	})
}

func TestTicketTokens(t *testing.T) {
	e, err := New(nil, "q", Options{Secret: testSecret})
	require.NoError(t, err)
	other, _ := New(nil, "q", Options{Secret: []byte("another-secret-another-secret-!!")})
	id := newTicketID()
	tok := e.SignTicket(id)
	got, err := e.VerifyTicket(tok)
	require.NoError(t, err)
	require.Equal(t, id, got)
	_, err = other.VerifyTicket(tok)
	require.ErrorIs(t, err, ErrForged, "signed with another secret")
	for _, bad := range []string{"", ".", id, id + ".", "zz" + tok[2:], tok + "a", e.passFor(id, "1")} {
		_, err = e.VerifyTicket(bad)
		require.ErrorIs(t, err, ErrForged, "token %q", bad)
	}
	_, err = New(nil, "bad{name}", Options{Secret: testSecret})
	require.Error(t, err)
	_, err = New(nil, "q", Options{})
	require.Error(t, err, "no secret")
	_, err = ParseStrategy("fast")
	require.Error(t, err)
}

// FuzzTokens: verifying any string never panics, and whatever a verifier
// accepts is exactly what the signer makes for its payload.
func FuzzTokens(f *testing.F) {
	e, _ := New(nil, "q", Options{Secret: testSecret})
	id := "0123456789abcdef01234567"
	f.Add(e.SignTicket(id))
	f.Add(e.passFor(id, "42"))
	f.Add(e.sessionFor(id, "ab12"))
	f.Add("x.y.z")
	f.Fuzz(func(t *testing.T, tok string) {
		if got, err := e.VerifyTicket(tok); err == nil && e.SignTicket(got) != tok {
			t.Fatalf("ticket %q accepted as %q", tok, got)
		}
		for _, d := range []string{domainPass, domainSession} {
			if id, nonce, ok := e.sig.verifyAdmission(d, tok); ok && e.sig.sign(d, id+"."+nonce) != tok {
				t.Fatalf("%s %q accepted as %q %q", d, tok, id, nonce)
			}
		}
	})
}
