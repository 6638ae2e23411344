package myredis

import "strings"

// commandsShutdown registers SHUTDOWN. MyRedis has no RDB snapshot: its data is
// saved through the append-only file, which every shutdown flushes and fsyncs (as
// Redis does). So SAVE (or a configured save point) is satisfied by the AOF; with
// appendonly no there is nothing to save to and the shutdown fails as a failed
// RDB save fails Redis's, unless FORCE. There are no replicas to wait for, so NOW
// changes nothing and ABORT never finds a shutdown in progress.
func commandsShutdown() []*command {
	return []*command{
		{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | flagNoMulti, fn: cmdShutdown},
	}
}

// shutdownFlags are SHUTDOWN's options.
type shutdownFlags struct {
	nosave, save, now, force, abort bool
}

// parseShutdown reads SHUTDOWN's options as Redis 7.0 does: any unknown word,
// ABORT with anything else, or SAVE with NOSAVE is a syntax error.
func parseShutdown(args [][]byte) (shutdownFlags, bool) {
	var f shutdownFlags
	for _, a := range args {
		switch strings.ToLower(string(a)) {
		case "nosave":
			f.nosave = true
		case "save":
			f.save = true
		case "now":
			f.now = true
		case "force":
			f.force = true
		case "abort":
			f.abort = true
		default:
			return f, false
		}
	}
	if f.abort && (f.nosave || f.save || f.now || f.force) || f.nosave && f.save {
		return f, false
	}
	return f, true
}

func cmdShutdown(x *Ctx) {
	f, ok := parseShutdown(x.args[1:])
	switch {
	case !ok:
		x.err(msgSyntax)
	case f.abort:
		x.err(msgNoShutdown)
	case !x.s.shutdownSaves(f):
		x.err(msgShutdownFailed)
	default:
		x.s.log.Warn("user requested shutdown")
		x.s.beginShutdown()
		x.c.closing = true // no reply: the connection closes with the server
	}
}

// shutdownSaves checks that a shutdown asked to save can: the AOF is the only way
// MyRedis saves. Runs on the executor.
func (s *Server) shutdownSaves(f shutdownFlags) bool {
	wantSave := f.save || (!f.nosave && len(s.cfg.Save) > 0)
	if !wantSave || s.aof != nil {
		return true
	}
	s.log.Warn("cannot save before shutdown: MyRedis saves only through the append-only file (appendonly is no)")
	if f.force {
		s.log.Warn("FORCE: shutting down without saving")
		return true
	}
	s.log.Warn("errors trying to shut down the server; check the logs")
	return false
}

// beginShutdown stops the server without waiting for the executor (it may be the
// executor calling): nothing queued after this runs, and Close flushes and fsyncs
// the AOF, removes the pidfile and stops the executor.
func (s *Server) beginShutdown() {
	s.stopping.Store(true)
	go s.Close()
}

// answerBusyShutdown is SHUTDOWN arriving while a script has run past
// lua-time-limit (connection goroutine, see answerBusy): only NOSAVE may stop the
// server then, killing the script even if it has written, as in Redis.
func (s *Server) answerBusyShutdown(c *Client, args [][]byte) {
	f, ok := parseShutdown(args[1:])
	switch {
	case !ok:
		c.out.Error(msgSyntax)
	case f.abort:
		c.out.Error(msgNoShutdown)
	case !f.nosave:
		c.out.Error(msgBusy)
	default:
		s.log.Warn("user requested shutdown while a script was busy")
		s.beginShutdown()
	}
}
