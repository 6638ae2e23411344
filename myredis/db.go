package myredis

import (
	"math/rand/v2"
	"unsafe"
)

// entry is one key: its name, its value and its bookkeeping, in one 48-byte
// allocation. Its value (value, setValue) is a []byte for a string and *zset,
// *hashValue... for the other types. An entry stays the same object while its
// key exists (handlers hold it across a command); it leaves the DB only through
// remove, flush or swapData. Its deadline, when it has one, is in DB.volatile
// (DB.when): most keys of a cache have none, and the 8 bytes are paid only by
// those that do.
type entry struct {
	key string
	// vptr points at the value; kind tells what it points at (not named val:
	// code written for the old interface field fails to compile rather than
	// pass a raw pointer as a value). A string whose
	// capacity is its length (and shorter than 2 GiB) is kept as its first
	// byte with its length in kind: a []byte would cost a 24-byte header
	// allocation per key. Other strings (APPEND's, with spare room they keep)
	// point at a []byte header, the usual types at themselves, anything else
	// at a boxed interface.
	vptr unsafe.Pointer
	next *entry // the next entry in the same bucket (dict.go)
	// vpos is the entry's index in DB.volatile when the key has a TTL, else -1.
	vpos int32
	// lru is Redis's 24-bit lru field: the LRU clock of the last access, or under
	// an LFU policy the minute of the last decrement and the 8-bit counter (evict.go).
	lru uint32
	// size is what Redis would allocate for the key and its value, as last
	// measured (memory.go): DB.used holds the sum.
	size uint32
	kind uint32 // a string's length below kindTag, else kindTag|the value's kind
}

// The kinds of entry.vptr past a packed string's length.
const (
	kindTag   = 1 << 31
	kindBytes = kindTag | iota // *[]byte
	kindZSet                   // *ztree, a boxed sorted set (zset.go); a small one is kindZSetPack
	kindHash                   // *hashTable, a large hash (hash.go); a small one is kindHashPack
	kindList                   // *list
	kindSet                    // *setValue
	kindOther                  // *any
)

// str returns the value if it is a string.
func (e *entry) str() ([]byte, bool) {
	switch {
	case e.kind < kindTag:
		return unsafe.Slice((*byte)(e.vptr), e.kind), true
	case e.kind == kindBytes:
		return *(*[]byte)(e.vptr), true
	}
	return nil, false
}

// value returns the value: a string as a []byte (that boxes it: the hot paths
// use str), another type as it is.
func (e *entry) value() any {
	switch e.kind {
	case kindZSet:
		return (*zset)(e)
	case kindHash:
		return (*hashValue)(e)
	case kindList:
		return (*list)(e.vptr)
	case kindSet:
		return (*setValue)(e.vptr)
	case kindOther:
		return *(*any)(e.vptr)
	}
	switch {
	case e.kind >= kindHashPack:
		return (*hashValue)(e)
	case e.kind >= kindZSetPack:
		return (*zset)(e)
	}
	b, _ := e.str()
	return b
}

// setValue stores val; see entry.vptr for how it is kept.
func (e *entry) setValue(val any) {
	switch v := val.(type) {
	case []byte:
		if len(v) == cap(v) && len(v) < kindTag {
			e.vptr, e.kind = unsafe.Pointer(unsafe.SliceData(v)), uint32(len(v))
			return
		}
		h := new([]byte) // not &v: that would move v to the heap on every call
		*h = v
		e.vptr, e.kind = unsafe.Pointer(h), kindBytes
	case *zset: // the set lives in its entry (zset.go): take its value
		e.vptr, e.kind = v.vptr, v.kind
	case *hashValue: // the hash lives in its entry (hash.go): take its value
		e.vptr, e.kind = v.vptr, v.kind
	case *list:
		e.vptr, e.kind = unsafe.Pointer(v), kindList
	case *setValue:
		e.vptr, e.kind = unsafe.Pointer(v), kindSet
	default:
		p := new(any) // not &val: that would move val to the heap on every call
		*p = val
		e.vptr, e.kind = unsafe.Pointer(p), kindOther
	}
}

// hasTTL reports whether the key has a deadline (DB.when).
func (e *entry) hasTTL() bool { return e.vpos >= 0 }

// volatileKey is an entry with a TTL and its deadline in unix milliseconds.
type volatileKey struct {
	e    *entry
	when int64
}

// DB is one numbered keyspace. Every method runs on the executor goroutine.
//
// Keys live in a hash table of entries (dict.go), which also serves SCAN,
// RANDOMKEY and sampling. The keys with a TTL are also listed in volatile with
// their deadlines, so that active expiry and the volatile-* policies sample only
// them (Redis's expires dict, at 16 bytes a key).
type DB struct {
	id       int
	s        *Server
	dict     *dict
	volatile []volatileKey // the entries with a TTL and their deadlines, in no order
	watchers map[string][]*Client
	used     int64 // the sum of the entries' sizes (memory.go)
}

func newDB(s *Server, id int) *DB {
	return &DB{
		id:       id,
		s:        s,
		dict:     newDict(),
		watchers: make(map[string][]*Client),
	}
}

// Size is the number of keys, expired-but-not-yet-reclaimed included (as Redis).
func (db *DB) Size() int { return db.dict.len() }

// Volatile is the number of keys with a TTL (INFO keyspace's expires).
func (db *DB) Volatile() int { return len(db.volatile) }

// when is e's deadline in unix milliseconds, 0 when it has none.
func (db *DB) when(e *entry) int64 {
	if !e.hasTTL() {
		return 0
	}
	return db.volatile[e.vpos].when
}

// entry returns key's entry as it is, expired or not (no expiry, no access).
func (db *DB) entry(key string) *entry { return db.dict.find(key) }

// lookup returns the live entry of key, deleting it first if it has expired.
//
// key does not escape: a handler may pass string(x.args[i]) and the compiler keeps
// that conversion on the stack, so a read such as GET allocates nothing. Only the
// rare expiry path, which keeps the key (watch and blocking lists, the AOF), copies it.
func (db *DB) lookup(key string) *entry {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	e := db.peek(key)
	if e != nil {
		db.s.touchLRU(e) // evict.go
	}
	return e
}

// peek is lookup without counting an access (OBJECT).
func (db *DB) peek(key string) *entry {
	e := db.dict.find(key)
	if e == nil {
		return nil
	}
	if e.hasTTL() && db.when(e) <= db.s.nowMs() && db.expireIfNeeded(e.key) {
		return nil
	}
	return e
}

// expireIfNeeded deletes key if its deadline has passed and reports whether it did.
func (db *DB) expireIfNeeded(key string) bool {
	e := db.dict.find(key)
	if e == nil || !e.hasTTL() || db.when(e) > db.s.nowMs() {
		return false
	}
	if db.s.loading {
		return false
	}
	if db.s.isReplica() { // the master deletes it and sends the DEL
		return !db.s.repl.applying // its commands still see the key
	}
	if db.s.paused() && !db.s.pause.writing { // CLIENT PAUSE: missing to readers, deleted after (pause.go)
		return true
	}
	key = e.key            // the entry's own copy: the caller's may live on its stack
	db.removeByServer(key) // tracking.go
	db.s.stats.expiredKeys++
	db.notify(notifyExpired, "expired", key)
	db.s.propagateExpired(db, key)
	return true
}

// add stores a new key. The caller has checked that key is absent.
func (db *DB) add(key string, val any) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
		share(val)
		if e := db.dict.find(key); e != nil { // the caller's check raced: overwrite, keep the table whole
			db.replaceEntry(e, val)
			db.touch(key)
			return
		}
	}
	db.insert(key, val)
}

func (db *DB) insert(key string, val any) {
	var e *entry
	switch v := val.(type) { // a new hash or sorted set is its own entry (hash.go, zset.go)
	case *hashValue:
		e = (*entry)(v)
	case *zset:
		e = (*entry)(v)
	}
	if e != nil && e.vpos == vposDetached {
		*e = entry{key: key, vptr: e.vptr, kind: e.kind, vpos: -1, lru: db.s.newLRU()}
	} else {
		e = &entry{key: key, vpos: -1, lru: db.s.newLRU()}
		e.setValue(val)
	}
	db.dict.add(e)
	db.measure(e) // memory.go
	db.touch(key)
	db.notify(notifyNew, "new", key)
}

// replaceEntry puts a new entry holding val, without TTL, in e's place; e
// stays as it was for a reader outside the lock (--workers mode).
func (db *DB) replaceEntry(e *entry, val any) *entry {
	nu := &entry{key: e.key, vpos: -1, lru: e.lru, size: e.size}
	nu.setValue(val)
	db.dict.replace(e, nu)
	if e.hasTTL() {
		db.volatile[e.vpos].e = nu
		nu.vpos = e.vpos
		db.dropTTL(nu)
	}
	db.measure(nu) // memory.go
	return nu
}

// set stores val under key, replacing any value and dropping its TTL unless keepTTL.
func (db *DB) set(key string, val any, keepTTL bool) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
		share(val)
	}
	if e := db.dict.find(key); e != nil {
		if db.s.par.on { // a reader outside the lock may hold e: leave it as it was
			when, ttl := db.when(e), e.hasTTL()
			e = db.replaceEntry(e, e.value())
			if keepTTL && ttl {
				db.addTTL(e, when)
			}
		}
		e.setValue(val)
		db.s.overwriteLRU(e) // evict.go
		if !keepTTL {
			db.dropTTL(e)
		}
		db.measure(e) // memory.go
		db.touch(key)
		return
	}
	db.insert(key, val)
}

// delete removes key and reports whether it was there.
func (db *DB) delete(key string) bool {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	return db.remove(key)
}

func (db *DB) remove(key string) bool {
	e := db.dict.remove(key)
	if e == nil {
		return false
	}
	db.dropTTL(e)
	db.unmeasure(e) // memory.go
	db.touch(key)
	if db.canShrink() {
		db.dict.shrinkIfSparse()
	}
	return true
}

// canShrink reports whether the table may shrink now: not while an AOF rewrite
// or a BGSAVE walks it with a cursor, which a shrink could make repeat keys.
func (db *DB) canShrink() bool { return db.s.beforeWrite == nil }

// flush empties the database.
func (db *DB) flush() {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	for key := range db.watchers {
		if db.dict.find(key) != nil {
			db.touch(key)
		}
	}
	db.signalStreamsGone() // blocked XREADGROUPs are answered (cmd_stream.go)
	db.dict = newDict()
	db.volatile = nil
	db.addUsed(-db.used) // memory.go
}

// setExpire sets key's deadline (unix ms). The key must exist.
func (db *DB) setExpire(key string, when int64) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	if e := db.dict.find(key); e != nil {
		db.addTTL(e, when)
	}
	db.touch(key)
}

// persist drops key's TTL and reports whether there was one.
func (db *DB) persist(key string) bool {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	e := db.dict.find(key)
	if e == nil || !e.hasTTL() {
		return false
	}
	db.dropTTL(e)
	db.touch(key)
	return true
}

// expireAt is key's deadline (unix ms) if it exists and has one, expired or not.
func (db *DB) expireAt(key string) (int64, bool) {
	if e := db.dict.find(key); e != nil && e.hasTTL() {
		return db.when(e), true
	}
	return 0, false
}

// addTTL sets e's deadline, listing it in volatile if it had none.
func (db *DB) addTTL(e *entry, when int64) {
	if !e.hasTTL() {
		e.vpos = int32(len(db.volatile))
		db.volatile = append(db.volatile, volatileKey{e: e})
	}
	db.volatile[e.vpos].when = when
}

// dropTTL removes e's deadline: the last volatile entry takes its place.
func (db *DB) dropTTL(e *entry) {
	if !e.hasTTL() {
		return
	}
	last := len(db.volatile) - 1
	moved := db.volatile[last]
	db.volatile[e.vpos] = moved
	moved.e.vpos = e.vpos
	db.volatile[last] = volatileKey{}
	db.volatile = db.volatile[:last]
	e.vpos = -1
}

// randomVolatile returns a random entry with a TTL, or nil when there is none.
func (db *DB) randomVolatile() *entry {
	if len(db.volatile) == 0 {
		return nil
	}
	return db.volatile[rand.IntN(len(db.volatile))].e
}

// touch marks key modified: WATCHers of key fail their EXEC, blocked clients may
// run, clients that cache key hear it changed (tracking.go), and its size is
// measured again after the command (memory.go).
func (db *DB) touch(key string) {
	db.remeasureLater(key) // memory.go
	if len(db.s.tracking.keys) > 0 || len(db.s.tracking.prefixes) > 0 {
		db.s.trackingInvalidate(key)
	}
	if len(db.watchers) > 0 {
		for _, c := range db.watchers[key] {
			c.dirtyCAS = true
		}
	}
	if len(db.s.blocking) > 0 {
		db.s.signalReady(db, key)
	}
}

// randomKey returns a random live key, or "" and false when there is none.
func (db *DB) randomKey() (string, bool) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	for tries := 0; db.dict.len() > 0; tries++ {
		key := db.dict.random().key
		if tries > 100 || !db.expireIfNeeded(key) {
			return key, true
		}
	}
	return "", false
}

// scan visits keys from cursor on, calling fn for about count keys (whole
// buckets, at most 10*count buckets), and returns the next cursor (0 when
// done): Redis's SCAN, whose guarantee dict.scan gives.
func (db *DB) scan(cursor uint64, count int, fn func(key string)) uint64 {
	n := 0
	for budget := max(count, 1) * 10; ; budget-- {
		cursor = db.dict.scan(cursor, func(e *entry) { fn(e.key); n++ })
		if cursor == 0 || n >= count || budget <= 1 {
			return cursor
		}
	}
}

// each calls fn for every key and its entry (KEYS, SAVE, SWAPDB). fn may read
// and delete keys.
func (db *DB) each(fn func(key string, e *entry)) {
	db.dict.each(func(e *entry) { fn(e.key, e) })
}
