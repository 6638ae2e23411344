package myredis

import (
	"strconv"
	"strings"
)

// commandsConnection registers the connection commands.
func commandsConnection() []*command {
	return []*command{
		{name: "ping", arity: -1, flags: flagNoAuth, fn: cmdPing},
		{name: "echo", arity: 2, fn: cmdEcho},
		{name: "quit", arity: -1, flags: flagNoAuth | flagTx | flagNoScript, fn: cmdQuit},
		{name: "select", arity: 2, fn: cmdSelect},
		{name: "auth", arity: -2, flags: flagNoAuth | flagNoScript, fn: cmdAuth},
		{name: "hello", arity: -1, flags: flagNoAuth | flagNoScript, fn: cmdHello},
		{name: "client", arity: -2, flags: flagNoScript, fn: cmdClient},
		{name: "reset", arity: 1, flags: flagNoAuth | flagNoScript | flagTx, fn: cmdReset},
	}
}

func cmdPing(x *Ctx) {
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
	user, pass := "default", x.arg(x.nargs()-1)
	if x.nargs() == 3 {
		user = x.arg(1)
	}
	if x.s.cfg.RequirePass == "" && x.nargs() == 2 {
		x.err(msgAuthNoPassword)
		return
	}
	if !x.s.checkPassword(user, pass) {
		x.err(msgWrongPass)
		return
	}
	x.c.authed = true
	x.ok()
}

// checkPassword accepts the default user with requirepass (any password when none).
func (s *Server) checkPassword(user, pass string) bool {
	if user != "default" {
		return false
	}
	return s.cfg.RequirePass == "" || pass == s.cfg.RequirePass
}

func cmdHello(x *Ctx) {
	if x.nargs() >= 2 {
		ver, err := strconv.ParseInt(x.arg(1), 10, 64)
		if err != nil {
			x.err("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver != 2 { // RESP3 is not served: clients fall back to RESP2
			x.err(msgNoProto)
			return
		}
	}
	var name *string
	for i := 2; i < x.nargs(); i++ {
		more := x.nargs() - i - 1
		switch {
		case eqFold(x.args[i], "auth") && more >= 2:
			if !x.s.checkPassword(x.arg(i+1), x.arg(i+2)) {
				x.err(msgWrongPass)
				return
			}
			x.c.authed = true
			i += 2
		case eqFold(x.args[i], "setname") && more >= 1:
			n := x.arg(i + 1)
			name = &n
			i++
		default:
			x.w.Errorf("ERR Syntax error in HELLO option '%s'", x.arg(i))
			return
		}
	}
	if !x.c.authed {
		x.err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if name != nil {
		if !validClientName(*name) {
			x.err(msgClientName)
			return
		}
		x.c.name = *name
	}
	x.w.Array(14)
	x.w.BulkString("server")
	x.w.BulkString("redis")
	x.w.BulkString("version")
	x.w.BulkString(redisVersion)
	x.w.BulkString("proto")
	x.w.Int(2)
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

func cmdClient(x *Ctx) {
	sub := strings.ToLower(x.arg(1))
	n := x.nargs()
	switch {
	case sub == "id" && n == 2:
		x.w.Int(x.c.id)
	case sub == "getname" && n == 2:
		if x.c.name == "" {
			x.w.Null()
		} else {
			x.w.BulkString(x.c.name)
		}
	case sub == "setname" && n == 3:
		if !validClientName(x.arg(2)) {
			x.err(msgClientName)
			return
		}
		x.c.name = x.arg(2)
		x.ok()
	case sub == "setinfo" && n == 4:
		switch {
		case eqFold(x.args[2], "lib-name"):
			if strings.ContainsAny(x.arg(3), " \n") {
				x.err("ERR lib-name cannot contain spaces, newlines or special characters.")
				return
			}
			x.c.libName = x.arg(3)
		case eqFold(x.args[2], "lib-ver"):
			x.c.libVer = x.arg(3)
		default:
			x.w.Errorf("ERR Unrecognized option '%s'", x.arg(2))
			return
		}
		x.ok()
	case sub == "list":
		x.w.BulkString(x.s.clientList())
	case sub == "info" && n == 2:
		x.w.BulkString(x.c.info(x.s.clock.Now()))
	case sub == "no-evict" || sub == "no-touch" || sub == "reply":
		x.ok()
	case sub == "help":
		x.w.BulkStrings([]string{"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"ID", "GETNAME", "SETNAME <name>", "SETINFO <option> <value>", "LIST", "INFO", "HELP"})
	case sub == "id" || sub == "getname" || sub == "setname" || sub == "setinfo" || sub == "info":
		x.err(errArity("client|" + sub))
	default:
		x.w.Errorf(msgUnknownSubcommand, x.arg(1), "CLIENT")
	}
}

// clientList renders CLIENT LIST. Runs on the executor.
func (s *Server) clientList() string {
	s.mu.Lock()
	clients := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		clients = append(clients, c)
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
	x.c.db = x.s.dbs[0]
	x.c.name = ""
	x.c.authed = x.s.cfg.RequirePass == ""
	x.w.Simple("RESET")
}
