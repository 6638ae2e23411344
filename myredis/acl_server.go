package myredis

import (
	"fmt"
	"strings"
)

// The ACL's ties to the rest of the server: requirepass (the default user's
// password), authentication (AUTH, HELLO AUTH), the connections of users that
// are deleted or changed, and the settings aclfile, acllog-max-len and
// acl-pubsub-default.

// initACL applies the start-up settings: acl-pubsub-default, then requirepass,
// as Redis's initServer. Users from the config and the aclfile load in Open.
func (s *Server) initACL() {
	s.acl.pubsubDefault = s.cfg.ACL.PubsubDefault
	s.acl.setRequirePass(s.cfg.RequirePass)
	s.aclDefaultChanged()
	s.configHooks = append(s.configHooks, func(old, next Config) {
		s.acl.pubsubDefault = next.ACL.PubsubDefault
		if next.RequirePass != old.RequirePass {
			s.acl.setRequirePass(next.RequirePass)
			s.aclDefaultChanged()
		}
	})
}

func init() {
	openHooks = append(openHooks, func(s *Server) error {
		var err error
		s.submit(func() { err = s.loadACLAtStartup() })
		return err
	})
}

// loadACLAtStartup is ACLLoadUsersAtStartup: "user" lines of the config, or the
// aclfile, never both.
func (s *Server) loadACLAtStartup() error {
	if s.cfg.ACL.File != "" && len(s.cfg.ACL.Users) > 0 {
		return fmt.Errorf("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	for _, def := range s.cfg.ACL.Users {
		if err := s.acl.loadConfiguredUser(def); err != nil {
			return err
		}
	}
	if s.cfg.ACL.File != "" {
		if errs := s.aclLoadFile(s.cfg.ACL.File); errs != "" {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", errs)
		}
	}
	s.aclDefaultChanged()
	return nil
}

// loadConfiguredUser applies one "user name rules..." line of the config.
func (a *aclState) loadConfiguredUser(def []string) error {
	name := def[0]
	if hasSpaces(name) {
		return fmt.Errorf("Spaces not allowed in ACL usernames")
	}
	if _, dup := a.users[name]; dup && name != "default" {
		return fmt.Errorf("Error in user declaration '%s': %s", name, errACLDuplicate)
	}
	u := a.users[name]
	if u == nil {
		u = a.newUser(name)
	} else {
		a.setUser(u, "reset")
	}
	merged, bad := mergeSelectorArgs(def[1:])
	if bad >= 0 {
		return fmt.Errorf("Error in user declaration '%s': Unmatched parenthesis in selector definition", name)
	}
	for _, op := range merged {
		if err := a.setUser(u, op); err != nil {
			return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, name, err)
		}
	}
	a.users[name] = u
	return nil
}

// setRequirePass is ACLUpdateDefaultUserPassword.
func (a *aclState) setRequirePass(pass string) {
	a.setUser(a.dflt, "resetpass")
	if pass != "" {
		a.setUser(a.dflt, ">"+pass)
	} else {
		a.setUser(a.dflt, "nopass")
	}
}

// aclDefaultChanged tells the connection goroutines' protocol guards whether a
// client that has not authenticated is limited.
func (s *Server) aclDefaultChanged() {
	s.live.hasPass.Store(s.acl.defaultNeedsAuth())
}

// authenticate checks user and password and, when they are right, makes c that
// user (AUTH, HELLO's AUTH). A failure is logged in the ACL log. Runs on the
// executor.
func (s *Server) authenticate(c *Client, user, pass string) bool {
	u, ok := s.acl.checkCredentials(user, pass)
	if !ok {
		ctx := aclCtxToplevel
		if c.multi != nil {
			ctx = aclCtxMulti
		}
		s.addACLLog(c, aclDeniedAuth, ctx, "AUTH", user)
		return false
	}
	c.user, c.authed = u, true
	return true
}

// userName is CLIENT LIST's user.
func (c *Client) userName() string {
	if c.user == nil {
		return "default"
	}
	return c.user.name
}

// aclLogMax is acllog-max-len.
func (s *Server) aclLogMax() int {
	if s.cfg.ACL.LogMaxLen == 0 {
		return aclLogMaxLen
	}
	return max(s.cfg.ACL.LogMaxLen, 0)
}

// disconnectUser is ACLFreeUserAndKillClients: every client of u goes back to
// the default user, unauthenticated, and is closed (the current one after its
// reply).
func (s *Server) disconnectUser(u *aclUser, current *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.user != u {
			continue
		}
		c.user, c.authed = s.acl.dflt, false
		if c == current {
			c.closing = true
		} else if c.conn != nil {
			c.conn.NetConn().Close() // the connection's read fails and closes the client
		}
	}
	if current != nil && current.user == u { // a client not in the list (tests)
		current.user, current.authed, current.closing = s.acl.dflt, false, true
	}
}

// killPubsubClients is ACLKillPubsubClientsIfNeeded: when a user's channel
// permissions shrink, its subscribers that hold a channel or pattern no longer
// allowed are closed.
func (s *Server) killPubsubClients(next, orig *aclUser, current *Client) {
	for _, sel := range next.selectors {
		if sel.allChannels {
			return
		}
	}
	var upcoming []string
	for _, sel := range next.selectors {
		upcoming = append(upcoming, sel.channels...)
	}
	superset := true
	for _, sel := range orig.selectors {
		if sel.allChannels {
			superset = false
			break
		}
		for _, ch := range sel.channels {
			if !containsString(upcoming, ch) {
				superset = false
			}
		}
	}
	if superset {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.user != orig || !c.isSubscriber() {
			continue
		}
		if s.subscriberViolates(c, upcoming) {
			if c == current {
				c.closing = true
			} else if c.conn != nil {
				c.conn.NetConn().Close()
			}
		}
	}
}

// subscriberViolates: c holds a pattern or channel that upcoming does not allow.
func (s *Server) subscriberViolates(c *Client, upcoming []string) bool {
	if c.ps == nil {
		return false
	}
	for kind, set := range c.ps.names {
		for _, name := range set.items {
			if !channelAllowed(upcoming, name, subKind(kind) == subPattern) {
				return true
			}
		}
	}
	return false
}

// aclConfig is the ACL settings of the config file and CONFIG SET.
type aclConfig struct {
	File          string     // aclfile
	LogMaxLen     int        // acllog-max-len; 0: the default, 128; negative: 0
	PubsubDefault bool       // acl-pubsub-default allchannels
	Users         [][]string // "user name rules..." lines
}

// setACL sets aclfile, acllog-max-len, acl-pubsub-default; false if name is
// none of them.
func (c *Config) setACL(name, val string) (bool, error) {
	switch name {
	case "aclfile":
		c.ACL.File = val
	case "acllog-max-len":
		n, err := intConfig(val, 0, 1<<31-1)
		if err != nil {
			return true, err
		}
		c.ACL.LogMaxLen = n
		if n == 0 {
			c.ACL.LogMaxLen = -1
		}
	case "acl-pubsub-default":
		switch strings.ToLower(val) {
		case "allchannels":
			c.ACL.PubsubDefault = true
		case "resetchannels":
			c.ACL.PubsubDefault = false
		default:
			return true, fmt.Errorf("argument(s) must be one of the following: allchannels, resetchannels")
		}
	default:
		return false, nil
	}
	return true, nil
}

// aclConfigParams are CONFIG GET's ACL settings.
func (s *Server) aclConfigParams(params map[string]func() string) {
	c := &s.cfg
	params["aclfile"] = func() string { return c.ACL.File }
	params["acllog-max-len"] = func() string { return fmt.Sprint(s.aclLogMax()) }
	params["acl-pubsub-default"] = func() string {
		if c.ACL.PubsubDefault {
			return "allchannels"
		}
		return "resetchannels"
	}
}

// userExists reports whether an ACL user of that name exists (CLIENT KILL USER).
func (s *Server) userExists(name string) bool { return s.acl.users[name] != nil }

// superuser is Redis's NULL user: the AOF loader and the master link run every
// command whatever the ACL rules; CLIENT LIST shows "(superuser)".
var superuser = &aclUser{name: "(superuser)", enabled: true, unrestricted: true}
