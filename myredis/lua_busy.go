package myredis

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A script that runs too long: BUSY and SCRIPT KILL.
//
// While the executor is inside a script it runs nothing else, so it cannot answer
// anyone. Redis, single-threaded too, answers from inside the script's hook; here
// the connection goroutines answer instead. When a script has run for
// lua-time-limit, a watchdog marks the server busy and wakes every connection whose
// batch waits behind the script: each takes its batch back (it was never started)
// and answers it itself, as does every connection whose batch arrives later. All
// commands get BUSY except SCRIPT KILL, which cancels the script's context.
// gopher-lua checks that context before every instruction, so the script stops at
// its next one with Redis's "Script killed" error, and stops again at the next if
// it pcalls around it. A script that has written cannot be killed: it would leave
// a half-done change behind (UNKILLABLE), so everyone waits for it to finish.

// scriptGuard is the script state shared between the executor and connection
// goroutines.
type scriptGuard struct {
	limitMs *atomic.Int64                 // lua-time-limit (the server's live setting)
	startNs atomic.Int64                  // when the running script started (real time); 0: none
	busy    atomic.Bool                   // the running script has passed the limit
	signal  atomic.Pointer[chan struct{}] // closed when busy is set, then replaced

	mu       sync.Mutex
	script   runningScript // what runs now (FUNCTION STATS, KILL)
	command  [][]byte      // its command line: the caller's, not copied (see describe)
	running  bool
	wrote    bool
	killed   bool
	cancel   context.CancelFunc
	quit     <-chan struct{} // the server's: stops the watchdog
	watching bool            // the watchdog runs (executor only)
}

func (g *scriptGuard) init(limitMs *atomic.Int64, quit <-chan struct{}) {
	g.limitMs = limitMs
	g.quit = quit
	ch := make(chan struct{})
	g.signal.Store(&ch)
}

// begin marks a script as running. Executor only.
func (g *scriptGuard) begin(cancel context.CancelFunc) {
	g.mu.Lock()
	g.running, g.wrote, g.killed, g.cancel = true, false, false, cancel
	g.mu.Unlock()
	g.startNs.Store(time.Now().UnixNano())
	if !g.watching {
		g.watching = true
		go g.watchdog()
	}
}

// describe records what runs and the command that runs it. Executor only.
// The command line is the caller's own, which stays put until the script ends
// (end forgets it under the lock); runningInfo copies it. A copy here, for
// every script, was a dozen small strings of garbage in the size classes of
// the keys a script writes (docs/performance.md, issue #15).
func (g *scriptGuard) describe(rs runningScript, args [][]byte) {
	g.mu.Lock()
	g.script, g.command = rs, args
	g.mu.Unlock()
}

// runningInfo is FUNCTION STATS' running_script: ok false when nothing runs.
func (g *scriptGuard) runningInfo() (rs runningScript, cmd []string, durationMs int64, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.running {
		return rs, nil, 0, false
	}
	start := g.startNs.Load()
	cmd = make([]string, len(g.command))
	for i, a := range g.command {
		cmd[i] = string(a)
	}
	return g.script, cmd, (time.Now().UnixNano() - start) / 1e6, true
}

// isFunction reports whether the running script is a function (FCALL).
func (g *scriptGuard) isFunction() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running && g.script.function
}

// end marks the script as finished. Executor only.
func (g *scriptGuard) end() {
	g.startNs.Store(0)
	g.busy.Store(false)
	g.mu.Lock()
	g.running, g.cancel, g.command = false, nil, nil
	g.mu.Unlock()
}

// watchdog looks at the running script a few times per lua-time-limit (and at
// least every 100 ms) and marks the server busy once the script passes it. It
// starts with the first script and stops with the server.
func (g *scriptGuard) watchdog() {
	period := func() time.Duration {
		return min(max(time.Duration(g.limitMs.Load())*time.Millisecond/10, time.Millisecond), 100*time.Millisecond)
	}
	t := time.NewTimer(period())
	defer t.Stop()
	for {
		select {
		case <-g.quit:
			return
		case <-t.C:
		}
		limit := g.limitMs.Load() * int64(time.Millisecond)
		if start := g.startNs.Load(); start != 0 && limit > 0 && !g.busy.Load() &&
			time.Now().UnixNano()-start >= limit {
			g.fire(start)
		}
		t.Reset(period())
	}
}

// fire marks the script that started at start busy and wakes the waiters.
func (g *scriptGuard) fire(start int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.running || g.startNs.Load() != start {
		return // it ended meanwhile
	}
	g.busy.Store(true)
	old := g.signal.Load()
	ch := make(chan struct{})
	g.signal.Store(&ch)
	close(*old)
}

// busySignal returns a channel that is closed when the running (or next) script
// passes lua-time-limit. Take it before checking isBusy, so no wake-up is missed.
func (g *scriptGuard) busySignal() <-chan struct{} { return *g.signal.Load() }

// isBusy reports whether a script has been running longer than lua-time-limit.
func (g *scriptGuard) isBusy() bool { return g.busy.Load() }

// markWrite records the script's first write; false if it was killed first.
// Executor only.
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

// abort stops the running script even if it has written: the server is
// shutting down (what Redis's SHUTDOWN NOSAVE does to such a script).
func (g *scriptGuard) abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running && !g.killed {
		g.killed = true
		g.cancel()
	}
}

// kill is SCRIPT KILL (function false) or FUNCTION KILL (true), from any
// goroutine: "" for OK, else the error text. Each stops only its own kind.
func (g *scriptGuard) kill(function bool) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case !g.running:
		return msgNotBusy
	case g.wrote:
		return msgUnkillable
	case !function && g.script.function:
		return msgBusyFunction
	case function && !g.script.function:
		return msgBusy
	}
	if !g.killed {
		g.killed = true
		g.cancel()
	}
	return ""
}
