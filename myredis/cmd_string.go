package myredis

import (
	"math"
	"math/big"
	"strconv"
)

// commandsString registers the string commands.
func commandsString() []*command {
	return []*command{
		{name: "get", arity: 2, flags: flagReadonly, fn: cmdGet, firstKey: 1, lastKey: 1},
		{name: "set", arity: -3, flags: flagWrite, fn: cmdSet, firstKey: 1, lastKey: 1},
		{name: "setnx", arity: 3, flags: flagWrite, fn: cmdSetnx, firstKey: 1, lastKey: 1},
		{name: "setex", arity: 4, flags: flagWrite, fn: cmdSetex, firstKey: 1, lastKey: 1},
		{name: "psetex", arity: 4, flags: flagWrite, fn: cmdPsetex, firstKey: 1, lastKey: 1},
		{name: "getdel", arity: 2, flags: flagWrite, fn: cmdGetdel, firstKey: 1, lastKey: 1},
		{name: "getex", arity: -2, flags: flagWrite, fn: cmdGetex, firstKey: 1, lastKey: 1},
		{name: "getset", arity: 3, flags: flagWrite, fn: cmdGetset, firstKey: 1, lastKey: 1},
		{name: "mget", arity: -2, flags: flagReadonly, fn: cmdMget, firstKey: 1, lastKey: -1},
		{name: "mset", arity: -3, flags: flagWrite, fn: cmdMset, firstKey: 1, lastKey: -1, step: 2},
		{name: "msetnx", arity: -3, flags: flagWrite, fn: cmdMsetnx, firstKey: 1, lastKey: -1, step: 2},
		{name: "incr", arity: 2, flags: flagWrite, fn: cmdIncr, firstKey: 1, lastKey: 1},
		{name: "decr", arity: 2, flags: flagWrite, fn: cmdDecr, firstKey: 1, lastKey: 1},
		{name: "incrby", arity: 3, flags: flagWrite, fn: cmdIncrby, firstKey: 1, lastKey: 1},
		{name: "decrby", arity: 3, flags: flagWrite, fn: cmdDecrby, firstKey: 1, lastKey: 1},
		{name: "incrbyfloat", arity: 3, flags: flagWrite, fn: cmdIncrbyfloat, firstKey: 1, lastKey: 1},
		{name: "append", arity: 3, flags: flagWrite, fn: cmdAppend, firstKey: 1, lastKey: 1},
		{name: "strlen", arity: 2, flags: flagReadonly, fn: cmdStrlen, firstKey: 1, lastKey: 1},
	}
}

// getString reads key as a string. found is false for a missing key; ok is false
// (and WRONGTYPE written) when the key holds another type.
func (x *Ctx) getString(key string) (val []byte, found, ok bool) {
	e := x.db.lookup(key)
	if e == nil {
		x.s.bump(&x.s.stats.keyspaceMisses, 1)
		x.notify(notifyKeyMiss, "keymiss", key)
		return nil, false, true
	}
	x.s.bump(&x.s.stats.keyspaceHits, 1)
	b, isStr := e.str()
	if !isStr {
		x.wrongType()
		return nil, true, false
	}
	return b, true, true
}

// getStringForWrite is getString for commands that write the key (INCR, APPEND):
// like Redis's lookupKeyWrite it counts no keyspace hit or miss.
func (x *Ctx) getStringForWrite(key string) (val []byte, found, ok bool) {
	e := x.db.lookup(key)
	if e == nil {
		return nil, false, true
	}
	b, isStr := e.str()
	if !isStr {
		x.wrongType()
		return nil, true, false
	}
	return b, true, true
}

// lookupRead finds key for a command that reads it, counting a keyspace hit or
// miss as Redis's lookupKeyRead does (MGET, EXISTS, TYPE, TTL).
func (x *Ctx) lookupRead(key string) *entry {
	e := x.db.lookup(key)
	if e == nil {
		x.s.stats.keyspaceMisses++
		x.notify(notifyKeyMiss, "keymiss", key)
	} else {
		x.s.stats.keyspaceHits++
	}
	return e
}

// own returns a copy of b that owns exactly its bytes, for a value that is kept.
// An argument points into its request's buffer: keeping the argument itself would
// keep the whole request alive ("MSET big <50 MB> small y; DEL big" would hold the
// 50 MB as long as small lives), and appending to it could write into a neighbour.
func own(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

func cmdGet(x *Ctx) {
	v, found, ok := x.getString(x.arg(1))
	if !ok {
		return
	}
	if !found {
		x.w.Null()
		return
	}
	x.w.Bulk(v)
}

// setOpts are the parsed options of SET (NX XX GET KEEPTTL EX PX EXAT PXAT) and
// GETEX (PERSIST EX PX EXAT PXAT).
type setOpts struct {
	nx, xx, get, keepTTL, persist bool
	exp                           []byte // the EX/PX/EXAT/PXAT argument, nil if none
	unit                          int64  // of exp: 1000 for seconds, 1 for milliseconds
	absolute                      bool   // exp is EXAT/PXAT
}

// parseSetOpts parses the options from args[from:] as Redis's
// parseExtendedStringArgumentsOrReply does: an option may repeat (the last
// expiry wins, unparsed), conflicting ones are "ERR syntax error". forSet selects
// SET's options; otherwise GETEX's. The expiry value is checked later.
func (x *Ctx) parseSetOpts(from int, forSet bool) (setOpts, bool) {
	o := setOpts{unit: 1000}
	var ex, px, exat, pxat bool
	for i := from; i < x.nargs(); i++ {
		a := x.args[i]
		hasNext := i+1 < x.nargs()
		switch {
		case forSet && eqFold(a, "nx") && !o.xx:
			o.nx = true
		case forSet && eqFold(a, "xx") && !o.nx:
			o.xx = true
		case forSet && eqFold(a, "get"):
			o.get = true
		case forSet && eqFold(a, "keepttl") && !o.persist && !ex && !exat && !px && !pxat:
			o.keepTTL = true
		case !forSet && eqFold(a, "persist") && !ex && !exat && !px && !pxat && !o.keepTTL:
			o.persist = true
		case eqFold(a, "ex") && !o.keepTTL && !o.persist && !exat && !px && !pxat && hasNext:
			ex, o.unit, o.exp = true, 1000, x.args[i+1]
			i++
		case eqFold(a, "px") && !o.keepTTL && !o.persist && !ex && !exat && !pxat && hasNext:
			px, o.unit, o.exp = true, 1, x.args[i+1]
			i++
		case eqFold(a, "exat") && !o.keepTTL && !o.persist && !ex && !px && !pxat && hasNext:
			exat, o.unit, o.exp = true, 1000, x.args[i+1]
			i++
		case eqFold(a, "pxat") && !o.keepTTL && !o.persist && !ex && !exat && !px && hasNext:
			pxat, o.unit, o.exp = true, 1, x.args[i+1]
			i++
		default:
			x.err(msgSyntax)
			return o, false
		}
	}
	o.absolute = exat || pxat
	return o, true
}

// expireAt checks o's expiry argument and returns it as an absolute unix-ms
// deadline (0 when there is none), writing Redis's error on failure.
func (x *Ctx) expireAt(o setOpts, cmd string) (int64, bool) {
	if o.exp == nil {
		return 0, true
	}
	return x.expireArg(o.exp, o.unit, o.absolute, cmd)
}

// expireArg turns an EX/PX/EXAT/PXAT argument into an absolute unix-ms deadline,
// with Redis's checks: not an integer, <= 0, overflow.
func (x *Ctx) expireArg(arg []byte, unit int64, absolute bool, cmd string) (int64, bool) {
	n, err := strconv.ParseInt(string(arg), 10, 64)
	if err != nil || !validIntText(arg) {
		x.err(msgNotInt)
		return 0, false
	}
	if n <= 0 || (unit == 1000 && n > math.MaxInt64/1000) {
		x.w.Errorf(msgInvalidExpireFmt, cmd)
		return 0, false
	}
	n *= unit
	if !absolute {
		now := x.nowMs()
		if n > math.MaxInt64-now {
			x.w.Errorf(msgInvalidExpireFmt, cmd)
			return 0, false
		}
		n += now
	}
	return n, true
}

func cmdSet(x *Ctx) {
	o, ok := x.parseSetOpts(3, true)
	if !ok {
		return
	}
	at, ok := x.expireAt(o, "set")
	if !ok {
		return
	}
	key := x.arg(1)
	var old []byte
	var found bool
	if o.get {
		if old, found, ok = x.getString(key); !ok {
			return
		}
	} else {
		found = x.db.lookup(key) != nil // plain SET overwrites any type
	}
	if (o.nx && found) || (o.xx && !found) {
		if o.get {
			x.replyOld(old, found)
		} else {
			x.w.Null()
		}
		return
	}
	x.setString(key, own(x.args[2]), at, o.keepTTL)
	if o.get {
		x.replyOld(old, found)
	} else {
		x.ok()
	}
}

func (x *Ctx) replyOld(old []byte, found bool) {
	if found {
		x.w.Bulk(old)
	} else {
		x.w.Null()
	}
}

// setString stores a string with an optional absolute deadline (0 = none) and
// records the write for the AOF with an absolute PXAT. As in Redis, a deadline in
// the past is stored like any other (DBSIZE counts the key until it is read or
// reclaimed).
func (x *Ctx) setString(key string, val []byte, expireAt int64, keepTTL bool) {
	x.db.set(key, val, keepTTL)
	x.dirty(1)
	x.notify(notifyString, "set", key)
	switch {
	case expireAt == 0:
		// logged as sent: without a deadline, SET (NX, XX, GET, KEEPTTL), SETNX and
		// GETSET do the same again on replay
	default: // a deadline already past is kept too: Redis counts the key until it is reclaimed
		x.db.setExpire(key, expireAt)
		x.propagateAs("SET", key, string(val), "PXAT", strconv.FormatInt(expireAt, 10))
		x.notify(notifyGeneric, "expire", key)
	}
}

func cmdSetnx(x *Ctx) {
	key := x.arg(1)
	if x.db.lookup(key) != nil {
		x.w.Int(0)
		return
	}
	x.setString(key, own(x.args[2]), 0, false)
	x.w.Int(1)
}

func cmdSetex(x *Ctx)  { x.setexGeneric(1000, "setex") }
func cmdPsetex(x *Ctx) { x.setexGeneric(1, "psetex") }

func (x *Ctx) setexGeneric(unit int64, name string) {
	at, ok := x.expireArg(x.args[2], unit, false, name)
	if !ok {
		return
	}
	x.setString(x.arg(1), own(x.args[3]), at, false)
	x.ok()
}

func cmdGetdel(x *Ctx) {
	key := x.arg(1)
	v, found, ok := x.getString(key)
	if !ok {
		return
	}
	if !found {
		x.w.Null()
		return
	}
	x.db.delete(key)
	x.dirty(1)
	x.propagateAs("DEL", key)
	x.notify(notifyGeneric, "del", key)
	x.w.Bulk(v)
}

// cmdGetex checks the key before the expiry value, as Redis does: a missing key
// answers nil whatever the expiry says.
func cmdGetex(x *Ctx) {
	key := x.arg(1)
	o, ok := x.parseSetOpts(2, false)
	if !ok {
		return
	}
	v, found, ok := x.getString(key)
	if !ok {
		return
	}
	if !found {
		x.w.Null()
		return
	}
	at, ok := x.expireAt(o, "getex")
	if !ok {
		return
	}
	x.w.Bulk(v)
	switch {
	case at != 0 && o.absolute && at <= x.nowMs():
		x.db.delete(key)
		x.dirty(1)
		x.propagateAs("DEL", key)
		x.notify(notifyGeneric, "del", key)
	case at != 0:
		x.db.setExpire(key, at)
		x.dirty(1)
		x.propagateAs("PEXPIREAT", key, strconv.FormatInt(at, 10))
		x.notify(notifyGeneric, "expire", key)
	case o.persist:
		if x.db.persist(key) {
			x.dirty(1)
			x.propagateAs("PERSIST", key)
			x.notify(notifyGeneric, "persist", key)
		}
	}
}

func cmdGetset(x *Ctx) {
	key := x.arg(1)
	v, found, ok := x.getString(key)
	if !ok {
		return
	}
	x.setString(key, own(x.args[2]), 0, false)
	x.replyOld(v, found)
}

func cmdMget(x *Ctx) {
	x.w.Array(x.nargs() - 1)
	for _, k := range x.args[1:] {
		e := x.lookupRead(string(k))
		if b, ok := entryString(e); ok {
			x.w.Bulk(b)
		} else {
			x.w.Null()
		}
	}
}

func entryString(e *entry) ([]byte, bool) {
	if e == nil {
		return nil, false
	}
	b, ok := e.str()
	return b, ok
}

func cmdMset(x *Ctx) {
	if x.nargs()%2 == 0 {
		x.err(errArity(x.cmd.name))
		return
	}
	for i := 1; i < x.nargs(); i += 2 {
		x.db.set(x.arg(i), own(x.args[i+1]), false)
		x.notify(notifyString, "set", x.arg(i))
	}
	x.dirty(x.nargs() / 2)
	x.ok()
}

func cmdMsetnx(x *Ctx) {
	if x.nargs()%2 == 0 {
		x.err(errArity(x.cmd.name))
		return
	}
	for i := 1; i < x.nargs(); i += 2 {
		if x.db.lookup(x.arg(i)) != nil {
			x.w.Int(0)
			return
		}
	}
	for i := 1; i < x.nargs(); i += 2 {
		x.db.set(x.arg(i), own(x.args[i+1]), false)
		x.notify(notifyString, "set", x.arg(i))
	}
	x.dirty(x.nargs() / 2)
	x.w.Int(1)
}

func cmdIncr(x *Ctx) { x.incrBy(1) }
func cmdDecr(x *Ctx) { x.incrBy(-1) }

func cmdIncrby(x *Ctx) {
	if n, ok := x.argInt(2); ok {
		x.incrBy(n)
	}
}

func cmdDecrby(x *Ctx) {
	n, ok := x.argInt(2)
	if !ok {
		return
	}
	if n == math.MinInt64 {
		x.err("ERR decrement would overflow")
		return
	}
	x.incrBy(-n)
}

// incrBy adds n to the integer at key, keeping its TTL.
func (x *Ctx) incrBy(n int64) {
	key := x.arg(1)
	v, found, ok := x.getStringForWrite(key)
	if !ok {
		return
	}
	var cur int64
	if found {
		var err error
		cur, err = strconv.ParseInt(string(v), 10, 64)
		if err != nil || !validIntText(v) {
			x.err(msgNotInt)
			return
		}
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		x.err(msgIncrOverflow)
		return
	}
	cur += n
	x.db.set(key, strconv.AppendInt(nil, cur, 10), true)
	x.dirty(1)
	x.notify(notifyString, "incrby", key)
	x.w.Int(cur)
}

// cmdIncrbyfloat adds in long double precision and stores the sum as Redis
// prints it (see longdouble.go). The type is checked before either number.
func cmdIncrbyfloat(x *Ctx) {
	key := x.arg(1)
	v, found, ok := x.getStringForWrite(key)
	if !ok {
		return
	}
	cur := longDouble{f: new(big.Float)}
	if found {
		if cur, ok = parseLongDouble(v); !ok {
			x.err(msgNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(x.args[2])
	if !ok {
		x.err(msgNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		x.err(msgIncrFloatNaN)
		return
	}
	out := []byte(formatLongDouble(sum))
	x.db.set(key, out, true)
	x.dirty(1)
	x.notify(notifyString, "incrbyfloat", key)
	x.propagateAs("SET", key, string(out), "KEEPTTL")
	x.w.Bulk(out)
}

// parseFloatArg parses a float as Redis's strtold-based parsers do: no spaces, no NaN.
func parseFloatArg(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || b[len(b)-1] == ' ' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !isRangeErr(err) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func cmdAppend(x *Ctx) {
	key := x.arg(1)
	v, found, ok := x.getStringForWrite(key)
	if !ok {
		return
	}
	if !found {
		x.db.add(key, own(x.args[2]))
		x.dirty(1)
		x.notify(notifyString, "append", key)
		x.w.Int(int64(len(x.args[2])))
		return
	}
	if int64(len(v)+len(x.args[2])) > x.s.cfg.ProtoMaxBulkLen {
		x.err(msgStringTooLong)
		return
	}
	if x.s.par.on { // workers mode: another APPEND may be writing v's spare capacity
		v = own(v)
	}
	nv := append(v, x.args[2]...)
	x.db.set(key, nv, true)
	x.dirty(1)
	x.notify(notifyString, "append", key)
	x.w.Int(int64(len(nv)))
}

func cmdStrlen(x *Ctx) {
	v, _, ok := x.getString(x.arg(1))
	if ok {
		x.w.Int(int64(len(v)))
	}
}

// eqFold compares an argument with a lower-case option name, ignoring case.
func eqFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// bargs builds an argument vector from strings.
func bargs(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}
