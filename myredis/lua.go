package myredis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// The Lua engine behind EVAL. One gopher-lua state lives on the executor goroutine
// and runs every script, one at a time, so a script is as atomic as a single
// command: nothing else touches the keyspace until it returns. Scripts are
// compiled once and kept by the SHA1 of their body; a run calls the cached
// function, so nothing is parsed or rebuilt per call.
//
// The sandbox is Redis 7.0's: base, table, string, math, coroutine, cjson, bit,
// cmsgpack and struct (no os, io, package, debug, loadfile, dofile, print). Every global and every library table is read-only, and
// reading a global that does not exist is an error. gopher-lua has no read-only
// tables, so each protected table is an empty proxy whose metatable reads through
// to the real table and refuses writes (rawset, setmetatable and friends are
// wrapped to see through or refuse the proxies).

// luaChunkName is what Redis calls the script body in error messages.
const luaChunkName = "user_script"

// luaScript is a compiled script in the cache.
type luaScript struct {
	sha      string
	name     string         // FUNCTION STATS' name of it running: f_<sha>, made once
	fn       *lua.LFunction // the main chunk, made once: it has no upvalues to renew
	noWrites bool           // shebang flags=no-writes
	flagged  bool           // it has a shebang: flags decide, not each command (OOM)
	allowOOM bool           // shebang flags=allow-oom
	// shebang flags=allow-stale: runs on a replica that may not serve stale data
	allowStale bool
	protoMem   int64 // its compiled code's memory in the Lua state (memory_parts.go)
}

// luaEngine owns the Lua state. Every method runs on the executor goroutine.
type luaEngine struct {
	s       *Server
	L       *lua.LState
	scripts map[string]*luaScript // by lower-case SHA1 hex
	// the cache's memory (memory_parts.go): Redis's SHA1 and body sds of each
	// script, and the compiled code of each in the Lua state
	shaBodyMem, protoMem int64

	globals  *lua.LTable                 // the real globals, behind a read-only proxy
	proxies  map[*lua.LTable]*lua.LTable // read-only proxy -> the table it shows
	handler  *lua.LFunction              // Redis's __redis__err__handler
	nextFn   *lua.LFunction              // next, seeing through proxies
	ipairsFn *lua.LFunction              // ipairs' iterator
	rand     rand48

	// the script running now
	client         *Client  // the caller's stand-in for redis.call (its own SELECTed db)
	caller         *Ctx     // the EVAL or FCALL running the script (tracking remembers its keys)
	x              Ctx      // reused for each redis.call
	reply          Writer   // scratch buffer for one redis.call's reply
	readOnly       bool     // EVAL_RO or flags=no-writes
	allowOOM       bool     // flags=allow-oom: denyoom commands run over maxmemory
	wrote          bool     // a write command ran (SCRIPT KILL refuses from then on)
	argv           [][]byte // reused for each redis.call's argument vector
	keysIn, argvIn luaArgs  // KEYS and ARGV (EVAL), or a function's keys and args (FCALL)

	ctx     context.Context // the running script's; SCRIPT KILL cancels it
	cancel  context.CancelFunc
	spawned bool // a coroutine was created: renew ctx after the script
}

// luaEngine returns the server's Lua engine, creating it on first use.
func (s *Server) luaEngine() *luaEngine {
	if s.lua == nil {
		start := heapAllocated()
		s.lua = newLuaEngine(s)
		evalVMBuild.note(start) // memory_parts.go: used_memory_vm_eval
	}
	return s.lua
}

func newLuaEngine(s *Server) *luaEngine {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: true,
		// Calls deep: a quarter of Lua 5.1's LUAI_MAXCALLS, because gopher-lua
		// answers an overflow with a traceback that costs the depth squared.
		// Allocated once: a growing stack misses its limit in gopher-lua 1.1.2.
		CallStackSize:    5000,
		RegistrySize:     1024,
		RegistryMaxSize:  256 << 10,
		RegistryGrowStep: 4096,
	})
	e := &luaEngine{
		s:       s,
		L:       L,
		scripts: make(map[string]*luaScript),
		globals: L.G.Global,
		proxies: make(map[*lua.LTable]*lua.LTable),
		rand:    rand48Default,
	}
	e.client = newClient(s, nil)
	e.client.authed = true
	e.client.name = "lua"
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e.sandbox()
	return e
}

// close releases the Lua state (SCRIPT FLUSH starts a fresh one, as Redis does).
func (e *luaEngine) close() { e.L.Close() }

// sandbox trims the globals to Redis's, installs the redis API, and locks every
// table reachable from the globals.
func (e *luaEngine) sandbox() {
	L, G := e.L, e.globals
	for _, name := range []string{"dofile", "loadfile", "print", "_printregs", "setfenv", "getfenv",
		"module", "require", "newproxy", "_GOPHER_LUA_VERSION"} {
		G.RawSetString(name, lua.LNil)
	}
	origTostring := G.RawGetString("tostring")
	G.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int { return luaTostring(L, origTostring) }))
	G.RawSetString("error", L.NewFunction(luaErrorFn))
	G.RawSetString("loadstring", L.NewFunction(luaLoadstring))
	G.RawSetString("load", L.NewFunction(luaLoad))
	G.RawSetString("pcall", L.NewFunction(luaPcall))
	G.RawSetString("collectgarbage", L.NewFunction(luaCollectGarbage))
	G.RawSetString("unpack", L.NewFunction(luaUnpack))
	G.RawSetString("gcinfo", L.NewFunction(luaGcinfo))
	G.RawSetString("rawset", L.NewFunction(e.rawset))
	G.RawSetString("rawget", L.NewFunction(e.rawget))
	e.nextFn = L.NewFunction(e.next)
	e.ipairsFn = L.NewFunction(luaIpairsNext)
	G.RawSetString("next", e.nextFn)
	G.RawSetString("pairs", L.NewFunction(e.pairs))
	G.RawSetString("ipairs", L.NewFunction(e.ipairs))
	setmt := G.RawGetString("setmetatable")
	G.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && e.proxies[t] != nil {
			L.Error(lua.LString(msgLuaReadonly), 0)
		}
		L.Insert(setmt, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))

	str := G.RawGetString("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(luaStringRep))
	str.RawSetString("format", L.NewFunction(luaFormat))
	str.RawSetString("dump", L.NewFunction(luaStringDump)) // lua_dump.go
	co := G.RawGetString("coroutine").(*lua.LTable)
	for _, name := range []string{"create", "wrap"} {
		orig := co.RawGetString(name)
		co.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			e.spawned = true
			L.Insert(orig, 1)
			L.Call(L.GetTop()-1, lua.MultRet)
			return L.GetTop()
		}))
	}
	math := G.RawGetString("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(e.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(e.mathRandomseed))
	math.RawSetString("huge", luaHuge) // gopher-lua's is MaxFloat64
	G.RawSetString("tonumber", L.NewFunction(luaToNumber))

	G.RawSetString("redis", e.redisAPI())
	G.RawSetString("cjson", openCjson(L))
	G.RawSetString("bit", openBit(L))
	G.RawSetString("cmsgpack", e.openCmsgpack(L))
	G.RawSetString("struct", openStruct(L))
	e.handler = L.NewFunction(e.errorHandler)
	e.installCallErrors() // lua_callerr.go

	// Lock the library tables, then the globals themselves.
	for _, lib := range []string{"string", "table", "math", "coroutine", "redis", "cjson", "bit", "cmsgpack", "struct"} {
		G.RawSetString(lib, e.readonly(G.RawGetString(lib).(*lua.LTable)))
	}
	if mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		mt.RawSetString("__index", G.RawGetString("string"))
		mt.RawSetString("__metatable", e.readonly(mt))
	}
	gmt := L.NewTable()
	gmt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgLuaNoGlobal, L.ToString(2))
		return 0
	}))
	L.SetMetatable(G, gmt)
	proxyG := e.readonly(G)
	G.RawSetString("_G", proxyG)
	L.Env = proxyG // every function made from now on sees the read-only globals
}

// readonly returns a read-only view of t: reads go through, writes raise
// "Attempt to modify a readonly table".
func (e *luaEngine) readonly(t *lua.LTable) *lua.LTable {
	L := e.L
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgLuaReadonly)
		return 0
	}))
	mt.RawSetString("__metatable", p)
	L.SetMetatable(p, mt)
	e.proxies[p] = t
	return p
}

// seeThrough returns the real table behind a read-only proxy, or t itself.
func (e *luaEngine) seeThrough(t *lua.LTable) *lua.LTable {
	if real := e.proxies[t]; real != nil {
		return real
	}
	return t
}

func (e *luaEngine) rawset(L *lua.LState) int {
	t := luaCheckTable(L, 1, "rawset")
	if e.proxies[t] != nil {
		L.Error(lua.LString(msgLuaReadonly), 0)
	}
	L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
	L.SetTop(1)
	return 1
}

func (e *luaEngine) rawget(L *lua.LState) int {
	t := e.seeThrough(luaCheckTable(L, 1, "rawget"))
	L.Push(t.RawGet(L.CheckAny(2)))
	return 1
}

func (e *luaEngine) next(L *lua.LState) int {
	t := e.seeThrough(luaCheckTable(L, 1, "next"))
	k, v := t.Next(L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// pairs and ipairs hand the loop the table itself (a proxy stays a proxy) and
// iterators that see through proxies.
func (e *luaEngine) pairs(L *lua.LState) int {
	t := luaCheckTable(L, 1, "pairs")
	L.Push(e.nextFn)
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

func (e *luaEngine) ipairs(L *lua.LState) int {
	t := luaCheckTable(L, 1, "ipairs")
	L.Push(e.ipairsFn)
	L.Push(t)
	L.Push(lua.LNumber(0))
	return 3
}

func luaIpairsNext(L *lua.LState) int {
	i := L.CheckInt(2) + 1
	v := L.GetTable(L.Get(1), lua.LNumber(i))
	if v == lua.LNil {
		return 0
	}
	L.Push(lua.LNumber(i))
	L.Push(v)
	return 2
}

// redisAPI builds the redis table: call, pcall, the reply helpers, log, sha1hex.
func (e *luaEngine) redisAPI() *lua.LTable {
	L := e.L
	r := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return e.command(L, true) },
		"pcall":              func(L *lua.LState) int { return e.command(L, false) },
		"error_reply":        luaErrorReply,
		"status_reply":       luaStatusReply,
		"sha1hex":            luaSha1hex,
		"log":                e.log,
		"setresp":            e.setresp,
		"set_repl":           luaSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      e.aclCheckCmd,
	}
	for name, fn := range fns {
		r.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
		"REDIS_VERSION_NUM": redisVersionNum,
	} {
		r.RawSetString(name, lua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", lua.LString(redisVersion))
	return r
}

// redisVersionNum is redisVersion as 0x00MMmmpp.
const redisVersionNum = 7<<16 | 0<<8 | 15

// --- compiling ---

// compile parses body (after its optional "#!lua" shebang line) into a cached script.
// The error is the full reply text.
func (e *luaEngine) compile(body, sha string) (*luaScript, string) {
	sc := &luaScript{sha: sha, name: "f_" + sha}
	code := body
	if strings.HasPrefix(body, "#!") {
		n, flags, errMsg := parseShebang(body)
		if errMsg != "" {
			return nil, errMsg
		}
		sc.noWrites, sc.allowOOM = flags&scriptFlagNoWrites != 0, flags&scriptFlagAllowOOM != 0
		sc.allowStale, sc.flagged = flags&scriptFlagAllowStale != 0, true
		code = body[n:] // keep the newline so line numbers stay right
	}
	chunk, err := parse.Parse(strings.NewReader(code), luaChunkName)
	if err != nil {
		return nil, fmt.Sprintf(msgScriptCompile, luaSyntaxError(err, luaChunkName, strings.Count(code, "\n")+1))
	}
	proto, err := lua.Compile(chunk, luaChunkName)
	if err != nil {
		return nil, fmt.Sprintf(msgScriptCompile, luaChunkName+": "+err.Error())
	}
	// Lua 5.1 gives the main chunk no "arg" table; gopher-lua would build one
	// (with a Go map) on every call.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	sc.fn = e.L.NewFunctionFromProto(proto)
	sc.protoMem = functionMem(sc.fn) + int64(unsafe.Sizeof(*sc)) + int64(len(sc.sha)+len(sc.name))
	return sc, ""
}

// parseShebang reads Redis 7's "#!lua flags=no-writes,..." first line. It returns
// the length of the line (without its newline) and the flags (scriptFlag*
// bits: no-writes, allow-oom, allow-stale; the cluster ones change nothing here).
func parseShebang(body string) (n int, flags int, errMsg string) {
	n = strings.IndexByte(body, '\n')
	if n < 0 {
		return 0, 0, msgShebangInvalid
	}
	parts := strings.Fields(body[:n])
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := "#!"
		if len(parts) > 0 {
			engine = parts[0]
		}
		return 0, 0, fmt.Sprintf(msgShebangEngine, engine)
	}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, fmt.Sprintf(msgShebangOption, p)
		}
		if list == "" {
			continue
		}
		for _, f := range strings.Split(list, ",") {
			switch f {
			case "no-writes":
				flags |= scriptFlagNoWrites
			case "allow-oom":
				flags |= scriptFlagAllowOOM
			case "allow-stale":
				flags |= scriptFlagAllowStale
			case "no-cluster", "allow-cross-slot-keys":
			default:
				return 0, 0, fmt.Sprintf(msgShebangFlag, f)
			}
		}
	}
	return n, flags, ""
}

// luaSyntaxError renders a gopher-lua parse error the way Lua 5.1 words its
// position ("user_script:1: unexpected symbol near '<eof>'"); lines is the
// chunk's line count, where an error at its end lies. The wording of the message
// itself is gopher-lua's, mapped onto Lua's for the common cases.
func luaSyntaxError(err error, chunk string, lines int) string {
	pe, ok := err.(*parse.Error)
	if !ok {
		return chunk + ": " + strings.TrimSpace(err.Error())
	}
	line, near := pe.Pos.Line, "'"+pe.Token+"'"
	if line == parse.EOF {
		line = lines
		near = "'<eof>'"
	}
	msg := pe.Message
	switch msg {
	case "syntax error":
		msg = "unexpected symbol"
	case "unterminated string":
		msg = "unfinished string"
	}
	return fmt.Sprintf("%s:%d: %s near %s", chunk, line, msg, near)
}

func sha1hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// --- running ---

// run executes a compiled script for the command in x, writing its reply to x.w.
// It runs on the executor goroutine, start to finish, with the clock stopped.
func (e *luaEngine) run(x *Ctx, sc *luaScript, keys, argv [][]byte, readOnly bool) {
	// a script with flags that may write is refused whole over maxmemory
	// (without flags, each denyoom command it calls is: scriptCall)
	if sc.flagged && !sc.noWrites && !sc.allowOOM && x.s.overMaxmemory() {
		x.err(msgOOM)
		return
	}
	if msg := x.s.scriptRefusal(x.c, sc.flagged, sc.noWrites, sc.allowStale); msg != "" { // replication_guard.go
		x.err(msg)
		return
	}
	e.globals.RawSetString("KEYS", e.array(keys, &e.keysIn))
	e.globals.RawSetString("ARGV", e.array(argv, &e.argvIn))
	rs := runningScript{name: sc.name, errName: sc.sha, allowOOM: sc.allowOOM || sc.noWrites}
	e.invoke(x, rs, readOnly || sc.noWrites, func() int {
		e.L.Push(sc.fn)
		return 0
	})
}

// runningScript names what runs for error replies, SCRIPT/FUNCTION KILL and
// FUNCTION STATS.
type runningScript struct {
	name     string // FUNCTION STATS: the function, or f_<sha1> for EVAL
	errName  string // in error replies: the function, or the sha1
	function bool   // FCALL: only FUNCTION KILL stops it, only SCRIPT KILL an EVAL
	allowOOM bool   // flags allow-oom or no-writes: denyoom commands run over maxmemory
}

// invoke calls what push puts on the stack (the function, then its arguments,
// returning their count) as the command in x, writing its reply to x.w. Runs on
// the executor goroutine, start to finish, with the clock stopped.
func (e *luaEngine) invoke(x *Ctx, rs runningScript, readOnly bool, push func() int) {
	s, L := e.s, e.L
	e.client.db = x.db
	e.client.user = x.c.user // redis.call runs with the caller's permissions
	e.caller = x
	e.readOnly = readOnly
	e.allowOOM = rs.allowOOM
	e.wrote = false
	e.reply.SetRESP3(false) // every run starts in RESP2 (redis.setresp)

	// SCRIPT KILL cancels this context; gopher-lua checks it before every
	// instruction. It is reused until it is cancelled or a coroutine made a
	// child of it (children stay registered until their parent is cancelled).
	if e.ctx == nil || e.ctx.Err() != nil || e.spawned {
		if e.cancel != nil {
			e.cancel()
		}
		e.ctx, e.cancel = context.WithCancel(context.Background())
		e.spawned = false
		L.SetContext(e.ctx)
	}
	s.scriptTimeMs = s.clock.Now().UnixMilli()
	s.scriptGuard.begin(e.cancel)
	s.scriptGuard.describe(rs, x.args)
	nargs := push()
	err := L.PCall(nargs, 1, e.handler)

	s.scriptGuard.end()
	s.scriptTimeMs = 0

	if err != nil {
		e.writeError(x.w, rs.errName, err)
	} else {
		e.writeReply(x.w, L.Get(-1), 0)
	}
	L.SetTop(0) // KEYS and ARGV stay until the next script replaces them
}

// luaArgs is what array keeps from one run of KEYS or ARGV to the next.
type luaArgs struct {
	empty *lua.LTable  // an empty table, kept while no script puts anything in it
	last  []lua.LValue // the last run's strings, boxed
}

// array makes KEYS or ARGV, a new table each run (a script may change it).
// A string equal to the one at the same place in the last run is that run's
// value again: the same keys and settings come with every call of a script,
// and each string made anew was two small objects of garbage (its bytes and
// its box) in the size classes of the keys a script writes, which left the
// heap's spans full of holes (docs/performance.md, issue #15).
func (e *luaEngine) array(items [][]byte, a *luaArgs) *lua.LTable {
	if len(items) == 0 {
		if a.empty == nil {
			a.empty = e.L.NewTable()
		} else if k, _ := a.empty.Next(lua.LNil); k != lua.LNil {
			a.empty = e.L.NewTable()
		}
		return a.empty
	}
	t := e.L.CreateTable(len(items), 0)
	last := a.last
	for i, b := range items {
		if i < len(last) {
			if s, ok := last[i].(lua.LString); ok && string(s) == string(b) {
				t.RawSetInt(i+1, last[i])
				continue
			}
		}
		v := lua.LValue(lua.LString(b))
		if i < len(last) {
			last[i] = v
		} else {
			last = append(last, v)
		}
		t.RawSetInt(i+1, v)
	}
	clear(last[len(items):])
	a.last = last[:len(items)]
	return t
}

// writeError writes the reply for a script that raised an error: the handler has
// turned it into {err=..., source=..., line=...}.
func (e *luaEngine) writeError(w *Writer, sha string, err error) {
	var obj lua.LValue = lua.LNil
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if !ok {
		// The handler itself failed (no room left on the call stack): the
		// position is still in the message, when Lua put it there.
		msg := "execution failure"
		if s, ok := obj.(lua.LString); ok {
			msg = string(s)
		}
		if line, ok := luaMessageLine(msg); ok {
			w.Error("ERR " + msg + " script: " + sha + ", on @" + luaChunkName + ":" + line + ".")
			return
		}
		if len(msg) > 100 {
			msg = msg[:100]
		}
		w.Errorf("ERR Error running script %s, %s", sha, msg)
		return
	}
	msg, ok := luaStringField(t, "err")
	if !ok {
		msg = "ERR unknown error" // Redis 7.0.15 crashes here; anything sane will do
	}
	e.noteCounted(t)
	source, okSource := luaStringField(t, "source")
	line, okLine := luaStringField(t, "line")
	if okSource && okLine {
		msg += " script: " + sha + ", on " + source + ":" + line + "."
	}
	w.Error(msg)
}

// luaMessageLine finds N in a message that starts "user_script:N: ".
func luaMessageLine(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, luaChunkName+":")
	if !ok {
		return "", false
	}
	line, _, ok := strings.Cut(rest, ": ")
	if _, err := strconv.Atoi(line); !ok || err != nil {
		return "", false
	}
	return line, true
}

// luaStringField reads a string (or number) field the way lua_isstring accepts it.
func luaStringField(t *lua.LTable, name string) (string, bool) {
	switch v := t.RawGetString(name).(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return luaNumberString(float64(v)), true
	}
	return "", false
}

// errorHandler is Redis's __redis__err__handler: it turns any error into a table
// {err=..., source=..., line=...} naming the script line that raised it (the
// caller's line when the error came from a Go function such as redis.call).
func (e *luaEngine) errorHandler(L *lua.LState) int {
	var t *lua.LTable
	switch v := L.Get(1).(type) {
	case *lua.LTable:
		t = v
	default:
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+luaToString(v)))
	}
	if e.s.scriptGuard.wasKilled() {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+msgLuaKilled))
	}
	if source, line, ok := luaErrorPosition(L); ok {
		t.RawSetString("source", lua.LString(source))
		t.RawSetString("line", lua.LNumber(line))
	}
	L.Push(t)
	return 1
}

// luaErrorPosition finds the Lua function that raised the error being handled:
// level 1 is where the error was raised; when that is a Go function (redis.call,
// error), its caller, or the caller's caller for a Go function called by another.
func luaErrorPosition(L *lua.LState) (string, int, bool) {
	for level := 1; level <= 4; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return "", 0, false
		}
		if _, err := L.GetInfo("Sl", dbg, nil); err != nil {
			return "", 0, false
		}
		if dbg.What != "G" {
			return luaSourceName(dbg.Source), dbg.CurrentLine, true
		}
	}
	return "", 0, false
}

// luaSourceName is a chunk's source as Lua's debug.getinfo reports it: the
// script is "@user_script", a loadstring chunk is its own text.
func luaSourceName(src string) string {
	switch src {
	case luaChunkName, luaFunctionChunk:
		return "@" + src
	case "(load)":
		return "=(load)" // load's default chunk name
	}
	if inner, ok := strings.CutPrefix(src, `[string "`); ok {
		return strings.TrimSuffix(inner, `"]`)
	}
	return src
}

// luaChunkID is Lua 5.1's luaO_chunkid: "=name" and "@file" lose their prefix,
// anything else becomes [string "first line..."].
func luaChunkID(name string) string {
	if rest, ok := strings.CutPrefix(name, "="); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(name, "@"); ok {
		return rest
	}
	const maxLen = 60 - len(` [string "..."] `) - 1
	line := name
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	if len(line) > maxLen {
		line = line[:maxLen]
	}
	if line != name {
		line += "..."
	}
	return `[string "` + line + `"]`
}

// luaWhere is luaL_where: "user_script:3:" for a Lua function at level, "" for Go.
func luaWhere(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ":"
}

// --- redis.call / redis.pcall ---

// command runs redis.call (raise) or redis.pcall: the arguments become a command
// that goes straight into the command table on this goroutine, and its RESP reply
// becomes a Lua value.
func (e *luaEngine) command(L *lua.LState, raise bool) int {
	args, errMsg := luaCommandArgs(L, e.argv[:0])
	if errMsg != "" {
		return e.failCall(L, luaErrorTable(L, errMsg), raise)
	}
	e.argv = args
	reply, errMsg := e.s.scriptCall(e, args)
	if errMsg != "" {
		if errMsg == msgLuaKilled { // not a refusal: the script's own error, counted as its reply
			return e.failCall(L, luaErrorTable(L, errMsg), true)
		}
		return e.failCall(L, luaCountedError(L, errMsg), raise)
	}
	v, _ := respToLua(L, reply)
	if len(reply) > 0 && reply[0] == '-' && raise {
		L.Error(v, 0)
	}
	L.Push(v)
	return 1
}

func (e *luaEngine) failCall(L *lua.LState, t *lua.LTable, raise bool) int {
	if raise {
		L.Error(t, 0)
	}
	L.Push(t)
	return 1
}

// luaCommandArgs converts redis.call's arguments into dst: strings as they are,
// numbers as "%.17g", anything else is an error. The bytes are fresh (a command
// may keep them, as SET keeps its value); the vector itself may be reused.
func luaCommandArgs(L *lua.LState, dst [][]byte) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, msgLuaNoArgs
	}
	size := 0
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			size += len(v)
		case lua.LNumber:
			size += 24
		default:
			return nil, msgLuaArgType
		}
	}
	buf := make([]byte, 0, size)
	args := dst
	for i := 1; i <= n; i++ {
		start := len(buf)
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendFloat17(buf, float64(v))
		}
		args = append(args, buf[start:len(buf):len(buf)])
	}
	return args, ""
}

// scriptCall runs one redis.call command on the executor, returning its RESP
// reply, or the error text when the script may not run it at all.
// scriptCallRejection is why a script may not run this command line now, or "".
func (s *Server) scriptCallRejection(e *luaEngine, cmd *command, args [][]byte) string {
	switch {
	case cmd == nil:
		return msgLuaUnknownCmd
	case !cmd.arityOK(len(args)):
		return msgLuaArity
	case cmd.flags&flagNoScript != 0:
		return msgLuaNoScript
	}
	if !e.client.user.unrestricted { // acl_check.go
		if msg := s.aclCheckScript(e.client, cmd, args); msg != "" {
			return msg
		}
	}
	if cmd.flags&(flagWrite|flagMayReplicate) != 0 && e.readOnly { // PUBLISH, PFCOUNT too (pause.go)
		return msgLuaWriteRO
	}
	if msg := s.scriptCallRefusal(cmd, e.wrote); msg != "" { // replication_guard.go
		return msg
	}
	if cmd.flags&flagDenyOOM != 0 && !e.allowOOM && !e.wrote && s.overMaxmemory() { // maxmemory.go
		return "-" + msgOOM
	}
	return ""
}

func (s *Server) scriptCall(e *luaEngine, args [][]byte) ([]byte, string) {
	cmd := s.table.lookup(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = cmd.subcommand(args[1]) // as call resolves it; nil when unknown
	}
	if msg := s.scriptCallRejection(e, cmd, args); msg != "" {
		// counted as Redis's scriptCall counts a refusal: in errorstats (code
		// ERR unless the text brings its own) and as the command's rejected call
		code := "ERR " + msg
		if rest, ok := strings.CutPrefix(msg, "-"); ok {
			code = rest
		}
		if cmd != nil {
			s.countRejected(cmd, code)
		} else {
			s.countErrorText(code)
		}
		return nil, msg
	}
	if cmd.flags&flagWrite != 0 {
		if !e.wrote {
			if !s.scriptGuard.markWrite() {
				return nil, msgLuaKilled
			}
			e.wrote = true
		}
	}
	s.stats.commands++
	e.reply.Reset()
	x := &e.x
	*x = Ctx{s: s, c: e.client, db: e.client.db, cmd: cmd, args: args, w: &e.reply, inScript: true}
	s.exec(x)
	return e.reply.Bytes(), ""
}

// luaErrorTable is Redis's luaPushErrorBuff: "-CODE msg" keeps its code, a bare
// message gets "ERR"; the result is {err="CODE msg"}.
// luaStatsCounted is the field Redis sets on the error table of a failed
// redis.call: errorstats counted the error when the command failed, so the
// script's reply carrying it is not counted again.
const luaStatsCounted = "ignore_error_stats_update"

// luaCountedError is luaErrorTable for an error errorstats has counted.
func luaCountedError(L *lua.LState, text string) *lua.LTable {
	t := luaErrorTable(L, text)
	t.RawSetString(luaStatsCounted, lua.LTrue)
	return t
}

// noteCounted marks the running script's reply as counted when its error table
// says so. Runs on the executor goroutine.
func (e *luaEngine) noteCounted(t *lua.LTable) {
	if b, ok := t.RawGetString(luaStatsCounted).(lua.LBool); ok && bool(b) && e.caller != nil {
		e.caller.noErrorStats = true
	}
}

func luaErrorTable(L *lua.LState, text string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(luaErrorText(text)))
	return t
}

func luaErrorText(text string) string {
	code, msg := "ERR", text
	if strings.HasPrefix(text, "-") {
		if i := strings.IndexByte(text, ' '); i < 0 {
			msg = text[1:]
		} else {
			code, msg = text[1:i], text[i+1:]
		}
	}
	return code + " " + strings.Trim(msg, "\r\n")
}

// respToLua converts one RESP2 or RESP3 reply into a Lua value as Redis 7.0
// does: status -> {ok=...}, error -> {err=...}, integer -> number, bulk -> string,
// RESP2 null -> false, array -> table; and after redis.setresp(3): map ->
// {map={k=v}}, set -> {set={m=true}}, double -> {double=d}, null -> nil,
// boolean -> boolean, big number -> {big_number=s}, verbatim string ->
// {verbatim_string={format=f, string=s}}; attributes are skipped. It returns the
// value and the bytes after it.
func respToLua(L *lua.LState, b []byte) (lua.LValue, []byte) {
	if len(b) < 3 {
		return lua.LFalse, nil
	}
	end := indexCRLF(b)
	line, rest := b[1:end], b[end+2:]
	switch b[0] {
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, rest
	case '-':
		return luaCountedError(L, "-"+string(line)), rest
	case ':':
		n, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(n), rest
	case '$', '=':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		if b[0] == '=' && n >= 4 {
			t, v := L.CreateTable(0, 1), L.CreateTable(0, 2)
			v.RawSetString("string", lua.LString(rest[4:n]))
			v.RawSetString("format", lua.LString(rest[:3]))
			t.RawSetString("verbatim_string", v)
			return t, rest[n+2:]
		}
		return lua.LString(rest[:n]), rest[n+2:]
	case '*', '~', '%', '>':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		switch b[0] {
		case '%':
			m := L.CreateTable(0, n)
			for range n {
				var k, v lua.LValue
				k, rest = respToLua(L, rest)
				v, rest = respToLua(L, rest)
				L.RawSet(m, k, v)
			}
			return luaWrap(L, "map", m), rest
		case '~':
			m := L.CreateTable(0, n)
			for range n {
				var k lua.LValue
				k, rest = respToLua(L, rest)
				L.RawSet(m, k, lua.LTrue)
			}
			return luaWrap(L, "set", m), rest
		}
		t := L.CreateTable(n, 0)
		for i := 1; i <= n; i++ {
			var v lua.LValue
			v, rest = respToLua(L, rest)
			t.RawSetInt(i, v)
		}
		return t, rest
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) == 1 && line[0] == 't'), rest
	case ',':
		d, _ := strconv.ParseFloat(string(line), 64) // also inf, -inf, nan
		return luaWrap(L, "double", lua.LNumber(d)), rest
	case '(':
		return luaWrap(L, "big_number", lua.LString(line)), rest
	case '|': // an attribute: skipped, the value after it is the reply
		n, _ := strconv.Atoi(string(line))
		for range 2 * n {
			_, rest = respToLua(L, rest)
		}
		return respToLua(L, rest)
	}
	return lua.LFalse, nil
}

// luaWrap is the table {name=v}.
func luaWrap(L *lua.LState, name string, v lua.LValue) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(name, v)
	return t
}

func indexCRLF(b []byte) int {
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return len(b) - 2
}

// luaMaxReplyDepth bounds nesting when a script returns a table that contains
// itself (Redis stops at its Lua stack limit).
const luaMaxReplyDepth = 1000

// writeReply converts a script's return value to RESP as Redis does: string ->
// bulk, number -> integer (truncated), true -> 1, false/nil -> null, {err=} ->
// error, {ok=} -> status, {double=} -> bulk double, other tables -> array up to
// the first nil.
func (e *luaEngine) writeReply(w *Writer, v lua.LValue, depth int) {
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		switch {
		case e.reply.RESP3(): // the script said redis.setresp(3)
			w.Boolean(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(luaToInt(float64(v)))
	case *lua.LTable:
		if depth >= luaMaxReplyDepth {
			w.Error("ERR reached lua stack limit")
			return
		}
		// Raw reads: this runs outside the script's protected call, where a
		// metamethod raising an error would have nowhere to go.
		if msg, ok := v.RawGetString("err").(lua.LString); ok {
			if depth == 0 {
				e.noteCounted(v)
			}
			w.Error(string(msg))
			return
		}
		if ok, isStr := v.RawGetString("ok").(lua.LString); isStr {
			w.Simple(string(ok))
			return
		}
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			w.Double(float64(d))
			return
		}
		if n, ok := v.RawGetString("big_number").(lua.LString); ok {
			w.BigNumber(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(n)))
			return
		}
		if vs, ok := v.RawGetString("verbatim_string").(*lua.LTable); ok {
			f, fok := vs.RawGetString("format").(lua.LString)
			str, sok := vs.RawGetString("string").(lua.LString)
			if fok && sok {
				w.VerbatimAs(string(f), string(str))
				return
			}
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok { // a map (RESP2: flattened)
			var items []lua.LValue
			m.ForEach(func(k, val lua.LValue) { items = append(items, k, val) })
			w.Map(len(items) / 2)
			for _, it := range items {
				e.writeReply(w, it, depth+1)
			}
			return
		}
		if set, ok := v.RawGetString("set").(*lua.LTable); ok {
			var items []lua.LValue
			set.ForEach(func(k, _ lua.LValue) { items = append(items, k) })
			w.Set(len(items))
			for _, it := range items {
				e.writeReply(w, it, depth+1)
			}
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.Array(n)
		for i := 1; i <= n; i++ {
			e.writeReply(w, v.RawGetInt(i), depth+1)
		}
	default:
		w.Null()
	}
}

func (e *luaEngine) writeItems(w *Writer, items []lua.LValue, depth int) {
	w.Array(len(items))
	for _, it := range items {
		e.writeReply(w, it, depth+1)
	}
}

// luaToInt is C's (long long) cast of a Lua number on x86-64: truncation, with
// NaN and out-of-range values becoming the minimum integer.
func luaToInt(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// appendFloat17 formats like C's "%.17g" (how Redis turns Lua numbers into
// command arguments).
func appendFloat17(b []byte, f float64) []byte {
	return appendCFloat(b, f, 17)
}

// luaNumberString formats like Lua 5.1's "%.14g" (tostring of a number).
func luaNumberString(f float64) string {
	return string(appendCFloat(nil, f, 14))
}

func appendCFloat(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f != f:
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// luaToString is Lua's tostring for the values an error can carry.
func luaToString(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return luaNumberString(float64(n))
	}
	return v.String()
}
