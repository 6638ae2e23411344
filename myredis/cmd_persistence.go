package myredis

import "strings"

// commandsPersistence registers the persistence commands:
//
//	BGREWRITEAOF  rewrites the AOF in the background (aof_rewrite.go)
//	BGSAVE        writes the RDB file in the background, a snapshot of the data
//	              as at the command (rdb_bgsave.go)
//	SAVE          writes the RDB file (rdb_file.go) while every other client
//	              waits, as Redis's SAVE blocks the server; +OK once the new file
//	              is fsynced and in place
func commandsPersistence() []*command {
	return []*command{
		{name: "bgrewriteaof", arity: 1, flags: flagAdmin | flagNoScript, fn: cmdBgrewriteaof},
		{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript, fn: cmdBgsave},
		{name: "save", arity: 1, flags: flagAdmin | flagNoScript | flagNoMulti, fn: cmdSave},
	}
}

func cmdBgrewriteaof(x *Ctx) {
	if x.startBackgroundRewrite() {
		x.w.Simple("Background append only file rewriting started")
	}
}

func cmdBgsave(x *Ctx) {
	if x.nargs() > 2 || (x.nargs() == 2 && !strings.EqualFold(x.arg(1), "schedule")) {
		x.err(msgSyntax)
		return
	}
	if err := x.s.startBgsave(); err != nil {
		x.err("ERR " + err.Error())
		return
	}
	x.w.Simple("Background saving started")
}

// startBackgroundRewrite starts a rewrite, or schedules it when called inside EXEC
// or a script (the rewrite must start between two jobs' worth of writes). It writes
// the reply itself unless it reports true.
func (x *Ctx) startBackgroundRewrite() bool {
	a := x.s.aof
	switch {
	case x.s.aofRewriting(): // aof_detached.go
		x.err(msgRewriteRunning)
	case (a != nil && a.wrapDepth > 0) || x.inMulti || x.inScript:
		x.s.scheduleRewrite()
		x.w.Simple("Background append only file rewriting scheduled")
	case a == nil: // appendonly no: Redis rewrites anyway
		if err := x.s.startDetachedRewrite(); err != nil {
			x.err(msgRewriteFailed)
			return false
		}
		return true
	default:
		if err := a.startRewrite(); err != nil {
			x.err("ERR " + err.Error())
			return false
		}
		return true
	}
	return false
}

func cmdSave(x *Ctx) {
	if x.inMulti || x.inScript {
		x.err(msgNotAllowedMulti)
		return
	}
	if x.s.bgsave != nil {
		x.err("ERR " + errBgsaveRunning.Error())
		return
	}
	if err := x.s.saveRDB(); err != nil {
		x.err("ERR") // Redis's shared.err; the log says why
		return
	}
	x.ok()
}
