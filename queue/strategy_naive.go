package queue

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fail points of the naive strategy (the leader strategy uses the same with
// the prefix "leader:").
//
//	naive:reclaimed  after ZREMRANGEBYSCORE
//	naive:counted    after ZCARD active
//	naive:popped     after ZPOPMIN: the popped users are in neither set
//	naive:added      after ZADD active, before the admission counter
type naive struct{}

func (naive) admit(ctx context.Context, e *Engine, now time.Time, set Settings, r *RoundResult) error {
	n, err := e.reclaim(ctx, now)
	if err != nil {
		return err
	}
	r.Reclaimed = n
	if e.fail("naive:reclaimed") {
		return ErrKilled
	}
	return admitNaive(ctx, e, "naive", now, set, r)
}

// admitNaive fills the free places: count, pop that many, add the live ones.
// Nothing stops another instance from doing the same between the count and
// the add; that is the overshoot.
func admitNaive(ctx context.Context, e *Engine, fp string, now time.Time, set Settings, r *RoundResult) error {
	for {
		count, err := e.rdb.ZCard(ctx, e.k.active).Result()
		if err != nil {
			return err
		}
		if e.fail(fp + ":counted") {
			return ErrKilled
		}
		free := int64(set.Slot) - count
		if free <= 0 {
			return nil
		}
		popped, err := e.rdb.ZPopMin(ctx, e.k.waiting, free).Result()
		if err != nil {
			return err
		}
		if len(popped) == 0 {
			return nil
		}
		if e.fail(fp + ":popped") {
			return ErrKilled
		}
		live, err := e.liveOnly(ctx, popped)
		if err != nil {
			return err
		}
		r.Dropped += len(popped) - len(live)
		if len(live) > 0 {
			adm, err := e.addActive(ctx, live, now, set)
			r.Admitted = append(r.Admitted, adm...)
			if err != nil {
				return err
			}
			if e.fail(fp + ":added") {
				return ErrKilled
			}
			e.numberAdmissions(ctx, adm, now)
		}
		// Dropped dead tickets left places free; fill them, within reason.
		if len(live) == len(popped) || r.Dropped >= maxDropsPerRound {
			return nil
		}
	}
}

// liveOnly returns the popped tickets whose liveness key exists.
func (e *Engine) liveOnly(ctx context.Context, popped []redis.Z) ([]redis.Z, error) {
	ex := make([]*redis.IntCmd, len(popped))
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, z := range popped {
			ex[i] = p.Exists(ctx, e.k.alive(z.Member.(string)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	live := popped[:0:0]
	for i, z := range popped {
		if ex[i].Val() == 1 {
			live = append(live, z)
		}
	}
	return live, nil
}

// addActive adds tickets to the active set with their session deadline and
// writes their passes, in one MULTI so a ticket is never active without a pass.
func (e *Engine) addActive(ctx context.Context, zs []redis.Z, now time.Time, set Settings) ([]Admission, error) {
	deadline := now.Add(set.Session)
	dl := float64(deadline.UnixMilli())
	members := make([]redis.Z, len(zs))
	adm := make([]Admission, len(zs))
	for i, z := range zs {
		id := z.Member.(string)
		members[i] = redis.Z{Score: dl, Member: id}
		adm[i] = Admission{Ticket: id, Arrival: int64(z.Score), Deadline: time.UnixMilli(deadline.UnixMilli()),
			Instance: e.opt.InstanceID}
	}
	_, err := e.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, e.k.active, members...)
		for _, a := range adm {
			p.Set(ctx, e.k.pass(a.Ticket), "1", set.Session)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return adm, nil
}

// numberAdmissions records admissions in the shared counter and rate and
// numbers them from the counter. A failure here loses only the numbers.
func (e *Engine) numberAdmissions(ctx context.Context, adm []Admission, now time.Time) {
	total, err := e.recordAdmissions(ctx, len(adm), now)
	if err != nil {
		return
	}
	for i := range adm {
		adm[i].Number = total - int64(len(adm)) + int64(i) + 1
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
