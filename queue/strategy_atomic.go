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
// The round is one script (operation round of scripts/waitroom.lua): reclaim,
// sweep dead tickets, count, pop live heads up to the free places, admit each
// with a nonce (its admission number), count the admissions, all by the
// store's clock. The store runs a script as one command, so no
// observer ever sees the active set over the slot, and an instance that dies
// at any moment has either run the whole round or none of it: nobody is lost.
// It needs EVAL in the store.
type atomicScript struct{}

func (atomicScript) admit(ctx context.Context, e *Engine, r *RoundResult) error {
	if e.fail("atomic:before") {
		return ErrKilled
	}
	res, err := e.script(ctx, "round", maxDropsPerRound).Slice()
	if err != nil {
		return err
	}
	if len(res) < 5 {
		return fmt.Errorf("queue: round script: unexpected reply %v", res)
	}
	nd := int(toInt(res[4]))
	if nd < 0 || len(res)-5 < nd || (len(res)-5-nd)%4 != 0 {
		return fmt.Errorf("queue: round script: unexpected reply %v", res)
	}
	now := toInt(res[0])
	r.Reclaimed = toInt(res[1])
	r.Dropped = int(toInt(res[2]))
	deadline := time.UnixMilli(now + toInt(res[3]))
	for _, a := range res[len(res)-nd:] {
		r.Left = append(r.Left, toInt(a))
	}
	for i := 5; i < len(res)-nd; i += 4 {
		id, _ := res[i].(string)
		r.Admitted = append(r.Admitted, Admission{
			Ticket:   id,
			Arrival:  toInt(res[i+1]),
			Number:   toInt(res[i+2]),
			Deadline: deadline,
			Instance: e.opt.InstanceID,
			Waited:   waitedMs(toInt(res[i+3])),
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
