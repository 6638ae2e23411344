package myredis

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// commandsACL registers ACL and its subcommands.
func commandsACL() []*command {
	return []*command{
		{name: "acl", arity: -2, flags: flagNoScript, fn: cmdACL, subs: subcommands(map[string]int{
			"cat": -2, "deluser": -3, "dryrun": -4, "genpass": -2, "getuser": 3, "list": 2,
			"load": 2, "log": -2, "save": 2, "setuser": -3, "users": 2, "whoami": 2, "help": 2,
		})},
	}
}

// cmdACL serves ACL's subcommands. Runs on the executor.
func cmdACL(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch strings.ToLower(x.arg(1)) {
	case "setuser":
		x.aclSetUser()
	case "deluser":
		x.aclDelUser()
	case "getuser":
		x.aclGetUser()
	case "list", "users":
		x.aclList(eqFold(x.args[1], "users"))
	case "whoami":
		x.w.BulkString(x.c.userName())
	case "load", "save":
		x.aclLoadSave()
	case "cat":
		x.aclCat()
	case "genpass":
		x.aclGenPass()
	case "log":
		x.aclLog()
	case "dryrun":
		x.aclDryRun()
	case "help":
		x.help(aclHelp)
	}
}

var aclHelp = []string{"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Prints this help."}

func (x *Ctx) aclSetUser() {
	for j := 2; j < x.nargs(); j++ {
		x.redactArg(j) // no password in the slow log or MONITOR, as Redis (introspect.go)
	}
	name := x.arg(2)
	if hasSpaces(name) {
		x.err("ERR Usernames can't contain spaces or null characters")
		return
	}
	a := x.s.acl
	rules := make([]string, 0, x.nargs()-3)
	for _, r := range x.args[3:] {
		rules = append(rules, string(r))
	}
	old := a.users[name]
	staged, msg := a.setUserRules(old, name, rules)
	if msg != "" {
		x.err(msg)
		return
	}
	if old != nil {
		x.s.killPubsubClients(staged, old, x.c)
		*old = *staged // the same *aclUser: connected clients see the change
		old.refresh()
	} else {
		a.users[name] = staged
	}
	if name == "default" {
		x.s.aclDefaultChanged()
	}
	x.ok()
}

func (x *Ctx) aclDelUser() {
	for _, n := range x.args[2:] {
		if string(n) == "default" {
			x.err("ERR The 'default' user cannot be removed")
			return
		}
	}
	deleted := 0
	for _, n := range x.args[2:] {
		u := x.s.acl.users[string(n)]
		if u == nil {
			continue
		}
		delete(x.s.acl.users, string(n))
		x.s.disconnectUser(u, x.c)
		deleted++
	}
	x.w.Int(int64(deleted))
}

// aclGetUser answers ACL GETUSER in Redis 7.0's shape: flags, passwords, the root
// selector's commands, keys and channels, then the other selectors.
func (x *Ctx) aclGetUser() {
	u := x.s.acl.users[x.arg(2)]
	if u == nil {
		x.w.Null()
		return
	}
	x.w.Map(6)
	x.w.BulkString("flags")
	flags := []string{"off"}
	if u.enabled {
		flags[0] = "on"
	}
	if u.nopass {
		flags = append(flags, "nopass")
	}
	switch u.sanitize {
	case skipSanitizePayload:
		flags = append(flags, "skip-sanitize-payload")
	case sanitizePayload:
		flags = append(flags, "sanitize-payload")
	}
	x.w.Set(len(flags))
	for _, f := range flags {
		x.w.BulkString(f)
	}
	x.w.BulkString("passwords")
	x.w.Array(len(u.passwords))
	for _, p := range u.passwords {
		x.w.BulkString(p)
	}
	x.aclSelectorFields(u.selectors[0])
	x.w.BulkString("selectors")
	x.w.Array(len(u.selectors) - 1)
	for _, s := range u.selectors[1:] {
		x.w.Map(3)
		x.aclSelectorFields(s)
	}
}

func (x *Ctx) aclSelectorFields(s *aclSelector) {
	x.w.BulkString("commands")
	x.w.BulkString(x.s.acl.describeCommands(s))
	x.w.BulkString("keys")
	x.w.BulkString(s.keysText())
	x.w.BulkString("channels")
	x.w.BulkString(s.channelsText())
}

// sortedUsers lists users by name (Redis walks its radix tree in byte order).
func (a *aclState) sortedUsers() []*aclUser {
	users := make([]*aclUser, 0, len(a.users))
	for _, u := range a.users {
		users = append(users, u)
	}
	sort.Slice(users, func(i, j int) bool { return users[i].name < users[j].name })
	return users
}

func (x *Ctx) aclList(justNames bool) {
	users := x.s.acl.sortedUsers()
	x.w.Array(len(users))
	for _, u := range users {
		if justNames {
			x.w.BulkString(u.name)
		} else {
			x.w.BulkString("user " + u.name + " " + x.s.acl.describeUser(u))
		}
	}
}

func (x *Ctx) aclLoadSave() {
	file := x.s.cfg.ACL.File
	if file == "" {
		x.err("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")
		return
	}
	if eqFold(x.args[1], "load") {
		if errs := x.s.aclLoadFile(file); errs != "" {
			x.err("ERR " + errs)
			return
		}
		x.ok()
		return
	}
	if err := x.s.aclSaveFile(file); err != nil {
		x.s.log.Warn("acl save failed", "err", err)
		x.err("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	x.ok()
}

func (x *Ctx) aclCat() {
	if x.nargs() > 3 {
		x.err(aclSubcommandSyntax(x.args[1]))
		return
	}
	if x.nargs() == 2 {
		x.w.BulkStrings(aclCategoryNames)
		return
	}
	cat := aclCategory(x.arg(2))
	if cat == 0 {
		x.w.Errorf("ERR Unknown category '%s'", truncate(x.arg(2), 128))
		return
	}
	var names []string
	for _, c := range x.s.acl.cmds {
		if c.acl.cats&cat != 0 {
			names = append(names, c.name)
		}
	}
	x.w.BulkStrings(names)
}

func (x *Ctx) aclGenPass() {
	if x.nargs() > 3 {
		x.err(aclSubcommandSyntax(x.args[1]))
		return
	}
	bits := int64(256)
	if x.nargs() == 3 {
		n, ok := x.argInt(2)
		if !ok {
			return
		}
		bits = n
	}
	if bits <= 0 || bits > 4096 {
		x.err("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	x.w.BulkString(hex.EncodeToString(buf)[:chars])
}

func (x *Ctx) aclLog() {
	if x.nargs() > 3 {
		x.err(aclSubcommandSyntax(x.args[1]))
		return
	}
	a := x.s.acl
	count := int64(10)
	if x.nargs() == 3 {
		if eqFold(x.args[2], "reset") {
			a.log = nil
			x.ok()
			return
		}
		n, ok := x.argInt(2)
		if !ok {
			return
		}
		count = max(n, 0)
	}
	count = min(count, int64(len(a.log)))
	x.w.Array(int(count))
	now := x.s.clock.Now().UnixMilli()
	for _, e := range a.log[:count] {
		x.w.Map(7)
		x.w.BulkString("count")
		x.w.Int(e.count)
		x.w.BulkString("reason")
		x.w.BulkString([]string{"", "command", "key", "auth", "channel"}[e.reason])
		x.w.BulkString("context")
		x.w.BulkString([]string{"toplevel", "multi", "lua"}[e.context])
		x.w.BulkString("object")
		x.w.BulkString(e.object)
		x.w.BulkString("username")
		x.w.BulkString(e.username)
		x.w.BulkString("age-seconds")
		x.w.Double(float64(now-e.ctime) / 1000)
		x.w.BulkString("client-info")
		x.w.BulkString(e.cinfo)
	}
}

func (x *Ctx) aclDryRun() {
	u := x.s.acl.users[x.arg(2)]
	if u == nil {
		x.w.Errorf("ERR User '%s' not found", cstring(x.args[2]))
		return
	}
	args := x.args[3:]
	cmd := x.s.table.lookup(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = cmd.subcommand(args[1])
	}
	if cmd == nil {
		x.w.Errorf("ERR Command '%s' not found", cstring(args[0]))
		return
	}
	if !cmd.arityOK(len(args)) {
		x.w.Errorf("ERR wrong number of arguments for '%s' command", cmd.name)
		return
	}
	res, idx := x.s.acl.checkCommand(u, cmd, args)
	switch res {
	case aclOK:
		x.ok()
	case aclDeniedCmd:
		x.w.BulkString("This user has no permissions to run the '" + cmd.name + "' command")
	case aclDeniedKey:
		x.w.BulkString("This user has no permissions to access the '" + cstring(args[idx]) + "' key")
	case aclDeniedChannel:
		x.w.BulkString("This user has no permissions to access the '" + cstring(args[idx]) + "' channel")
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// --- the ACL file ---

// aclLoadFile is ACLLoadFromFile: every line is checked; with any error nothing
// changes and the errors come back as one line. Runs on the executor.
func (s *Server) aclLoadFile(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("Error loading ACLs, opening file '%s': %s", file, errnoText(err))
	}
	users, errs := s.acl.parseACLFile(string(data), file)
	if errs != "" {
		return errs + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	s.acl.installUsers(users, s)
	return ""
}

// parseACLFile reads an ACL file into a fresh set of users; errs is Redis's
// concatenated error text ("" when the file is good).
func (a *aclState) parseACLFile(text, file string) (map[string]*aclUser, string) {
	users := map[string]*aclUser{}
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		linenum := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := splitSpaces(line)
		if len(argv) == 0 {
			continue
		}
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", file, linenum)
			continue
		}
		if hasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", file, linenum, argv[1])
			continue
		}
		if users[argv[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum)
			continue
		}
		u := a.newUser(argv[1])
		users[argv[1]] = u
		merged, bad := mergeSelectorArgs(argv[2:])
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", file, linenum)
			merged = nil
		}
		syntaxErr := false
		for _, op := range merged {
			op = strings.Trim(op, "\t\r\n")
			if err := a.setUser(u, op); err != nil {
				if err == errACLUnknown {
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", file, linenum, op, err)
				} else if !syntaxErr {
					fmt.Fprintf(&errs, "%s:%d: %s. ", file, linenum, err)
					syntaxErr = true
				}
			}
		}
	}
	return users, errs.String()
}

// splitSpaces is sdssplitlen on single spaces: empty words between two spaces
// are kept, as Redis keeps them (and then ignores them as no-op rules).
func splitSpaces(line string) []string {
	return strings.Split(line, " ")
}

// installUsers replaces the users with a loaded set, keeping the default user's
// identity (clients point at it); clients of the old users are closed.
func (a *aclState) installUsers(users map[string]*aclUser, s *Server) {
	newDefault := users["default"]
	if newDefault == nil {
		newDefault = a.newDefaultUser()
	}
	*a.dflt = *newDefault
	a.dflt.name = "default"
	a.dflt.refresh()
	users["default"] = a.dflt
	old := a.users
	a.users = users
	for name, u := range old {
		if name != "default" {
			s.disconnectUser(u, nil)
		}
	}
	s.aclDefaultChanged()
}

// aclSaveFile is ACLSaveToFile: every user in ACL LIST's form, written to a
// temporary file renamed over the old one.
func (s *Server) aclSaveFile(file string) error {
	var b strings.Builder
	for _, u := range s.acl.sortedUsers() {
		b.WriteString("user " + u.name + " " + s.acl.describeUser(u) + "\n")
	}
	tmp := file + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(s.clock.Now().UnixMilli(), 10)
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// errnoText is strerror's text for a file error ("No such file or directory").
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	msg := err.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// aclSubcommandSyntax is addReplySubcommandSyntaxError for ACL.
func aclSubcommandSyntax(sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + truncate(string(sub), 128) + "'. Try ACL HELP."
}
