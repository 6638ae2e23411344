package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Fail points of the atomic strategy:
//
//	atomic:before  before the script is sent
//	atomic:after   after the script returned, before the hooks
//
// The round is one script (scripts/admit.lua): reclaim, count, pop live heads
// up to the free places, drop dead tickets, add to the active set with a
// pass, count the admissions. The store runs a script as one command, so no
// observer ever sees the active set over the slot, and an instance that dies
// at any moment has either run the whole round or none of it: nobody is lost.
// It needs EVAL in the store.
type atomicScript struct{}

func (atomicScript) admit(ctx context.Context, e *Engine, now time.Time, set Settings, r *RoundResult) error {
	if e.fail("atomic:before") {
		return ErrKilled
	}
	nowMs := now.UnixMilli()
	res, err := admitScript.Run(ctx, e.rdb,
		[]string{e.k.waiting, e.k.active, e.k.settings, e.k.admitted, e.k.rate},
		nowMs, e.k.prefix, now.Unix(), maxDropsPerRound).Slice()
	if err != nil {
		return err
	}
	if len(res) < 3 || (len(res)-3)%2 != 0 {
		return fmt.Errorf("queue: admit script: unexpected reply %v", res)
	}
	r.Reclaimed = toInt(res[0])
	r.Dropped = int(toInt(res[1]))
	total := toInt(res[2])
	n := int64((len(res) - 3) / 2)
	deadline := time.UnixMilli(nowMs + set.Session.Milliseconds())
	for i := int64(0); i < n; i++ {
		id, _ := res[3+2*i].(string)
		r.Admitted = append(r.Admitted, Admission{
			Ticket:   id,
			Arrival:  toInt(res[4+2*i]),
			Number:   total - n + i + 1,
			Deadline: deadline,
			Instance: e.opt.InstanceID,
		})
	}
	if e.fail("atomic:after") {
		return ErrKilled
	}
	return nil
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}
