package myredis

import (
	"strings"
)

// commandsModule registers MODULE, as Redis 7.0.15 answers it with no module
// loaded. MyRedis cannot load Redis's C modules (shared objects calling
// Redis's module API), so LOAD and LOADEX fail as Redis fails for a file that
// is not a module: the same error reply, the reason in the log. LOAD, LOADEX
// and UNLOAD are protected by enable-module-command (introspect_config.go).
//
//	MODULE LIST                 the loaded modules: none
//	MODULE LOAD path [arg ...]  fails
//	MODULE LOADEX path [CONFIG name value ...] [ARGS arg ...]  fails
//	MODULE UNLOAD name          no such module
//	MODULE HELP
func commandsModule() []*command {
	subs := subcommands(map[string]int{"help": 2, "list": 2, "load": -3, "loadex": -3, "unload": 3})
	subs["list"].flags = flagAdmin | flagNoScript
	for _, name := range []string{"load", "loadex", "unload"} {
		subs[name].flags = flagAdmin | flagNoScript | flagProtectModule
	}
	return []*command{
		{name: "module", arity: -2, fn: cmdModule, subs: subs},
	}
}

var moduleHelp = []string{
	"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LIST",
	"    Return a list of loaded modules.",
	"LOAD <path> [<arg> ...]",
	"    Load a module library from <path>, passing to it any optional arguments.",
	"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
	"    Load a module library from <path>, while passing it module configurations and optional arguments.",
	"UNLOAD <name>",
	"    Unload a module.",
	"HELP",
	"    Prints this help.",
}

// msgModuleUnsupported is the log line of a refused MODULE LOAD.
const msgModuleUnsupported = "MyRedis cannot load Redis modules (C shared objects)"

func cmdModule(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch strings.ToLower(x.arg(1)) {
	case "help":
		x.help(moduleHelp)
	case "list":
		x.w.Array(0)
	case "load":
		x.s.log.Warn("module failed to load", "path", x.arg(2), "err", msgModuleUnsupported)
		x.err(msgModuleLoad)
	case "loadex":
		if why := checkLoadexArgs(x.args[3:]); why != "" {
			x.s.log.Info(why)
		} else {
			x.s.log.Warn("module failed to load", "path", x.arg(2), "err", msgModuleUnsupported)
		}
		x.err(msgModuleLoad)
	case "unload":
		x.err(msgModuleUnload)
	}
}

// checkLoadexArgs checks LOADEX's [CONFIG name value ...] [ARGS ...] as Redis's
// parseLoadexArguments; it returns Redis's log line for bad ones, "" when fine.
func checkLoadexArgs(args [][]byte) string {
	for i := 0; i < len(args); i++ {
		switch {
		case eqFold(args[i], "config"):
			if i+2 >= len(args) {
				return "CONFIG specified without name value pair"
			}
			i += 2
		case eqFold(args[i], "args"):
			return ""
		default:
			return "Syntax Error from arguments to loadex around " + string(args[i]) + "."
		}
	}
	return ""
}
