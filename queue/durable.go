package queue

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Writes that survive a failover: with Options.WaitReplicas set, each script
// is sent in one pipeline with WAIT numreplicas timeout behind it, so both run
// on the same connection and WAIT covers the script's writes (Redis's WAIT
// counts the writes of its own connection). The script's reply is returned
// whatever WAIT says: its writes are done on the master and cannot be taken
// back; a WAIT that saw fewer replicas than asked (a replica down, a slow
// link) is counted in WaitShort and logged ("WAIT short", with the operation),
// and the write may then be lost if the master dies before its replicas get it.

// waitShort counts WAITs answered with fewer replicas than asked, all engines.
var waitShort atomic.Int64

// WaitShort is how many WAITs after a script saw fewer replicas than asked.
func WaitShort() int64 { return waitShort.Load() }

// scriptThenWait runs the script (EVALSHA, then EVAL when the store does not
// have it, as after a failover) followed by WAIT on the same connection.
func (e *Engine) scriptThenWait(ctx context.Context, op string, argv []any) *redis.Cmd {
	keys := e.k.scriptKeys()
	ms := e.opt.WaitTimeout.Milliseconds()
	run := func(eval bool) (*redis.Cmd, *redis.Cmd) {
		p := e.rdb.Pipeline()
		var cmd *redis.Cmd
		if eval {
			cmd = waitroomScript.Eval(ctx, p, keys, argv...)
		} else {
			cmd = waitroomScript.EvalSha(ctx, p, keys, argv...)
		}
		wait := p.Do(ctx, "WAIT", e.opt.WaitReplicas, ms)
		p.Exec(ctx)
		return cmd, wait
	}
	cmd, wait := run(false)
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd, wait = run(true)
	}
	if n, err := wait.Int(); cmd.Err() == nil && (err != nil || n < e.opt.WaitReplicas) {
		waitShort.Add(1)
		e.log.Warn("WAIT short", "op", op, "replicas", n, "want", e.opt.WaitReplicas, "err", err)
	}
	return cmd
}
