package myredis

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// MEMORY: what a key costs and how the server's memory stands, from the model of
// Redis's allocations that INFO memory uses (memory.go). Every handler runs on
// the executor goroutine.
func commandsMemory() []*command {
	return []*command{
		{name: "memory", arity: -2, fn: cmdMemory, subs: subcommands(map[string]int{
			"usage": -3, "doctor": 2, "malloc-stats": 2, "purge": 2, "stats": 2, "help": 2,
		})},
	}
}

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Prints this help.",
}

const (
	// msgMallocStats is Redis's answer when it is not built on jemalloc; Go's
	// allocator has no such report (INFO memory has the Go heap's figures).
	msgMallocStats = "Stats not supported for the current allocator"
	// memDoctorEmpty is Redis's report below 5 MB of used memory.
	memDoctorEmpty = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	memDoctorFine  = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
)

func cmdMemory(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch strings.ToLower(x.arg(1)) {
	case "help":
		x.help(memoryHelp)
	case "usage":
		memoryUsage(x)
	case "doctor":
		x.w.Verbatim(memoryDoctor(x.s))
	case "malloc-stats":
		x.w.Verbatim(msgMallocStats)
	case "purge":
		debug.FreeOSMemory()
		x.s.trims.Add(1)
		x.w.OK()
	case "stats":
		memoryStats(x)
	}
}

// memoryUsage is MEMORY USAGE key [SAMPLES count]: the key's value, its name and
// its dict entry, as Redis's objectComputeSize + sdsZmallocSize + sizeof(dictEntry).
// The model is exact per type (memory.go), so SAMPLES is validated and not needed.
func memoryUsage(x *Ctx) {
	for i := 3; i < x.nargs(); i += 2 {
		if !strings.EqualFold(x.arg(i), "samples") || i+1 >= x.nargs() {
			x.err(msgSyntax)
			return
		}
		n, err := strconv.ParseInt(x.arg(i+1), 10, 64)
		if err != nil {
			x.err(msgNotInt)
			return
		}
		if n < 0 {
			x.err(msgSyntax)
			return
		}
	}
	e := x.db.peek(x.arg(2))
	if e == nil {
		x.w.Null()
		return
	}
	key := x.arg(2)
	x.w.Int(x.s.entryValueMem(e) + sdsSize(len(key)) + dictEntryBytes)
}

// memoryDoctor follows Redis's report: too little memory to judge, or the
// problems its detector names (a peak far above today's use, high fragmentation).
func memoryDoctor(s *Server) string {
	used := s.usedMemoryNow()
	if used < 5<<20 {
		return memDoctorEmpty
	}
	var issues []string
	if peak := int64(s.estats.peakMemory); peak > used*3/2 {
		issues = append(issues, " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.")
	}
	if rss := int64(processRSS()); rss > used*14/10 {
		issues = append(issues, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \""+memAllocator()+"\".")
	}
	if len(issues) == 0 {
		return memDoctorFine
	}
	return "Sam, I detected a few issues in this Redis instance memory implants:\n\n" +
		strings.Join(issues, "\n\n") +
		"\n\nI'm here to keep you safe, Sam. I want to help you.\n"
}

// memoryStats is MEMORY STATS: Redis's fields, from the same figures as INFO memory.
func memoryStats(x *Ctx) {
	s := x.s
	s.memoryCron() // memory.go: the clients', replicas' and AOF's buffers now
	used := s.usedMemoryNow()
	o := s.memoryOverhead()
	dataset := max(used-o.total, 0)
	rss := int64(processRSS())
	al := readAllocator() // memory.go: the Go runtime's figures for jemalloc's
	x.w.Map(len(o.dbs) + 27)
	pair := func(k string, v int64) { x.w.BulkString(k); x.w.Int(v) }
	pair("peak.allocated", int64(s.estats.peakMemory))
	pair("total.allocated", used)
	pair("startup.allocated", startupMemory)
	pair("replication.backlog", o.backlog) // memory_parts.go, each
	pair("clients.slaves", o.slaves)
	pair("clients.normal", o.clients)
	pair("cluster.links", 0) // no cluster bus: Redis too reports 0 outside cluster mode
	pair("aof.buffer", o.aofBuf)
	pair("lua.caches", o.evalCache)
	pair("functions.caches", o.funcCache)
	for _, d := range o.dbs {
		x.w.BulkString("db." + strconv.Itoa(d.id))
		x.w.Map(3)
		pair("overhead.hashtable.main", d.main)
		pair("overhead.hashtable.expires", d.expires)
		pair("overhead.hashtable.slot-to-keys", 0) // kept only in cluster mode, as Redis
	}
	pair("overhead.total", o.total)
	pair("keys.count", o.keys)
	if o.keys > 0 {
		pair("keys.bytes-per-key", (used-startupMemory)/o.keys)
	} else {
		pair("keys.bytes-per-key", 0)
	}
	pair("dataset.bytes", dataset)
	x.w.BulkString("dataset.percentage")
	x.w.Double(100 * float64(dataset) / float64(max(used-startupMemory, 1)))
	x.w.BulkString("peak.percentage")
	x.w.Double(100 * float64(used) / float64(max(int64(s.estats.peakMemory), 1)))
	pair("allocator.allocated", al.allocated)
	pair("allocator.active", al.active)
	pair("allocator.resident", al.resident)
	ratio := func(k string, a, b int64) { x.w.BulkString(k); x.w.Double(float64(a) / float64(max(b, 1))) }
	ratio("allocator-fragmentation.ratio", al.active, al.allocated)
	pair("allocator-fragmentation.bytes", al.active-al.allocated)
	ratio("allocator-rss.ratio", al.resident, al.active)
	pair("allocator-rss.bytes", al.resident-al.active)
	ratio("rss-overhead.ratio", rss, al.resident) // the rest of the process: runtime, code, freed pages not yet returned
	pair("rss-overhead.bytes", rss-al.resident)
	x.w.BulkString("fragmentation")
	x.w.Double(float64(rss) / float64(max(used, 1)))
	pair("fragmentation.bytes", rss-used)
}
