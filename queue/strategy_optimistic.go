package queue

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fail points of the optimistic strategy:
//
//	optimistic:reclaimed   after ZREMRANGEBYSCORE
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
type optimistic struct{}

func (optimistic) admit(ctx context.Context, e *Engine, now time.Time, set Settings, r *RoundResult) error {
	n, err := e.reclaim(ctx, now)
	if err != nil {
		return err
	}
	r.Reclaimed = n
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
		alive, err := e.rdb.Exists(ctx, e.k.alive(id)).Result()
		if err != nil {
			// Put the user back before giving up the round.
			e.rdb.ZAdd(ctx, e.k.waiting, z)
			return err
		}
		if alive == 0 {
			r.Dropped++
			if r.Dropped >= maxDropsPerRound {
				return nil
			}
			continue
		}
		adm, err := e.addActive(ctx, []redis.Z{z}, now, set)
		if err != nil {
			e.rdb.ZAdd(ctx, e.k.waiting, z)
			return err
		}
		if e.fail("optimistic:reserved") {
			return ErrKilled
		}
		count, err := e.rdb.ZCard(ctx, e.k.active).Result()
		if err != nil {
			return err // the reservation stands: the user is admitted, uncounted
		}
		if e.fail("optimistic:counted") {
			return ErrKilled
		}
		if count > int64(set.Slot) {
			// Over the cap: undo and put the user back where they were.
			_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZRem(ctx, e.k.active, id)
				p.Del(ctx, e.k.pass(id))
				return nil
			})
			if err != nil {
				return err
			}
			if e.fail("optimistic:unreserved") {
				return ErrKilled
			}
			r.Rollbacks++
			return e.rdb.ZAdd(ctx, e.k.waiting, z).Err()
		}
		e.numberAdmissions(ctx, adm, now)
		r.Admitted = append(r.Admitted, adm...)
	}
}
