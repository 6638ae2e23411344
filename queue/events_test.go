package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// watcher runs Watch in the background and hands its events and state
// changes to the test.
type watcher struct {
	events chan Event
	ups    chan bool
}

func startWatch(t *testing.T, e *Engine) *watcher {
	t.Helper()
	w := &watcher{events: make(chan Event, 100), ups: make(chan bool, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Watch(ctx, func(ev Event) { w.events <- ev }, func(up bool) { w.ups <- up })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *watcher) up(t *testing.T, want bool) {
	t.Helper()
	select {
	case got := <-w.ups:
		require.Equal(t, want, got, "subscription state")
	case <-time.After(20 * time.Second):
		t.Fatalf("subscription never became up=%v", want)
	}
}

func (w *watcher) next(t *testing.T) Event {
	t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no round event within 20s")
	}
	return Event{}
}

// Every round that changes the queue publishes one event naming the
// admitted tickets; rounds that change nothing publish none; an instance
// with NoEvents publishes nothing.
func TestRoundEvents(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		needEval(t, tg, Atomic)
		rdb := tg.client(4)
		t.Cleanup(func() { rdb.Close() }) // after the watcher stopped
		q := testQueue(t)
		quiet := newEngine(t, rdb, q, Options{InstanceID: "quiet", NoEvents: true, Defaults: Settings{Slot: 1}})
		loud := newEngine(t, rdb, q, Options{InstanceID: "loud", Defaults: Settings{Slot: 1}})
		w := startWatch(t, loud)
		w.up(t, true)
		n, err := rdb.Do(bg, "PUBSUB", "SHARDNUMSUB", loud.EventsChannel()).Slice()
		require.NoError(t, err)
		require.Equal(t, []any{"wr:{" + q + "}:events", int64(1)}, n, "one subscription on the queue's shard channel")

		var ids []string
		for i := 0; i < 3; i++ {
			st, err := quiet.Join(bg, "")
			require.NoError(t, err)
			ids = append(ids, st.Ticket)
		}
		r, err := quiet.Round(bg) // admits ids[0], publishes nothing
		require.NoError(t, err)
		require.Len(t, r.Admitted, 1)
		_, err = loud.Round(bg) // the slot is full: changes nothing, publishes nothing
		require.NoError(t, err)
		ok, err := loud.Release(bg, ids[0])
		require.NoError(t, err)
		require.True(t, ok)
		_, err = loud.Round(bg) // admits ids[1]
		require.NoError(t, err)

		ev := w.next(t) // the first event the subscriber sees is loud's admission of ids[1]
		require.Equal(t, Event{Instance: "loud", Admitted: []string{ids[1]}}, ev)
		require.Zero(t, quiet.Counters().Published)
		require.Equal(t, uint64(1), loud.Counters().Published)

		_, err = loud.SetSettingFields(bg, SettingsPatch{Message: ptr("back soon")})
		require.NoError(t, err)
		require.Equal(t, Event{Instance: "loud", Settings: true}, w.next(t))
	})
}

// A killed subscription (CLIENT KILL TYPE pubsub) is reported down and comes
// back by itself, and events flow again.
func TestWatchResubscribes(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		needEval(t, tg, Atomic)
		rdb := tg.client(4)
		t.Cleanup(func() { rdb.Close() }) // after the watcher stopped
		q := testQueue(t)
		e := newEngine(t, rdb, q, Options{InstanceID: "a", Defaults: Settings{Slot: 5}})
		w := startWatch(t, e)
		for kill := 0; kill < 2; kill++ {
			w.up(t, true)
			killed, err := rdb.Do(bg, "CLIENT", "KILL", "TYPE", "pubsub").Int()
			require.NoError(t, err)
			require.GreaterOrEqual(t, killed, 1)
			w.up(t, false)
		}
		w.up(t, true)
		st, err := e.Join(bg, "")
		require.NoError(t, err)
		// The subscription is back: a round's event arrives (retry the round
		// in case the resubscription raced with it; the join is admitted once).
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, err := e.Round(bg)
			require.NoError(t, err)
			select {
			case ev := <-w.events:
				require.Equal(t, []string{st.Ticket}, ev.Admitted)
				require.GreaterOrEqual(t, e.Counters().Subscribed, uint64(3))
				return
			case <-time.After(200 * time.Millisecond):
			}
			require.True(t, time.Now().Before(deadline), "no event after resubscribing")
		}
	})
}

// In Redis Cluster the channel lives in the queue's slot: SSUBSCRIBE through
// a ClusterClient lands on the node that owns the queue, and SPUBLISH from
// the engine reaches it.
func TestWatchCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	addrs := startCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { cc.Close() })
	q := testQueue(t)
	e := newEngine(t, cc, q, Options{InstanceID: "c", Defaults: Settings{Slot: 1}})
	w := startWatch(t, e)
	w.up(t, true)
	slot, err := cc.ClusterKeySlot(bg, e.EventsChannel()).Result()
	require.NoError(t, err)
	waitSlot, err := cc.ClusterKeySlot(bg, e.k.waiting).Result()
	require.NoError(t, err)
	require.Equal(t, waitSlot, slot, "the channel hashes to the queue's slot")
	st, err := e.Join(bg, "")
	require.NoError(t, err)
	_, err = e.Round(bg)
	require.NoError(t, err)
	require.Equal(t, []string{st.Ticket}, w.next(t).Admitted)
	// Exactly one node has the subscriber: the owner of the slot.
	owners := 0
	err = cc.ForEachMaster(bg, func(ctx context.Context, c *redis.Client) error {
		n, err := c.Do(ctx, "PUBSUB", "SHARDNUMSUB", e.EventsChannel()).Slice()
		if err == nil && len(n) == 2 && n[1] == int64(1) {
			owners++
		}
		if err != nil && !strings.Contains(err.Error(), "MOVED") {
			return err
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, owners)
}
