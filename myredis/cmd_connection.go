package myredis

import (
	"strings"
)

// commandsConnection registers the connection commands.
func commandsConnection() []*command {
	return []*command{
		{name: "ping", arity: -1, fn: cmdPing},
		{name: "echo", arity: 2, fn: cmdEcho},
		{name: "quit", arity: -1, flags: flagNoAuth | flagTx | flagNoScript, fn: cmdQuit},
		{name: "select", arity: 2, fn: cmdSelect},
		{name: "auth", arity: -2, flags: flagNoAuth | flagNoScript, fn: cmdAuth},
		{name: "hello", arity: -1, flags: flagNoAuth | flagNoScript, fn: cmdHello},
		{name: "client", arity: -2, flags: flagNoScript, fn: cmdClient, subs: subcommands(map[string]int{
			"id": 2, "getname": 2, "setname": 3, "setinfo": 4, "list": -2, "info": 2,
			"no-evict": 3, "reply": 3, "help": 2, "kill": -3, "unblock": -3, "pause": -3, "unpause": 2,
			"tracking": -3, "caching": 3, "getredir": 2, "trackinginfo": 2,
		})},
		{name: "reset", arity: 1, flags: flagNoAuth | flagNoScript | flagTx, fn: cmdReset},
	}
}

func cmdPing(x *Ctx) {
	if x.c.ps != nil && x.c.pubsubOnly() && x.nargs() <= 2 {
		pubsubPong(x) // cmd_pubsub.go
		return
	}
	switch x.nargs() {
	case 1:
		x.w.Simple("PONG")
	case 2:
		x.w.Bulk(x.args[1])
	default:
		x.err(errArity("ping"))
	}
}

func cmdEcho(x *Ctx) { x.w.Bulk(x.args[1]) }

func cmdQuit(x *Ctx) {
	x.c.closing = true
	x.ok()
}

func cmdSelect(x *Ctx) {
	n, ok := x.argInt(1)
	if !ok {
		return
	}
	if n < 0 || n >= int64(len(x.s.dbs)) {
		x.err(msgInvalidDB)
		return
	}
	x.c.db = x.s.dbs[n]
	x.db = x.c.db
	x.ok()
}

func cmdAuth(x *Ctx) {
	if x.nargs() > 3 {
		x.err(msgSyntax)
		return
	}
	x.redactArg(1) // introspect.go: the slow log and MONITOR hide the secrets
	x.redactArg(2)
	user, pass := "default", x.arg(x.nargs()-1)
	if x.nargs() == 3 {
		user = x.arg(1)
	} else if x.s.acl.dflt.nopass {
		x.err(msgAuthNoPassword)
		return
	}
	if !x.s.authenticate(x.c, user, pass) { // acl_server.go
		x.err(msgWrongPass)
		return
	}
	x.ok()
}

// cmdHello answers HELLO [protover [AUTH user pass] [SETNAME name]] as Redis
// 7.0.15: options take effect in order (AUTH authenticates, SETNAME names the
// client, before a later option can fail), then the connection switches to the
// protocol asked for and the reply is a map in that protocol.
func cmdHello(x *Ctx) {
	ver := int64(0)
	if x.nargs() >= 2 {
		v, ok := parseRedisInt(x.args[1])
		if !ok {
			x.err(msgHelloProtoNotInt)
			return
		}
		if v < 2 || v > 3 {
			x.err(msgNoProto)
			return
		}
		ver = v
	}
	for i := 2; i < x.nargs(); i++ {
		more := x.nargs() - i - 1
		switch {
		case eqFold(x.args[i], "auth") && more >= 2:
			x.redactArg(i + 1) // introspect.go
			x.redactArg(i + 2)
			if !x.s.authenticate(x.c, x.arg(i+1), x.arg(i+2)) { // acl_server.go
				x.err(msgWrongPass)
				return
			}
			i += 2
		case eqFold(x.args[i], "setname") && more >= 1:
			if !validClientName(x.arg(i + 1)) {
				x.err(msgClientName)
				return
			}
			x.c.name = x.arg(i + 1)
			i++
		default:
			x.w.Errorf("ERR Syntax error in HELLO option '%s'", x.arg(i))
			return
		}
	}
	if x.c.needsAuth() {
		x.err(msgHelloNoAuth)
		return
	}
	if ver != 0 {
		x.c.setProtocol(int(ver)) // resp3.go; this reply is already in the new protocol
	}
	x.w.Map(7)
	x.w.BulkString("server")
	x.w.BulkString("redis")
	x.w.BulkString("version")
	x.w.BulkString(redisVersion)
	x.w.BulkString("proto")
	x.w.Int(int64(x.c.resp))
	x.w.BulkString("id")
	x.w.Int(x.c.id)
	x.w.BulkString("mode")
	x.w.BulkString("standalone")
	x.w.BulkString("role")
	x.w.BulkString("master")
	x.w.BulkString("modules")
	x.w.Array(0)
}

func validClientName(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] < '!' || name[i] > '~' {
			return false
		}
	}
	return true
}

// cmdClient serves CLIENT's subcommands; call has checked the name and arity.
func cmdClient(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch sub := strings.ToLower(x.arg(1)); sub {
	case "id":
		x.w.Int(x.c.id)
	case "getname":
		if x.c.name == "" {
			x.w.Null()
		} else {
			x.w.BulkString(x.c.name)
		}
	case "setname":
		if !validClientName(x.arg(2)) {
			x.err(msgClientName)
			return
		}
		x.c.name = x.arg(2)
		x.ok()
	case "setinfo": // Redis 7.2; clients such as go-redis send it on connect
		val := x.arg(3)
		var dest *string
		switch {
		case eqFold(x.args[2], "lib-name"):
			dest = &x.c.libName
		case eqFold(x.args[2], "lib-ver"):
			dest = &x.c.libVer
		default:
			x.w.Errorf("ERR Unrecognized option '%s'", x.arg(2))
			return
		}
		if !validClientName(val) {
			x.w.Errorf("ERR %s cannot contain spaces, newlines or special characters.", x.arg(2))
			return
		}
		*dest = val
		x.ok()
	case "list":
		x.clientList()
	case "unblock":
		x.clientUnblock() // cmd_introspect.go
	case "tracking": // tracking.go
		cmdClientTracking(x)
	case "caching":
		cmdClientCaching(x)
	case "getredir":
		cmdClientGetredir(x)
	case "trackinginfo":
		cmdClientTrackinginfo(x)
	case "kill":
		x.clientKill() // client_kill.go
	case "info":
		x.w.Verbatim(x.c.info(x.s.clock.Now()))
	case "no-evict":
		x.clientNoEvict() // client_evict.go
	case "pause":
		if x.nargs() > 4 {
			x.w.Errorf(msgSubcommandSyntax, x.arg(1), "CLIENT")
			return
		}
		x.clientPause() // pause.go
	case "unpause":
		x.s.unpauseClients()
		x.ok()
	case "reply":
		switch {
		case eqFold(x.args[2], "on"): // clears a SKIP pending for this very command, as Redis
			x.c.replyOff, x.c.replySkipNext, x.c.replySkip = false, false, false
			x.ok()
		case eqFold(x.args[2], "off"):
			x.c.replyOff = true
		case eqFold(x.args[2], "skip"):
			if !x.c.replyOff {
				x.c.replySkipNext = true
			}
		default:
			x.err(msgSyntax)
		}
	case "help":
		x.help(clientHelp)
	}
}

// clientList answers CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
// Every MyRedis client is of type normal.
func (x *Ctx) clientList() {
	var ids map[int64]bool
	normal := true
	for i := 2; i < x.nargs(); i++ {
		switch {
		case eqFold(x.args[i], "type") && i+1 < x.nargs():
			i++
			switch strings.ToLower(x.arg(i)) {
			case "normal":
			case "master", "replica", "slave", "pubsub":
				normal = false
			default:
				x.w.Errorf("ERR Unknown client type '%s'", x.arg(i))
				return
			}
		case eqFold(x.args[i], "id") && i+1 < x.nargs():
			ids = map[int64]bool{}
			for i++; i < x.nargs(); i++ {
				id, ok := parseRedisInt(x.args[i])
				if !ok {
					x.err("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			x.err(msgSyntax)
			return
		}
	}
	if !normal {
		x.w.Verbatim("")
		return
	}
	x.w.Verbatim(x.s.clientList(ids))
}

// clientList renders CLIENT LIST, of the clients in ids (all when nil). Runs on
// the executor.
func (s *Server) clientList(ids map[int64]bool) string {
	s.mu.Lock()
	clients := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		if ids == nil || ids[c.id] {
			clients = append(clients, c)
		}
	}
	s.mu.Unlock()
	sortClients(clients)
	now := s.clock.Now()
	var b strings.Builder
	for _, c := range clients {
		b.WriteString(c.info(now))
	}
	return b.String()
}

func cmdReset(x *Ctx) {
	x.s.discard(x.c)
	x.s.unwatchAll(x.c)
	x.s.dropSubscriptions(x.c)
	x.s.disableTracking(x.c)
	x.s.dropMonitor(x.c) // monitor.go
	x.c.db = x.s.dbs[0]
	x.c.name = ""
	x.c.user = x.s.acl.dflt
	x.c.authed = !x.s.acl.defaultNeedsAuth()
	x.c.setProtocol(2)                             // the RESET reply itself goes out in RESP2, as Redis's
	x.c.replyOff, x.c.replySkipNext = false, false // a pending SKIP still swallows this reply, as in Redis
	x.w.Simple("RESET")
}

// clientHelp is Redis 7.0.15's CLIENT HELP.
var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}
