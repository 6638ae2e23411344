package myredis

import (
	"strings"
)

// commandsScripting registers EVAL and friends and SCRIPT.
func commandsScripting() []*command {
	return []*command{
		{name: "eval", arity: -3, flags: flagNoScript, fn: evalCmd(false, false)},
		{name: "evalsha", arity: -3, flags: flagNoScript, fn: evalCmd(true, false)},
		{name: "eval_ro", arity: -3, flags: flagNoScript | flagReadonly, fn: evalCmd(false, true)},
		{name: "evalsha_ro", arity: -3, flags: flagNoScript | flagReadonly, fn: evalCmd(true, true)},
		{name: "script", arity: -2, flags: flagNoScript, fn: cmdScript, subs: subcommands(map[string]int{
			"load": 3, "exists": -3, "flush": -2, "kill": 2, "debug": 3, "help": 2,
		})},
	}
}

// evalCmd builds EVAL (body), EVALSHA (by SHA1) and their read-only forms.
// EVAL is not flagged write: the commands the script runs are propagated one by
// one (wrapped as a unit), never the EVAL itself.
func evalCmd(bySHA, readOnly bool) func(x *Ctx) {
	return func(x *Ctx) {
		if bySHA && len(x.args[1]) != 40 {
			x.err(msgNoScript)
			return
		}
		numkeys, ok := x.argInt(2)
		if !ok {
			return
		}
		switch {
		case numkeys > int64(x.nargs()-3):
			x.err(msgNumKeysTooMany)
			return
		case numkeys < 0:
			x.err(msgNumKeysNegative)
			return
		}
		e := x.s.luaEngine()
		var sc *luaScript
		if bySHA {
			if sc = e.scripts[string(x.args[1])]; sc == nil {
				sc = e.scripts[strings.ToLower(x.arg(1))]
			}
			if sc == nil {
				x.err(msgNoScript)
				return
			}
		} else if sc = e.load(x, x.args[1]); sc == nil {
			return
		}
		keys := x.args[3 : 3+numkeys]
		e.run(x, sc, keys, x.args[3+numkeys:], readOnly)
	}
}

// load returns the cached script for body, compiling and caching it on first
// sight. On a compile error it writes the error to x and returns nil.
func (e *luaEngine) load(x *Ctx, body []byte) *luaScript {
	sha := sha1hex(body)
	if sc := e.scripts[sha]; sc != nil {
		return sc
	}
	sc, errMsg := e.compile(string(body), sha)
	if errMsg != "" {
		x.err(errMsg)
		return nil
	}
	e.cacheScript(sc, len(body)) // memory_parts.go
	return sc
}

func cmdScript(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch strings.ToLower(x.arg(1)) {
	case "load":
		if sc := x.s.luaEngine().load(x, x.args[2]); sc != nil {
			x.w.BulkString(sc.sha)
		}
	case "exists":
		x.w.Array(x.nargs() - 2)
		for _, sha := range x.args[2:] {
			found := x.s.lua != nil && x.s.lua.scripts[strings.ToLower(string(sha))] != nil
			x.w.Bool(found)
		}
	case "flush":
		if x.nargs() > 3 || (x.nargs() == 3 && !x.argIs(2, "sync") && !x.argIs(2, "async")) {
			x.err(msgScriptFlushOption)
			return
		}
		if x.s.lua != nil {
			x.s.addEvalCacheMem(-x.s.lua.evalCacheMem()) // memory_parts.go
			x.s.lua.close()
			x.s.lua = nil
		}
		x.ok()
	case "kill":
		// Run here, on the executor, no script is running: while one runs, a
		// connection goroutine answers SCRIPT KILL itself (see answerBusy).
		if msg := x.s.scriptGuard.kill(false); msg != "" {
			x.err(msg)
			return
		}
		x.ok()
	case "debug":
		switch {
		case x.argIs(2, "no"):
			x.ok()
		case x.argIs(2, "yes"), x.argIs(2, "sync"):
			x.err(msgScriptDebugUnsupported)
		default:
			x.err(msgScriptDebugOption)
		}
	case "help":
		x.help(scriptHelp)
	}
}

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

// answerBusy runs on a connection goroutine when its batch arrives while a
// script has been running longer than lua-time-limit. The executor is inside the
// script, so the connection answers by itself, as Redis does from inside its
// script hook: SCRIPT KILL acts, everything else is refused with BUSY (unknown
// commands and wrong arity are still reported as such). A refused command of an
// open MULTI makes its EXEC abort, as any rejected command does.
func (s *Server) answerBusy(c *Client) []byte {
	c.out.Reset()
	for _, cmd := range c.cmds {
		args := cmd.Args
		if len(args) == 0 {
			continue
		}
		ct := s.table.lookup(args[0])
		var sub *command
		if ct != nil && ct.subs != nil && len(args) >= 2 {
			sub = ct.subcommand(args[1])
		}
		switch {
		case ct == nil:
			c.out.Error(errUnknownCommand(args))
		case ct.subs != nil && len(args) >= 2 && sub == nil:
			c.out.Error(errUnknownSubcommand(args))
		case sub != nil && !sub.arityOK(len(args)):
			c.out.Error(errArity(sub.name))
		case !ct.arityOK(len(args)):
			c.out.Error(errArity(ct.name))
		case ct.name == "shutdown":
			s.answerBusyShutdown(c, args)
			continue
		case sub != nil && (sub.name == "script|kill" || sub.name == "function|kill"):
			if msg := s.scriptGuard.kill(sub.name == "function|kill"); msg != "" {
				c.out.Error(msg)
			} else {
				c.out.OK()
			}
			continue
		case sub != nil && sub.name == "function|stats":
			s.writeFunctionStats(&c.out)
			continue
		case ct.name == "exec":
			// As Redis rejects EXEC: the transaction is discarded, and says why.
			c.out.Error(msgExecAbortBecause + s.busyMessage())
			c.busyExecAbort.Store(true)
			c.busyMulti.Store(false)    // a MULTI answered during this wait ends here too
			c.busyRejected.Store(false) // what it lost to BUSY went with it
			continue
		case ct.name == "multi":
			// MULTI is allowed while busy (Redis's CMD_ALLOW_BUSY): answered here,
			// opened by the executor before the client's next batch.
			if c.inMulti.Load() && !c.busyExecAbort.Load() || c.busyMulti.Load() {
				c.out.Error(msgNestedMulti)
			} else {
				c.out.OK()
				c.busyMulti.Store(true)
			}
			continue
		default:
			c.out.Error(s.busyMessage())
		}
		c.busyRejected.Store(true)
	}
	c.cmds = c.cmds[:0]
	return c.out.Bytes()
}

// busyMessage is the BUSY error for the kind of script that runs: an EVAL can be
// stopped by SCRIPT KILL, a function by FUNCTION KILL.
func (s *Server) busyMessage() string {
	if s.scriptGuard.isFunction() {
		return msgBusyFunction
	}
	return msgBusy
}
