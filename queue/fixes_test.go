package queue

// Tests of the holes of issue 12 (store restart, clock skew, optimistic
// passes, dead tickets in positions, user keys, partial settings). Each
// needs a store (see redis_test.go).

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// skewed is an instance clock off by a fixed amount.
type skewed time.Duration

func (s skewed) Now() time.Time { return time.Now().Add(time.Duration(s)) }

// The store restarted empty (FLUSHALL stands for it here; cmd/queue's
// TestStoreRestartsEmpty kills a real one): the next round puts the settings
// back from the instance's flags and admits.
func TestStoreLostItsData(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				q := testQueue(t)
				e := newEngine(t, rdb, q, Options{Strategy: s, Defaults: Settings{Slot: 2}})
				require.NoError(t, rdb.Del(bg, newKeys(q).settings).Err())
				u, err := e.Join(bg, "")
				require.NoError(t, err)
				r, err := e.Round(bg)
				require.NoError(t, err)
				require.Len(t, r.Admitted, 1)
				require.Equal(t, u.Ticket, r.Admitted[0].Ticket)
				slot, err := rdb.HGet(bg, newKeys(q).settings, "slot").Int()
				require.NoError(t, err)
				require.Equal(t, 2, slot, "the settings are back")
				require.NoError(t, e.Failing())
			})
		}
	})
}

// Rounds that keep failing make Failing report it (and /readyz with it).
func TestFailingRoundsAreReported(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	e, err := New(c, "q", Options{Secret: testSecret})
	require.NoError(t, err)
	for i := 0; i < failingRounds; i++ {
		require.NoError(t, e.Failing(), "round %d", i)
		_, err := e.Round(bg)
		require.Error(t, err)
	}
	require.Error(t, e.Failing())
}

// Instance clocks 10 s apart agree on every deadline: neither reclaims the
// other's live sessions.
func TestClockSkew(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, skew := range []time.Duration{10 * time.Second, -10 * time.Second} {
			for _, s := range Strategies {
				t.Run(fmt.Sprintf("%s/%v", s, skew), func(t *testing.T) {
					needEval(t, tg, s)
					rdb := tg.client(4)
					defer rdb.Close()
					q := testQueue(t)
					set := Settings{Slot: 1, Session: 5 * time.Second}
					a := newEngine(t, rdb, q, Options{Strategy: s, InstanceID: "a", Defaults: set})
					b := newEngine(t, rdb, q, Options{Strategy: s, InstanceID: "b", Defaults: set, Clock: skewed(skew)})
					var ids []string
					for i := 0; i < 3; i++ {
						st, err := a.Join(bg, "")
						require.NoError(t, err)
						ids = append(ids, st.Ticket)
					}
					check := func(first, second *Engine, in string) {
						r, err := first.Round(bg)
						require.NoError(t, err)
						require.Len(t, r.Admitted, 1)
						require.Equal(t, in, r.Admitted[0].Ticket)
						for i := 0; i < 2; i++ {
							for _, e := range []*Engine{second, first} {
								r, err := e.Round(bg)
								require.NoError(t, err)
								require.Zero(t, r.Reclaimed, "a live session was reclaimed")
								require.Empty(t, r.Admitted, "a second user let into a slot of one")
							}
						}
						n, err := rdb.ZCard(bg, newKeys(q).active).Result()
						require.NoError(t, err)
						require.EqualValues(t, 1, n)
						st, err := second.Status(bg, in)
						require.NoError(t, err)
						require.Equal(t, StateAdmitted, st.State)
					}
					check(a, b, ids[0])
					_, err := a.Release(bg, ids[0])
					require.NoError(t, err)
					require.NoError(t, rdb.Del(bg, newKeys(q).leader).Err()) // b may lead now
					check(b, a, ids[1])
				})
			}
		}
	})
}

// A pass belongs to one admission: after a rollback and a new admission, the
// first pass is refused and the new one works once.
func TestPassBelongsToOneAdmission(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(4)
				defer rdb.Close()
				q := testQueue(t)
				k := newKeys(q)
				e := newEngine(t, rdb, q, Options{Strategy: s, Defaults: Settings{Slot: 1}})
				u, _ := e.Join(bg, "")
				_, err := e.Round(bg)
				require.NoError(t, err)
				first, err := e.Status(bg, u.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateAdmitted, first.State)

				// What the optimistic rollback does: out of active, back in the queue.
				require.NoError(t, rdb.ZRem(bg, k.active, u.Ticket).Err())
				require.NoError(t, rdb.ZAdd(bg, k.waiting, redis.Z{Score: 1, Member: u.Ticket}).Err())
				require.NoError(t, rdb.ZAdd(bg, k.expiry, redis.Z{Score: 1 << 50, Member: u.Ticket}).Err())
				_, err = e.Round(bg)
				require.NoError(t, err)
				second, err := e.Status(bg, u.Ticket)
				require.NoError(t, err)
				require.Equal(t, StateAdmitted, second.State)
				require.NotEqual(t, first.Pass, second.Pass, "a new admission, a new pass")

				_, _, err = e.Enter(bg, first.Pass)
				require.ErrorIs(t, err, ErrPassExpired, "the first admission's pass")
				_, _, err = e.Enter(bg, second.Pass)
				require.NoError(t, err)
				_, _, err = e.Enter(bg, second.Pass)
				require.ErrorIs(t, err, ErrPassUsed)
			})
		}
	})
}

// An optimistic reservation that is not confirmed yet is not an admission:
// the user sees waiting (at the head), with no pass.
func TestOptimisticReservationIsNotAdmission(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		e := newEngine(t, rdb, q, Options{Strategy: Optimistic, Defaults: Settings{Slot: 1},
			Hooks: Hooks{FailPoint: func(p string) bool { return p == "optimistic:reserved" }}})
		u, _ := e.Join(bg, "")
		_, err := e.Round(bg)
		require.ErrorIs(t, err, ErrKilled)
		in, err := rdb.ZScore(bg, newKeys(q).active, u.Ticket).Result()
		require.NoError(t, err, "the reservation is in the active set")
		require.Greater(t, in, 0.0)
		st, err := e.Status(bg, u.Ticket)
		require.NoError(t, err)
		require.Equal(t, StateWaiting, st.State, "reserved, not admitted")
		require.Empty(t, st.Pass)
	})
}

// Dead tickets leave the waiting set within about one ticket TTL, so a new
// user's position counts live users only.
func TestPositionsAfterMassAbandon(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		for _, s := range Strategies {
			t.Run(string(s), func(t *testing.T) {
				needEval(t, tg, s)
				rdb := tg.client(8)
				defer rdb.Close()
				ttl := time.Second
				e := newEngine(t, rdb, testQueue(t), Options{Strategy: s,
					Defaults: Settings{Slot: 1, TicketTTL: ttl, Session: time.Hour}})
				holder, _ := e.Join(bg, "")
				_, err := e.Round(bg)
				require.NoError(t, err)
				st, _ := e.Status(bg, holder.Ticket)
				require.Equal(t, StateAdmitted, st.State, "the room is full, nobody else gets in")
				for i := 0; i < 300; i++ { // they join and close the tab
					_, err := e.Join(bg, "")
					require.NoError(t, err)
				}
				time.Sleep(ttl + 100*time.Millisecond)
				_, err = e.Round(bg) // the loop's next round
				require.NoError(t, err)
				late, err := e.Join(bg, "")
				require.NoError(t, err)
				require.EqualValues(t, 0, late.Position, "nobody alive is ahead")
				stats, err := e.Stats(bg)
				require.NoError(t, err)
				require.EqualValues(t, 1, stats.Waiting)
			})
		}
	})
}

// The user key lives as long as the ticket, and simultaneous re-joins of one
// user after the old ticket ended give one ticket.
func TestUserKeyFollowsTicket(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(32)
		defer rdb.Close()
		q := testQueue(t)
		k := newKeys(q)
		e := newEngine(t, rdb, q, Options{Defaults: Settings{Slot: 1, TicketTTL: 10 * time.Second}})
		a, err := e.Join(bg, "alice")
		require.NoError(t, err)
		ttl, err := rdb.PTTL(bg, k.user("alice")).Result()
		require.NoError(t, err)
		require.LessOrEqual(t, ttl, 10*time.Second, "not an hour")
		require.Greater(t, ttl, time.Duration(0))
		_, err = e.Release(bg, a.Ticket)
		require.NoError(t, err)
		require.Zero(t, rdb.Exists(bg, k.user("alice")).Val(), "ends with the ticket")

		for round := 0; round < 5; round++ {
			var wg sync.WaitGroup
			tickets := make([]string, 20)
			start := make(chan struct{})
			for i := range tickets {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					st, err := e.Join(bg, "alice")
					if err == nil {
						tickets[i] = st.Ticket
					}
				}()
			}
			close(start)
			wg.Wait()
			for _, tk := range tickets {
				require.Equal(t, tickets[0], tk, "simultaneous re-joins of alice")
			}
			_, err := e.Release(bg, tickets[0])
			require.NoError(t, err)
		}
	})
}

// A change of one setting writes only that field.
func TestSettingFieldsWriteOnlyThemselves(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		a := newEngine(t, rdb, q, Options{})
		b := newEngine(t, rdb, q, Options{})
		_, err := a.Settings(bg) // a's view, soon stale
		require.NoError(t, err)
		sess := 7 * time.Minute
		_, err = b.SetSettingFields(bg, SettingsPatch{Session: &sess})
		require.NoError(t, err)
		slot := 9
		got, err := a.SetSettingFields(bg, SettingsPatch{Slot: &slot})
		require.NoError(t, err)
		require.Equal(t, 9, got.Slot)
		require.Equal(t, sess, got.Session, "b's change survives a's")
		bad := 0
		_, err = a.SetSettingFields(bg, SettingsPatch{Slot: &bad})
		require.ErrorIs(t, err, ErrBadSettings)
	})
}
