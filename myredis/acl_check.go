package myredis

import (
	"strings"
	"time"
)

// Permission checks (Redis's ACLCheckAllUserCommandPerm) and the ACL log. Runs
// on the executor goroutine. A user with every permission (the default user
// unless changed) never gets here: call tests aclUser.unrestricted first.

// ACL check results, ordered as Redis's (a later one is more relevant).
const (
	aclOK = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// Redis's ACL_DENIED_* values order: CMD 1, KEY 2, AUTH 3, CHANNEL 4.

// checkCommand reports whether u may run cmd with args, and when not, why and
// at which argument (the key or channel that no selector allows).
func (a *aclState) checkCommand(u *aclUser, cmd *command, args [][]byte) (int, int) {
	var keyBuf [8]keyRef
	var keys []keyRef
	keysDone := false
	relevant, lastIdx := aclDeniedCmd, 0
	for _, s := range u.selectors {
		res, idx := a.checkSelector(s, cmd, args, keyBuf[:0], &keys, &keysDone)
		if res == aclOK {
			return aclOK, 0
		}
		if res > relevant || (res == relevant && idx > lastIdx) {
			relevant, lastIdx = res, idx
		}
	}
	return relevant, lastIdx
}

// checkSelector is ACLSelectorCheckCmd. keys are found once for all selectors.
func (a *aclState) checkSelector(s *aclSelector, cmd *command, args [][]byte, buf []keyRef, keys *[]keyRef, done *bool) (int, int) {
	if !s.allCommands && cmd.flags&flagNoAuth == 0 && !s.bit(cmd.acl.id) {
		if !s.firstArgAllowed(cmd, args) {
			return aclDeniedCmd, 0
		}
	}
	if !s.allKeys && cmd.acl.hasKeys {
		if !*done {
			*keys, *done = cmd.aclKeys(args, buf), true
		}
		for _, k := range *keys {
			if !s.keyAllowed(string(args[k.pos]), k.flags) {
				return aclDeniedKey, k.pos
			}
		}
	}
	if ch := cmd.acl.chans; !s.allChannels && ch.flags&(chanPublish|chanSubscribe) != 0 {
		stop := len(args)
		if ch.count >= 0 {
			stop = min(ch.start+ch.count, len(args))
		}
		for i := ch.start; i < stop; i++ {
			if !channelAllowed(s.channels, string(args[i]), ch.flags&chanPattern != 0) {
				return aclDeniedChannel, i
			}
		}
	}
	return aclOK, 0
}

// firstArgAllowed: a +cmd|arg rule allows this call's first argument.
func (s *aclSelector) firstArgAllowed(cmd *command, args [][]byte) bool {
	allowed := s.firstArgs[cmd.acl.id]
	if len(args) < 2 || len(allowed) == 0 {
		return false
	}
	idx := 1
	if strings.IndexByte(cmd.name, '|') >= 0 {
		idx = 2
	}
	if idx >= len(args) {
		return false
	}
	for _, arg := range allowed {
		if strings.EqualFold(arg, string(args[idx])) {
			return true
		}
	}
	return false
}

// keyAllowed is ACLSelectorCheckKey.
func (s *aclSelector) keyAllowed(key string, specFlags int) bool {
	if s.allKeys {
		return true
	}
	need := 0
	if specFlags&keyAccess != 0 {
		need |= aclRead
	}
	if specFlags&(keyInsert|keyDelete|keyUpdate) != 0 {
		need |= aclWrite
	}
	for _, p := range s.keys {
		if p.perm&need != need {
			continue
		}
		if globMatch(p.pattern, key) {
			return true
		}
	}
	return false
}

// channelAllowed is ACLCheckChannelAgainstList: a channel matches the patterns,
// a subscribed pattern must equal one literally.
func channelAllowed(list []string, channel string, isPattern bool) bool {
	for _, p := range list {
		if (isPattern && p == channel) || (!isPattern && globMatch(p, channel)) {
			return true
		}
	}
	return false
}

// userChannelAllowed is ACLUserCheckChannelPerm: some selector allows the channel.
func (u *aclUser) channelAllowed(channel string, isPattern bool) bool {
	for _, s := range u.selectors {
		if s.allChannels || channelAllowed(s.channels, channel, isPattern) {
			return true
		}
	}
	return false
}

// noPermMessage is the error a refused command gets at top level.
func noPermMessage(res int, cmd *command) string {
	switch res {
	case aclDeniedCmd:
		return "NOPERM this user has no permissions to run the '" + cmd.name + "' command"
	case aclDeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case aclDeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "ERR no permission"
}

// noPermExecMessage is EXEC's error for a queued command no longer allowed.
func noPermExecMessage(res int) string {
	reason := "no permission"
	switch res {
	case aclDeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case aclDeniedKey:
		reason = "no permission to touch the specified keys"
	case aclDeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// aclScriptMessage is the error redis.call returns (getAclErrorMessage).
func aclScriptMessage(res int) string {
	msg := "lacking the permissions for the command"
	switch res {
	case aclDeniedCmd:
		msg = "can't run this command or subcommand"
	case aclDeniedKey:
		msg = "can't access at least one of the keys mentioned in the command arguments"
	case aclDeniedChannel:
		msg = "can't publish to the channel mentioned in the command"
	}
	return "The user executing the script " + msg
}

// --- the ACL log ---

// Log contexts.
const (
	aclCtxToplevel = iota
	aclCtxMulti
	aclCtxLua
)

type aclLogEntry struct {
	count    int64
	reason   int
	context  int
	object   string
	username string
	ctime    int64 // unix ms of the last update
	cinfo    string
}

// aclLogMaxLen is acllog-max-len's default; aclLogMax the setting.
const aclLogMaxLen = 128

// addLog is addACLLogEntry: a similar entry of the last ten (same reason,
// context, object, user, within a minute) is bumped and moved to the front.
func (s *Server) addACLLog(c *Client, reason, context int, object, username string) {
	a := s.acl
	now := time.Now().UnixMilli()
	real := c
	if s.runningClient != nil && c.name == "lua" && c.conn == nil {
		real = s.runningClient // a script's command: the caller's info
	}
	info := strings.TrimSuffix(real.info(s.clock.Now()), "\n")
	for i := 0; i < len(a.log) && i < 10; i++ {
		e := a.log[i]
		delta := e.ctime - now
		if delta < 0 {
			delta = -delta
		}
		if e.reason == reason && e.context == context && delta <= 60000 && e.object == object && e.username == username {
			e.cinfo, e.ctime = info, now
			e.count++
			copy(a.log[1:i+1], a.log[:i])
			a.log[0] = e
			return
		}
	}
	e := &aclLogEntry{count: 1, reason: reason, context: context, object: object, username: username, ctime: now, cinfo: info}
	a.log = append(a.log, nil)
	copy(a.log[1:], a.log)
	a.log[0] = e
	if max := s.aclLogMax(); len(a.log) > max {
		a.log = a.log[:max]
	}
}

// logDenied records a refused command: its name, or the key or channel at idx.
func (s *Server) logDenied(c *Client, res, context, idx int, cmd *command, args [][]byte) {
	object := cmd.name
	if res == aclDeniedKey || res == aclDeniedChannel {
		object = string(args[idx])
	}
	s.addACLLog(c, res, context, object, c.user.name)
}

// aclCheckCall is call's test for a user with restrictions: it answers the
// refusal and returns false when cmd may not run.
func (s *Server) aclCheckCall(c *Client, cmd *command, args [][]byte, w *Writer) bool {
	res, idx := s.acl.checkCommand(c.user, cmd, args)
	if res == aclOK {
		return true
	}
	ctx := aclCtxToplevel
	if c.multi != nil {
		ctx = aclCtxMulti
	}
	s.logDenied(c, res, ctx, idx, cmd, args)
	s.reject(c, cmd, w, noPermMessage(res, cmd))
	return false
}

// aclCheckExec is EXEC's second look at a queued command (the rules may have
// changed since it was queued): false, with the error written, when refused.
func (s *Server) aclCheckExec(c *Client, cmd *command, args [][]byte, w *Writer) bool {
	res, idx := s.acl.checkCommand(c.user, cmd, args)
	if res == aclOK {
		return true
	}
	s.logDenied(c, res, aclCtxMulti, idx, cmd, args)
	w.Error(noPermExecMessage(res))
	return false
}

// aclCheckScript is redis.call's check: the error text for the script, "" when
// allowed.
func (s *Server) aclCheckScript(c *Client, cmd *command, args [][]byte) string {
	res, idx := s.acl.checkCommand(c.user, cmd, args)
	if res == aclOK {
		return ""
	}
	s.logDenied(c, res, aclCtxLua, idx, cmd, args)
	return aclScriptMessage(res)
}
