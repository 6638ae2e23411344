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
