package myredis

import (
	"strconv"
)

// ZMPOP and BZMPOP (Redis 7): pop from the first non-empty of several sorted sets.
// Registered with the sorted-set commands (commandsSortedSet appends these).

func zmpopCommands() []*command {
	return []*command{
		{name: "zmpop", arity: -4, flags: flagWrite, fn: zmpopCmd(false), numKeysAt: 1},
		{name: "bzmpop", arity: -5, flags: flagWrite | flagBlocking, fn: zmpopCmd(true), numKeysAt: 2},
	}
}

const (
	msgCountPositive = "ERR count should be greater than 0"
)

// zmpopArgs are ZMPOP's parsed arguments.
type zmpopArgs struct {
	keys  []string
	max   bool
	count int64
}

// parseZmpop reads numkeys key... MIN|MAX [COUNT count] from position at, as
// Redis's zmpopGenericCommand, writing its errors.
func (x *Ctx) parseZmpop(at int) (zmpopArgs, bool) {
	var a zmpopArgs
	numkeys, ok := parseRedisInt(x.args[at])
	if !ok || numkeys < 1 {
		x.err(msgNumkeysPositive)
		return a, false
	}
	whereAt := int64(at) + numkeys + 1
	if whereAt >= int64(x.nargs()) {
		x.err(msgSyntax)
		return a, false
	}
	switch {
	case x.argIs(int(whereAt), "min"):
	case x.argIs(int(whereAt), "max"):
		a.max = true
	default:
		x.err(msgSyntax)
		return a, false
	}
	a.count = -1
	for j := int(whereAt) + 1; j < x.nargs(); j++ {
		if a.count == -1 && x.argIs(j, "count") && j+1 < x.nargs() {
			j++
			n, ok := parseRedisInt(x.args[j])
			if !ok || n < 1 {
				x.err(msgCountPositive)
				return a, false
			}
			a.count = n
			continue
		}
		x.err(msgSyntax)
		return a, false
	}
	if a.count == -1 {
		a.count = 1
	}
	for _, k := range x.args[at+1 : whereAt] {
		a.keys = append(a.keys, string(k))
	}
	return a, true
}

// zmpopCmd builds ZMPOP numkeys key... MIN|MAX [COUNT n] and BZMPOP timeout
// numkeys key... MIN|MAX [COUNT n]. The reply is [key, [[member, score], ...]];
// the AOF records ZPOPMIN/ZPOPMAX key count, as Redis propagates it.
func zmpopCmd(blocking bool) func(*Ctx) {
	return func(x *Ctx) {
		at := 1
		var timeoutArg []byte
		if blocking {
			at, timeoutArg = 2, x.args[1]
		}
		if blocking {
			if _, errMsg := parseTimeout(timeoutArg); errMsg != "" {
				x.err(errMsg)
				return
			}
		}
		a, ok := x.parseZmpop(at)
		if !ok {
			return
		}
		for _, key := range a.keys {
			z, ok := x.writeZSet(key)
			if !ok {
				return
			}
			if z == nil {
				continue
			}
			items := x.pop(key, z, a.max, clampInt(a.count))
			name := "ZPOPMIN"
			if a.max {
				name = "ZPOPMAX"
			}
			x.propagateAs(name, key, strconv.Itoa(len(items)))
			x.w.Array(2)
			x.w.BulkString(key)
			x.w.Array(len(items))
			for _, it := range items {
				x.w.Array(2)
				x.w.BulkString(it.member)
				x.replyScore(it.score)
			}
			return
		}
		if !blocking || !x.canBlock() {
			// nothing to pop; inside MULTI or a script BZMPOP answers as if timed out
			x.w.NullArray()
			return
		}
		timeout, _ := parseTimeout(timeoutArg)
		x.block(a.keys, timeout)
	}
}
