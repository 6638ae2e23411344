package queue

import (
	"context"
)

// Fail points of the leader strategy:
//
//	leader:reclaimed  after ZREMRANGEBYSCORE
//	leader:elected    after winning or keeping the lease
//	leader:counted, leader:popped, leader:added  as in naive
//
// The lease is SET wr:{q}:leader <instance> NX PX <period+margin>. The holder
// keeps it by renewing (GET, then PEXPIRE) at each of its rounds. Only the
// holder admits, naive-style.
//
// Lease-loss caveat: a lease is a promise about time, not a lock. If the
// holder stalls (GC pause, slow network, a slow store) longer than the lease,
// the key expires, another instance takes it and admits, and the old holder
// wakes up and finishes its round believing it still leads: two admitters,
// and the overshoot of naive returns for that round. The GET-then-PEXPIRE
// renewal has the same window. The engine detects it after the fact (the
// lease is not ours when the round ends) and counts it in LostLeases, but
// cannot prevent it. It also rests on SET NX being atomic in the store.
type leader struct{}

func (leader) admit(ctx context.Context, e *Engine, r *RoundResult) error {
	now, set, err := e.prepare(ctx, r)
	if err != nil {
		return err
	}
	if e.fail("leader:reclaimed") {
		return ErrKilled
	}
	lease := e.opt.Period + e.opt.LeaseMargin
	won, err := e.rdb.SetNX(ctx, e.k.leader, e.opt.InstanceID, lease).Result()
	if err != nil {
		return err
	}
	if !won {
		holder, err := e.rdb.Get(ctx, e.k.leader).Result()
		if err != nil && !isNil(err) {
			return err
		}
		if holder != e.opt.InstanceID {
			return nil
		}
		if err := e.rdb.PExpire(ctx, e.k.leader, lease).Err(); err != nil {
			return err
		}
	}
	r.Leader = true
	if e.fail("leader:elected") {
		return ErrKilled
	}
	if err := admitNaive(ctx, e, "leader", now, set, r); err != nil {
		return err
	}
	holder, err := e.rdb.Get(ctx, e.k.leader).Result()
	if err != nil && !isNil(err) {
		return err
	}
	if holder != e.opt.InstanceID {
		r.LostLease = true
		e.log.Warn("leader lease lost during a round", "holder", holder)
	}
	return nil
}
