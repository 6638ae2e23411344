package queue

import (
	"context"
	"strconv"
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

// Hold keeps the waiting tickets it names alive in one call (issue 17): their
// liveness deadline moves to now + ticket TTL, the refreshed ones' hash and
// user key live at least HoldKeysLife, a later status read does not shorten
// that, a ticket not held expires as before, and a ticket that is no longer
// waiting is left alone.
func TestHoldKeepsTicketsAlive(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		needEval(t, tg, Atomic)
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		k := newKeys(q)
		e := newEngine(t, rdb, q, Options{Defaults: Settings{Slot: 1, TicketTTL: time.Minute}})
		held, err := e.Join(bg, "held")
		require.NoError(t, err)
		other, err := e.Join(bg, "other")
		require.NoError(t, err)
		gone, err := e.Join(bg, "gone")
		require.NoError(t, err)

		// Every deadline a few seconds away by the store's clock; then the hold.
		now, err := rdb.Time(bg).Result()
		require.NoError(t, err)
		soon := now.Add(3 * time.Second).UnixMilli()
		for _, id := range []string{held.Ticket, other.Ticket, gone.Ticket} {
			require.NoError(t, rdb.ZAddXX(bg, k.expiry, redis.Z{Score: float64(soon), Member: id}).Err())
		}
		moved, err := e.Hold(bg, []string{held.Ticket}, []string{other.Ticket})
		require.NoError(t, err)
		require.EqualValues(t, 2, moved)
		require.EqualValues(t, 1, e.Counters().Holds)
		for _, id := range []string{held.Ticket, other.Ticket} {
			dl, err := rdb.ZScore(bg, k.expiry, id).Result()
			require.NoError(t, err)
			require.Greater(t, dl, float64(soon+30_000), "held: deadline about a TTL away")
		}
		for _, key := range []string{k.ticket(held.Ticket), k.user("held")} {
			ttl, err := rdb.PTTL(bg, key).Result()
			require.NoError(t, err)
			require.Greater(t, ttl, HoldKeysLife-time.Minute, "%s refreshed for the hold's key life", key)
		}
		ttl, err := rdb.PTTL(bg, k.ticket(other.Ticket)).Result()
		require.NoError(t, err)
		require.LessOrEqual(t, ttl, 2*time.Minute, "not refreshed: two ticket TTLs from its join")
		_, err = e.Status(bg, held.Ticket) // a poll of a held ticket keeps the longer life
		require.NoError(t, err)
		ttl, err = rdb.PTTL(bg, k.ticket(held.Ticket)).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, HoldKeysLife-time.Minute, "a status read does not shorten a held ticket's keys")

		// "gone" was not held: once its deadline passes, the round ends it.
		require.Eventually(t, func() bool {
			now, err := rdb.Time(bg).Result()
			return err == nil && now.UnixMilli() > soon
		}, 30*time.Second, 50*time.Millisecond)
		r, err := e.Round(bg)
		require.NoError(t, err)
		require.Equal(t, 1, r.Dropped)
		require.Len(t, r.Admitted, 1)
		require.Equal(t, held.Ticket, r.Admitted[0].Ticket)
		st, err := e.Status(bg, gone.Ticket)
		require.NoError(t, err)
		require.Equal(t, ReasonExpired, st.Reason)

		// Admitted and ended tickets are not put back in the liveness set.
		_, err = e.Release(bg, other.Ticket)
		require.NoError(t, err)
		moved, err = e.Hold(bg, []string{held.Ticket, other.Ticket, gone.Ticket}, nil)
		require.NoError(t, err)
		require.Zero(t, moved)
		require.Zero(t, rdb.ZCard(bg, k.expiry).Val())
		ttl, err = rdb.PTTL(bg, k.ticket(held.Ticket)).Result()
		require.NoError(t, err)
		require.Less(t, ttl, 7*time.Minute, "admitted: session + ticket TTL, not the hold's key life")
		moved, err = e.Hold(bg, nil, nil)
		require.NoError(t, err)
		require.Zero(t, moved)

		// The first read of a page to be held gives its keys the hold's life at once.
		fresh, err := e.Join(bg, "fresh")
		require.NoError(t, err)
		st, err = e.StatusHeld(bg, fresh.Ticket)
		require.NoError(t, err)
		require.Equal(t, StateWaiting, st.State)
		require.NotZero(t, st.Arrival)
		for _, key := range []string{k.ticket(fresh.Ticket), k.user("fresh")} {
			ttl, err := rdb.PTTL(bg, key).Result()
			require.NoError(t, err)
			require.Greater(t, ttl, HoldKeysLife-time.Minute, "%s", key)
		}
	})
}

// Hold splits many tickets into calls of 1,000 (one ZADD each) and moves
// every deadline.
func TestHoldManyTickets(t *testing.T) {
	forEachStore(t, func(t *testing.T, tg target) {
		needEval(t, tg, Atomic)
		rdb := tg.client(4)
		defer rdb.Close()
		q := testQueue(t)
		k := newKeys(q)
		e := newEngine(t, rdb, q, Options{NoEvents: true, Defaults: Settings{Slot: 1, TicketTTL: time.Minute}})
		var ids []string
		for i := 0; i < 2500; i++ {
			st, err := e.Join(bg, "")
			require.NoError(t, err)
			ids = append(ids, st.Ticket)
		}
		_, err := rdb.Do(bg, "ZADD", k.expiry, "XX", "1", ids[0], "1", ids[1500], "1", ids[2499]).Result()
		require.NoError(t, err)
		t0, err := rdb.Time(bg).Result()
		require.NoError(t, err)
		moved, err := e.Hold(bg, ids[:1200], ids[1200:])
		require.NoError(t, err)
		require.GreaterOrEqual(t, moved, int64(3))
		low := strconv.FormatInt(t0.UnixMilli()+time.Minute.Milliseconds(), 10)
		require.Zero(t, rdb.ZCount(bg, k.expiry, "-inf", "("+low).Val(), "every deadline at least the hold's now + TTL")
		require.EqualValues(t, 2500, rdb.ZCard(bg, k.expiry).Val())
	})
}
