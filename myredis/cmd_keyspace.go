package myredis

import (
	"bytes"
	"strings"
)

// commandsKeyspace registers the commands that look at or move whole values:
// OBJECT, COPY, MOVE, SWAPDB, TOUCH. Every value type plugs into them through
// objectEncoder (OBJECT ENCODING) and valueCopier (COPY).
func commandsKeyspace() []*command {
	return []*command{
		{name: "object", arity: -2, flags: flagReadonly, fn: cmdObject, subs: subcommands(map[string]int{
			"encoding": 3, "freq": 3, "idletime": 3, "refcount": 3, "help": 2,
		})},
		{name: "copy", arity: -3, flags: flagWrite, fn: cmdCopy, firstKey: 1, lastKey: 2},
		{name: "move", arity: 3, flags: flagWrite, fn: cmdMove, firstKey: 1, lastKey: 1},
		{name: "swapdb", arity: 3, flags: flagWrite, fn: cmdSwapdb},
		{name: "touch", arity: -2, flags: flagReadonly, fn: cmdTouch, firstKey: 1, lastKey: -1},
	}
}

const (
	msgSameObject   = "ERR source and destination objects are the same"
	msgLFUNotPolicy = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	msgLFUPolicy    = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	msgSwapdbFirst  = "ERR invalid first DB index"
	msgSwapdbSecond = "ERR invalid second DB index"
)

// valueCopier is a value that can make an independent copy of itself (COPY).
// Strings are copied too: SETBIT, SETRANGE, BITFIELD and the PF commands
// change a string's bytes in place, so no two keys may share them.
type valueCopier interface {
	copyValue() any
}

// copyOf returns a copy of a stored value that shares nothing it could change.
func copyOf(val any) (any, bool) {
	switch v := val.(type) {
	case []byte:
		return bytes.Clone(v), true
	case valueCopier:
		return v.copyValue(), true
	}
	return nil, false
}

func (z *zset) copyValue() any {
	c := newZSet()
	z.Range(0, z.Len(), false, func(it zItem) bool {
		c.Add(it.member, it.score)
		return true
	})
	return c
}

func (h *hashValue) copyValue() any {
	c := newHash()
	if h.table() == nil { // a pack is never changed once built: shared
		c.vptr, c.kind = h.vptr, h.kind
		return c
	}
	t := newHashTable(h.Len())
	c.setTable(t)
	h.scan(0, h.Len(), func(s hashSlot) {
		t.set([]byte(s.field), s.val) // values are never changed in place: shared
	})
	return c
}

// --- OBJECT ---

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// cmdObject is OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key, and HELP. It looks
// the key up without counting an access (as Redis's LOOKUP_NOTOUCH).
func cmdObject(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	sub := strings.ToLower(x.arg(1))
	if sub == "help" {
		x.help(objectHelp)
		return
	}
	e := x.db.peek(x.arg(2))
	if e == nil {
		x.w.Null()
		return
	}
	switch sub {
	case "encoding":
		x.w.BulkString(x.s.encodingOf(e.value()))
	case "freq": // evict.go
		if !x.s.ev.lfu {
			x.err(msgLFUNotPolicy)
			return
		}
		x.w.Int(int64(x.s.lfuDecr(e)))
	case "idletime":
		if x.s.ev.lfu {
			x.err(msgLFUPolicy)
			return
		}
		x.w.Int(int64(x.s.idleMs(e) / 1000))
	case "refcount":
		x.w.Int(refcount(e.value(), x.s.ev.sharedInts))
	}
}

// refcount is what Redis answers for a value it has just stored: integers 0..9999
// are shared objects (refcount INT_MAX) unless an LRU or LFU policy with
// maxmemory needs a field per key, anything else has one reference.
func refcount(val any, sharedInts bool) int64 {
	if b, ok := val.([]byte); ok && len(b) <= 4 && sharedInts {
		if n, ok := parseRedisInt(b); ok && n >= 0 && n < 10000 {
			return 2147483647
		}
	}
	return 1
}

// --- COPY, MOVE, SWAPDB, TOUCH ---

// cmdCopy is COPY source destination [DB destination-db] [REPLACE].
func cmdCopy(x *Ctx) {
	dst := x.db
	replace := false
	for i := 3; i < x.nargs(); i++ {
		switch {
		case x.argIs(i, "replace"):
			replace = true
		case x.argIs(i, "db") && i+1 < x.nargs():
			db, ok := x.argDB(i + 1)
			if !ok {
				return
			}
			dst = db
			i++
		default:
			x.err(msgSyntax)
			return
		}
	}
	src, dstKey := x.arg(1), x.arg(2)
	if dst == x.db && src == dstKey {
		x.err(msgSameObject)
		return
	}
	e := x.lookupRead(src)
	if e == nil {
		x.w.Int(0)
		return
	}
	val, ok := copyOf(e.value())
	if !ok {
		x.err("ERR COPY of this type is not supported")
		return
	}
	if dst.lookup(dstKey) != nil {
		if !replace {
			x.w.Int(0)
			return
		}
		dst.delete(dstKey)
	}
	when, hasTTL := x.db.deadline(src)
	dst.add(dstKey, val)
	if hasTTL {
		dst.setExpire(dstKey, when)
	}
	x.dirty(1)
	dst.notify(notifyGeneric, "copy_to", dstKey)
	x.w.Int(1)
}

// argDB reads a database index argument, answering Redis's errors.
func (x *Ctx) argDB(i int) (*DB, bool) {
	n, ok := parseRedisInt(x.args[i])
	if !ok || n < -1<<31 || n > 1<<31-1 {
		x.err(msgNotInt)
		return nil, false
	}
	if n < 0 || n >= int64(len(x.s.dbs)) {
		x.err(msgInvalidDB)
		return nil, false
	}
	return x.s.dbs[n], true
}

// cmdMove is MOVE key db: the value itself changes database, with its TTL.
func cmdMove(x *Ctx) {
	dst, ok := x.argDB(2)
	if !ok {
		return
	}
	if dst == x.db {
		x.err(msgSameObject)
		return
	}
	key := x.arg(1)
	e := x.db.lookup(key)
	if e == nil || dst.lookup(key) != nil {
		x.w.Int(0)
		return
	}
	when, hasTTL := x.db.deadline(key)
	val := e.value()
	x.db.delete(key)
	dst.add(key, val)
	if hasTTL {
		dst.setExpire(key, when)
	}
	x.dirty(1)
	x.notify(notifyGeneric, "move_from", key)
	dst.notify(notifyGeneric, "move_to", key)
	x.w.Int(1)
}

// cmdSwapdb is SWAPDB index1 index2: the two databases exchange their data (keys
// and TTLs); clients stay on their database number, so they see the other data.
func cmdSwapdb(x *Ctx) {
	id1, ok1 := parseRedisInt(x.args[1])
	if !ok1 || id1 < -1<<31 || id1 > 1<<31-1 {
		x.err(msgSwapdbFirst)
		return
	}
	id2, ok2 := parseRedisInt(x.args[2])
	if !ok2 || id2 < -1<<31 || id2 > 1<<31-1 {
		x.err(msgSwapdbSecond)
		return
	}
	n := int64(len(x.s.dbs))
	if id1 < 0 || id1 >= n || id2 < 0 || id2 >= n {
		x.err(msgInvalidDB)
		return
	}
	if id1 != id2 {
		if x.s.beforeSwapDB != nil {
			x.s.beforeSwapDB(x.s.dbs[id1], x.s.dbs[id2])
		}
		x.s.dbs[id1].swapData(x.s.dbs[id2])
	}
	x.dirty(1)
	x.ok()
}

// swapData exchanges db's keys and TTLs with o's, then marks every key either
// holds as modified (WATCH, blocked clients).
func (db *DB) swapData(o *DB) {
	db.dict, o.dict = o.dict, db.dict
	db.volatile, o.volatile = o.volatile, db.volatile
	db.used, o.used = o.used, db.used // memory.go
	for _, d := range []*DB{db, o} {
		for key := range d.watchers {
			d.touch(key)
		}
		for dk := range d.s.blocking {
			if dk.db == d && d.entry(dk.key) != nil {
				d.s.signalReady(d, dk.key)
			}
		}
	}
}

// cmdTouch is TOUCH key [key ...]: the number of keys that exist; each counts as
// accessed.
func cmdTouch(x *Ctx) {
	n := 0
	for _, k := range x.args[1:] {
		if x.lookupRead(string(k)) != nil { // a hit or a miss (keymiss), as Redis
			n++
		}
	}
	x.w.Int(int64(n))
}

// crossDBKeys are the keys a command changes in a database other than the
// client's (COPY ... DB n, MOVE), for the AOF rewrite's copy-on-write.
func crossDBKeys(x *Ctx) []dbKey {
	switch x.cmd.name {
	case "move":
		if db, ok := x.s.dbIndex(x.args[2]); ok {
			return []dbKey{{db, x.arg(1)}}
		}
	case "copy":
		for i := 3; i+1 < x.nargs(); i++ {
			if x.argIs(i, "db") {
				if db, ok := x.s.dbIndex(x.args[i+1]); ok {
					return []dbKey{{db, x.arg(2)}}
				}
			}
		}
	}
	return nil
}

// dbIndex is the database an argument names, if it names one.
func (s *Server) dbIndex(arg []byte) (*DB, bool) {
	n, ok := parseRedisInt(arg)
	if !ok || n < 0 || n >= int64(len(s.dbs)) {
		return nil, false
	}
	return s.dbs[n], true
}
