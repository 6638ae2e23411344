package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fail points of the optimistic strategy:
//
//	optimistic:reclaimed   after the round's start (reclaim and sweep, one script)
//	optimistic:popped      after ZPOPMIN: the user is in neither set (dying here loses them)
//	optimistic:reserved    after ZADD active: the user holds a place, maybe one too many
//	optimistic:counted     after ZCARD active
//	optimistic:unreserved  after the rollback's ZREM, before the user is put back (loses them)
//
// The design note's algorithm: pop one user, reserve first (ZADD active), then
// count (ZCARD). The store runs commands one at a time, so the ZCARD that
// follows the (slot+1)-th ZADD sees the overflow, and that instance undoes
// its reservation and puts the user back with the original score. No leader
// is needed and every instance admits. An observer may see the active set at
// slot + (instances - 1) for a moment (reservations about to be undone), and
// a user popped by an instance that dies before the ZADD is lost.
//
// A reservation is not an admission: the user is told "admitted" and gets a
// pass only after the count, when the confirm step writes the admission's
// nonce (Status shows a reservation as waiting at the head). A user rolled
// back and admitted again gets a new nonce, so a pass of the first admission
// never works.
type optimistic struct{}

func (optimistic) admit(ctx context.Context, e *Engine, r *RoundResult) error {
	now, set, err := e.prepare(ctx, r)
	if err != nil {
		return err
	}
	if e.fail("optimistic:reclaimed") {
		return ErrKilled
	}
	// A read-only look first, so a full room costs one command, not a pop
	// and a rollback per instance per round.
	count, err := e.rdb.ZCard(ctx, e.k.active).Result()
	if err != nil {
		return err
	}
	if count >= int64(set.Slot) {
		return nil
	}
	for {
		popped, err := e.rdb.ZPopMin(ctx, e.k.waiting, 1).Result()
		if err != nil || len(popped) == 0 {
			return err
		}
		if e.fail("optimistic:popped") {
			return ErrKilled
		}
		z := popped[0]
		id := z.Member.(string)
		live, err := e.liveOnly(ctx, popped, now)
		if err != nil {
			// Put the user back before giving up the round.
			e.rdb.ZAdd(ctx, e.k.waiting, z)
			return err
		}
		if len(live) == 0 {
			r.Dropped++
			if r.Dropped >= maxDropsPerRound {
				return nil
			}
			continue
		}
		deadline := now.Add(min(set.Session, set.MaxSession))
		if err := e.rdb.ZAdd(ctx, e.k.active, redis.Z{Score: float64(deadline.UnixMilli()), Member: id}).Err(); err != nil {
			e.rdb.ZAdd(ctx, e.k.waiting, z)
			return err
		}
		if e.fail("optimistic:reserved") {
			return ErrKilled
		}
		count, err := e.rdb.ZCard(ctx, e.k.active).Result()
		if err != nil {
			return err // the reservation stands unconfirmed: reclaimed at its deadline
		}
		if e.fail("optimistic:counted") {
			return ErrKilled
		}
		if count > int64(set.Slot) {
			// Over the cap: undo and put the user back where they were.
			if err := e.rdb.ZRem(ctx, e.k.active, id).Err(); err != nil {
				return err
			}
			if e.fail("optimistic:unreserved") {
				return ErrKilled
			}
			r.Rollbacks++
			return e.rdb.ZAdd(ctx, e.k.waiting, z).Err()
		}
		nonce := newNonce()
		res, err := e.script(ctx, "confirm", id, nonce, int64(z.Score)).Int64Slice()
		if err != nil {
			return err
		}
		if len(res) != 3 {
			return fmt.Errorf("queue: confirm script: unexpected reply %v", res)
		}
		now = time.UnixMilli(res[1]) // the next reservation's deadline counts from here
		if res[0] == 0 {
			r.Rollbacks++ // ran out before it was confirmed: back in the queue
			continue
		}
		adm := []Admission{{Ticket: id, Arrival: int64(z.Score), Deadline: time.UnixMilli(deadline.UnixMilli()),
			Instance: e.opt.InstanceID, Waited: waitedMs(res[2])}}
		e.numberAdmissions(ctx, adm, now)
		r.Admitted = append(r.Admitted, adm...)
	}
}
