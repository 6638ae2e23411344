package myredis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Eviction, as Redis 7.0's evict.c: over maxmemory, before running a command,
// keys are deleted until used memory (memory.go) is under the limit again.
//
//   - The policy picks which: allkeys-* from every key, volatile-* only from
//     keys with a TTL; *-lru the least recently used, *-lfu the least
//     frequently used, volatile-ttl the nearest deadline, *-random any.
//     noeviction deletes nothing: writes are refused (maxmemory.go).
//   - LRU and LFU are approximated as Redis does: every key carries 24 bits
//     (entry.lru), the LRU clock in seconds of its last access, or under an LFU
//     policy the minute of its last decrement (16 bits) and a logarithmic access
//     counter (8 bits, lfu-log-factor, decaying by one every lfu-decay-time
//     minutes). Each round samples maxmemory-samples keys per database into a
//     pool of the 16 best candidates and evicts the best one still present.
//   - One call evicts for at most maxmemory-eviction-tenacity's time; past it the
//     rest continues as executor tasks, and commands run meanwhile (Redis's
//     EVICT_RUNNING).
//
// Everything here runs on the executor goroutine.

// Policy flags, as Redis's MAXMEMORY_FLAG_* plus one per kind.
const (
	evictLRU = 1 << iota
	evictLFU
	evictAllKeys
	evictTTL
	evictRandom
	evictNone
)

var policyFlags = map[string]int{
	"volatile-lru": evictLRU, "volatile-lfu": evictLFU, "volatile-ttl": evictTTL,
	"volatile-random": evictRandom, "allkeys-lru": evictLRU | evictAllKeys,
	"allkeys-lfu": evictLFU | evictAllKeys, "allkeys-random": evictRandom | evictAllKeys,
	"noeviction": evictNone,
}

const (
	lruClockMax    = 1<<24 - 1 // entry.lru holds 24 bits
	lfuInitVal     = 5         // a new key's LFU counter, so it is not evicted at once
	evictPoolSize  = 16
	evictOK        = 0
	evictRunning   = 1  // over the limit, still evicting as a task: commands run
	evictFail      = 2  // over the limit and nothing to evict
	evictCheckKeys = 16 // the time limit is checked every so many evictions
)

// EvictionSettings are maxmemory-samples, maxmemory-eviction-tenacity,
// lfu-log-factor and lfu-decay-time.
type EvictionSettings struct {
	Samples, Tenacity, LFULogFactor, LFUDecayTime int
}

var defaultEvictionSettings = EvictionSettings{Samples: 5, Tenacity: 10, LFULogFactor: 10, LFUDecayTime: 1}

// evictState is the eviction's executor-owned state.
type evictState struct {
	policy     int  // policyFlags of maxmemory-policy
	lfu        bool // entry.lru holds LFU data
	sharedInts bool // small integers are shared objects (not under LRU/LFU with maxmemory)
	pool       [evictPoolSize]poolEntry
	nextDB     int  // the random policies' round robin
	running    bool // an eviction task is queued (Redis's eviction time proc)
	oom        bool // the last command found memory over the limit, nothing to evict
	// the time used memory stayed over maxmemory, as Redis's
	// stat_*_eviction_exceeded_time: since when (zero: not over), and the
	// total of the spells that ended (INFO stats; CONFIG RESETSTAT zeroes both)
	exceededSince time.Time
	exceededTotal time.Duration
}

// noteExceeded opens or closes a spell over maxmemory after an eviction pass
// that ended with result, as Redis's performEvictions does at update_metrics.
func (ev *evictState) noteExceeded(result int, now time.Time) {
	switch {
	case result != evictOK && ev.exceededSince.IsZero():
		ev.exceededSince = now
	case result == evictOK && !ev.exceededSince.IsZero():
		ev.exceededTotal += now.Sub(ev.exceededSince)
		ev.exceededSince = time.Time{}
	}
}

// exceededTimes are INFO's total_eviction_exceeded_time and
// current_eviction_exceeded_time, in milliseconds.
func (ev *evictState) exceededTimes(now time.Time) (total, current int64) {
	var cur time.Duration
	if !ev.exceededSince.IsZero() {
		cur = now.Sub(ev.exceededSince)
	}
	return (ev.exceededTotal + cur).Milliseconds(), cur.Milliseconds()
}

// poolEntry is a candidate: the larger idle, the better.
type poolEntry struct {
	idle uint64
	key  string
	db   *DB
}

// applyEvictionConfig caches what the hot paths read of cfg.
func (s *Server) applyEvictionConfig(cfg Config) {
	s.ev.policy = policyFlags[cfg.MaxMemPolicy]
	s.ev.lfu = s.ev.policy&evictLFU != 0
	s.ev.sharedInts = cfg.MaxMemory == 0 || s.ev.policy&(evictLRU|evictLFU) == 0
	if cfg.MaxMemPolicy != s.cfg.MaxMemPolicy {
		s.ev.pool = [evictPoolSize]poolEntry{}
	}
}

// --- the per-key field ---

// lruClock24 is Redis's LRU clock: seconds, 24 bits, as of the batch's start.
func (s *Server) lruClock24() uint32 {
	return uint32(s.lruClock.Load()/1000) & lruClockMax
}

// lfuMinutes is the LFU's 16-bit minute clock.
func (s *Server) lfuMinutes() uint32 {
	return uint32(s.lruClock.Load()/60000) & 0xFFFF
}

// newLRU is a new key's field.
func (s *Server) newLRU() uint32 {
	if s.ev.lfu {
		return s.lfuMinutes()<<8 | lfuInitVal
	}
	return s.lruClock24()
}

// touchLRU records an access to e.
func (s *Server) touchLRU(e *entry) {
	if s.ev.lfu {
		c := lfuLogIncr(s.lfuDecr(e), s.cfg.Evict.LFULogFactor)
		e.lru = s.lfuMinutes()<<8 | c
		return
	}
	e.lru = s.lruClock24()
}

// overwriteLRU is e's field after its value was replaced: a new object in
// Redis (clock now), except under LFU where the old counter carries over.
func (s *Server) overwriteLRU(e *entry) {
	if !s.ev.lfu {
		e.lru = s.lruClock24()
	}
}

// idleMs is Redis's estimateObjectIdleTime.
func (s *Server) idleMs(e *entry) uint64 {
	now, then := s.lruClock24(), e.lru&lruClockMax
	if now >= then {
		return uint64(now-then) * 1000
	}
	return uint64(lruClockMax-then+now) * 1000
}

// lfuDecr is e's LFU counter after the decay for the minutes since its last
// decrement (Redis's LFUDecrAndReturn; e is not changed).
func (s *Server) lfuDecr(e *entry) uint32 {
	ldt, counter := e.lru>>8, e.lru&255
	decay := s.cfg.Evict.LFUDecayTime
	if decay <= 0 {
		return counter
	}
	now := s.lfuMinutes()
	elapsed := now - ldt
	if now < ldt {
		elapsed = 65535 - ldt + now
	}
	periods := elapsed / uint32(decay)
	if periods >= counter {
		return 0
	}
	return counter - periods
}

// lfuLogIncr increments counter with a probability that falls as it grows.
func lfuLogIncr(counter uint32, factor int) uint32 {
	if counter == 255 {
		return 255
	}
	base := max(float64(counter)-lfuInitVal, 0)
	if rand.Float64() < 1/(base*float64(factor)+1) {
		counter++
	}
	return counter
}

// setLRUOrLFU applies RESTORE's IDLETIME or FREQ (Redis's objectSetLRUOrLFU);
// -1 means not given.
func (s *Server) setLRUOrLFU(e *entry, idleSec, freq int64) {
	switch {
	case s.ev.lfu && freq >= 0:
		e.lru = s.lfuMinutes()<<8 | uint32(min(freq, 255))
	case !s.ev.lfu && idleSec >= 0:
		clock := int64(s.lruClock24())
		if idleSec >= clock { // as Redis: wrap around the 24-bit clock
			idleSec = clock - idleSec
			if idleSec >= 0 {
				clock = lruClockMax
			} else {
				idleSec = -idleSec
			}
		}
		e.lru = uint32(clock-idleSec) & lruClockMax
	}
}

// --- evicting ---

// performEvictions frees memory until used memory is within maxmemory, as
// Redis's performEvictions: evictOK, evictRunning (time is up, a task goes
// on) or evictFail (over the limit with nothing to evict).
func (s *Server) performEvictions() int {
	// a replica leaves eviction to its master (replica-ignore-maxmemory yes);
	// a pause keeps the data still (pause.go). As in Redis, these passes do not
	// count as evictions at all (no exceeded time either).
	if s.loading || s.par.on || s.isReplica() || s.paused() {
		return evictOK
	}
	result := s.evictToLimit()
	s.ev.noteExceeded(result, time.Now()) // monotonic, as Redis's elapsedUs
	return result
}

// evictToLimit evicts until used memory is within maxmemory or the time
// budget is spent. Runs on the executor.
func (s *Server) evictToLimit() int {
	limit := int64(s.cfg.MaxMemory)
	if limit == 0 || s.usedMemoryForEvict() <= limit {
		return evictOK
	}
	if s.ev.policy&evictNone != 0 {
		return evictFail
	}
	start := time.Now() // a CPU budget on this machine, not the data's clock
	budget := evictionTimeLimit(s.cfg.Evict.Tenacity)
	for freed := 0; s.usedMemoryForEvict() > limit; { // replicas' output and the AOF buffer aside (memory_parts.go)
		db, key := s.evictionCandidate()
		if db == nil {
			return evictFail
		}
		s.evictKey(db, key)
		freed++
		if freed%evictCheckKeys == 0 && time.Since(start) > budget {
			s.startEvictionTask()
			return evictRunning
		}
	}
	if s.ev.running {
		return evictRunning
	}
	return evictOK
}

// evictionTimeLimit is maxmemory-eviction-tenacity's budget per call: 50µs a
// step up to 10 (500µs), then 15% more a step, no limit at 100.
func evictionTimeLimit(tenacity int) time.Duration {
	switch {
	case tenacity <= 10:
		return time.Duration(50*tenacity) * time.Microsecond
	case tenacity < 100:
		return time.Duration(500*math.Pow(1.15, float64(tenacity-10))) * time.Microsecond
	}
	return time.Duration(math.MaxInt64)
}

// startEvictionTask queues the eviction's continuation on the executor.
func (s *Server) startEvictionTask() {
	if s.ev.running {
		return
	}
	s.ev.running = true
	go s.toExecutor(s.evictionTask)
}

// evictionTask goes on evicting between clients' batches until done.
func (s *Server) evictionTask() {
	s.ev.running = false
	s.performEvictions() // queues itself again while time runs out
}

// evictKey deletes key as an eviction: DEL to the AOF, evicted_keys, the
// keyspace event "evicted", WATCHers told. Every eviction goes through here.
func (s *Server) evictKey(db *DB, key string) {
	db.removeByServer(key) // tracking.go
	s.stats.evictedKeys++
	db.notify(notifyEvicted, "evicted", key) // notify.go
	s.propagate(db, [][]byte{[]byte("DEL"), []byte(key)})
}

// evictionCandidate picks the key to evict under the policy, or nil when
// there is none.
func (s *Server) evictionCandidate() (*DB, string) {
	p := s.ev.policy
	if p&evictRandom != 0 {
		return s.randomCandidate(p&evictAllKeys != 0)
	}
	for {
		keys := 0
		for _, db := range s.dbs {
			n := db.Volatile()
			if p&evictAllKeys != 0 {
				n = db.Size()
			}
			if n > 0 {
				keys += n
				s.populatePool(db)
			}
		}
		if keys == 0 {
			return nil, ""
		}
		if db, key := s.bestFromPool(); db != nil {
			return db, key
		}
	}
}

// randomCandidate is a random key (with a TTL unless allKeys) of the next
// database that has one.
func (s *Server) randomCandidate(allKeys bool) (*DB, string) {
	for range s.dbs {
		s.ev.nextDB = (s.ev.nextDB + 1) % len(s.dbs)
		db := s.dbs[s.ev.nextDB]
		if allKeys && db.Size() > 0 {
			return db, db.dict.random().key
		}
		if e := db.randomVolatile(); !allKeys && e != nil {
			return db, e.key
		}
	}
	return nil, ""
}

// populatePool samples maxmemory-samples keys of db into the pool.
func (s *Server) populatePool(db *DB) {
	n := max(s.cfg.Evict.Samples, 1)
	if s.ev.policy&evictAllKeys != 0 {
		for range min(n, db.Size()) {
			e := db.dict.random()
			s.poolInsert(db, e.key, e)
		}
		return
	}
	for range min(n, db.Volatile()) {
		e := db.randomVolatile()
		if s.ev.policy&evictTTL != 0 {
			s.poolInsertIdle(db, e.key, math.MaxUint64-uint64(db.when(e)))
		} else {
			s.poolInsert(db, e.key, e)
		}
	}
}

// poolInsert adds key with its score under an LRU or LFU policy.
func (s *Server) poolInsert(db *DB, key string, e *entry) {
	if e == nil {
		return
	}
	var idle uint64
	switch {
	case s.ev.policy&evictLRU != 0:
		idle = s.idleMs(e)
	case s.ev.policy&evictLFU != 0:
		idle = 255 - uint64(s.lfuDecr(e))
	case s.ev.policy&evictTTL != 0:
		if !e.hasTTL() {
			return
		}
		idle = math.MaxUint64 - uint64(db.when(e))
	}
	s.poolInsertIdle(db, key, idle)
}

// poolInsertIdle places a candidate in the pool, kept by ascending idle: a
// full pool drops its worst to make room for a better one (Redis's
// evictionPoolPopulate).
func (s *Server) poolInsertIdle(db *DB, key string, idle uint64) {
	pool := &s.ev.pool
	k := 0
	for k < evictPoolSize && pool[k].key != "" && pool[k].idle < idle {
		k++
	}
	switch {
	case k == 0 && pool[evictPoolSize-1].key != "":
		return // worse than every candidate of a full pool
	case k < evictPoolSize && pool[k].key == "":
		// an empty slot: insert here
	case pool[evictPoolSize-1].key == "":
		copy(pool[k+1:], pool[k:evictPoolSize-1]) // room at the right end
	default:
		k--
		copy(pool[:k], pool[1:k+1]) // full: drop the worst (left)
	}
	pool[k] = poolEntry{idle: idle, key: key, db: db}
}

// bestFromPool takes the best candidate still present out of the pool.
func (s *Server) bestFromPool() (*DB, string) {
	pool := &s.ev.pool
	for k := evictPoolSize - 1; k >= 0; k-- {
		c := pool[k]
		if c.key == "" {
			continue
		}
		pool[k] = poolEntry{}
		e := c.db.entry(c.key)
		if e != nil && (s.ev.policy&evictAllKeys != 0 || e.hasTTL()) {
			return c.db, c.key
		}
	}
	return nil, ""
}

// --- settings ---

func (c *Config) initEviction() {
	if !c.evictInit {
		c.Evict, c.evictInit = defaultEvictionSettings, true
	}
}

// setEviction is Config.Set for the eviction's settings; ok is false for
// other names.
func (c *Config) setEviction(name, val string) (err error, ok bool) {
	c.initEviction()
	e := &c.Evict
	switch strings.ToLower(name) {
	case "maxmemory-samples":
		e.Samples, err = intInRange(val, 1, math.MaxInt32)
	case "maxmemory-eviction-tenacity":
		e.Tenacity, err = intInRange(val, 0, 100)
	case "lfu-log-factor":
		e.LFULogFactor, err = intInRange(val, 0, math.MaxInt32)
	case "lfu-decay-time":
		e.LFUDecayTime, err = intInRange(val, 0, math.MaxInt32)
	default:
		return nil, false
	}
	return err, true
}

// evictionParams are CONFIG GET's entries for the eviction's settings.
func (c *Config) evictionParams(params map[string]func() string) {
	for name, v := range map[string]*int{
		"maxmemory-samples": &c.Evict.Samples, "maxmemory-eviction-tenacity": &c.Evict.Tenacity,
		"lfu-log-factor": &c.Evict.LFULogFactor, "lfu-decay-time": &c.Evict.LFUDecayTime,
	} {
		params[name] = func() string { return strconv.Itoa(*v) }
	}
}
