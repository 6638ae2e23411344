package myredis

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Memory accounting. used_memory is what Redis 7.0 (64-bit, jemalloc) would
// allocate for the same keys and values, plus the clients' buffers: a model,
// kept up to date on the executor, not the Go heap (which holds garbage until
// the next collection and lays data out its own way). maxmemory and eviction
// (evict.go) compare against it, so a dataset evicts where it would in Redis.
//
// Every key's entry carries its last measured size (key, value, TTL); DB.used
// and Server.dataUsed hold the sums. Adding, replacing and removing a key adjust
// them at once (db.go); a value changed in place (HSET, LPUSH, APPEND...) is
// measured again after the command, because every change to a key goes through
// db.touch, which notes the entry (remeasureLater). Measuring is O(1): each type
// file gives its value's size through memUsage, from counts the type keeps.

// memSizer is implemented by each collection type in its own file: the bytes
// Redis would allocate for the value (its robj included), in O(1).
type memSizer interface {
	memUsage(l *EncodingLimits) int64
}

// Sizes of Redis's structures (64-bit), before jemalloc's rounding.
const (
	robjBytes      = 16 // redisObject
	dictEntryBytes = 24 // key, value, next
	// bucketBytesPerKey is a key's share of a dict's bucket array: 8-byte
	// buckets, a power of two of them, between half and fully loaded.
	bucketBytesPerKey = 12
	// startupMemory is Redis 7.0.15's used_memory_startup on 64-bit Linux (the
	// server's own structures, shared objects, empty dicts): the base every
	// used_memory starts from, so figures compare with Redis's.
	startupMemory = 862_000
	// listpackOverhead: a listpack's header (6) and end byte (1).
	listpackOverhead = 7
)

// jemallocSize is the size class jemalloc serves n bytes from: 8, then steps of
// 16 up to 128, then four classes per power of two.
func jemallocSize(n int64) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	k := bits.Len64(uint64(n - 1)) // 2^(k-1) < n <= 2^k
	step := int64(1) << (k - 3)
	return (n + step - 1) &^ (step - 1)
}

// sdsSize is the allocation of an sds string of n bytes (header, bytes, NUL).
func sdsSize(n int) int64 {
	hdr := 17
	switch {
	case n < 32:
		hdr = 1
	case n < 1<<8:
		hdr = 3
	case n < 1<<16:
		hdr = 5
	case n < 1<<32:
		hdr = 9
	}
	return jemallocSize(int64(hdr + n + 1))
}

// stringMem is a string value's allocation: nothing for a shared integer
// (0..9999 when the policy allows sharing), the object alone for another
// integer, one block for an embstr (up to 44 bytes), object plus sds beyond.
func stringMem(v []byte, sharedInts bool) int64 {
	if len(v) <= 20 {
		if n, ok := parseRedisInt(v); ok {
			if sharedInts && n >= 0 && n < 10000 {
				return 0
			}
			return robjBytes
		}
	}
	if len(v) <= 44 {
		return jemallocSize(int64(robjBytes + 3 + len(v) + 1))
	}
	return robjBytes + sdsSize(len(v))
}

// keyMem is a key's own allocation: its dict entry, its sds name, its bucket
// share, and with a TTL its entry in the expires dict.
func keyMem(keyLen int, ttl bool) int64 {
	n := jemallocSize(dictEntryBytes) + sdsSize(keyLen) + bucketBytesPerKey
	if ttl {
		n += jemallocSize(dictEntryBytes) + bucketBytesPerKey
	}
	return n
}

// listpackMem is a listpack of n entries holding payload bytes: each entry has
// an encoding byte or two and a back-length byte or two.
func listpackMem(n int, payload int64) int64 {
	per := int64(2)
	if payload > int64(n)*60 {
		per = 4
	}
	return jemallocSize(listpackOverhead + payload + per*int64(n))
}

// hashtableMem is a dict of n entries whose keys (and values, when valued)
// are sds strings with payload bytes in all: the dict, its buckets, an entry
// and one or two sds allocations per element (an sds header and rounding of
// about 8 bytes each).
func hashtableMem(n int, payload int64, valued bool) int64 {
	perElem := jemallocSize(dictEntryBytes) + 8 + 8 // entry, bucket share, key sds overhead
	if valued {
		perElem += 8
	}
	buckets := int64(8)
	if n > 0 {
		buckets = 8 << bits.Len(uint(n-1))
	}
	return 96 + buckets + int64(n)*perElem + payload
}

// valueMem is what Redis would allocate for val.
func (s *Server) valueMem(val any) int64 {
	switch v := val.(type) {
	case []byte:
		return stringMem(v, s.ev.sharedInts)
	case memSizer:
		return v.memUsage(s.limits())
	}
	return robjBytes // a type without a model of its own yet
}

// entryValueMem is valueMem of e's value, without boxing a string.
func (s *Server) entryValueMem(e *entry) int64 {
	if b, ok := e.str(); ok {
		return stringMem(b, s.ev.sharedInts)
	}
	return s.valueMem(e.value())
}

// --- keeping the sums (runs on the executor) ---

// measure sets e's size from its key, TTL and value, adjusting the sums.
func (db *DB) measure(e *entry) {
	n := min(keyMem(len(e.key), e.hasTTL())+db.s.entryValueMem(e), math.MaxUint32)
	db.addUsed(n - int64(e.size))
	e.size = uint32(n)
}

// unmeasure takes a removed entry out of the sums.
func (db *DB) unmeasure(e *entry) {
	db.addUsed(-int64(e.size))
	e.size = 0
}

func (db *DB) addUsed(n int64) {
	db.used += n
	db.s.dataUsed += n
}

// pendingSize is an entry to measure again after the running command.
type pendingSize struct {
	db *DB
	e  *entry
}

// remeasureLater notes that key's value may have changed in place.
func (db *DB) remeasureLater(key string) {
	if db.s.par.on { // --workers mode measures only whole values (db.go)
		return
	}
	e := db.dict.find(key)
	if e == nil {
		return
	}
	s := db.s
	if n := len(s.remeasure); n > 0 && s.remeasure[n-1].e == e {
		return
	}
	if len(s.remeasure) >= 256 { // a command touching many keys: measure as it goes
		s.remeasureNow()
	}
	s.remeasure = append(s.remeasure, pendingSize{db, e})
}

// remeasureNow measures the noted entries that are still in their DB.
func (s *Server) remeasureNow() {
	for i, p := range s.remeasure {
		db, e := p.db, p.e
		if db.dict.find(e.key) == e {
			db.measure(e)
		}
		s.remeasure[i] = pendingSize{}
	}
	s.remeasure = s.remeasure[:0]
}

// --- the figures ---

// usedMemoryNow is used_memory: start-up, dataset, the clients' buffers and
// the replicas' output as last summed by memoryCron, and the other parts of
// memory_parts.go (backlog, AOF buffer, script caches).
func (s *Server) usedMemoryNow() int64 {
	if len(s.remeasure) > 0 {
		s.remeasureNow()
	}
	return startupMemory + s.dataUsed + s.overheadMem.Load() + s.mem.fixed + s.mem.aofBuf
}

// memoryCron sums the clients' memory (as CLIENT LIST's tot-mem; a replica's
// with its outbox, the stream not written to it yet, which CLIENT LIST does not
// show) and the AOF buffer, and notes the peak. Runs on the executor with the
// stats cron.
func (s *Server) memoryCron() {
	slot := s.recentBufSlot()
	s.mu.Lock()
	var sum, slaves, replOut int64
	for _, c := range s.clients {
		if !c.closing { // an evicted client's memory is given back at once (client_evict.go)
			m := c.memory()
			sum += m.total
			if r := c.replica; r != nil && r.attached && r.out != nil {
				out := int64(r.out.pending())
				sum += out
				slaves += m.total + out
				replOut += out
			}
			s.recentIn[slot] = max(s.recentIn[slot], m.input)
			s.recentOut[slot] = max(s.recentOut[slot], m.omem)
		}
	}
	s.mu.Unlock()
	s.overheadMem.Store(sum)
	s.mem.slaves, s.mem.replOut = slaves, replOut
	s.mem.aofBuf = s.aofBufferMem()
	s.notePeak(uint64(s.usedMemoryNow()))
}

// recentSlots is how many seconds INFO's client_recent_max_input_buffer and
// client_recent_max_output_buffer look back (Redis's CLIENTS_PEAK_MEM_USAGE_SLOTS).
const recentSlots = 8

// recentBufSlot is this second's slot of the recent peaks; the next second's
// slot is emptied for its turn, as Redis's clientsCron does. Runs on the executor.
func (s *Server) recentBufSlot() int {
	sec := time.Now().Unix()
	slot := int(sec % recentSlots)
	if sec != s.recentSec {
		s.recentSec = sec
		next := (slot + 1) % recentSlots
		s.recentIn[next], s.recentOut[next] = 0, 0
	}
	return slot
}

// recentBufPeaks is the biggest input (query buffer and arguments) and output
// list any client had in the last recentSlots seconds. Runs on the executor.
func (s *Server) recentBufPeaks() (in, out int64) {
	for i := range recentSlots {
		in, out = max(in, s.recentIn[i]), max(out, s.recentOut[i])
	}
	return in, out
}

// clientMem is one client's buffers and structure (CLIENT LIST's tot-mem).
// Runs on the executor.
func clientMem(c *Client) int64 { return c.memory().total }

// clientMemory is a client's memory, as Redis's getClientMemoryUsage counts it.
type clientMemory struct {
	qbuf, qbufFree int64 // the query buffer: unrun bytes, room left
	multi          int64 // queued MULTI commands' arguments (multi-mem)
	input          int64 // query buffer allocation and arguments (client_recent_max_input_buffer)
	omem, oll      int64 // the output list: bytes, buffers (a subscriber's outbox)
	total          int64 // tot-mem
}

// memory measures c. Runs on the executor.
func (c *Client) memory() clientMemory {
	var m clientMemory
	var qalloc int64 // the query buffer's allocation
	if c.guard != nil {
		m.qbuf = c.guard.qbuf.Load() // read, not handed to the query buffer yet
		qalloc = m.qbuf
	}
	if c.qb != nil {
		m.qbuf += c.qb.queued()
		m.qbufFree = c.qb.free()
		qalloc += c.qb.size.Load()
	}
	if c.ps != nil && c.ps.out != nil {
		omem, oll := c.ps.out.usage()
		m.omem, m.oll = int64(omem), int64(oll)
	}
	multiOver := int64(0) // multiStateMemOverhead: queued commands, WATCHed keys
	if c.multi != nil {
		m.multi = c.multi.argvMem
		multiOver = m.multi + int64(cap(c.multi.cmds))*int64(unsafe.Sizeof(queuedCmd{}))
	}
	multiOver += int64(len(c.watched)) * int64(unsafe.Sizeof(watchedKey{}))
	m.input = qalloc + c.argvMem + 8*c.argc
	m.total = m.omem + qalloc + int64(unsafe.Sizeof(*c)) + c.replyMem +
		c.argvMem + 8*c.argc + multiOver
	return m
}

// memOverhead is Redis's getMemoryOverheadData: what is not the dataset.
type memOverhead struct {
	total, keys                  int64
	backlog, slaves, clients     int64 // clients: the others than replicas
	aofBuf, evalCache, funcCache int64
	dbs                          []dbOverhead // databases with keys
}

type dbOverhead struct {
	id            int
	main, expires int64
}

// memoryOverhead adds up the overhead as Redis does: start-up, backlog,
// replicas, clients, AOF buffer, script caches, and per database the dict
// entries, bucket arrays and key objects.
func (s *Server) memoryOverhead() memOverhead {
	m := &s.mem
	o := memOverhead{backlog: m.backlog, slaves: m.slaves, clients: max(s.overheadMem.Load()-m.slaves, 0),
		aofBuf: m.aofBuf, evalCache: m.evalCache, funcCache: m.funcCache}
	o.total = startupMemory + o.backlog + o.slaves + o.clients + o.aofBuf + o.evalCache + o.funcCache
	for _, db := range s.dbs {
		n, x := db.Size(), db.Volatile()
		if n == 0 {
			continue
		}
		d := dbOverhead{
			id:      db.id,
			main:    int64(n)*(dictEntryBytes+robjBytes) + 8*int64(dictSlots(n)),
			expires: int64(x)*dictEntryBytes + 8*int64(dictSlots(x)),
		}
		o.dbs = append(o.dbs, d)
		o.total += d.main + d.expires
		o.keys += int64(n)
	}
	return o
}

// dictSlots is the bucket count of a Redis dict holding n entries.
func dictSlots(n int) int {
	if n == 0 {
		return 0
	}
	return max(4, 1<<bits.Len(uint(n-1)))
}

// memoryInfo is INFO memory. Runs on the executor.
func (s *Server) memoryInfo() [][2]string {
	s.memoryCron()
	used := s.usedMemoryNow()
	o := s.memoryOverhead()
	dataset := max(used-o.total, 0)
	rss := processRSS()
	al := readAllocator()
	peak := s.estats.peakMemory
	vmEval, vmFuncs := s.evalVMMem(), s.functionsVMMem() // memory_parts.go
	ratio := func(a, b int64) string { return fmt.Sprintf("%.2f", float64(a)/float64(max(b, 1))) }
	return append(append([][2]string{
		{"used_memory", itoa(used)},
		{"used_memory_human", humanBytes(uint64(used))},
		{"used_memory_rss", itoa(int64(rss))},
		{"used_memory_rss_human", humanBytes(rss)},
		{"used_memory_peak", itoa(int64(peak))},
		{"used_memory_peak_human", humanBytes(peak)},
		{"used_memory_peak_perc", percent(used, int64(peak))},
		{"used_memory_overhead", itoa(o.total)},
		{"used_memory_startup", itoa(startupMemory)},
		{"used_memory_dataset", itoa(dataset)},
		{"used_memory_dataset_perc", percent(dataset, used-startupMemory)},
		{"allocator_allocated", itoa(al.allocated)},
		{"allocator_active", itoa(al.active)},
		{"allocator_resident", itoa(al.resident)},
		{"total_system_memory", itoa(int64(totalSystemMemory()))},
		{"total_system_memory_human", humanBytes(totalSystemMemory())},
		{"used_memory_lua", itoa(vmEval)}, // Redis's old name of used_memory_vm_eval
		{"used_memory_vm_eval", itoa(vmEval)},
		{"used_memory_lua_human", humanBytes(uint64(vmEval))},
		{"used_memory_scripts_eval", itoa(o.evalCache)},
	}, s.scriptsInfo()...), [][2]string{
		{"used_memory_vm_functions", itoa(vmFuncs)},
		{"used_memory_vm_total", itoa(vmEval + vmFuncs)},
		{"used_memory_vm_total_human", humanBytes(uint64(vmEval + vmFuncs))},
		{"used_memory_functions", itoa(o.funcCache)},
		{"used_memory_scripts", itoa(o.evalCache + o.funcCache)},
		{"used_memory_scripts_human", humanBytes(uint64(o.evalCache + o.funcCache))},
		{"maxmemory", strconv.FormatUint(s.cfg.MaxMemory, 10)},
		{"maxmemory_human", humanBytes(s.cfg.MaxMemory)},
		{"maxmemory_policy", s.cfg.MaxMemPolicy},
		{"allocator_frag_ratio", ratio(al.active, al.allocated)},
		{"allocator_frag_bytes", itoa(al.active - al.allocated)},
		{"allocator_rss_ratio", ratio(al.resident, al.active)},
		{"allocator_rss_bytes", itoa(al.resident - al.active)},
		{"rss_overhead_ratio", ratio(int64(rss), al.resident)},
		{"rss_overhead_bytes", itoa(int64(rss) - al.resident)},
		{"mem_fragmentation_ratio", ratio(int64(rss), used)},
		{"mem_fragmentation_bytes", itoa(int64(rss) - used)},
		{"mem_not_counted_for_evict", itoa(s.notCountedForEvict())},
		{"mem_replication_backlog", itoa(o.backlog)},
		{"mem_total_replication_buffers", itoa(s.replBuffersMem())},
		{"mem_clients_slaves", itoa(o.slaves)},
		{"mem_clients_normal", itoa(o.clients)},
		{"mem_cluster_links", "0"}, // no cluster bus: Redis too has none outside cluster mode
		{"mem_aof_buffer", itoa(o.aofBuf)},
		{"mem_allocator", memAllocator()},
		{"active_defrag_running", "0"}, // the Go runtime's heap is not defragmented
		{"lazyfree_pending_objects", "0"},
		// no lazy freeing: UNLINK, FLUSHALL ASYNC and the like drop their values
		// at once, and the Go collector reclaims them
		{"lazyfreed_objects", "0"},
	}...)
}

// allocatorFigures are jemalloc's allocated/active/resident as the Go runtime
// has them: allocated is the heap's objects (live, and garbage not yet swept),
// active the heap's spans in use (objects plus their spans' free slots), resident
// those spans plus the goroutine stacks. There is no jemalloc to ask.
type allocatorFigures struct{ allocated, active, resident int64 }

func readAllocator() allocatorFigures {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return allocatorFigures{int64(m.HeapAlloc), int64(m.HeapInuse), int64(m.HeapInuse + m.StackInuse)}
}

// percent is Redis's "%.2f%%" of part in whole.
func percent(part, whole int64) string {
	return fmt.Sprintf("%.2f%%", 100*float64(part)/float64(max(whole, 1)))
}

// totalSystemMemory is MemTotal of /proc/meminfo, 0 where there is none.
func totalSystemMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// memAllocator is INFO's mem_allocator and MEMORY DOCTOR's "allocator" (Redis's
// ZMALLOC_LIB): the Go runtime's.
func memAllocator() string { return "go-" + runtime.Version() }
