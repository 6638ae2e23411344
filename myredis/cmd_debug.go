package myredis

import (
	"strconv"
	"strings"
	"time"
)

// DEBUG: the subcommands operators and Redis's own tests use. The others Redis
// has (crashes, allocator and cluster internals) are refused with Redis's reply
// to an unknown subcommand. DEBUG runs only where enable-debug-command allows
// it (call checks, as Redis's processCommand). Runs on the executor goroutine.

// debugHelp is DEBUG HELP: Redis's lines for the subcommands MyRedis has.
var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANGE-REPL-ID",
	"    Change the replication IDs of the instance.",
	"    Dangerous: should be used only for testing the replication subsystem.",
	"ERROR <string>",
	"    Return a Redis protocol error with <string> as message. Useful for clients",
	"    unit tests to simulate Redis errors.",
	"LOG <message>",
	"    Write <message> to the server log.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Setting it to 0 disables expiring keys in background when they are not",
	"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
	"    default.",
	"SLEEP <seconds>",
	"    Stop the server for <seconds>. Decimals allowed.",
	"HELP",
	"    Prints this help.",
}

func cmdDebug(x *Ctx) {
	n := x.nargs()
	switch sub := strings.ToLower(x.arg(1)); {
	case sub == "help" && n == 2:
		x.help(debugHelp)
	case sub == "sleep" && n == 3:
		debugSleep(x.arg(2))
		x.ok()
	case sub == "set-active-expire" && n == 3:
		x.s.expire.disabled = cAtoi(x.args[2]) == 0 // getkeys.go
		x.ok()
	case sub == "change-repl-id" && n == 2:
		x.s.log.Warn("changing replication IDs after receiving DEBUG change-repl-id")
		x.s.replID = randomHex(40)
		x.ok()
	case sub == "error" && n == 3:
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(x.arg(2))
		x.w.Raw([]byte("-" + msg + "\r\n"))
	case sub == "log" && n == 3:
		x.s.log.Warn("DEBUG LOG: " + x.arg(2))
		x.ok()
	default:
		x.w.Errorf(msgSubcommandSyntax, x.arg(1), "DEBUG")
	}
}

// debugSleep stops the executor (the whole server, as Redis) for secs seconds,
// read as C's strtod reads its prefix.
func debugSleep(secs string) {
	d := strtodPrefix(secs)
	if us := int64(d * 1e6); us > 0 {
		time.Sleep(time.Duration(us) * time.Microsecond)
	}
}

// strtodPrefix is C's strtod(s, NULL): the longest leading number, 0 if none.
func strtodPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for end := min(len(s), 64); end > 0; end-- { // (a number is never longer)
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return f
		}
	}
	return 0
}
