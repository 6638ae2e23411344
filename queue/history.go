package queue

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
)

// History of a queue for the admin dashboard (issue 19): every HistoryStep
// of the store's clock, the first instance to get there writes the active
// and waiting counts and the admissions so far to wr:{q}:hist (one script
// call, HSETNX on the step's field); HistoryKeep steps are kept (30 min).

const (
	HistoryStep = 10 * time.Second
	HistoryKeep = 180
)

// HistoryPoint is one step of a queue's history.
type HistoryPoint struct {
	At            time.Time
	Active        int64
	Waiting       int64
	AdmittedTotal int64
}

// recordHistory writes this step's point unless an instance did already;
// the loop calls it once per step of the local clock.
func (e *Engine) recordHistory(ctx context.Context) error {
	return e.script(ctx, "hist", int(HistoryStep/time.Second), HistoryKeep).Err()
}

// History returns the points of the last HistoryKeep steps, oldest first.
func (e *Engine) History(ctx context.Context) ([]HistoryPoint, error) {
	m, err := e.rdb.HGetAll(ctx, e.k.prefix+"hist").Result()
	if err != nil {
		return nil, err
	}
	out := make([]HistoryPoint, 0, len(m))
	for f, v := range m {
		b, err := strconv.ParseInt(f, 10, 64)
		parts := strings.Fields(v)
		if err != nil || len(parts) != 3 {
			continue
		}
		p := HistoryPoint{At: time.Unix(b*int64(HistoryStep/time.Second), 0)}
		p.Active, _ = strconv.ParseInt(parts[0], 10, 64)
		p.Waiting, _ = strconv.ParseInt(parts[1], 10, 64)
		p.AdmittedTotal, _ = strconv.ParseInt(parts[2], 10, 64)
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
