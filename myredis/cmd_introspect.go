package myredis

// commandsIntrospection registers the operator's commands of introspect.go's
// files: SLOWLOG (slowlog.go), LATENCY (latency.go), MONITOR (monitor.go) and
// DEBUG (cmd_debug.go).
func commandsIntrospection() []*command {
	return []*command{
		{name: "slowlog", arity: -2, flags: flagAdmin, fn: cmdSlowlog, subs: subcommands(map[string]int{
			"get": -2, "len": 2, "reset": 2, "help": 2,
		})},
		{name: "latency", arity: -2, flags: flagAdmin | flagNoScript, fn: cmdLatency, subs: subcommands(map[string]int{
			"doctor": 2, "graph": 3, "history": 3, "latest": 2, "reset": -2, "histogram": -2, "help": 2,
		})},
		{name: "monitor", arity: 1, flags: flagAdmin | flagNoScript, fn: cmdMonitor},
		{name: "debug", arity: -2, flags: flagAdmin | flagNoScript | flagProtect, fn: cmdDebug},
	}
}

func init() { commandGroups = append(commandGroups, commandsIntrospection) }

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked in a
// blocking command is answered as if its timeout had passed, or with an
// UNBLOCKED error; 1 if there was one, 0 otherwise.
func (x *Ctx) clientUnblock() {
	if x.nargs() > 4 {
		x.w.Errorf(msgSubcommandSyntax, x.arg(1), "CLIENT")
		return
	}
	withError := false
	if x.nargs() == 4 {
		switch {
		case x.argIs(3, "timeout"):
		case x.argIs(3, "error"):
			withError = true
		default:
			x.err(msgUnblockReason)
			return
		}
	}
	id, ok := x.argInt(2)
	if !ok {
		return
	}
	x.s.mu.Lock()
	target := x.s.clients[id]
	x.s.mu.Unlock()
	if target == nil || target.blocked == nil || target.blocked.migrating {
		x.w.Int(0)
		return
	}
	if withError {
		x.s.unblock(target)
		target.blockOut.Reset()
		target.blockOut.Error(msgUnblocked)
		x.s.countErrorText(msgUnblocked)
		target.lastActive.Store(x.s.clock.Now().UnixMilli())
		x.s.release(target.wake)
	} else {
		x.s.timeoutBlocked(target) // executor.go
	}
	x.w.Int(1)
}
