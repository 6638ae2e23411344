package queue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A leader that stalls past its lease: another instance takes the lease and
// admits, the stalled one wakes up and admits too. The engine cannot prevent
// it; it must notice it and count it.
func TestLeaderLeaseLossIsDetected(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(8)
		defer rdb.Close()
		q := testQueue(t)
		k := newKeys(q)
		var b *Engine
		var bRound RoundResult
		a := newEngine(t, rdb, q, Options{Strategy: Leader, InstanceID: "a", Period: 50 * time.Millisecond,
			Defaults: Settings{Slot: 5},
			Hooks: Hooks{FailPoint: func(p string) bool {
				if p == "leader:counted" && b != nil {
					// a has counted and is about to pop; it stalls past its
					// lease meanwhile, and b takes over and fills the room.
					require.NoError(t, rdb.Del(context.Background(), k.leader).Err())
					var err error
					bRound, err = b.Round(context.Background())
					require.NoError(t, err)
					b = nil
				}
				return false
			}}})
		b = newEngine(t, rdb, q, Options{Strategy: Leader, InstanceID: "b", Period: 50 * time.Millisecond,
			Defaults: Settings{Slot: 5}})
		for i := 0; i < 20; i++ {
			_, err := a.Join(bg, "")
			require.NoError(t, err)
		}
		r, err := a.Round(bg)
		require.NoError(t, err)
		require.True(t, bRound.Leader, "b took the lease")
		require.Len(t, bRound.Admitted, 5)
		require.True(t, r.Leader, "a believed it led")
		require.True(t, r.LostLease, "a noticed the lease was gone")
		require.EqualValues(t, 1, a.Counters().LostLeases)
		n, err := rdb.ZCard(bg, k.active).Result()
		require.NoError(t, err)
		require.EqualValues(t, 10, n, "two admitters: the slot of 5 overshot")
	})
}

func TestKilledInstanceStops(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		rdb := tg.client(4)
		defer rdb.Close()
		e := newEngine(t, rdb, testQueue(t), Options{Strategy: Optimistic, Period: 10 * time.Millisecond,
			Hooks: Hooks{FailPoint: func(p string) bool { return p == "optimistic:popped" }}})
		_, err := e.Join(bg, "")
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		require.ErrorIs(t, e.Run(ctx), ErrKilled)
		require.True(t, e.Dead())
		_, err = e.Round(bg)
		require.ErrorIs(t, err, ErrKilled, "a dead instance stays dead")
	})
}
