package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fail points of the naive strategy (the leader strategy uses the same with
// the prefix "leader:").
//
//	naive:reclaimed  after the round's start (reclaim and sweep, one script)
//	naive:counted    after ZCARD active
//	naive:popped     after ZPOPMIN: the popped users are in neither set
//	naive:added      after the add step, before the admission counter
type naive struct{}

func (naive) admit(ctx context.Context, e *Engine, r *RoundResult) error {
	now, set, err := e.prepare(ctx, r)
	if err != nil {
		return err
	}
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
		live, err := e.liveOnly(ctx, popped, now)
		if err != nil {
			return err
		}
		r.Dropped += len(popped) - len(live)
		if len(live) > 0 {
			adm, at, err := e.addActive(ctx, live, set)
			if err != nil {
				return err
			}
			if e.fail(fp + ":added") {
				return ErrKilled
			}
			e.numberAdmissions(ctx, adm, at)
			r.Admitted = append(r.Admitted, adm...)
		}
		// Dropped dead tickets left places free; fill them, within reason.
		if len(live) == len(popped) || r.Dropped >= maxDropsPerRound {
			return nil
		}
	}
}

// liveOnly returns the popped tickets whose liveness deadline is after now
// (the store's time at the start of the round). The dead ones keep their
// expired liveness entry, so the next round's sweep ends them.
func (e *Engine) liveOnly(ctx context.Context, popped []redis.Z, now time.Time) ([]redis.Z, error) {
	ex := make([]*redis.FloatCmd, len(popped))
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, z := range popped {
			ex[i] = p.ZScore(ctx, e.k.expiry, z.Member.(string))
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, err
	}
	live := popped[:0:0]
	for i, z := range popped {
		if dl, err := ex[i].Result(); err == nil && int64(dl) > now.UnixMilli() {
			live = append(live, z)
		}
	}
	return live, nil
}

// addActive admits tickets at once (the add operation of the script: active
// set, nonce, admission time, key lives), each with a fresh nonce.
func (e *Engine) addActive(ctx context.Context, zs []redis.Z, set Settings) ([]Admission, time.Time, error) {
	args := make([]any, 0, 2*len(zs))
	adm := make([]Admission, len(zs))
	for i, z := range zs {
		id := z.Member.(string)
		args = append(args, id, newNonce())
		adm[i] = Admission{Ticket: id, Arrival: int64(z.Score), Instance: e.opt.InstanceID}
	}
	res, err := e.script(ctx, "add", args...).Int64Slice()
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(res) != len(adm)+1 {
		return nil, time.Time{}, fmt.Errorf("queue: add script: unexpected reply %v", res)
	}
	now := res[0]
	for i := range adm {
		adm[i].Deadline = time.UnixMilli(now + min(set.Session, set.MaxSession).Milliseconds())
		adm[i].Waited = waitedMs(res[i+1])
	}
	return adm, time.UnixMilli(now), nil
}

// numberAdmissions records admissions in the shared counter and rate and
// numbers them from the counter. A failure here loses only the numbers.
func (e *Engine) numberAdmissions(ctx context.Context, adm []Admission, now time.Time) {
	if len(adm) == 0 {
		return
	}
	total, err := e.recordAdmissions(ctx, len(adm), now)
	if err != nil {
		return
	}
	for i := range adm {
		adm[i].Number = total - int64(len(adm)) + int64(i) + 1
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
