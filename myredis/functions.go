package myredis

import (
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Redis 7 functions: libraries of Lua functions loaded with FUNCTION LOAD and
// called with FCALL. As in Redis they live in their own Lua state, apart from
// EVAL's, with the same sandbox. A library's code runs once, at load, in an
// environment that offers only redis.register_function, redis.log and the
// version constants; the functions it registers run later, on FCALL, with the
// full scripting API. Both see one global table whose lookups go to the load API
// or to the real globals depending on the phase (Redis swaps the metatable's
// __index the same way), so a function cannot reach the load API at run time
// and the library code cannot reach redis.call at load time.

// luaFunctionChunk is what Redis calls a library's code in error messages.
const luaFunctionChunk = "user_function"

// functionLoadTimeout bounds a library's load run (Redis's LOAD_TIMEOUT_MS).
const functionLoadTimeout = 500 * time.Millisecond

// Script flags, in Redis's order (FUNCTION LIST shows them in this order).
var scriptFlagNames = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// Bits of the flags, by their index in scriptFlagNames.
const (
	scriptFlagNoWrites = 1 << iota
	scriptFlagAllowOOM
	scriptFlagAllowStale
)

// funcLib is one loaded library.
type funcLib struct {
	name  string // as given
	code  string // the whole FUNCTION LOAD payload, shebang included
	funcs []*funcDef
	// protoMem is its compiled code's memory in the Lua state (memory_parts.go)
	protoMem int64
}

// funcDef is one registered function.
type funcDef struct {
	name    string
	desc    string
	hasDesc bool
	flags   int // bit i: scriptFlagNames[i]
	fn      *lua.LFunction
	lib     *funcLib
}

// functionLibs is the server's libraries and their Lua state. Executor only,
// except the counts, which FUNCTION STATS reads while a script is busy.
type functionLibs struct {
	e     *luaEngine
	libs  map[string]*funcLib // by name (case-sensitive, as Redis)
	funcs map[string]*funcDef // by lower-case name

	env     *lua.LTable // the global table every library's code sees
	loadAPI *lua.LTable // the load-time globals: {redis = {register_function, log, ...}}
	loading *funcLib    // the library being loaded, nil outside FUNCTION LOAD

	libCount, funcCount atomic.Int64

	// the libraries' memory (memory_parts.go): Redis's structures for them
	// (libMem) and their compiled code in the Lua state
	libsMem, protoMem int64
	// funcSlots is the bucket count of Redis's functions dict: it grows with
	// the functions and, as Redis's, does not shrink until FUNCTION FLUSH
	funcSlots int
}

// functionLibs returns the server's libraries, creating their Lua state on first use.
func (s *Server) functionLibs() *functionLibs {
	if f := s.functionsPtr.Load(); f != nil {
		return f
	}
	start := heapAllocated()
	f := newFunctionLibs(s)
	funcVMBuild.note(start) // memory_parts.go: used_memory_vm_functions
	s.functionsPtr.Store(f)
	return f
}

func newFunctionLibs(s *Server) *functionLibs {
	f := &functionLibs{e: newLuaEngine(s), libs: map[string]*funcLib{}, funcs: map[string]*funcDef{}}
	L := f.e.L
	noGlobal := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgLuaNoGlobal, L.ToString(2))
		return 0
	})
	errorTable := func(t *lua.LTable) *lua.LTable { // reading a missing field is an error
		mt := L.NewTable()
		mt.RawSetString("__index", noGlobal)
		L.SetMetatable(t, mt)
		return f.e.readonly(t)
	}
	redisLib := L.NewTable()
	redisLib.RawSetString("register_function", L.NewFunction(f.registerFunction))
	redisLib.RawSetString("log", L.NewFunction(f.e.log))
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REDIS_VERSION_NUM": redisVersionNum} {
		redisLib.RawSetString(name, lua.LNumber(v))
	}
	redisLib.RawSetString("REDIS_VERSION", lua.LString(redisVersion))
	f.loadAPI = L.NewTable()
	f.loadAPI.RawSetString("redis", errorTable(redisLib))
	errorTable(f.loadAPI)

	// The libraries' global table: always empty, read through __index, which
	// looks in the load API while a library loads and in the real globals after.
	f.env = L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		key := L.Get(2)
		if f.loading != nil {
			v := f.loadAPI.RawGet(key)
			if v == lua.LNil {
				L.RaiseError(msgLuaNoGlobal, L.ToString(2))
			}
			L.Push(v)
			return 1
		}
		L.Push(L.GetTable(f.e.globals, key)) // the real globals: missing is an error there too
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgLuaReadonly)
		return 0
	}))
	mt.RawSetString("__metatable", f.env)
	L.SetMetatable(f.env, mt)
	return f
}

// libMeta is a library's shebang: "#!<engine> name=<name>".
type libMeta struct {
	engine, name string
	codeAt       int // where the code after the shebang line starts (at its newline)
}

// parseLibMeta reads the shebang as Redis's functionExtractLibMetaData, with its
// error texts.
func parseLibMeta(payload string) (libMeta, string) {
	if !strings.HasPrefix(payload, "#!") {
		return libMeta{}, "ERR Missing library metadata"
	}
	end := strings.IndexByte(payload, '\n')
	if end < 0 {
		return libMeta{}, "ERR Invalid library metadata"
	}
	parts, ok := splitInline([]byte(payload[:end]))
	if !ok || len(parts) == 0 {
		return libMeta{}, "ERR Invalid library metadata"
	}
	md := libMeta{engine: string(parts[0][2:]), codeAt: end}
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(string(p[:5]), "name=") {
			if named {
				return libMeta{}, "ERR Invalid metadata value, name argument was given multiple times"
			}
			md.name, named = string(p[5:]), true
			continue
		}
		return libMeta{}, "ERR Invalid metadata value given: " + string(p)
	}
	if !named {
		return libMeta{}, "ERR Library name was not given"
	}
	return md, ""
}

// validFunctionName: letters, digits and underscores, at least one.
func validFunctionName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const msgFunctionBadName = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// compileLibrary builds a library from its payload: parses the shebang, compiles
// the code and runs it so that it registers its functions. Nothing of the server
// changes; timeout 0 means none (replaying the AOF). The error is the reply text.
func (f *functionLibs) compileLibrary(payload string, timeout time.Duration) (*funcLib, string) {
	return f.compileLibraryUnless(payload, timeout, func(string) string { return "" })
}

// compileLibraryUnless is compileLibrary with a check of the library's name
// (refuse: the error, or "") made before its code runs, as Redis refuses an
// existing library before loading it.
func (f *functionLibs) compileLibraryUnless(payload string, timeout time.Duration, refuse func(name string) string) (*funcLib, string) {
	md, errMsg := parseLibMeta(payload)
	if errMsg != "" {
		return nil, errMsg
	}
	if !validFunctionName(md.name) {
		return nil, msgFunctionBadName
	}
	if !strings.EqualFold(md.engine, "lua") {
		return nil, "ERR Engine '" + md.engine + "' not found"
	}
	if errMsg := refuse(md.name); errMsg != "" {
		return nil, errMsg
	}
	code := payload[md.codeAt:]
	chunk, err := parse.Parse(strings.NewReader(code), luaFunctionChunk)
	if err != nil {
		return nil, "ERR Error compiling function: " + luaSyntaxError(err, luaFunctionChunk, strings.Count(code, "\n")+1)
	}
	proto, err := lua.Compile(chunk, luaFunctionChunk)
	if err != nil {
		return nil, "ERR Error compiling function: " + luaFunctionChunk + ": " + err.Error()
	}
	proto.IsVarArg &^= lua.VarArgNeedsArg
	L := f.e.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = f.env
	lib := &funcLib{name: md.name, code: payload, protoMem: functionMem(fn)}

	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	L.SetContext(ctx)
	f.loading = lib
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	f.loading = nil
	L.RemoveContext()
	f.e.ctx = nil // the EVAL engine's context is not this one; make the next run renew it
	L.SetTop(0)
	if err != nil {
		msg := luaLoadFailure(err)
		if ctx.Err() == context.DeadlineExceeded {
			msg = "ERR FUNCTION LOAD timeout"
		}
		return nil, "ERR Error registering functions: " + msg
	}
	if len(lib.funcs) == 0 {
		return nil, "ERR No functions registered"
	}
	return lib, ""
}

// luaLoadFailure is the message of an error raised while a library loads, as
// Redis's luaExtractErrorInformation: a table's err field, or "ERR <string>".
func luaLoadFailure(err error) string {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return "ERR " + err.Error()
	}
	if t, ok := ae.Object.(*lua.LTable); ok {
		if msg, ok := luaStringField(t, "err"); ok {
			return msg
		}
		return "ERR unknown error"
	}
	return "ERR " + luaToString(ae.Object)
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=..., callback=..., description=..., flags={...}}.
func (f *functionLibs) registerFunction(L *lua.LState) int {
	lib := f.loading
	if lib == nil {
		L.Error(luaErrorTable(L, "redis.register_function can only be called on FUNCTION LOAD command"), 0)
	}
	var fd *funcDef
	var errMsg string
	switch L.GetTop() {
	case 1:
		fd, errMsg = readNamedFunctionArgs(L)
	case 2:
		fd, errMsg = readPositionalFunctionArgs(L)
	default:
		errMsg = "wrong number of arguments to redis.register_function"
	}
	if errMsg == "" {
		switch {
		case !validFunctionName(fd.name):
			errMsg = strings.TrimPrefix(msgFunctionBadName, "ERR ")
		case lib.find(fd.name) != nil:
			errMsg = "Function already exists in the library"
		}
	}
	if errMsg != "" {
		L.Error(luaErrorTable(L, errMsg), 0)
	}
	fd.lib = lib
	lib.funcs = append(lib.funcs, fd)
	return 0
}

func (lib *funcLib) find(name string) *funcDef {
	for _, fd := range lib.funcs {
		if fd.name == name {
			return fd
		}
	}
	return nil
}

// luaIsString is lua_isstring: strings and numbers.
func luaIsString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return luaNumberString(float64(v)), true
	}
	return "", false
}

func readPositionalFunctionArgs(L *lua.LState) (*funcDef, string) {
	name, ok := luaIsString(L.Get(1))
	if !ok {
		return nil, "first argument to redis.register_function must be a string"
	}
	fn, ok := L.Get(2).(*lua.LFunction)
	if !ok {
		return nil, "second argument to redis.register_function must be a function"
	}
	return &funcDef{name: name, fn: fn}, ""
}

func readNamedFunctionArgs(L *lua.LState) (*funcDef, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	fd := &funcDef{}
	named := false
	var errMsg string
	t.ForEach(func(k, v lua.LValue) {
		if errMsg != "" {
			return
		}
		key, ok := luaIsString(k)
		if !ok {
			errMsg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if fd.name, ok = luaIsString(v); !ok {
				errMsg = "function_name argument given to redis.register_function must be a string"
			}
			named = true
		case "description":
			if fd.desc, ok = luaIsString(v); !ok {
				errMsg = "description argument given to redis.register_function must be a string"
			}
			fd.hasDesc = true
		case "callback":
			if fd.fn, ok = v.(*lua.LFunction); !ok {
				errMsg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			flags, ok := v.(*lua.LTable)
			if !ok {
				errMsg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if fd.flags, ok = readScriptFlags(flags); !ok {
				errMsg = "unknown flag given"
			}
		default:
			errMsg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case errMsg != "":
		return nil, errMsg
	case !named:
		return nil, "redis.register_function must get a function name argument"
	case fd.fn == nil:
		return nil, "redis.register_function must get a callback argument"
	}
	return fd, ""
}

// readScriptFlags reads a flags table {'no-writes', ...} up to its first nil.
func readScriptFlags(t *lua.LTable) (int, bool) {
	flags := 0
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		name, ok := luaIsString(v)
		if !ok {
			return 0, false
		}
		found := false
		for bit, flag := range scriptFlagNames {
			if strings.EqualFold(flag, name) {
				flags |= 1 << bit
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
}

// --- the library set ---

// add installs lib; replace drops a library of the same name first. It checks
// everything before changing anything; the error is the reply text.
func (f *functionLibs) add(lib *funcLib, replace bool) string {
	old := f.libs[lib.name]
	if old != nil && !replace {
		return "ERR Library '" + lib.name + "' already exists"
	}
	for _, fd := range lib.funcs {
		if other := f.funcs[strings.ToLower(fd.name)]; other != nil && other.lib != old {
			return "ERR Function " + fd.name + " already exists"
		}
	}
	if old != nil {
		f.remove(old)
	}
	f.install(lib)
	return ""
}

func (f *functionLibs) install(lib *funcLib) {
	f.libs[lib.name] = lib
	for _, fd := range lib.funcs {
		f.funcs[strings.ToLower(fd.name)] = fd
	}
	f.libsMem += libMem(lib)
	f.protoMem += lib.protoMem
	f.funcSlots = max(f.funcSlots, dictSlots(len(f.funcs)))
	f.count()
}

func (f *functionLibs) remove(lib *funcLib) {
	delete(f.libs, lib.name)
	for _, fd := range lib.funcs {
		delete(f.funcs, strings.ToLower(fd.name))
	}
	f.libsMem -= libMem(lib)
	f.protoMem -= lib.protoMem
	f.count()
}

func (f *functionLibs) count() {
	f.libCount.Store(int64(len(f.libs)))
	f.funcCount.Store(int64(len(f.funcs)))
	f.noteCacheMem() // memory_parts.go
}

// sorted lists the libraries by name.
func (f *functionLibs) sorted() []*funcLib {
	libs := make([]*funcLib, 0, len(f.libs))
	for _, lib := range f.libs {
		libs = append(libs, lib)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].name < libs[j].name })
	return libs
}

// --- FCALL ---

// fcall runs function fd for the command in x (FCALL or FCALL_RO).
func (f *functionLibs) fcall(x *Ctx, fd *funcDef, keys, argv [][]byte, readOnly bool) {
	noWrites := fd.flags&scriptFlagNoWrites != 0
	if readOnly && !noWrites {
		x.err("ERR Can not execute a script with write flag using *_ro command.")
		return
	}
	allowOOM := noWrites || fd.flags&scriptFlagAllowOOM != 0
	if !allowOOM && x.s.overMaxmemory() { // a function that may write is refused whole
		x.err(msgOOM)
		return
	}
	if msg := x.s.scriptRefusal(x.c, true, noWrites, fd.flags&scriptFlagAllowStale != 0); msg != "" { // replication_guard.go
		x.err(msg)
		return
	}
	e := f.e
	rs := runningScript{name: fd.name, errName: fd.name, function: true, allowOOM: allowOOM}
	e.invoke(x, rs, noWrites, func() int {
		e.L.Push(fd.fn)
		e.L.Push(e.fcallArray(keys, &e.keysIn))
		e.L.Push(e.fcallArray(argv, &e.argvIn))
		return 2
	})
}

// fcallArray is a function's keys or args: as array, but a new table when
// empty too (a function may keep the table it was given).
func (e *luaEngine) fcallArray(items [][]byte, a *luaArgs) *lua.LTable {
	if len(items) == 0 {
		return e.L.NewTable()
	}
	return e.array(items, a)
}

// --- DUMP / RESTORE payload ---

// A FUNCTION DUMP payload is Redis's: for each library the RDB opcode
// FUNCTION2 and its code as an RDB string, then the RDB version (2 bytes,
// little-endian) and the CRC64 of everything before it (rdb.go), so a dump
// taken from Redis 7.0 restores here and the other way round.
func (f *functionLibs) dump() []byte {
	w := rdbWriter{compress: true}
	for _, lib := range f.sorted() {
		w.byte1(rdbOpFunction2)
		w.str([]byte(lib.code))
	}
	w.b = binary.LittleEndian.AppendUint16(w.b, rdbVersion)
	w.b = binary.LittleEndian.AppendUint64(w.b, crc64(0, w.b))
	return w.b
}

// parseDump returns the library codes of a payload, or false if it is not one.
func parseDump(b []byte) ([]string, bool) {
	if !verifyDumpPayload(b) {
		return nil, false
	}
	r := rdbReader{p: b[:len(b)-10]}
	var codes []string
	for r.left() > 0 {
		op, err := r.byte1()
		if err != nil || op != rdbOpFunction2 {
			return nil, false
		}
		code, err := r.str()
		if err != nil {
			return nil, false
		}
		codes = append(codes, string(code))
	}
	return codes, true
}

// restore loads the libraries of a payload under policy "append", "replace" or
// "flush", all or nothing. Each library's load run has the timeout FUNCTION LOAD
// has (Redis has none here; a crafted payload would hold the executor). The
// error is the reply text.
func (f *functionLibs) restore(payload []byte, policy string, timeout time.Duration) string {
	codes, ok := parseDump(payload)
	if !ok {
		return "ERR DUMP payload version or checksum are wrong"
	}
	var libs []*funcLib
	seen := map[string]bool{}
	for _, code := range codes {
		lib, errMsg := f.compileLibrary(code, timeout)
		if errMsg != "" {
			return errMsg
		}
		for _, fd := range lib.funcs {
			if seen[strings.ToLower(fd.name)] {
				return "ERR Function " + fd.name + " already exists"
			}
			seen[strings.ToLower(fd.name)] = true
		}
		libs = append(libs, lib)
	}
	if policy == "flush" {
		f.flush()
	}
	// Check every library against what stays, then install.
	replaced := map[*funcLib]bool{}
	for _, lib := range libs {
		old := f.libs[lib.name]
		if old != nil {
			if policy != "replace" {
				return "ERR Library " + lib.name + " already exists"
			}
			replaced[old] = true
		}
	}
	for _, lib := range libs {
		for _, fd := range lib.funcs {
			if other := f.funcs[strings.ToLower(fd.name)]; other != nil && !replaced[other.lib] {
				return "ERR Function " + fd.name + " already exists"
			}
		}
	}
	for old := range replaced {
		f.remove(old)
	}
	for _, lib := range libs {
		f.install(lib)
	}
	return ""
}

// flush drops every library.
func (f *functionLibs) flush() {
	f.libs = map[string]*funcLib{}
	f.funcs = map[string]*funcDef{}
	f.libsMem, f.protoMem, f.funcSlots = 0, 0, 0
	f.count()
}

// writeFunctionStats writes FUNCTION STATS. It may run on a connection goroutine
// while a script is busy, so it reads only the guard and the atomic counts.
func (s *Server) writeFunctionStats(w *Writer) {
	var libs, funcs int64
	if f := s.functionsForStats(); f != nil {
		libs, funcs = f.libCount.Load(), f.funcCount.Load()
	}
	w.Map(2)
	w.BulkString("running_script")
	if rs, cmd, ms, ok := s.scriptGuard.runningInfo(); ok {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(rs.name)
		w.BulkString("command")
		w.BulkStrings(cmd)
		w.BulkString("duration_ms")
		w.Int(ms)
	} else {
		w.Null()
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(libs)
	w.BulkString("functions_count")
	w.Int(funcs)
}

// functionsForStats returns the libraries if they exist, from any goroutine.
func (s *Server) functionsForStats() *functionLibs { return s.functionsPtr.Load() }

// functionsRewrite encodes a FUNCTION LOAD command per library, for the start of
// a rewritten AOF. Runs on the executor.
func (s *Server) functionsRewrite() []byte {
	f := s.functionsPtr.Load()
	if f == nil {
		return nil
	}
	var b []byte
	for _, lib := range f.sorted() {
		b = appendCommand(b, [][]byte{[]byte("FUNCTION"), []byte("LOAD"), []byte(lib.code)})
	}
	return b
}

// scriptsInfo is INFO memory's count of cached EVAL scripts, functions and
// libraries. Runs on the executor.
func (s *Server) scriptsInfo() [][2]string {
	scripts, funcs, libs := 0, int64(0), int64(0)
	if s.lua != nil {
		scripts = len(s.lua.scripts)
	}
	if f := s.functionsPtr.Load(); f != nil {
		funcs, libs = f.funcCount.Load(), f.libCount.Load()
	}
	return [][2]string{
		{"number_of_cached_scripts", strconv.Itoa(scripts)},
		{"number_of_functions", strconv.FormatInt(funcs, 10)},
		{"number_of_libraries", strconv.FormatInt(libs, 10)},
	}
}
