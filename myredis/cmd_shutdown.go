package myredis

import "strings"

// commandsShutdown registers SHUTDOWN. As in Redis, SAVE (or a configured save
// point, unless NOSAVE) writes the RDB file first, and a failed save stops the
// shutdown unless FORCE; the append-only file, if on, is flushed and fsynced by
// every shutdown. There are no replicas to wait for, so NOW changes nothing and
// ABORT never finds a shutdown in progress.
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

// shutdownSaves writes the RDB file if the shutdown is to save, and reports
// whether the shutdown may go on. Runs on the executor.
func (s *Server) shutdownSaves(f shutdownFlags) bool {
	s.sup.Stopping() // systemd (supervise.go), as Redis, before the save
	wantSave := f.save || (!f.nosave && len(s.cfg.Save) > 0)
	if !wantSave {
		return true
	}
	s.abortBgsave() // as Redis kills its child: the save below replaces it
	s.log.Info("saving the final RDB snapshot before exiting")
	s.sup.status("STATUS=Saving the final RDB snapshot\n")
	if err := s.saveRDB(); err == nil {
		return true
	}
	if f.force {
		s.log.Warn("error trying to save the DB, exiting anyway (SHUTDOWN FORCE)")
		return true
	}
	s.log.Warn("errors trying to shut down the server; check the logs")
	s.sup.status("STATUS=Error trying to save the DB, can't exit.\n")
	return false
}

// ShutdownOnSignal saves the RDB file, when save points are set, before a
// signal stops the server (as Redis on SIGTERM); then the caller Closes.
func (s *Server) ShutdownOnSignal() {
	s.submit(func() { s.shutdownSaves(shutdownFlags{}) })
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
