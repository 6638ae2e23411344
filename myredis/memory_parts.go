package myredis

import (
	"runtime/metrics"
	"sync/atomic"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// The parts of used_memory beside the dataset and the clients, as Redis 7.0's
// getMemoryOverheadData names them: the replication backlog, the replicas'
// output, the AOF buffer, the EVAL script cache and the functions' structures.
// Each is counted where it changes: the backlog when it is made, resized or
// dropped, a script when it is cached or flushed, a library when it is loaded
// or deleted (memParts.fixed, an integer add each time); the replicas' output
// and the AOF buffer, which change with every write, are summed by memoryCron
// with the clients' buffers (ten times a second, and before INFO and MEMORY
// STATS), so no command pays for them.
//
// The Lua states themselves (INFO's used_memory_vm_*) are not in used_memory:
// Redis's Lua allocates outside zmalloc, and so do these.

// memParts is the executor's account of those parts.
type memParts struct {
	// fixed is backlog + evalCache + funcCache: kept by their owners below
	fixed     int64
	backlog   int64 // the backlog's ring (repl-backlog-size bytes, allocated at once)
	evalCache int64 // Redis's evalScriptsMemory for the cached scripts
	funcCache int64 // Redis's functionsMemoryOverhead for the loaded libraries

	// summed by memoryCron
	slaves  int64 // the replicas' client memory: structure, buffers and outboxes
	replOut int64 // the replicas' outboxes: stream bytes not written to them yet
	aofBuf  int64 // the AOF's buffers (aofBufferMem)
}

// setBacklogMem notes the backlog's size, 0 when there is none. Runs on the executor.
func (s *Server) setBacklogMem(b *backlog) {
	n := int64(0)
	if b != nil {
		n = int64(cap(b.buf)) + int64(unsafe.Sizeof(*b))
	}
	s.mem.fixed += n - s.mem.backlog
	s.mem.backlog = n
}

// notCountedForEvict is Redis's freeMemoryGetNotCountedMemory: memory that
// eviction must not free keys for, because evicting makes it grow (each DEL
// goes to the replicas and the AOF). In Redis it is the shared replication
// buffer beyond the backlog's size, and the AOF buffer. MyRedis copies the
// stream into each replica's outbox (replication.go), apart from the backlog's
// ring, so the whole of the replicas' outboxes is that excess. Runs on the
// executor.
func (s *Server) notCountedForEvict() int64 { return s.mem.replOut + s.mem.aofBuf }

// usedMemoryForEvict is used_memory minus what eviction does not count: what
// maxmemory is compared with. Runs on the executor.
func (s *Server) usedMemoryForEvict() int64 {
	return max(s.usedMemoryNow()-s.notCountedForEvict(), 0)
}

// replBuffersMem is INFO's mem_total_replication_buffers: what Redis calls its
// replication buffer, the backlog and the replicas' pending stream. Here they
// are apart: the backlog's ring and each replica's outbox.
func (s *Server) replBuffersMem() int64 { return s.mem.backlog + s.mem.replOut }

// aofBufferMem is the AOF's buffers (Redis's sdsZmallocSize(aof_buf)): the
// executor's buffer of encoded writes (its allocation, kept between rounds as
// Redis keeps aof_buf's), the bytes handed to the writer and not written yet
// (aof_buffer_length), and during a rewrite the writes kept for the new file
// (Redis 7 writes those to a new incremental file instead). Runs on the
// executor.
func (s *Server) aofBufferMem() int64 {
	a := s.aof
	if a == nil {
		return 0
	}
	n := int64(cap(a.buf)) + max(a.handed-a.completed.Load(), 0)
	if a.rw != nil {
		n += int64(cap(a.rw.buf))
	}
	return n
}

// --- the EVAL script cache ---

// Sizes of Redis's scripting structures (64-bit).
const (
	luaScriptBytes = 16 // luaScript: flags, body
	shaSdsBytes    = 48 // a 40-byte sds SHA1: sdshdr8, the bytes, NUL, rounded
)

// scriptBodyMem is what Redis keeps of a script's body (getStringObjectSdsUsedMemory):
// the argument's sds, inside its object up to 44 bytes (embstr).
func scriptBodyMem(n int) int64 {
	if n <= 44 {
		return jemallocSize(int64(robjBytes+3+n+1)) - robjBytes
	}
	return sdsSize(n)
}

// evalCacheMem is Redis's evalScriptsMemory for e's scripts: each one's SHA1 and
// body, its dict entry and luaScript, and the dict's buckets.
func (e *luaEngine) evalCacheMem() int64 {
	n := len(e.scripts)
	return e.shaBodyMem + int64(n)*(dictEntryBytes+luaScriptBytes) + 8*int64(dictSlots(n))
}

// cacheScript adds sc (its body bodyLen bytes long) to the cache and its
// memory to used_memory. Runs on the executor.
func (e *luaEngine) cacheScript(sc *luaScript, bodyLen int) {
	before := e.evalCacheMem()
	e.scripts[sc.sha] = sc
	e.shaBodyMem += shaSdsBytes + scriptBodyMem(bodyLen)
	e.protoMem += sc.protoMem
	e.s.addEvalCacheMem(e.evalCacheMem() - before)
}

func (s *Server) addEvalCacheMem(n int64) {
	s.mem.evalCache += n
	s.mem.fixed += n
}

// --- the functions' structures ---

// Sizes of Redis's functions structures (64-bit, after jemalloc's rounding).
const (
	functionInfoBytes  = 48 // functionInfo (40)
	funcLibInfoBytes   = 32 // functionLibInfo
	luaFunctionCtxSize = 8  // luaFunctionCtx, the compiled function's handle
	funcLibCtxBytes    = 32 // functionsLibCtx
	// engineInfoBytes is the Lua engine's registration: engineInfo (32), its
	// name "LUA" (8), the engine's callbacks (64) and luaEngineCtx (8).
	engineInfoBytes = 32 + 8 + 64 + 8
)

// functionsBaseMem is functionsMemoryOverhead with no library: the engines
// dict (one entry), the library context and the engine's registration. Redis
// has these from start-up; so does this figure, functions or not.
func functionsBaseMem() int64 {
	return dictEntryBytes + 8*int64(dictSlots(1)) + funcLibCtxBytes + engineInfoBytes
}

// libMem is what Redis allocates for lib beside its compiled code: its
// functionLibInfo, name and code, and per function its functionInfo, name,
// description and compiled-function handle.
func libMem(lib *funcLib) int64 {
	n := funcLibInfoBytes + sdsSize(len(lib.name)) + sdsSize(len(lib.code))
	for _, fd := range lib.funcs {
		n += functionInfoBytes + sdsSize(len(fd.name)) + luaFunctionCtxSize
		if fd.hasDesc {
			n += sdsSize(len(fd.desc))
		}
	}
	return n
}

// cacheMem is Redis's functionsMemoryOverhead: the base, the functions dict
// (entries and buckets) and every library's libMem. (While Redis rehashes its
// dict into a bigger table, after the fifth, ninth... function, it counts both
// tables' buckets until later lookups finish moving them, a moment that
// depends on its hash seed; this figure counts the bigger table alone.)
func (f *functionLibs) cacheMem() int64 {
	return functionsBaseMem() + int64(len(f.funcs))*dictEntryBytes + 8*int64(f.funcSlots) + f.libsMem
}

// noteCacheMem moves the figure in used_memory to f's present one. Runs on
// the executor, after each change to the libraries.
func (f *functionLibs) noteCacheMem() {
	s := f.e.s
	n := f.cacheMem()
	s.mem.fixed += n - s.mem.funcCache
	s.mem.funcCache = n
}

// --- the Lua states (used_memory_vm_eval, used_memory_vm_functions) ---
//
// gopher-lua allocates from the Go heap and has no allocator hook to count a
// state's bytes, as Redis counts Lua's with lua_gc(LUA_GCCOUNT). The figure is
// two measured parts: the bytes the Go runtime allocated while the state was
// built (its call stack, registry, libraries and sandbox: about 500 KB, nearly
// all of it kept; the smallest build seen in this process, because other
// goroutines allocating meanwhile can only add to a measurement), plus the
// compiled code of what it holds (each cached script, each loaded library):
// the sizes of the compiled prototypes' slices, constants and debug data
// (protoMem). What scripts leave in the state while they run (tables kept in
// upvalues of a library, garbage not yet collected) is not counted.

// vmBuild is the smallest allocation seen for building one kind of state.
type vmBuild struct{ least atomic.Int64 }

var (
	evalVMBuild = &vmBuild{} // newLuaEngine
	funcVMBuild = &vmBuild{} // newFunctionLibs, its luaEngine included
)

// heapAllocated is the Go runtime's count of bytes allocated so far.
func heapAllocated() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// note records one build's allocation (since the start figure).
func (b *vmBuild) note(start int64) {
	n := heapAllocated() - start
	for {
		old := b.least.Load()
		if n <= 0 || (old != 0 && old <= n) || b.least.CompareAndSwap(old, n) {
			return
		}
	}
}

// protoMem estimates a compiled chunk's memory: the prototype structures, their
// code, constants (a string's bytes and headers, a number's box) and debug
// information, nested functions included.
func protoMem(p *lua.FunctionProto) int64 {
	n := int64(unsafe.Sizeof(*p)) + int64(len(p.SourceName)) +
		4*int64(cap(p.Code)) + 16*int64(cap(p.Constants)) + 8*int64(cap(p.FunctionPrototypes)) +
		8*int64(cap(p.DbgSourcePositions)) + 8*int64(cap(p.DbgLocals)) +
		int64(unsafe.Sizeof(lua.DbgCall{}))*int64(cap(p.DbgCalls)) + 16*int64(cap(p.DbgUpvalues))
	for _, c := range p.Constants {
		switch v := c.(type) {
		case lua.LString:
			n += 32 + int64(len(v)) // its boxed header, its copy in the string-constant list, the bytes
		case lua.LNumber:
			n += 8
		}
	}
	for _, l := range p.DbgLocals {
		n += int64(unsafe.Sizeof(*l)) + int64(len(l.Name))
	}
	for _, c := range p.DbgCalls {
		n += int64(len(c.Name))
	}
	for _, u := range p.DbgUpvalues {
		n += int64(len(u))
	}
	for _, fp := range p.FunctionPrototypes {
		n += protoMem(fp)
	}
	return n
}

// functionMem is a compiled chunk made a function: protoMem and the closure.
func functionMem(fn *lua.LFunction) int64 {
	return protoMem(fn.Proto) + int64(unsafe.Sizeof(*fn))
}

// evalVMMem is used_memory_vm_eval: EVAL's Lua state, 0 while there is none
// (it is made on first use, and SCRIPT FLUSH drops it).
func (s *Server) evalVMMem() int64 {
	if s.lua == nil {
		return 0
	}
	return evalVMBuild.least.Load() + s.lua.protoMem
}

// functionsVMMem is used_memory_vm_functions: the functions' Lua state, 0
// until the first FUNCTION command makes it.
func (s *Server) functionsVMMem() int64 {
	f := s.functionsPtr.Load()
	if f == nil {
		return 0
	}
	return funcVMBuild.least.Load() + f.protoMem
}
