package queue

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// State of a ticket as a user sees it.
type State string

const (
	StateWaiting  State = "waiting"
	StateAdmitted State = "admitted"
	StateExpired  State = "expired"
)

// Reasons a ticket is expired.
const (
	ReasonStoppedPolling = "stopped polling"  // liveness key ran out while waiting
	ReasonSessionEnded   = "session ended"    // admitted, then released or reclaimed
	ReasonNotFound       = "not in the queue" // released, dropped at the head, or never joined
)

// Status is what a ticket holder is told.
type Status struct {
	Ticket string // ticket id (sign it with SignTicket before handing it out)
	State  State

	// Waiting.
	Position int64         // 0 = next to be admitted
	ETA      time.Duration // estimated wait; valid only when HasETA
	HasETA   bool          // false until the queue has an admission rate

	// Admitted.
	Pass      string    // single-use pass for Enter
	ExpiresAt time.Time // session deadline

	// Expired.
	Reason string
}

// userTTL bounds how long join stays idempotent for a user id.
const userTTL = time.Hour

// Join puts a user in the queue and returns the new ticket's status. With a
// non-empty user id, joining again while the user's ticket is still waiting or
// admitted returns that ticket (idempotent join).
func (e *Engine) Join(ctx context.Context, user string) (Status, error) {
	set := e.cachedSettings()
	for attempt := 0; ; attempt++ {
		if user != "" {
			old, err := e.rdb.Get(ctx, e.k.user(user)).Result()
			if err != nil && err != redis.Nil {
				return Status{}, err
			}
			if old != "" {
				st, err := e.Status(ctx, old)
				if err != nil {
					return Status{}, err
				}
				if st.State != StateExpired {
					return st, nil
				}
				// The user's old ticket is over; forget it (only if still mapped to it)
				// and join afresh. Two concurrent re-joins of one user racing here may
				// both get tickets; the window is one round trip.
				if cur, _ := e.rdb.Get(ctx, e.k.user(user)).Result(); cur == old {
					e.rdb.Del(ctx, e.k.user(user))
				}
			}
		}
		seq, err := e.rdb.Incr(ctx, e.k.seq).Result()
		if err != nil {
			return Status{}, err
		}
		id := newTicketID()
		if user != "" {
			ok, err := e.rdb.SetNX(ctx, e.k.user(user), id, userTTL).Result()
			if err != nil {
				return Status{}, err
			}
			if !ok {
				if attempt >= 3 {
					return Status{}, errors.New("queue: join: user key contended")
				}
				continue // another join for this user won; return its ticket
			}
		}
		// The liveness key goes first so admission never sees a waiting ticket
		// without one.
		var rank *redis.IntCmd
		_, err = e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, e.k.alive(id), user, set.TicketTTL)
			p.ZAdd(ctx, e.k.waiting, redis.Z{Score: float64(seq), Member: id})
			rank = p.ZRank(ctx, e.k.waiting, id)
			return nil
		})
		if err != nil && err != redis.Nil {
			return Status{}, err
		}
		e.c.joins.Add(1)
		pos, err := rank.Result()
		if err == redis.Nil {
			// Admitted between ZADD and ZRANK (possible with a short queue).
			return e.Status(ctx, id)
		}
		st := Status{Ticket: id, State: StateWaiting, Position: pos}
		e.fillETA(ctx, &st)
		return st, nil
	}
}

// Status reports a ticket's state and keeps a waiting ticket alive (a poll
// refreshes its liveness key). A waiting ticket whose liveness key ran out is
// removed and reported expired.
func (e *Engine) Status(ctx context.Context, id string) (Status, error) {
	if !validTicketID(id) {
		return Status{Ticket: id, State: StateExpired, Reason: ReasonNotFound}, nil
	}
	set := e.cachedSettings()
	// A ticket moves waiting -> active; ask for waiting first so a move in
	// between is seen as admitted, not lost. The optimistic and naive
	// strategies hold a popped ticket in neither set for a few round trips, so
	// "in neither" is retried briefly before it counts as expired.
	for attempt := 0; ; attempt++ {
		var rank *redis.IntCmd
		var score *redis.FloatCmd
		var alive *redis.BoolCmd
		_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			rank = p.ZRank(ctx, e.k.waiting, id)
			score = p.ZScore(ctx, e.k.active, id)
			alive = p.PExpire(ctx, e.k.alive(id), set.TicketTTL)
			return nil
		})
		if err != nil && err != redis.Nil {
			return Status{}, err
		}
		if pos, err := rank.Result(); err == nil {
			if !alive.Val() {
				e.rdb.ZRem(ctx, e.k.waiting, id)
				return Status{Ticket: id, State: StateExpired, Reason: ReasonStoppedPolling}, nil
			}
			st := Status{Ticket: id, State: StateWaiting, Position: pos}
			e.fillETA(ctx, &st)
			return st, nil
		}
		if dl, err := score.Result(); err == nil {
			if int64(dl) > e.nowMs() {
				return Status{Ticket: id, State: StateAdmitted, Pass: e.passFor(id),
					ExpiresAt: time.UnixMilli(int64(dl))}, nil
			}
			return Status{Ticket: id, State: StateExpired, Reason: ReasonSessionEnded}, nil
		}
		if attempt >= 3 || !alive.Val() {
			return Status{Ticket: id, State: StateExpired, Reason: ReasonNotFound}, nil
		}
		select {
		case <-ctx.Done():
			return Status{}, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 2 * time.Millisecond):
		}
	}
}

// Heartbeat extends an admitted ticket's session to now + session; it never
// shortens it. It returns the deadline, or ErrNotAdmitted.
func (e *Engine) Heartbeat(ctx context.Context, id string) (time.Time, error) {
	set := e.cachedSettings()
	dl, err := e.rdb.ZScore(ctx, e.k.active, id).Result()
	if err == redis.Nil {
		return time.Time{}, ErrNotAdmitted
	}
	if err != nil {
		return time.Time{}, err
	}
	now := e.nowMs()
	old := int64(dl)
	if old <= now {
		return time.Time{}, ErrNotAdmitted
	}
	next := now + set.Session.Milliseconds()
	if next <= old {
		return time.UnixMilli(old), nil
	}
	// XX: a session reclaimed meanwhile stays gone. Concurrent heartbeats both
	// write a value >= the old deadline, so none shortens it.
	var n *redis.IntCmd
	_, err = e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.ZAddArgs(ctx, e.k.active, redis.ZAddArgs{XX: true, Ch: true,
			Members: []redis.Z{{Score: float64(next), Member: id}}})
		p.PExpire(ctx, e.k.pass(id), time.Duration(next-now)*time.Millisecond)
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if n.Val() == 0 {
		return time.Time{}, ErrNotAdmitted
	}
	return time.UnixMilli(next), nil
}

// Release ends a ticket: an admitted user leaves the active set (and this
// instance runs an admission round at once), a waiting user leaves the queue.
// It reports whether the ticket was waiting or admitted.
func (e *Engine) Release(ctx context.Context, id string) (bool, error) {
	var act, wait *redis.IntCmd
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		act = p.ZRem(ctx, e.k.active, id)
		wait = p.ZRem(ctx, e.k.waiting, id)
		p.Del(ctx, e.k.pass(id), e.k.alive(id))
		return nil
	})
	if err != nil {
		return false, err
	}
	if act.Val() > 0 {
		e.c.releases.Add(1)
		e.Trigger()
	}
	return act.Val()+wait.Val() > 0, nil
}

// Enter consumes a pass. Exactly one of any number of concurrent calls with
// the same pass succeeds (GETDEL is one atomic command); the others get
// ErrPassUsed. A pass whose session ended gives ErrPassExpired, a forged one
// ErrForged. On success it returns the ticket id and the session deadline.
func (e *Engine) Enter(ctx context.Context, pass string) (string, time.Time, error) {
	id, ok := e.sig.verify(domainPass, pass)
	if !ok {
		return "", time.Time{}, ErrForged
	}
	_, gerr := e.rdb.GetDel(ctx, e.k.pass(id)).Result()
	if gerr != nil && gerr != redis.Nil {
		return "", time.Time{}, gerr
	}
	dl, err := e.rdb.ZScore(ctx, e.k.active, id).Result()
	if err != nil && err != redis.Nil {
		return "", time.Time{}, err
	}
	live := err == nil && int64(dl) > e.nowMs()
	switch {
	case !live:
		return id, time.Time{}, ErrPassExpired
	case gerr == redis.Nil:
		return id, time.Time{}, ErrPassUsed
	}
	e.c.enters.Add(1)
	return id, time.UnixMilli(int64(dl)), nil
}
