package queue

import (
	"context"
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// waitroomSrc holds every step of a ticket's life and the atomic strategy's
// round (scripts/waitroom.lua), one operation per call.
//
//go:embed scripts/waitroom.lua
var waitroomSrc string

// waitroomScript runs by EVALSHA and falls back to EVAL when the store does
// not have it cached yet (go-redis Script.Run), e.g. after a restart.
var waitroomScript = redis.NewScript(waitroomSrc)

// script runs operation op of scripts/waitroom.lua with args. It passes this
// instance's default settings so that a store that lost them (restarted
// empty) gets them back at once.
func (e *Engine) script(ctx context.Context, op string, args ...any) *redis.Cmd {
	d := e.opt.Defaults
	argv := append([]any{e.k.prefix, d.Slot, d.Session.Milliseconds(), d.TicketTTL.Milliseconds(),
		d.MaxSession.Milliseconds(), op}, args...)
	if e.opt.WaitReplicas > 0 {
		return e.scriptThenWait(ctx, op, argv) // durable.go
	}
	return waitroomScript.Run(ctx, e.rdb, e.k.scriptKeys(), argv...)
}

// isNoScript tells whether err is the store refusing EVAL itself.
func isNoScript(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}
