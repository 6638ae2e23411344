package myredis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// scriptGuard is the one piece of script state shared with connection goroutines.
// While the executor is inside a script it cannot read commands, so once the
// script has run past lua-time-limit each connection goroutine answers its own
// clients: BUSY for everything but SCRIPT KILL, which cancels the script's
// context. gopher-lua checks that context before every instruction, so the
// script stops at its next instruction with Redis's "Script killed" error (and
// keeps stopping if it pcalls around it). A script that has written cannot be
// killed: it would leave a half-done change behind.
type scriptGuard struct {
	startNs atomic.Int64 // when the running script started; 0 when none runs
	limitMs atomic.Int64 // lua-time-limit; <= 0: never busy

	mu      sync.Mutex
	running bool
	wrote   bool
	killed  bool
	cancel  context.CancelFunc
}

// begin marks a script as running. Executor only.
func (g *scriptGuard) begin(now time.Time, cancel context.CancelFunc) {
	g.mu.Lock()
	g.running, g.wrote, g.killed, g.cancel = true, false, false, cancel
	g.mu.Unlock()
	g.startNs.Store(now.UnixNano())
}

// end marks the script as finished. Executor only.
func (g *scriptGuard) end() {
	g.startNs.Store(0)
	g.mu.Lock()
	g.running, g.cancel = false, nil
	g.mu.Unlock()
}

// markWrite records the script's first write; false if it was killed first.
func (g *scriptGuard) markWrite() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed {
		return false
	}
	g.wrote = true
	return true
}

func (g *scriptGuard) wasKilled() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.killed
}

// kill is SCRIPT KILL, from any goroutine: "" for OK, else the error text.
func (g *scriptGuard) kill() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.running:
		return msgNotBusy
	case g.wrote:
		return msgUnkillable
	}
	if !g.killed {
		g.killed = true
		g.cancel()
	}
	return ""
}

// busy reports whether a script has been running longer than lua-time-limit.
// It costs one atomic load when no script runs.
func (g *scriptGuard) busy(clock Clock) bool {
	start := g.startNs.Load()
	if start == 0 {
		return false
	}
	limit := g.limitMs.Load()
	return limit > 0 && clock.Now().UnixNano()-start >= limit*int64(time.Millisecond)
}
