package myredis

import (
	"bytes"
	"math"
	"strconv"
)

// commandsGeneric registers the key-space commands: existence, TTLs, iteration.
func commandsGeneric() []*command {
	return []*command{
		{name: "del", arity: -2, flags: flagWrite, fn: cmdDel, firstKey: 1, lastKey: -1},
		{name: "unlink", arity: -2, flags: flagWrite, fn: cmdDel, firstKey: 1, lastKey: -1},
		{name: "exists", arity: -2, flags: flagReadonly, fn: cmdExists, firstKey: 1, lastKey: -1},
		{name: "type", arity: 2, flags: flagReadonly, fn: cmdType, firstKey: 1, lastKey: 1},
		{name: "expire", arity: -3, flags: flagWrite, fn: expireCmd(1000, false), firstKey: 1, lastKey: 1},
		{name: "pexpire", arity: -3, flags: flagWrite, fn: expireCmd(1, false), firstKey: 1, lastKey: 1},
		{name: "expireat", arity: -3, flags: flagWrite, fn: expireCmd(1000, true), firstKey: 1, lastKey: 1},
		{name: "pexpireat", arity: -3, flags: flagWrite, fn: expireCmd(1, true), firstKey: 1, lastKey: 1},
		{name: "ttl", arity: 2, flags: flagReadonly, fn: ttlCmd(false, false), firstKey: 1, lastKey: 1},
		{name: "pttl", arity: 2, flags: flagReadonly, fn: ttlCmd(true, false), firstKey: 1, lastKey: 1},
		{name: "expiretime", arity: 2, flags: flagReadonly, fn: ttlCmd(false, true), firstKey: 1, lastKey: 1},
		{name: "pexpiretime", arity: 2, flags: flagReadonly, fn: ttlCmd(true, true), firstKey: 1, lastKey: 1},
		{name: "persist", arity: 2, flags: flagWrite, fn: cmdPersist, firstKey: 1, lastKey: 1},
		{name: "keys", arity: 2, flags: flagReadonly, fn: cmdKeys},
		{name: "scan", arity: -2, flags: flagReadonly | flagTouchesArbitraryKeys, fn: cmdScan},
		{name: "randomkey", arity: 1, flags: flagReadonly | flagTouchesArbitraryKeys, fn: cmdRandomkey},
		{name: "rename", arity: 3, flags: flagWrite, fn: cmdRename, firstKey: 1, lastKey: 2},
		{name: "renamenx", arity: 3, flags: flagWrite, fn: cmdRenamenx, firstKey: 1, lastKey: 2},
		{name: "dbsize", arity: 1, flags: flagReadonly, fn: cmdDbsize},
		{name: "flushdb", arity: -1, flags: flagWrite, fn: cmdFlushdb},
		{name: "flushall", arity: -1, flags: flagWrite, fn: cmdFlushall},
	}
}

func cmdDel(x *Ctx) {
	n := 0
	for _, k := range x.args[1:] {
		key := string(k)
		if x.db.lookup(key) != nil && x.db.delete(key) {
			x.notify(notifyGeneric, "del", key)
			n++
		}
	}
	x.dirty(n)
	x.w.Int(int64(n))
}

func cmdExists(x *Ctx) {
	n := 0
	for _, k := range x.args[1:] {
		if x.lookupNoTouch(string(k)) != nil {
			n++
		}
	}
	x.w.Int(int64(n))
}

// typeName is what TYPE and SCAN TYPE call a value.
func typeName(e *entry) string {
	switch v := e.value().(type) {
	case []byte:
		return "string"
	case interface{ typeName() string }:
		return v.typeName()
	}
	return "none"
}

// lookupNoTouch is lookupRead without recording an access (the LRU/LFU field,
// evict.go), as Redis's LOOKUP_NOTOUCH for EXISTS, TYPE and TTL.
func (x *Ctx) lookupNoTouch(key string) *entry {
	if x.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer x.s.par.hold()()
	}
	e := x.db.peek(key)
	if e == nil {
		x.s.stats.keyspaceMisses++
		x.notify(notifyKeyMiss, "keymiss", key)
	} else {
		x.s.stats.keyspaceHits++
	}
	return e
}

func cmdType(x *Ctx) {
	e := x.lookupNoTouch(x.arg(1))
	if e == nil {
		x.w.Simple("none")
		return
	}
	x.w.Simple(typeName(e))
}

// expireOpts are the NX|XX|GT|LT flags of EXPIRE and friends.
type expireOpts struct{ nx, xx, gt, lt bool }

func (x *Ctx) parseExpireOpts(from int) (expireOpts, bool) {
	var o expireOpts
	for _, a := range x.args[from:] {
		switch {
		case eqFold(a, "nx"):
			o.nx = true
		case eqFold(a, "xx"):
			o.xx = true
		case eqFold(a, "gt"):
			o.gt = true
		case eqFold(a, "lt"):
			o.lt = true
		default:
			x.w.Errorf(msgUnsupportedOption, string(a))
			return o, false
		}
	}
	if o.nx && (o.xx || o.gt || o.lt) {
		x.err(msgExpireOptions)
		return o, false
	}
	if o.gt && o.lt {
		x.err(msgExpireGTLT)
		return o, false
	}
	return o, true
}

// expireCmd builds EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (unit in ms).
func expireCmd(unit int64, absolute bool) func(*Ctx) {
	return func(x *Ctx) {
		o, ok := x.parseExpireOpts(3)
		if !ok {
			return
		}
		when, ok := x.argInt(2)
		if !ok {
			return
		}
		if unit == 1000 {
			if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
				x.w.Errorf(msgInvalidExpireFmt, x.cmd.name)
				return
			}
			when *= 1000
		}
		base := int64(0)
		if !absolute {
			base = x.nowMs()
		}
		if when > math.MaxInt64-base {
			x.w.Errorf(msgInvalidExpireFmt, x.cmd.name)
			return
		}
		when += base
		key := x.arg(1)
		if x.db.lookup(key) == nil {
			x.w.Int(0)
			return
		}
		cur, has := x.db.deadline(key)
		if (o.nx && has) || (o.xx && !has) || (o.gt && (!has || when <= cur)) || (o.lt && has && when >= cur) {
			x.w.Int(0)
			return
		}
		x.dirty(1)
		if when <= x.nowMs() && !x.s.loading {
			x.db.delete(key)
			x.propagateAs("DEL", key)
			x.notify(notifyGeneric, "del", key)
		} else {
			x.db.setExpire(key, when)
			x.propagateAs("PEXPIREAT", key, strconv.FormatInt(when, 10))
			x.notify(notifyGeneric, "expire", key)
		}
		x.w.Int(1)
	}
}

// ttlCmd builds TTL, PTTL (remaining) and EXPIRETIME, PEXPIRETIME (absolute).
func ttlCmd(ms, absolute bool) func(*Ctx) {
	return func(x *Ctx) {
		key := x.arg(1)
		if x.lookupNoTouch(key) == nil {
			x.w.Int(-2)
			return
		}
		when, has := x.db.deadline(key)
		if !has {
			x.w.Int(-1)
			return
		}
		switch {
		case absolute && ms:
			x.w.Int(when)
		case absolute:
			x.w.Int(when / 1000)
		default:
			ttl := max(when-x.nowMs(), 0)
			if !ms {
				ttl = (ttl + 500) / 1000
			}
			x.w.Int(ttl)
		}
	}
}

func cmdPersist(x *Ctx) {
	key := x.arg(1)
	if x.db.lookup(key) == nil || !x.db.persist(key) {
		x.w.Int(0)
		return
	}
	x.dirty(1)
	x.notify(notifyGeneric, "persist", key)
	x.w.Int(1)
}

// isExpired reports whether key has passed its deadline (without deleting it).
func (db *DB) isExpired(key string, now int64) bool {
	e := db.dict.find(key)
	return e != nil && e.hasTTL() && db.when(e) <= now
}

func cmdKeys(x *Ctx) {
	pattern := x.arg(1)
	now := x.nowMs()
	var keys []string
	x.db.each(func(k string, e *entry) {
		if (pattern == "*" || globMatch(pattern, k)) && !(e.hasTTL() && x.db.when(e) <= now) {
			keys = append(keys, k)
		}
	})
	x.w.BulkStrings(keys)
}

func cmdScan(x *Ctx) {
	cursor, ok := parseScanCursor(x.args[1])
	if !ok {
		x.err(msgInvalidCursor)
		return
	}
	pattern, typ, count := "*", "", 10 // "*" matches all; an empty MATCH matches only ""
	for i := 2; i < x.nargs(); i += 2 {
		if i+1 >= x.nargs() {
			x.err(msgSyntax)
			return
		}
		switch {
		case eqFold(x.args[i], "match"):
			pattern = x.arg(i + 1)
		case eqFold(x.args[i], "count"):
			n, ok := x.argInt(i + 1)
			if !ok {
				return
			}
			if n < 1 {
				x.err(msgSyntax)
				return
			}
			count = int(min(n, 1<<20))
		case eqFold(x.args[i], "type"):
			typ = x.arg(i + 1)
		default:
			x.err(msgSyntax)
			return
		}
	}
	var found []string
	next := x.db.scan(cursor, count, func(k string) { found = append(found, k) })
	now := x.nowMs()
	keys := found[:0]
	for _, k := range found {
		if pattern != "*" && !globMatch(pattern, k) {
			continue
		}
		if x.db.isExpired(k, now) {
			x.db.expireIfNeeded(k) // as Redis: a key SCAN meets expired is deleted
			continue
		}
		if typ != "" && !eqFold([]byte(typ), typeName(x.db.entry(k))) {
			continue
		}
		keys = append(keys, k)
	}
	x.w.Array(2)
	x.w.BulkString(strconv.FormatUint(next, 10))
	x.w.BulkStrings(keys)
}

// parseScanCursor reads a cursor as Redis does with strtoul: an optional sign
// ("-1" wraps around), digits up to the end or a NUL byte, no leading space, no
// overflow. An empty argument is cursor 0.
func parseScanCursor(b []byte) (uint64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i] // strtoul stops at the C string's end
	}
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	digits := b
	if b[0] == '+' || b[0] == '-' {
		neg, digits = b[0] == '-', b[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

func cmdRandomkey(x *Ctx) {
	if k, ok := x.db.randomKey(); ok {
		x.w.BulkString(k)
		return
	}
	x.w.Null()
}

func cmdRename(x *Ctx)   { x.rename(false) }
func cmdRenamenx(x *Ctx) { x.rename(true) }

func (x *Ctx) rename(nx bool) {
	src, dst := x.arg(1), x.arg(2)
	e := x.db.lookup(src)
	if e == nil {
		x.err(msgNoSuchKey)
		return
	}
	if src == dst {
		if nx {
			x.w.Int(0)
		} else {
			x.ok()
		}
		return
	}
	if nx && x.db.lookup(dst) != nil {
		x.w.Int(0)
		return
	}
	when, hasTTL := x.db.deadline(src)
	val := e.value()
	x.db.delete(src)
	x.db.delete(dst) // as Redis: the old destination goes, the key is added anew
	x.db.set(dst, val, false)
	if hasTTL {
		x.db.setExpire(dst, when)
	}
	x.dirty(1)
	x.notify(notifyGeneric, "rename_from", src)
	x.notify(notifyGeneric, "rename_to", dst)
	if nx {
		x.w.Int(1)
	} else {
		x.ok()
	}
}

func cmdDbsize(x *Ctx) { x.w.Int(int64(x.db.Size())) }

// flushOpt checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC.
func (x *Ctx) flushOpt() bool {
	if x.nargs() > 2 || (x.nargs() == 2 && !eqFold(x.args[1], "async") && !eqFold(x.args[1], "sync")) {
		x.err(msgSyntax)
		return false
	}
	return true
}

func cmdFlushdb(x *Ctx) {
	if !x.flushOpt() {
		return
	}
	x.db.flush()
	x.s.trackingFlushed()
	x.dirty(1)
	x.ok()
}

func cmdFlushall(x *Ctx) {
	if !x.flushOpt() {
		return
	}
	for _, db := range x.s.dbs {
		db.flush()
	}
	x.s.trackingFlushed()
	x.dirty(1)
	x.ok()
}

// scanOpts parses HSCAN's, SSCAN's and ZSCAN's [MATCH pattern] [COUNT count] from args[from:].
// pattern is "*" when every element matches (an empty MATCH matches only "").
func (x *Ctx) scanOpts(from int) (pattern string, count int, ok bool) {
	pattern, count = "*", 10
	for i := from; i < x.nargs(); i += 2 {
		switch {
		case x.argIs(i, "count") && i+1 < x.nargs():
			n, ok := x.argInt(i + 1)
			if !ok {
				return "", 0, false
			}
			if n < 1 {
				x.err(msgSyntax)
				return "", 0, false
			}
			count = int(min(n, math.MaxInt32))
		case x.argIs(i, "match") && i+1 < x.nargs():
			pattern = x.arg(i + 1)
		default:
			x.err(msgSyntax)
			return "", 0, false
		}
	}
	return pattern, count, true
}
