package myredis

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Command flags.
const (
	flagWrite                = 1 << iota // may modify the keyspace (AOF, EVAL_RO refusal)
	flagReadonly                         // reads only
	flagNoAuth                           // allowed before AUTH
	flagTx                               // runs at once inside MULTI instead of being queued
	flagNoScript                         // refused inside a Lua script
	flagNoMulti                          // refused inside MULTI (WATCH)
	flagBlocking                         // may block the client (BZPOPMIN)
	flagAdmin                            // server administration
	flagDenyOOM                          // refused over maxmemory (Redis's denyoom; maxmemory.go)
	flagProtect                          // DEBUG: refused unless enable-debug-command allows it (introspect_config.go)
	flagMayReplicate                     // not a write but may reach the replication stream (Redis's may_replicate; pause.go)
	flagTouchesArbitraryKeys             // SCAN, RANDOMKEY: the expired keys they meet are deleted unwrapped (propagate.go)
	flagStale                            // served by a replica whose link is down (Redis's stale; replication_guard.go)
	flagProtectModule                    // MODULE LOAD/LOADEX/UNLOAD: refused unless enable-module-command allows it
)

// command is one entry of the command table.
type command struct {
	name  string // lower case
	arity int    // >0 exact argument count (name included), <0 at least -arity
	flags int
	fn    func(x *Ctx)
	// key positions for COMMAND INFO and key extraction: first, last (-1 = last arg), step.
	firstKey, lastKey, step int
	// keysFn, when set, finds the keys instead (SORT's STORE destination).
	keysFn func(args [][]byte) [][]byte
	// numKeysAt, when set, is the position of a numkeys argument followed by
	// that many keys (FCALL), instead of firstKey..lastKey.
	numKeysAt int
	// subs are a container command's subcommands by lower-case name, each with its
	// own arity (and fn, flags: the container's unless set). call resolves the
	// subcommand before checking arity, so "CLIENT LIST x" is refused as Redis
	// refuses it, 'client|list' in the error, even while queueing a MULTI.
	subs map[string]*command
	// stats are INFO commandstats/latencystats figures (stats.go), executor-owned.
	stats cmdStats
	// intro are the slow log's, latency monitor's and MONITOR's flags (introspect.go)
	intro uint8
	// serves, when set, tells whether a client blocked in this command can be
	// served from key now; one it refuses keeps its place in line (blocking).
	serves func(db *DB, key string) bool
	// acl is the command's ACL id, categories and key specs (acl_meta.go)
	acl aclCmd
	// servesArgs, when set, is serves for a command whose answer depends on its
	// arguments too (XREAD: the ID it waits past).
	servesArgs func(db *DB, key string, args [][]byte) bool
}

// subcommands builds a container's subcommand table from name -> arity.
func subcommands(arities map[string]int) map[string]*command {
	subs := make(map[string]*command, len(arities))
	for name, arity := range arities {
		subs[name] = &command{name: name, arity: arity}
	}
	return subs
}

// subcommand finds the subcommand named by arg (any letter case).
func (c *command) subcommand(arg []byte) *command {
	return c.subs[strings.ToLower(string(arg))]
}

// resolveSubcommand is for a container's handler reached with the container
// itself (a caller that did not go through call, such as a script): it checks
// the subcommand's name and arity as call does, writing the error if they are
// wrong. Through call it has nothing to do.
func (x *Ctx) resolveSubcommand() bool {
	if x.cmd.subs == nil || x.nargs() < 2 {
		return true
	}
	sub := x.cmd.subcommand(x.args[1])
	switch {
	case sub == nil:
		x.err(errUnknownSubcommand(x.args))
		return false
	case !sub.arityOK(x.nargs()):
		x.err(errArity(sub.name))
		return false
	}
	return true
}

// commandTable maps a lower-case command name to its entry.
type commandTable map[string]*command

func (t commandTable) add(cmds ...*command) {
	for _, c := range cmds {
		if _, dup := t[c.name]; dup {
			panic("myredis: duplicate command " + c.name)
		}
		for sub, sc := range c.subs {
			sc.name = c.name + "|" + sub
			if sc.fn == nil {
				sc.fn = c.fn
			}
			sc.flags |= c.flags
		}
		t[c.name] = c
	}
}

// lookup finds a command by name in any letter case without allocating.
func (t commandTable) lookup(name []byte) *command {
	var buf [32]byte
	if len(name) > len(buf) {
		return t[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return t[string(buf[:len(name)])]
}

// arityOK reports whether n arguments (name included) fit the command.
func (c *command) arityOK(n int) bool {
	if c.arity >= 0 {
		return n == c.arity
	}
	return n >= -c.arity
}

// keys returns the key arguments of args, following the command's key spec.
func (c *command) keys(args [][]byte) [][]byte {
	if c.keysFn != nil {
		return c.keysFn(args)
	}
	if c.numKeysAt > 0 {
		return numKeysArgs(args, c.numKeysAt)
	}
	if c.firstKey == 0 || len(args) <= c.firstKey {
		return nil
	}
	last := c.lastKey
	if last < 0 {
		last = len(args) + last
	}
	step := max(c.step, 1)
	var keys [][]byte
	for i := c.firstKey; i <= last && i < len(args); i += step {
		keys = append(keys, args[i])
	}
	return keys
}

// numKeysArgs are the keys after a numkeys argument at position at.
func numKeysArgs(args [][]byte, at int) [][]byte {
	if len(args) <= at {
		return nil
	}
	n, ok := parseRedisInt(args[at])
	if !ok || n < 0 || n > int64(len(args)-at-1) {
		return nil
	}
	return args[at+1 : at+1+int(n)]
}

// buildCommandTable gathers every command group.
func buildCommandTable() commandTable {
	t := commandTable{}
	for _, group := range commandGroups {
		t.add(group()...)
	}
	markDenyOOM(t)       // maxmemory.go
	markStale(t)         // replication_guard.go
	markIntrospection(t) // introspect.go
	markMayReplicate(t)  // pause.go
	return t
}

// CommandNames lists the commands MyRedis serves, lower case, sorted (for tools:
// internal/gencmdinfo keeps Redis's COMMAND INFO and DOCS entries for these).
func CommandNames() []string {
	t := buildCommandTable()
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// commandGroups lists the registration function of each cmd_*.go file.
var commandGroups = []func() []*command{
	commandsString,
	commandsStringRange,
	commandsBitops,
	commandsHLL,
	commandsGeneric,
	commandsSortedSet,
	commandsHash,
	commandsSet,
	commandsSort,
	commandsConnection,
	commandsServer,
	commandsTransaction,
	commandsList,
	commandsScripting,
	commandsShutdown,
	commandsPersistence,
	commandsDump,
	commandsMigrate,
	commandsKeyspace,
	commandsFunctions,
	commandsGeo,
	commandsPubSub,
	commandsACL,
	commandsStream,
	commandsMemory,
	commandsModule, // cmd_module.go
	commandsLolwut, // lolwut.go
	commandsCluster,
}

// errUnknownCommand is Redis's reply to a command name it does not know. Like
// Redis's "%.*s" it quotes arguments until 128 bytes of them are shown, cutting
// the last one to fit, and stops each at a NUL byte (C strings).
func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		s := cstring(a)
		if len(s) > 128-b.Len() {
			s = s[:128-b.Len()]
		}
		fmt.Fprintf(&b, "'%s' ", s)
	}
	name := cstring(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	return fmt.Sprintf(msgUnknownCommand, name, b.String())
}

// errUnknownSubcommand is Redis's reply to "CLIENT NOSUCH".
func errUnknownSubcommand(args [][]byte) string {
	sub := cstring(args[1])
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return fmt.Sprintf(msgUnknownSubcommand, sub, strings.ToUpper(cstring(args[0])))
}

// cstring is b as C's "%s" prints it: up to the first NUL byte.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// errArity is Redis's reply to a wrong argument count.
func errArity(name string) string {
	return fmt.Sprintf(msgWrongArity, name)
}
