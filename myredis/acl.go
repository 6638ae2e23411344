package myredis

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
)

// ACL users as Redis 7.0 has them: each user has flags (on/off, nopass),
// password hashes, and selectors; the first selector is the root one (the rules
// given outside parentheses), the others are the "(...)" selectors. A command
// is allowed when one selector allows the command, its keys and its channels.
// All of it runs on the executor goroutine.

// aclUser is one ACL user.
type aclUser struct {
	name      string
	enabled   bool
	nopass    bool
	sanitize  uint8    // 0, sanitizePayload or skipSanitizePayload
	passwords []string // SHA-256 hex digests, in the order they were added
	selectors []*aclSelector
	// unrestricted: the user may run every command on every key and channel,
	// the hot path's only test (refreshed by every change)
	unrestricted bool
	descr        string // ACL LIST's description, cached until a change
}

const (
	sanitizePayload = 1 + iota
	skipSanitizePayload
)

// keyPattern is a ~, %R~ or %W~ rule.
type keyPattern struct {
	perm    int // aclRead|aclWrite
	pattern string
}

const (
	aclRead  = 1
	aclWrite = 2
	aclAll   = aclRead | aclWrite
)

// aclSelector is a set of permissions: commands, keys, channels.
type aclSelector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	// future: +@all was given (commands added later are allowed); Redis's
	// reserved last bit
	future    bool
	cmds      []uint64         // bit per command id
	ncmds     int              // commands in the table (bits in use)
	firstArgs map[int][]string // +cmd|arg rules of commands whose bit is off
	keys      []keyPattern
	channels  []string
}

// The rule errors of ACLSetUserStringError.
var (
	errACLUnknown      = errors.New("Unknown command or category name in ACL")
	errACLSyntax       = errors.New("Syntax error")
	errACLKeysAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errACLChansAfter   = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errACLNoSuchPass   = errors.New("The password you are trying to remove from the user does not exist")
	errACLBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errACLFirstArgSub  = errors.New("Allowing first-arg of a subcommand is not supported")
	errACLDuplicate    = errors.New("Duplicate user found. A user can only be defined once in config files")
)

// aclState is the server's users, log and settings.
type aclState struct {
	cmds  aclCommandList
	byID  func(name string) *command // command or "container|sub" lookup, for rules
	users map[string]*aclUser
	dflt  *aclUser
	log   []*aclLogEntry
	// pubsubDefault: acl-pubsub-default allchannels (new selectors get &*)
	pubsubDefault bool
	words         int // uint64 words in a command bitmap
}

func newACLState(t commandTable) *aclState {
	a := &aclState{cmds: markACL(t), users: map[string]*aclUser{}}
	a.words = (len(a.cmds) + 63) / 64
	a.byID = func(name string) *command { return a.lookup(t, name) }
	a.dflt = a.newDefaultUser()
	a.users["default"] = a.dflt
	return a
}

// lookup finds a command for a rule: "get", or "config|get" (a subcommand).
func (a *aclState) lookup(t commandTable, name string) *command {
	name = strings.ToLower(name)
	if i := strings.IndexByte(name, '|'); i >= 0 {
		c := t[name[:i]]
		if c == nil || c.subs == nil {
			return nil
		}
		return c.subs[name[i+1:]]
	}
	return t[name]
}

func (a *aclState) newUser(name string) *aclUser {
	return &aclUser{name: name, selectors: []*aclSelector{a.newSelector(true)}}
}

func (a *aclState) newSelector(root bool) *aclSelector {
	return &aclSelector{root: root, cmds: make([]uint64, a.words), ncmds: len(a.cmds), allChannels: a.pubsubDefault}
}

// newDefaultUser is Redis's ACLCreateDefaultUser.
func (a *aclState) newDefaultUser() *aclUser {
	u := a.newUser("default")
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := a.setUser(u, op); err != nil {
			panic(err)
		}
	}
	return u
}

// copyUser returns a deep copy of u (staging for all-or-nothing SETUSER).
func (u *aclUser) copyUser() *aclUser {
	n := *u
	n.passwords = append([]string(nil), u.passwords...)
	n.selectors = make([]*aclSelector, len(u.selectors))
	for i, s := range u.selectors {
		n.selectors[i] = s.copySelector()
	}
	return &n
}

func (s *aclSelector) copySelector() *aclSelector {
	n := *s
	n.cmds = append([]uint64(nil), s.cmds...)
	n.keys = append([]keyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		n.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, args := range s.firstArgs {
			n.firstArgs[id] = append([]string(nil), args...)
		}
	}
	return &n
}

// refresh recomputes what the hot path reads after a change.
func (u *aclUser) refresh() {
	r := u.selectors[0]
	u.unrestricted = len(u.selectors) == 1 && r.allKeys && r.allChannels && (r.allCommands || r.allBits())
	u.descr = ""
}

// hashPassword is Redis's ACLHashPassword: SHA-256 in lower-case hex.
func hashPassword(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

func validPasswordHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// hasSpaces is ACLStringHasSpaces: C isspace or NUL.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// setUser applies one rule to u (Redis's ACLSetUser). On error u may be
// partly changed: callers apply rules to a copy.
func (a *aclState) setUser(u *aclUser, op string) error {
	defer u.refresh()
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		u.enabled = true
	case strings.EqualFold(op, "off"):
		u.enabled = false
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.sanitize = skipSanitizePayload
	case strings.EqualFold(op, "sanitize-payload"):
		u.sanitize = sanitizePayload
	case strings.EqualFold(op, "nopass"):
		u.nopass, u.passwords = true, nil
	case strings.EqualFold(op, "resetpass"):
		u.nopass, u.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = hashPassword(op[1:])
		} else if !validPasswordHash(h) {
			return errACLBadHash
		}
		if !containsString(u.passwords, h) {
			u.passwords = append(u.passwords, h)
		}
		u.nopass = false
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = hashPassword(op[1:])
		} else if !validPasswordHash(h) {
			return errACLBadHash
		}
		i := indexString(u.passwords, h)
		if i < 0 {
			return errACLNoSuchPass
		}
		u.passwords = append(u.passwords[:i], u.passwords[i+1:]...)
	case op[0] == '(' && op[len(op)-1] == ')':
		sel, err := a.selectorFromOps(op)
		if err != nil {
			return err
		}
		u.selectors = append(u.selectors, sel)
	case strings.EqualFold(op, "clearselectors"):
		u.selectors = u.selectors[:1]
	case strings.EqualFold(op, "reset"):
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels"} {
			a.setUser(u, r)
		}
		if a.pubsubDefault {
			a.setUser(u, "allchannels")
		}
		for _, r := range []string{"off", "sanitize-payload", "clearselectors", "-@all"} {
			a.setUser(u, r)
		}
	default:
		return a.setSelector(u.selectors[0], op)
	}
	return nil
}

// selectorFromOps builds a selector from "(rule rule ...)".
func (a *aclState) selectorFromOps(op string) (*aclSelector, error) {
	sel := a.newSelector(false)
	words, ok := splitInline([]byte(op[1 : len(op)-1]))
	if !ok {
		return nil, errACLSyntax
	}
	for _, w := range words {
		if err := a.setSelector(sel, string(w)); err != nil {
			return nil, err
		}
	}
	return sel, nil
}

// setSelector applies one rule to a selector (Redis's ACLSetSelector).
func (a *aclState) setSelector(s *aclSelector, op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.future, s.firstArgs = true, true, nil
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		clear(s.cmds)
		s.allCommands, s.future, s.firstArgs = false, false, nil
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return errACLChansAfter
		}
		if hasSpaces(op[1:]) {
			return errACLSyntax
		}
		if !containsString(s.channels, op[1:]) {
			s.channels = append(s.channels, op[1:])
		}
		s.allChannels = false
	case len(op) > 1 && op[0] == '+' && op[1] != '@':
		return a.allowCommand(s, op[1:])
	case len(op) > 1 && op[0] == '-' && op[1] != '@':
		c := a.byID(op[1:])
		if c == nil {
			return errACLUnknown
		}
		a.changePerm(s, c, false)
	case len(op) > 1 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := aclCategory(op[2:])
		if cat == 0 {
			return errACLUnknown
		}
		a.setCategory(s, cat, op[0] == '+')
	default:
		return errACLSyntax
	}
	return nil
}

// addKeyPattern applies ~pattern, %R~pattern, %W~pattern, %RW~pattern.
func (s *aclSelector) addKeyPattern(op string) error {
	if s.allKeys {
		return errACLKeysAfterAll
	}
	perm, off := aclAll, 1
	if op[0] == '%' {
		perm = 0
		for ; off < len(op); off++ {
			c := op[off]
			if (c == 'R' || c == 'r') && perm&aclRead == 0 {
				perm |= aclRead
			} else if (c == 'W' || c == 'w') && perm&aclWrite == 0 {
				perm |= aclWrite
			} else if c == '~' {
				off++
				break
			} else {
				return errACLSyntax
			}
		}
	}
	pat := op[min(off, len(op)):]
	if hasSpaces(pat) {
		return errACLSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == pat {
			s.keys[i].perm |= perm
			s.allKeys = false
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{perm, pat})
	s.allKeys = false
	return nil
}

// allowCommand applies +cmd, +container|sub and +cmd|firstarg.
func (a *aclState) allowCommand(s *aclSelector, name string) error {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		c := a.byID(name)
		if c == nil {
			return errACLUnknown
		}
		a.changePerm(s, c, true)
		return nil
	}
	parentName, sub := name[:i], name[i+1:]
	parent := a.byID(parentName)
	if parent == nil {
		return errACLUnknown
	}
	if strings.IndexByte(parent.name, '|') >= 0 {
		return errACLFirstArgSub
	}
	if sub == "" {
		return errACLSyntax
	}
	if parent.subs != nil {
		c := a.byID(name)
		if c == nil {
			return errACLUnknown
		}
		a.changePerm(s, c, true)
		return nil
	}
	// a first argument of a command without subcommands (SELECT|0)
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, have := range s.firstArgs[parent.acl.id] {
		if strings.EqualFold(have, sub) {
			return nil
		}
	}
	s.firstArgs[parent.acl.id] = append(s.firstArgs[parent.acl.id], sub)
	return nil
}

// changePerm is ACLChangeSelectorPerm: the command's bit and its subcommands'.
func (a *aclState) changePerm(s *aclSelector, c *command, allow bool) {
	s.setBit(c.acl.id, allow)
	delete(s.firstArgs, c.acl.id)
	for _, sc := range c.subs {
		s.setBit(sc.acl.id, allow)
	}
}

func (s *aclSelector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// allBits: every command's bit is set (+@all -get +get has no allCommands flag).
func (s *aclSelector) allBits() bool {
	for id := 0; id < s.ncmds; id++ {
		if !s.bit(id) {
			return false
		}
	}
	return s.ncmds > 0
}

func (s *aclSelector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

// setCategory sets the bits of every command in cat (containers with their
// subcommands, then subcommands of their own category).
func (a *aclState) setCategory(s *aclSelector, cat uint32, allow bool) {
	for _, c := range a.cmds {
		if strings.IndexByte(c.name, '|') >= 0 {
			if c.acl.cats&cat != 0 {
				s.setBit(c.acl.id, allow)
				delete(s.firstArgs, c.acl.id)
			}
			continue
		}
		if c.acl.cats&cat != 0 {
			a.changePerm(s, c, allow)
		}
	}
}

// setUserRules applies SETUSER's rules to a copy of u (nil: a new user) and
// returns it, or the error Redis gives.
func (a *aclState) setUserRules(u *aclUser, name string, rules []string) (*aclUser, string) {
	merged, bad := mergeSelectorArgs(rules)
	if bad >= 0 {
		return nil, "ERR Unmatched parenthesis in acl selector starting at '" + rules[bad] + "'."
	}
	var staged *aclUser
	if u != nil {
		staged = u.copyUser()
	} else {
		staged = a.newUser(name)
	}
	for _, op := range merged {
		if err := a.setUser(staged, op); err != nil {
			return nil, "ERR Error in ACL SETUSER modifier '" + cstring([]byte(op)) + "': " + err.Error()
		}
	}
	return staged, ""
}

// mergeSelectorArgs joins a selector spread over several arguments ("(~x" "+get)")
// into one; bad is the index of an unclosed one, -1 when all are closed.
func mergeSelectorArgs(args []string) (merged []string, bad int) {
	open := -1
	var cur string
	for j, op := range args {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur, open = op, j
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				merged = append(merged, cur)
				open = -1
			}
			continue
		}
		merged = append(merged, op)
	}
	return merged, open
}

// checkCredentials is ACLCheckUserCredentials: the user exists, is on, and
// has no password or this one.
func (a *aclState) checkCredentials(name, pass string) (*aclUser, bool) {
	u := a.users[name]
	if u == nil || !u.enabled {
		return nil, false
	}
	if u.nopass {
		return u, true
	}
	h := hashPassword(pass)
	for _, p := range u.passwords {
		if subtle.ConstantTimeCompare([]byte(h), []byte(p)) == 1 {
			return u, true
		}
	}
	return nil, false
}

// defaultNeedsAuth is Redis's authRequired for a client not yet authenticated.
func (a *aclState) defaultNeedsAuth() bool {
	return !a.dflt.nopass || !a.dflt.enabled
}

func containsString(list []string, s string) bool { return indexString(list, s) >= 0 }

func indexString(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
