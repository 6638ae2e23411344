package myredis

import (
	"math"
	"strings"
	"time"
)

// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as Redis 7.0.15's
// pauseClients: while a pause lasts, a command it covers is not refused but
// postponed. Its client waits (a blocked client, flag b, counted by INFO's
// blocked_clients) with the rest of its pipeline until the pause ends, then
// the command runs from the start, as if it had just arrived. The executor
// keeps serving everyone else. A WRITE pause covers what may reach the
// replication stream: write commands, EVAL/EVALSHA/FCALL unless their script
// declares no-writes, PUBLISH, SPUBLISH, PFCOUNT, and an EXEC whose
// transaction holds one of these. An ALL pause covers every command. Clients
// of replication (a replica's link, the master's link on a replica) and
// internal clients are never paused. While paused the dataset stands still:
// no active expiry, no eviction, and an expired key reads as missing without
// being deleted (db.go). Runs on the executor goroutine.

// pauseKind is how much a pause covers; a larger kind is more restrictive.
type pauseKind uint8

const (
	pauseOff pauseKind = iota
	pauseWrite
	pauseAll
)

// pauseState is the executor's pause: its kind, its end and the clients
// waiting for it.
type pauseState struct {
	kind      pauseKind
	endMs     int64     // unix ms: the pause ends once the clock passes it
	postponed []*Client // in the order they were stopped
	// writing: a write runs during the pause (one queued in the EXEC that
	// paused, a replication client's): it sees and deletes expired keys as
	// usual, so it never adds a key that is still there
	writing bool
}

// runPaused runs x's command while a pause is in force, noting whether it
// writes (expireIfNeeded, db.go).
func (s *Server) runPaused(x *Ctx) {
	saved := s.pause.writing
	s.pause.writing = saved || x.cmd.flags&flagWrite != 0
	x.cmd.fn(x)
	s.pause.writing = saved
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL].
func (x *Ctx) clientPause() {
	kind := pauseAll
	if x.nargs() == 4 {
		switch {
		case x.argIs(3, "write"):
			kind = pauseWrite
		case x.argIs(3, "all"):
		default:
			x.err(msgPauseMode)
			return
		}
	}
	ms, ok := x.timeoutArg(2)
	if !ok {
		return
	}
	end := int64(0) // 0: a pause already over, as Redis's
	if ms > 0 {
		end = x.s.clock.Now().UnixMilli() + min(ms, math.MaxInt64/2)
	}
	x.s.pauseClients(kind, end)
	x.ok()
}

// timeoutArg parses a timeout in milliseconds as Redis's
// getTimeoutFromObjectOrReply: an integer, not negative.
func (x *Ctx) timeoutArg(i int) (int64, bool) {
	ms, ok := parseRedisInt(x.args[i])
	if !ok {
		x.err(msgTimeoutNotInt)
		return 0, false
	}
	if ms < 0 {
		x.err(msgTimeoutNegative)
		return 0, false
	}
	return ms, true
}

// pauseClients starts a pause or widens the one running: the more
// restrictive kind and the later end win, as Redis's pauseClients.
func (s *Server) pauseClients(kind pauseKind, endMs int64) {
	p := &s.pause
	p.kind = max(p.kind, kind)
	p.endMs = max(p.endMs, endMs)
	d := time.Duration(endMs-s.clock.Now().UnixMilli())*time.Millisecond + time.Millisecond
	time.AfterFunc(d, func() { s.toExecutor(s.checkPauseEnd) })
}

// unpauseClients ends the pause and lets the postponed clients run again.
func (s *Server) unpauseClients() {
	s.pause.kind, s.pause.endMs = pauseOff, 0
	if s.repl.failover.state != failoverNone { // FAILOVER's own pause lasts until it ends (failover.go)
		s.pause.kind, s.pause.endMs = pauseWrite, failoverPauseEnd
	}
	s.releasePostponed()
}

// paused reports whether a pause is in force, ending one whose time has come.
func (s *Server) paused() bool {
	if s.pause.kind == pauseOff {
		return false
	}
	s.checkPauseEnd()
	return s.pause.kind != pauseOff
}

// checkPauseEnd ends the pause once its time has passed (the timer started by
// pauseClients, and every look at the pause).
func (s *Server) checkPauseEnd() {
	if s.pause.kind != pauseOff && s.clock.Now().UnixMilli() > s.pause.endMs {
		s.unpauseClients()
	}
}

// releasePostponed wakes every postponed client: its connection sends the
// command again, which runs, or is postponed again if a pause came back.
func (s *Server) releasePostponed() {
	waiting := s.pause.postponed
	s.pause.postponed = nil
	for _, c := range waiting {
		if c.blocked == nil || !c.blocked.postponed {
			continue
		}
		c.blocked = nil
		c.argvMem, c.argc = 0, 0
		c.blockOut.Reset()
		s.release(c.wake)
	}
}

// pausesCall reports whether the pause in force stops cmd for c now.
func (s *Server) pausesCall(c *Client, cmd *command, args [][]byte) bool {
	if c.conn == nil || c.replica != nil || c == s.repl.mc || !s.paused() {
		return false
	}
	return s.pause.kind == pauseAll || s.mayReplicate(c, cmd, args)
}

// postpone stops c before cmd: runBatch keeps cmd and the rest of the batch
// in c.pending and the connection waits for releasePostponed.
func (s *Server) postpone(c *Client) {
	c.blocked = &blockState{postponed: true}
	s.pause.postponed = append(s.pause.postponed, c)
}

// dropPostponed takes c off the postponed list (c is closed or unblocked).
func (s *Server) dropPostponed(c *Client) {
	for i, o := range s.pause.postponed {
		if o == c {
			s.pause.postponed = append(s.pause.postponed[:i], s.pause.postponed[i+1:]...)
			return
		}
	}
}

// mayReplicateCommands are the commands Redis 7.0.15 flags MAY_REPLICATE
// (src/commands/*.json; COMMAND INFO does not show the flag).
var mayReplicateCommands = []string{"eval", "evalsha", "fcall", "pfcount", "publish", "spublish"}

// markMayReplicate sets flagMayReplicate from mayReplicateCommands.
func markMayReplicate(t commandTable) {
	for _, name := range mayReplicateCommands {
		if c := t[name]; c != nil {
			c.flags |= flagMayReplicate
		}
	}
}

// mayReplicate is Redis's is_may_replicate_command: cmd writes or may add to
// the replication stream. A script's own flags decide for EVAL, EVALSHA and
// FCALL (Redis's evalGetCommandFlags and fcallGetCommandFlags); EXEC may
// replicate when its transaction holds a command that may.
func (s *Server) mayReplicate(c *Client, cmd *command, args [][]byte) bool {
	if cmd.flags&flagWrite != 0 {
		return true
	}
	if cmd.name == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if q.cmd.flags&flagWrite != 0 || (q.cmd.flags&flagMayReplicate != 0 && s.scriptMayWrite(q.cmd, q.args)) {
				return true
			}
		}
		return false
	}
	return cmd.flags&flagMayReplicate != 0 && s.scriptMayWrite(cmd, args)
}

// scriptMayWrite is false only for a script known to declare no-writes: an
// EVAL's body with its shebang, a cached EVALSHA, an FCALL of a function
// registered with the flag. Other may-replicate commands always may.
func (s *Server) scriptMayWrite(cmd *command, args [][]byte) bool {
	switch cmd.name {
	case "eval", "evalsha":
		if len(args) < 2 {
			return true
		}
		flagged, noWrites, ok := s.scriptFlags(cmd.name == "evalsha", string(args[1]))
		return !ok || !flagged || !noWrites
	case "fcall":
		if len(args) < 2 {
			return true
		}
		if fd := s.functionLibs().funcs[strings.ToLower(string(args[1]))]; fd != nil {
			return fd.flags&scriptFlagNoWrites == 0
		}
	}
	return true
}

// scriptFlags reads an EVAL body's shebang flags, or a cached script's for
// EVALSHA. ok is false when nothing is known (an EVALSHA not in the cache, a
// shebang that does not parse).
func (s *Server) scriptFlags(bySHA bool, text string) (flagged, noWrites, ok bool) {
	if s.lua != nil {
		sha := text
		if !bySHA {
			sha = sha1hex([]byte(text))
		}
		if sc := s.lua.scripts[strings.ToLower(sha)]; sc != nil {
			return sc.flagged, sc.noWrites, true
		}
	}
	if bySHA {
		return false, false, false
	}
	if len(text) < 2 || text[:2] != "#!" {
		return false, false, true
	}
	_, flags, errMsg := parseShebang(text)
	return true, flags&scriptFlagNoWrites != 0, errMsg == ""
}
