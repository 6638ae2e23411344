package myredis

import (
	"fmt"
	"strings"
)

// Command flags.
const (
	flagWrite    = 1 << iota // may modify the keyspace (AOF, EVAL_RO refusal)
	flagReadonly             // reads only
	flagNoAuth               // allowed before AUTH
	flagTx                   // runs at once inside MULTI instead of being queued
	flagNoScript             // refused inside a Lua script
	flagNoMulti              // refused inside MULTI (WATCH)
	flagBlocking             // may block the client (BZPOPMIN)
	flagAdmin                // server administration
)

// command is one entry of the command table.
type command struct {
	name  string // lower case
	arity int    // >0 exact argument count (name included), <0 at least -arity
	flags int
	fn    func(x *Ctx)
	// key positions for COMMAND INFO and key extraction: first, last (-1 = last arg), step.
	firstKey, lastKey, step int
}

// commandTable maps a lower-case command name to its entry.
type commandTable map[string]*command

func (t commandTable) add(cmds ...*command) {
	for _, c := range cmds {
		if _, dup := t[c.name]; dup {
			panic("myredis: duplicate command " + c.name)
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

// buildCommandTable gathers every command group.
func buildCommandTable() commandTable {
	t := commandTable{}
	for _, group := range commandGroups {
		t.add(group()...)
	}
	return t
}

// commandGroups lists the registration function of each cmd_*.go file.
var commandGroups = []func() []*command{
	commandsString,
	commandsGeneric,
	commandsSortedSet,
	commandsHash,
	commandsConnection,
	commandsServer,
	commandsTransaction,
}

// errUnknownCommand is Redis's reply to a command name it does not know.
func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		s := string(a)
		if len(s) > 128 {
			s = s[:128]
		}
		fmt.Fprintf(&b, "'%s' ", s)
	}
	name := string(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	return fmt.Sprintf(msgUnknownCommand, name, b.String())
}

// errArity is Redis's reply to a wrong argument count.
func errArity(name string) string {
	return fmt.Sprintf(msgWrongArity, name)
}
