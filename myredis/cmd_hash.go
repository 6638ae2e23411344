package myredis

import (
	"math"
	"math/big"
	"strconv"
)

// commandsHash registers the hash commands. Every handler runs on the executor
// goroutine and checks all of its arguments before it changes anything; a hash whose
// last field goes is deleted with it. The value type is hashValue (hash.go).
func commandsHash() []*command {
	return []*command{
		{name: "hset", arity: -4, flags: flagWrite, fn: cmdHset, firstKey: 1, lastKey: 1},
		{name: "hmset", arity: -4, flags: flagWrite, fn: cmdHset, firstKey: 1, lastKey: 1},
		{name: "hsetnx", arity: 4, flags: flagWrite, fn: cmdHsetnx, firstKey: 1, lastKey: 1},
		{name: "hget", arity: 3, flags: flagReadonly, fn: cmdHget, firstKey: 1, lastKey: 1},
		{name: "hmget", arity: -3, flags: flagReadonly, fn: cmdHmget, firstKey: 1, lastKey: 1},
		{name: "hgetall", arity: 2, flags: flagReadonly, fn: hgetallCmd(true, true), firstKey: 1, lastKey: 1},
		{name: "hkeys", arity: 2, flags: flagReadonly, fn: hgetallCmd(true, false), firstKey: 1, lastKey: 1},
		{name: "hvals", arity: 2, flags: flagReadonly, fn: hgetallCmd(false, true), firstKey: 1, lastKey: 1},
		{name: "hdel", arity: -3, flags: flagWrite, fn: cmdHdel, firstKey: 1, lastKey: 1},
		{name: "hlen", arity: 2, flags: flagReadonly, fn: cmdHlen, firstKey: 1, lastKey: 1},
		{name: "hexists", arity: 3, flags: flagReadonly, fn: cmdHexists, firstKey: 1, lastKey: 1},
		{name: "hstrlen", arity: 3, flags: flagReadonly, fn: cmdHstrlen, firstKey: 1, lastKey: 1},
		{name: "hincrby", arity: 4, flags: flagWrite, fn: cmdHincrby, firstKey: 1, lastKey: 1},
		{name: "hincrbyfloat", arity: 4, flags: flagWrite, fn: cmdHincrbyfloat, firstKey: 1, lastKey: 1},
		{name: "hrandfield", arity: -2, flags: flagReadonly, fn: cmdHrandfield, firstKey: 1, lastKey: 1},
		{name: "hscan", arity: -3, flags: flagReadonly, fn: cmdHscan, firstKey: 1, lastKey: 1},
	}
}

// readHash looks key up for a read: h is nil when the key is missing; ok is false
// (and WRONGTYPE written) when it holds another type.
func (x *Ctx) readHash(key string) (h *hashValue, ok bool) { return readValue[*hashValue](x, key) }

// lookupHashWrite looks key up for a write, as readHash without the hit counters.
func (x *Ctx) lookupHashWrite(key string) (h *hashValue, ok bool) {
	return writeValue[*hashValue](x, key)
}

func (x *Ctx) entryHash(e *entry) (*hashValue, bool) { return valueAs[*hashValue](x, e) }

// modifyHash is called just before h, key's hash as lookupHashWrite found it (nil:
// none), changes in place. It creates the key when missing and otherwise marks it
// modified for WATCH. It returns the hash to change.
func (x *Ctx) modifyHash(key string, h *hashValue) *hashValue {
	if h == nil {
		h = newHash()
		x.db.add(key, h)
		return h
	}
	x.db.touch(key)
	return h
}

// HSET key field value [field value ...] answers the number of new fields; HMSET,
// the same command under its old name, answers OK.
func cmdHset(x *Ctx) {
	if x.nargs()%2 != 0 {
		x.err(errArity(x.cmd.name))
		return
	}
	key := x.arg(1)
	h, ok := x.lookupHashWrite(key)
	if !ok {
		return
	}
	added := x.modifyHash(key, h).setPairs(x.args[2:], x.s.limits())
	x.dirty((x.nargs() - 2) / 2)
	x.notify(notifyHash, "hset", key)
	if x.cmd.name == "hmset" {
		x.ok()
		return
	}
	x.w.Int(int64(added))
}

func cmdHsetnx(x *Ctx) {
	key := x.arg(1)
	h, ok := x.lookupHashWrite(key)
	if !ok {
		return
	}
	if h != nil {
		if _, exists := h.get(x.args[2]); exists {
			x.w.Int(0)
			return
		}
	}
	x.modifyHash(key, h).setPairs(x.args[2:4], x.s.limits())
	x.dirty(1)
	x.notify(notifyHash, "hset", key)
	x.w.Int(1)
}

func cmdHget(x *Ctx) {
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	if h == nil {
		x.w.Null()
		return
	}
	if v, found := h.get(x.args[2]); found {
		x.w.Bulk(v)
		return
	}
	x.w.Null()
}

func cmdHmget(x *Ctx) {
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	x.w.Array(x.nargs() - 2)
	for _, f := range x.args[2:] {
		if h == nil {
			x.w.Null()
			continue
		}
		if v, found := h.get(f); found {
			x.w.Bulk(v)
		} else {
			x.w.Null()
		}
	}
}

// hgetallCmd builds HGETALL (fields and values), HKEYS and HVALS. The order is the
// hash's insertion order (see hashValue).
func hgetallCmd(fields, values bool) func(*Ctx) {
	return func(x *Ctx) {
		h, ok := x.readHash(x.arg(1))
		if !ok {
			return
		}
		n := 0
		if h != nil {
			n = h.Len()
		}
		if fields && values {
			x.w.Map(n) // RESP2: an array of fields and values
		} else {
			x.w.Array(n)
		}
		if h == nil {
			return
		}
		h.Range(func(f string, v []byte) bool {
			if fields {
				x.w.BulkString(f)
			}
			if values {
				x.w.Bulk(v)
			}
			return true
		})
	}
}

func cmdHdel(x *Ctx) {
	key := x.arg(1)
	h, ok := x.lookupHashWrite(key)
	if !ok {
		return
	}
	if h == nil {
		x.w.Int(0)
		return
	}
	deleted := 0
	for _, f := range x.args[2:] {
		if h.del(f) {
			deleted++
			if h.Len() == 0 {
				break
			}
		}
	}
	if deleted > 0 {
		x.notify(notifyHash, "hdel", key)
		if h.Len() == 0 {
			x.db.delete(key)
			x.notify(notifyGeneric, "del", key)
		} else {
			x.db.touch(key)
		}
		x.dirty(deleted)
	}
	x.w.Int(int64(deleted))
}

func cmdHlen(x *Ctx) {
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	if h == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(h.Len()))
}

func cmdHexists(x *Ctx) {
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	found := false
	if h != nil {
		_, found = h.get(x.args[2])
	}
	x.w.Bool(found)
}

func cmdHstrlen(x *Ctx) {
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	var v []byte
	if h != nil {
		v, _ = h.get(x.args[2])
	}
	x.w.Int(int64(len(v)))
}

// HINCRBY key field increment: the field (0 when missing) must hold a 64-bit integer
// as Redis writes one; the sum must not overflow.
func cmdHincrby(x *Ctx) {
	incr, ok := x.argInt(3)
	if !ok {
		return
	}
	key := x.arg(1)
	h, ok := x.lookupHashWrite(key)
	if !ok {
		return
	}
	var cur int64
	if h != nil {
		if v, found := h.get(x.args[2]); found {
			if cur, ok = parseHashInt(v); !ok {
				x.err(msgHashNotInt)
				return
			}
		}
	}
	if (incr < 0 && cur < 0 && incr < math.MinInt64-cur) ||
		(incr > 0 && cur > 0 && incr > math.MaxInt64-cur) {
		x.err(msgIncrOverflow)
		return
	}
	cur += incr
	x.modifyHash(key, h).set(x.args[2], strconv.AppendInt(nil, cur, 10), x.s.limits())
	x.dirty(1)
	x.notify(notifyHash, "hincrby", key)
	x.w.Int(cur)
}

// parseHashInt reads a stored value as Redis's string2ll: no sign '+', no leading
// zeros or spaces, no "-0".
func parseHashInt(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil && validIntText(v)
}

// HINCRBYFLOAT key field increment adds in C's long double, as Redis, and prints the
// sum as INCRBYFLOAT does (longdouble.go). The AOF records the result as an HSET,
// as Redis replicates it, so a replay does not depend on float formatting.
func cmdHincrbyfloat(x *Ctx) {
	incr, ok := parseLongDouble(x.args[3])
	if !ok {
		x.err(msgNotFloat)
		return
	}
	if incr.inf {
		x.err(msgHashIncrNaN)
		return
	}
	key := x.arg(1)
	h, ok := x.lookupHashWrite(key)
	if !ok {
		return
	}
	cur := longDouble{f: new(big.Float)}
	if h != nil {
		if v, found := h.get(x.args[2]); found {
			if cur, ok = parseLongDouble(v); !ok {
				x.err(msgHashNotFloat)
				return
			}
		}
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		x.err(msgIncrFloatNaN)
		return
	}
	out := []byte(formatLongDouble(sum))
	x.modifyHash(key, h).set(x.args[2], out, x.s.limits())
	x.dirty(1)
	x.notify(notifyHash, "hincrbyfloat", key)
	x.propagateAs("HSET", key, x.arg(2), string(out))
	x.w.Bulk(out)
}

// hrandfieldMax bounds HRANDFIELD's negative count as zrandMax bounds ZRANDMEMBER's:
// Redis would build a reply of any size (and stall every client while doing it).
const hrandfieldMax = zrandMax

// HRANDFIELD key [count [WITHVALUES]]. A positive count gives that many distinct
// fields (at most all, in hash order, as a Redis listpack gives them); a negative
// count gives |count| fields drawn independently, so some may repeat.
func cmdHrandfield(x *Ctx) {
	if x.nargs() == 2 {
		h, ok := x.readHash(x.arg(1))
		if !ok {
			return
		}
		if h == nil {
			x.w.Null()
			return
		}
		x.w.BulkString(h.random().field)
		return
	}
	count, ok := x.argInt(2)
	if !ok {
		return
	}
	if count == math.MinInt64 {
		x.err(msgRandCountRange)
		return
	}
	if x.nargs() > 4 || (x.nargs() == 4 && !x.argIs(3, "withvalues")) {
		x.err(msgSyntax)
		return
	}
	withValues := x.nargs() == 4
	if withValues && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		x.err(msgOutOfRange)
		return
	}
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	if h == nil || count == 0 {
		x.w.Array(0)
		return
	}
	nested := withValues && x.w.RESP3() // [field, value] pairs, as Redis 7.0
	head := func(n int) {
		if withValues && !nested {
			n *= 2
		}
		x.w.Array(n)
	}
	one := func(s hashSlot) {
		if nested {
			x.w.Array(2)
		}
		x.w.BulkString(s.field)
		if withValues {
			x.w.Bulk(s.val)
		}
	}
	switch {
	case count < 0 || count == 1:
		// drawn one by one, written as drawn: nothing the size of the reply is built
		n := max(-count, 1)
		if n > hrandfieldMax {
			x.err(msgOutOfRange)
			return
		}
		head(int(n))
		for range n {
			one(h.random())
		}
	case count >= int64(h.Len()):
		head(h.Len())
		h.Range(func(f string, v []byte) bool {
			one(hashSlot{field: f, val: v})
			return true
		})
	default:
		picked := h.sample(int(count))
		head(len(picked))
		for _, s := range picked {
			one(s)
		}
	}
}

// HSCAN key cursor [MATCH pattern] [COUNT count]. A hash within Redis's listpack
// limits comes back whole with cursor 0, as Redis sends a listpack. A bigger one is
// walked in insertion order, count fields a call; the cursor is a field's sequence
// number (hashValue.scan), so a full walk returns every field present throughout
// exactly once, whatever is added or deleted meanwhile.
func cmdHscan(x *Ctx) {
	cursor, ok := parseScanCursorString(x.arg(2))
	if !ok {
		x.err(msgInvalidCursor)
		return
	}
	h, ok := x.readHash(x.arg(1))
	if !ok {
		return
	}
	if h == nil {
		x.w.Array(2)
		x.w.BulkString("0")
		x.w.Array(0)
		return
	}
	pattern, count, ok := x.scanOpts(3)
	if !ok {
		return
	}
	var found []hashSlot
	keep := func(s hashSlot) {
		if pattern == "*" || globMatch(pattern, s.field) {
			found = append(found, s)
		}
	}
	next := uint64(0)
	if h.table() != nil {
		next = h.scan(cursor, count, keep)
	} else {
		h.scan(0, h.Len(), keep)
	}
	x.w.Array(2)
	x.w.BulkString(strconv.FormatUint(next, 10))
	x.w.Array(2 * len(found))
	for _, s := range found {
		x.w.BulkString(s.field)
		x.w.Bulk(s.val)
	}
}
