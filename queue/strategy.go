package queue

import (
	"context"
	"fmt"
)

// Strategy names an admission strategy.
type Strategy string

const (
	// Naive reads ZCARD, pops (slot - count) and adds them to the active set.
	// Correct with one instance; with several it overshoots the slot. It
	// exists to show that.
	Naive Strategy = "naive"
	// Leader lets only the holder of a lease (SET NX PX) admit, naive-style.
	Leader Strategy = "leader"
	// Optimistic is the design note's: every instance admits one user at a
	// time with ZPOPMIN, ZADD active, ZCARD, and undoes the admission when the
	// count is over the slot.
	Optimistic Strategy = "optimistic"
	// Atomic runs the whole round as one Lua script: no transient overshoot,
	// nobody lost if an instance dies. The default.
	Atomic Strategy = "atomic"
)

// Strategies lists every strategy.
var Strategies = []Strategy{Naive, Leader, Optimistic, Atomic}

// ParseStrategy parses a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	for _, st := range Strategies {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("queue: unknown strategy %q (want naive, leader, optimistic or atomic)", s)
}

// A strategy runs the admission part of one round. It records what it did
// in r and returns ErrKilled when a fail point killed the instance.
type strategy interface {
	admit(ctx context.Context, e *Engine, r *RoundResult) error
}

func newStrategy(s Strategy) (strategy, error) {
	switch s {
	case Naive:
		return naive{}, nil
	case Leader:
		return leader{}, nil
	case Optimistic:
		return optimistic{}, nil
	case Atomic:
		return atomicScript{}, nil
	}
	_, err := ParseStrategy(string(s))
	return nil, err
}

// maxDropsPerRound bounds how many dead tickets one round may discard (at
// the head and by the sweep of liveness deadlines), so a round stays short
// when many holders left at once.
const maxDropsPerRound = 1000
