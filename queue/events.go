package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// Round events (issue 17). Every round that changed the queue (admitted,
// dropped or reclaimed someone) and every settings change is published as
// one message on the shard channel wr:{q}:events (SPUBLISH). The channel
// carries the queue's hash tag, so in Redis Cluster it lives on the node that
// owns the queue's slot; on a single store or under Sentinel it is just a
// channel. Every instance that has pages open subscribes once per queue
// (Watch, SSUBSCRIBE) and pushes its pages from the messages instead of
// reading the store for each of them. A message is a hint, not a log:
// messages sent while a subscriber is away are lost, and a subscriber falls
// back to polling until its subscription is back.

// Event is one published change of a queue.
type Event struct {
	Instance  string   `json:"i"`           // the instance that made the change
	Admitted  []string `json:"a,omitempty"` // ticket ids admitted by the round, in admission order
	Dropped   int      `json:"d,omitempty"` // dead tickets the round ended
	Reclaimed int64    `json:"r,omitempty"` // expired sessions the round reclaimed
	// Left is the arrival numbers (Status.Arrival) of waiting tickets that
	// left the line (swept by the round, or left): a subscriber counts
	// those below a page's arrival number off its position.
	Left     []int64 `json:"l,omitempty"`
	Settings bool    `json:"s,omitempty"` // the settings changed (state, message, schedule, slot...)
}

const (
	// watchPing is how long Watch waits for a message before it pings the
	// subscription's connection to see that it is still there.
	watchPing = 5 * time.Second
	// watchRetryMin and watchRetryMax bound the wait before resubscribing.
	watchRetryMin = 100 * time.Millisecond
	watchRetryMax = 2 * time.Second
)

// EventsChannel is the shard channel of the queue's events.
func (e *Engine) EventsChannel() string { return e.k.events }

// publish sends ev on the queue's channel (one SPUBLISH). A lost message
// costs subscribers only latency (they poll slowly), so a failure is logged
// and counted, not returned.
func (e *Engine) publish(ctx context.Context, ev Event) {
	if e.opt.NoEvents {
		return
	}
	ev.Instance = e.opt.InstanceID
	msg, err := json.Marshal(ev)
	if err == nil {
		err = e.rdb.SPublish(ctx, e.k.events, msg).Err()
	}
	if err != nil {
		e.c.publishErrors.Add(1)
		e.log.Debug("round event not published", "err", err)
		return
	}
	e.c.published.Add(1)
}

// roundEvent is the event of a round, and whether the round changed anything.
func roundEvent(r RoundResult) (Event, bool) {
	ev := Event{Dropped: r.Dropped, Reclaimed: r.Reclaimed, Left: r.Left}
	for _, a := range r.Admitted {
		ev.Admitted = append(ev.Admitted, a.Ticket)
	}
	return ev, len(ev.Admitted) > 0 || ev.Dropped > 0 || ev.Reclaimed > 0 || len(ev.Left) > 0
}

// Watch subscribes to the queue's events (SSUBSCRIBE on the store, or on the
// cluster node that owns the queue's slot) and calls fn with each event until
// ctx is done. up(true) is called each time the subscription is established,
// up(false) each time it drops (connection lost, killed, store restarted);
// Watch then subscribes again after a short wait, doubling up to 2 s. fn and
// up are called from Watch's goroutine, one at a time.
func (e *Engine) Watch(ctx context.Context, fn func(Event), up func(bool)) {
	wait := watchRetryMin
	for ctx.Err() == nil {
		subscribed := e.watchOnce(ctx, fn, up)
		if subscribed {
			up(false)
			wait = watchRetryMin
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, watchRetryMax)
	}
}

// watchOnce runs one subscription until it fails or ctx is done, and tells
// whether it was ever established.
func (e *Engine) watchOnce(ctx context.Context, fn func(Event), up func(bool)) (subscribed bool) {
	ps := e.rdb.SSubscribe(ctx, e.k.events)
	defer ps.Close()
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // unblocks a pending read
	defer stop()
	pinged := false
	for ctx.Err() == nil {
		m, err := ps.ReceiveTimeout(ctx, watchPing)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !pinged {
				pinged = true // quiet queue: make sure the connection is still there
				if ps.Ping(ctx) == nil {
					continue
				}
			}
			if subscribed && ctx.Err() == nil {
				e.log.Info("events subscription lost", "err", err)
			}
			return subscribed
		}
		pinged = false
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind == "ssubscribe" && !subscribed {
				subscribed = true
				e.c.subscribed.Add(1)
				up(true)
			}
		case *redis.Message:
			var ev Event
			if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
				e.log.Debug("bad round event", "err", err, "payload", m.Payload)
				continue
			}
			e.c.received.Add(1)
			fn(ev)
		}
	}
	return subscribed
}

// Moved returns waiting status st with the position pos, an estimate made
// between two store reads (a subscriber subtracts the admissions it was told
// of), and the ETA recomputed from the shared admission rate (cached for a
// second, so this reads the store at most once a second per instance).
func (e *Engine) Moved(ctx context.Context, st Status, pos int64) Status {
	if st.State != StateWaiting {
		return st
	}
	st.Position = max(pos, 0)
	st.ETA, st.HasETA = 0, false
	e.fillETA(ctx, &st)
	return st
}

// HoldKeysLife is how long a hold (Engine.Hold) makes a held ticket's hash
// and user key live at least; a holder refreshes each ticket's keys once per
// half of it, so the per-page part of the store load of open pages is one key
// refresh per page per half hour.
const HoldKeysLife = time.Hour

// holdChunk bounds the tickets of one hold script call (one ZADD of that many
// members), so no call holds the store long.
const holdChunk = 1000

// Hold keeps the waiting tickets of the pages this instance holds open alive
// (issue 17): in one script call per 1,000 tickets, every one still waiting
// gets the liveness deadline now + ticket TTL (store clock; never lowered),
// and the tickets in refresh also get their hash and user key kept for at
// least HoldKeysLife. The caller holds each ticket every third of the ticket
// TTL at most; a ticket it stops holding (its page closed, the instance died)
// expires a ticket TTL after its last hold or read. It returns how many
// deadlines moved. A ticket no longer waiting is left alone.
func (e *Engine) Hold(ctx context.Context, refresh, others []string) (int64, error) {
	var moved int64
	for len(refresh)+len(others) > 0 {
		nk := min(len(refresh), holdChunk)
		no := min(len(others), holdChunk-nk)
		args := make([]any, 0, 2+nk+no)
		args = append(args, HoldKeysLife.Milliseconds(), nk)
		for _, id := range refresh[:nk] {
			args = append(args, id)
		}
		for _, id := range others[:no] {
			args = append(args, id)
		}
		refresh, others = refresh[nk:], others[no:]
		res, err := e.script(ctx, "hold", args...).Slice()
		if err != nil {
			return moved, err
		}
		if len(res) != 2 {
			return moved, fmt.Errorf("queue: hold script: unexpected reply %v", res)
		}
		moved += toInt(res[1])
	}
	e.c.holds.Add(1)
	return moved, nil
}
