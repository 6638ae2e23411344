package myredis

import (
	"strconv"
)

// The slow log, as Redis's slowlog.c: every command that ran for at least
// slowlog-log-slower-than microseconds is kept, newest first, up to
// slowlog-max-len entries. Everything here runs on the executor goroutine.

const (
	slowlogMaxArgc   = 32  // SLOWLOG_ENTRY_MAX_ARGC
	slowlogMaxString = 128 // SLOWLOG_ENTRY_MAX_STRING
)

// slowlogEntry is one logged command.
type slowlogEntry struct {
	id, unix, usec int64
	args           [][]byte // trimmed copies, as Redis keeps them
	peer, name     string
}

// slowlog keeps the entries oldest first (GET walks it backwards).
type slowlog struct {
	entries []slowlogEntry
	nextID  int64
}

// push logs a command that took usec microseconds, then trims the log to max.
func (l *slowlog) push(x *Ctx, usec, unix, max int64) {
	l.entries = append(l.entries, slowlogEntry{
		id: l.nextID, unix: unix, usec: usec,
		args: slowlogArgs(x.loggedArgs()),
		peer: x.peerID(), name: x.clientName(),
	})
	l.nextID++
	l.trim(max)
}

// trim drops the oldest entries beyond max.
func (l *slowlog) trim(max int64) {
	if extra := int64(len(l.entries)) - max; extra > 0 {
		n := copy(l.entries, l.entries[extra:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
}

func (l *slowlog) reset() {
	clear(l.entries)
	l.entries = l.entries[:0]
}

// slowlogArgs copies args as Redis's slowlogCreateEntry keeps them: at most 32,
// the last of which then says how many more there were, and each string cut to
// 128 bytes with a note of the bytes left out.
func slowlogArgs(args [][]byte) [][]byte {
	n := min(len(args), slowlogMaxArgc)
	out := make([][]byte, n)
	for i := range n {
		a := args[i]
		switch {
		case n != len(args) && i == n-1:
			out[i] = []byte("... (" + strconv.Itoa(len(args)-n+1) + " more arguments)")
		case len(a) > slowlogMaxString:
			b := make([]byte, 0, slowlogMaxString+32)
			b = append(b, a[:slowlogMaxString]...)
			out[i] = append(b, "... ("+strconv.Itoa(len(a)-slowlogMaxString)+" more bytes)"...)
		default:
			out[i] = append([]byte(nil), a...)
		}
	}
	return out
}

// peerID is the client's address as SLOWLOG and MONITOR show it: "?:0" for
// the scripting engine's client and other clients with no socket, as Redis
// shows its fake clients.
func (x *Ctx) peerID() string {
	if x.inScript || x.c.addr == "" {
		return "?:0"
	}
	return x.c.addr
}

// clientName is the client's name for the slow log; the scripting engine's
// client has none, as in Redis.
func (x *Ctx) clientName() string {
	if x.inScript {
		return ""
	}
	return x.c.name
}

// --- SLOWLOG ---

func cmdSlowlog(x *Ctx) {
	l := &x.s.intro.slowlog
	switch {
	case x.nargs() == 2 && x.argIs(1, "help"):
		x.help([]string{
			"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"GET [<count>]",
			"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
			"    Entries are made of:",
			"    id, timestamp, time in microseconds, arguments array, client IP and port,",
			"    client name",
			"LEN",
			"    Return the length of the slowlog.",
			"RESET",
			"    Reset the slowlog.",
			"HELP",
			"    Prints this help.",
		})
	case x.nargs() == 2 && x.argIs(1, "reset"):
		l.reset()
		x.ok()
	case x.nargs() == 2 && x.argIs(1, "len"):
		x.w.Int(int64(len(l.entries)))
	case (x.nargs() == 2 || x.nargs() == 3) && x.argIs(1, "get"):
		x.slowlogGet(l)
	default:
		x.w.Errorf(msgSubcommandSyntax, x.arg(1), "SLOWLOG")
	}
}

// slowlogGet answers SLOWLOG GET [count], newest first.
func (x *Ctx) slowlogGet(l *slowlog) {
	count := int64(10)
	if x.nargs() == 3 {
		n, ok := parseRedisInt(x.args[2])
		if !ok || n < -1 {
			x.err(msgSlowlogCount)
			return
		}
		count = n
		if n == -1 {
			count = int64(len(l.entries))
		}
	}
	n := int(min(count, int64(len(l.entries))))
	x.w.Array(n)
	for i := len(l.entries) - 1; i >= len(l.entries)-n; i-- {
		e := &l.entries[i]
		x.w.Array(6)
		x.w.Int(e.id)
		x.w.Int(e.unix)
		x.w.Int(e.usec)
		x.w.Array(len(e.args))
		for _, a := range e.args {
			x.w.Bulk(a)
		}
		x.w.BulkString(e.peer)
		x.w.BulkString(e.name)
	}
}
