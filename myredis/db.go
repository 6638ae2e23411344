package myredis

import (
	"math/rand/v2"
	"strings"
)

// entry is one key's value. val is []byte for a string and *zset for a sorted set.
// pos is the key's index in DB.keys (see scan).
type entry struct {
	val any
	pos int
	// lru is Redis's 24-bit lru field: the LRU clock of the last access, or under
	// an LFU policy the minute of the last decrement and the 8-bit counter (evict.go).
	lru uint32
	// size is what Redis would allocate for the key and its value, as last
	// measured (memory.go): DB.used holds the sum.
	size uint32
}

// DB is one numbered keyspace. Every method runs on the executor goroutine.
//
// Keys live in a map for lookup and in a slice for SCAN, RANDOMKEY and sampling:
// deletion swaps the last key into the hole, so a cursor that walks the slice from
// the top down visits every key that stays present for the whole iteration.
type DB struct {
	id       int
	s        *Server
	dict     map[string]*entry
	keys     []string
	expires  map[string]int64 // key -> deadline in unix milliseconds
	watchers map[string][]*Client
	used     int64 // the sum of the entries' sizes (memory.go)
}

func newDB(s *Server, id int) *DB {
	return &DB{
		id:       id,
		s:        s,
		dict:     make(map[string]*entry),
		expires:  make(map[string]int64),
		watchers: make(map[string][]*Client),
	}
}

// Size is the number of keys, expired-but-not-yet-reclaimed included (as Redis).
func (db *DB) Size() int { return len(db.dict) }

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
	e := db.dict[key]
	if e == nil {
		return nil
	}
	if len(db.expires) > 0 {
		if when, ok := db.expires[key]; ok && when <= db.s.nowMs() &&
			db.expireIfNeeded(strings.Clone(key)) {
			return nil
		}
	}
	return e
}

// expireIfNeeded deletes key if its deadline has passed and reports whether it did.
func (db *DB) expireIfNeeded(key string) bool {
	when, ok := db.expires[key]
	if !ok || when > db.s.nowMs() {
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
	db.remove(key)
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
		if e := db.dict[key]; e != nil { // the caller's check raced: overwrite, keep the maps whole
			db.dict[key] = &entry{val: val, pos: e.pos, lru: e.lru, size: e.size}
			delete(db.expires, key)
			db.touch(key)
			return
		}
	}
	db.insert(key, val)
}

func (db *DB) insert(key string, val any) {
	e := &entry{val: val, pos: len(db.keys), lru: db.s.newLRU()}
	db.dict[key] = e
	db.keys = append(db.keys, key)
	db.measure(e, key) // memory.go
	db.touch(key)
	db.notify(notifyNew, "new", key)
}

// set stores val under key, replacing any value and dropping its TTL unless keepTTL.
func (db *DB) set(key string, val any, keepTTL bool) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
		share(val)
	}
	if e := db.dict[key]; e != nil {
		if db.s.par.on { // a reader outside the lock may hold e: leave it as it was
			e = &entry{pos: e.pos, lru: e.lru, size: e.size}
			db.dict[key] = e
		}
		e.val = val
		db.s.overwriteLRU(e) // evict.go
		if !keepTTL {
			delete(db.expires, key)
		}
		db.measure(e, key) // memory.go
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
	e := db.dict[key]
	if e == nil {
		return false
	}
	last := len(db.keys) - 1
	if e.pos != last {
		moved := db.keys[last]
		db.keys[e.pos] = moved
		db.dict[moved].pos = e.pos
	}
	db.keys[last] = ""
	db.keys = db.keys[:last]
	delete(db.dict, key)
	delete(db.expires, key)
	db.unmeasure(e) // memory.go
	db.touch(key)
	return true
}

// flush empties the database.
func (db *DB) flush() {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	for key := range db.watchers {
		if _, ok := db.dict[key]; ok {
			db.touch(key)
		}
	}
	db.signalStreamsGone() // blocked XREADGROUPs are answered (cmd_stream.go)
	db.dict = make(map[string]*entry)
	db.keys = nil
	db.expires = make(map[string]int64)
	db.addUsed(-db.used) // memory.go
}

// setExpire sets key's deadline (unix ms). The key must exist.
func (db *DB) setExpire(key string, when int64) {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	db.expires[key] = when
	db.touch(key)
}

// persist drops key's TTL and reports whether there was one.
func (db *DB) persist(key string) bool {
	if db.s.par.on { // --workers mode: one lock per primitive (workers.go)
		defer db.s.par.hold()()
	}
	if _, ok := db.expires[key]; !ok {
		return false
	}
	delete(db.expires, key)
	db.touch(key)
	return true
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
	for tries := 0; len(db.keys) > 0; tries++ {
		key := db.keys[rand.IntN(len(db.keys))]
		if tries > 100 || !db.expireIfNeeded(key) {
			return key, true
		}
	}
	return "", false
}

// scan visits keys from cursor on, calling fn for up to count keys, and returns
// the next cursor (0 when done). Cursor c > 0 means "next index is c-1"; the walk
// goes from the top of the slice down, so swap-deletes never hide a key.
func (db *DB) scan(cursor uint64, count int, fn func(key string)) uint64 {
	var i int
	if cursor == 0 {
		i = len(db.keys) - 1
	} else {
		i = int(min(cursor-1, uint64(len(db.keys))-1))
		if len(db.keys) == 0 {
			return 0
		}
	}
	for n := 0; i >= 0 && n < count; n++ {
		fn(db.keys[i])
		i--
	}
	if i < 0 {
		return 0
	}
	return uint64(i) + 1
}
