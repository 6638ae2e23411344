package myredis

import (
	"strconv"
	"strings"
)

// CLIENT KILL, both forms, as Redis 7.0's clientKillCommand:
//
//	CLIENT KILL ip:port                       the old form: +OK, or "No such client"
//	CLIENT KILL <filter> <value> ...          ID, TYPE, ADDR, LADDR, USER, SKIPME:
//	                                          the number of clients killed
//
// The old form may kill the caller; the new one skips it unless SKIPME no. A
// client that kills itself is closed once this reply is sent; others at once.

// clientKillFilter is a parsed CLIENT KILL.
type clientKillFilter struct {
	id          int64 // 0: any
	typ         string
	addr, laddr string
	user        string
	skipMe      bool
	oldForm     bool
}

// clientKill answers CLIENT KILL. Runs on the executor.
func (x *Ctx) clientKill() {
	f, ok := x.parseClientKill()
	if !ok {
		return
	}
	killed := 0
	for _, c := range x.s.clientsByID() {
		if !f.matches(c) || (c == x.c && f.skipMe) {
			continue
		}
		x.s.killClient(c, x.c)
		killed++
	}
	if mc := x.s.masterClientToKill(f); mc {
		killed++
	}
	if !f.oldForm {
		x.w.Int(int64(killed))
	} else if killed == 0 {
		x.err(msgNoSuchClient)
	} else {
		x.ok()
	}
}

// parseClientKill reads either form, writing Redis's error when it fails.
func (x *Ctx) parseClientKill() (clientKillFilter, bool) {
	f := clientKillFilter{skipMe: true}
	if x.nargs() == 3 {
		f.addr, f.skipMe, f.oldForm = x.arg(2), false, true
		return f, true
	}
	for i := 2; i < x.nargs(); i += 2 {
		if i+1 >= x.nargs() {
			x.err(msgSyntax)
			return f, false
		}
		val := x.arg(i + 1)
		switch strings.ToLower(x.arg(i)) {
		case "id":
			id, err := strconv.ParseInt(val, 10, 64)
			if err != nil || !validIntText(x.args[i+1]) || id < 1 {
				x.err(msgClientIDPositive)
				return f, false
			}
			f.id = id
		case "type":
			typ, ok := clientTypeByName(val)
			if !ok {
				x.w.Errorf("ERR Unknown client type '%s'", val)
				return f, false
			}
			f.typ = typ
		case "addr":
			f.addr = val
		case "laddr":
			f.laddr = val
		case "user":
			if !x.s.userExists(val) {
				x.w.Errorf("ERR No such user '%s'", val)
				return f, false
			}
			f.user = val
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				f.skipMe = true
			case "no":
				f.skipMe = false
			default:
				x.err(msgSyntax)
				return f, false
			}
		default:
			x.err(msgSyntax)
			return f, false
		}
	}
	return f, true
}

// clientTypeByName is Redis's getClientTypeByName.
func clientTypeByName(name string) (string, bool) {
	switch strings.ToLower(name) {
	case "normal":
		return "normal", true
	case "slave", "replica":
		return "replica", true
	case "pubsub":
		return "pubsub", true
	case "master":
		return "master", true
	}
	return "", false
}

// clientType is Redis's getClientType: replica, pubsub or normal (the master
// link is not in the clients table: see masterClientToKill). Runs on the executor.
func (c *Client) clientType() string {
	switch {
	case c.replica != nil:
		return "replica"
	case c.isSubscriber():
		return "pubsub"
	}
	return "normal"
}

// matches reports whether c passes every filter given.
func (f *clientKillFilter) matches(c *Client) bool {
	return (f.addr == "" || c.addr == f.addr) &&
		(f.laddr == "" || c.laddr == f.laddr) &&
		(f.typ == "" || c.clientType() == f.typ) &&
		(f.id == 0 || c.id == f.id) &&
		(f.user == "" || c.userName() == f.user)
}

// userName is the ACL user c is authenticated as.
func (c *Client) userName() string { return "default" }

// userExists reports whether an ACL user of that name exists.
func (s *Server) userExists(name string) bool { return name == "default" }

// clientsByID lists the connected clients, oldest first. Runs on the executor.
func (s *Server) clientsByID() []*Client {
	s.mu.Lock()
	cs := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	sortClients(cs)
	return cs
}

// killClient disconnects c: at once, or, when c is the caller, after this
// batch's replies (as Redis's CLIENT_CLOSE_AFTER_REPLY). Runs on the executor.
func (s *Server) killClient(c, caller *Client) {
	if c == caller {
		c.closing = true
		return
	}
	if c.conn != nil {
		if nc := c.conn.NetConn(); nc != nil {
			nc.Close() // its reader fails; redcon frees it (closed, forgetClient)
		}
	}
}
