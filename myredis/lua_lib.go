package myredis

// The library a script sees besides redis.call: the redis.* helpers, and the
// base-library functions replaced to behave as Redis 7.0's Lua 5.1 does.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime/metrics"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

func luaErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(luaErrorTable(L, msgLuaArgsWrong))
		return 1
	}
	text := string(s)
	if !strings.HasPrefix(text, "-") {
		text = "-" + text
	}
	L.Push(luaErrorTable(L, text))
	return 1
}

func luaStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(luaErrorTable(L, msgLuaArgsWrong))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func luaSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(luaErrorTable(L, msgLuaSha1Args), 0)
	}
	var b []byte
	switch v := L.Get(1).(type) {
	case lua.LString:
		b = []byte(v)
	case lua.LNumber:
		b = []byte(luaNumberString(float64(v)))
	}
	L.Push(lua.LString(sha1hex(b)))
	return 1
}

// log is redis.log(level, msg, ...): it writes to the server log.
func (e *luaEngine) log(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		L.Error(luaErrorTable(L, msgLuaLogArgs), 0)
	}
	lv, ok := luaNumber(L.Get(1))
	if !ok {
		L.Error(luaErrorTable(L, msgLuaLogLevelType), 0)
	}
	level := int(lv)
	if level < 0 || level > 3 {
		L.Error(luaErrorTable(L, msgLuaLogLevel), 0)
	}
	var parts []string
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			parts = append(parts, string(v))
		case lua.LNumber:
			parts = append(parts, luaNumberString(float64(v)))
		}
	}
	slogLevel := [...]slog.Level{slog.LevelDebug, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[level]
	e.s.log.Log(context.Background(), slogLevel, "script log", "msg", strings.Join(parts, " "))
	return 0
}

// luaNumber is lua_isnumber + lua_tonumber: numbers and numeric strings.
func luaNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return luaStr2d(string(v))
	}
	return 0, false
}

// setresp is redis.setresp(2|3): the protocol redis.call's replies come in
// (and so which Lua types they become), for the rest of this script run.
func (e *luaEngine) setresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(luaErrorTable(L, msgLuaSetRespArgs), 0)
	}
	v, _ := luaNumber(L.Get(1))
	if int(v) != 2 && int(v) != 3 {
		L.Error(luaErrorTable(L, msgLuaSetRespVer), 0)
	}
	e.reply.SetRESP3(int(v) == 3)
	return 0
}

func luaSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.Error(luaErrorTable(L, msgLuaSetReplArgs), 0)
	}
	if v, _ := luaNumber(L.Get(1)); int(v)&^3 != 0 {
		L.Error(luaErrorTable(L, msgLuaSetReplFlags), 0)
	}
	return 0 // every write is propagated; there are no replicas to leave out
}

// aclCheckCmd is redis.acl_check_cmd(cmd, args...): whether the script's caller
// may run that command line under its ACL rules (the command is not run). A
// name that is not a command, or a container's unknown subcommand, is an error.
func (e *luaEngine) aclCheckCmd(L *lua.LState) int {
	args, errMsg := luaCommandArgs(L, nil)
	if errMsg != "" {
		L.Error(luaErrorTable(L, errMsg), 0)
	}
	cmd := e.s.table.lookup(args[0])
	if cmd != nil && cmd.subs != nil && len(args) >= 2 {
		cmd = cmd.subcommand(args[1])
	}
	if cmd == nil {
		L.Error(luaErrorTable(L, msgLuaACLInvalid), 0)
	}
	u := e.client.user
	if u.unrestricted {
		L.Push(lua.LTrue)
		return 1
	}
	res, _ := e.s.acl.checkCommand(u, cmd, args)
	L.Push(lua.LBool(res == aclOK))
	return 1
}

// --- base library replacements ---

// luaErrorFn is error(): like Lua's, a string or number message gets the position
// of the function at level (1 = the caller) prefixed.
func luaErrorFn(L *lua.LState) int {
	obj := L.Get(1)
	level := L.OptInt(2, 1)
	var msg string
	switch v := obj.(type) {
	case lua.LString:
		msg = string(v)
	case lua.LNumber:
		msg = luaNumberString(float64(v))
	default:
		L.Error(obj, 0)
		return 0
	}
	if level > 0 {
		if where := luaWhere(L, level); where != "" {
			msg = where + " " + msg
		}
	}
	L.Error(lua.LString(msg), 0)
	return 0
}

// luaPcall is Redis 7's pcall: an error table {err=...} is handed to the script
// as its message string, as older Redis versions did.
func luaPcall(L *lua.LState) int {
	if L.GetTop() == 0 {
		L.RaiseError("bad argument #1 to 'pcall' (value expected)")
	}
	if err := L.PCall(L.GetTop()-1, lua.MultRet, nil); err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if msg, ok := t.RawGetString("err").(lua.LString); ok {
				obj = msg
			}
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// luaTostring formats numbers as Lua 5.1 does ("%.14g").
func luaTostring(L *lua.LState, orig lua.LValue) int {
	if n, ok := L.Get(1).(lua.LNumber); ok {
		L.Push(lua.LString(luaNumberString(float64(n))))
		return 1
	}
	L.Insert(orig, 1)
	L.Call(L.GetTop()-1, 1)
	return 1
}

// luaLoadstring is loadstring(code [, name]), naming the chunk as Lua 5.1 does
// ([string "code"]) so its errors read the same.
func luaLoadstring(L *lua.LState) int {
	code := L.CheckString(1)
	name := luaChunkID(L.OptString(2, code))
	if strings.HasPrefix(code, luaBinarySignature) {
		// Redis's Lua loads no binary chunks: its parser meets the ESC byte as text
		// (and the chunk name, a C string, ends at the first NUL).
		name = luaChunkID(cstring([]byte(L.OptString(2, code))))
		L.Push(lua.LNil)
		L.Push(lua.LString(name + ":1: unexpected symbol near 'char(27)'"))
		return 2
	}
	fn, err := L.Load(strings.NewReader(code), name)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(luaLoadError(err, name, strings.Count(code, "\n")+1))
		return 2
	}
	L.Push(fn)
	return 1
}

// luaLoad is load(reader [, name]). As in Lua, the parser pulls pieces from the
// reader as it needs them, so a syntax error stops the reading (gopher-lua's
// load would call the reader until it returns nil, for ever if it never does).
func luaLoad(L *lua.LState) int {
	reader, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		luaTypeError(L, 1, "load", "function")
	}
	name := luaChunkID(L.OptString(2, "=(load)"))
	r := &luaChunkReader{L: L, fn: reader}
	fn, err := L.Load(r, name)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(luaLoadError(err, name, r.lines+1))
		return 2
	}
	L.Push(fn)
	return 1
}

// luaLoadError is what load and loadstring return for a chunk that does not
// compile: a message for a syntax error; for a failed reader, what Redis's error
// handler makes of the error (it runs inside Lua's load): {err="ERR ..."}.
func luaLoadError(err error, name string, lines int) lua.LValue {
	if ae, ok := err.(*lua.ApiError); ok && ae.Cause != nil {
		err = ae.Cause
	}
	if re, ok := err.(*luaReaderError); ok {
		return re.value
	}
	return lua.LString(luaSyntaxError(err, name, lines))
}

// luaReaderError ends a load whose reader failed; the parser's recover turns
// it into load's error result.
type luaReaderError struct{ value lua.LValue }

func (e *luaReaderError) Error() string { return luaToString(e.value) }

// fail stops the load with the error v, shaped as Redis's error handler does.
func (r *luaChunkReader) fail(v lua.LValue) {
	if _, ok := v.(*lua.LTable); !ok {
		t := r.L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+luaToString(v)))
		v = t
	}
	panic(&luaReaderError{v})
}

// luaMaxSource bounds the code one load may read.
const luaMaxSource = 64 << 20

// luaChunkReader feeds the parser from a Lua reader function, calling it
// protected so an error inside leaves the Lua stack as it was.
type luaChunkReader struct {
	L     *lua.LState
	fn    *lua.LFunction
	buf   []byte
	total int
	lines int
	done  bool
}

func (r *luaChunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.done {
			return 0, io.EOF
		}
		r.L.Push(r.fn)
		if err := r.L.PCall(0, 1, nil); err != nil {
			var v lua.LValue = lua.LString(err.Error())
			if ae, ok := err.(*lua.ApiError); ok {
				v = ae.Object
			}
			r.fail(v)
		}
		v := r.L.Get(-1)
		r.L.Pop(1)
		switch v := v.(type) {
		case *lua.LNilType:
			r.done = true
		case lua.LString:
			r.buf = []byte(v)
			r.done = len(v) == 0
		case lua.LNumber:
			r.buf = []byte(luaNumberString(float64(v)))
		default:
			r.fail(lua.LString(luaWhere(r.L, 1) + " reader function must return a string"))
		}
		r.total += len(r.buf)
		r.lines += bytes.Count(r.buf, []byte("\n"))
		if r.total > luaMaxSource {
			r.fail(lua.LString("not enough memory"))
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// luaUnpack is unpack(t [, i [, j]]) with Lua 5.1's limit on results.
func luaUnpack(L *lua.LState) int {
	t := luaCheckTable(L, 1, "unpack")
	i := L.OptInt(2, 1)
	j := L.OptInt(3, t.Len())
	if i > j {
		return 0
	}
	if j-i >= luaMaxResults {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= j; k++ {
		L.Push(L.GetTable(t, lua.LNumber(k)))
	}
	return j - i + 1
}

// luaMaxResults is Lua 5.1's LUAI_MAXCSTACK: the most values a call may return.
const luaMaxResults = 8000

// luaStringRep is string.rep refusing to build a string larger than a bulk
// reply may be, rather than letting one script exhaust the server's memory.
func luaStringRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n) > luaMaxString {
		L.RaiseError("not enough memory")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// luaMaxString bounds strings built in one step by string.rep (proto-max-bulk-len's default).
const luaMaxString = 512 << 20

// luaCollectGarbage never forces a Go collection (gopher-lua's would stop the
// world from inside a script); "count" reports the heap in KB as Lua does.
func luaCollectGarbage(L *lua.LState) int {
	if L.OptString(1, "collect") == "count" {
		L.Push(lua.LNumber(heapKB()))
		return 1
	}
	L.Push(lua.LNumber(0))
	return 1
}

func luaGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(math.Floor(heapKB())))
	return 1
}

func heapKB() float64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(sample[0].Value.Uint64()) / 1024
}

// --- math.random, as Redis: rand48 so every platform gives the same sequence ---

// rand48 is the 48-bit linear congruential generator behind Redis's redisLrand48.
type rand48 uint64

const rand48Default rand48 = 0x1234ABCD330E // drand48's state before any seeding

func (r *rand48) seed(s int32) { *r = rand48(uint64(uint32(s))<<16 | 0x330E) }

func (r *rand48) next() int32 {
	*r = rand48((uint64(*r)*0x5DEECE66D + 0xB) & (1<<48 - 1))
	return int32(uint64(*r) >> 17)
}

func (e *luaEngine) mathRandom(L *lua.LState) int {
	const max = math.MaxInt32
	r := float64(e.rand.next()%max) / max
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := luaCheckInt(L, 1, "random")
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := luaCheckInt(L, 1, "random"), luaCheckInt(L, 2, "random")
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *luaEngine) mathRandomseed(L *lua.LState) int {
	e.rand.seed(int32(luaCheckInt(L, 1, "randomseed")))
	return 0
}

// luaCheckInt is luaL_checkint with Lua 5.1's message.
func luaCheckInt(L *lua.LState, i int, fn string) int {
	f, ok := luaNumber(L.Get(i))
	if !ok {
		luaTypeError(L, i, fn, "number")
	}
	return int(f)
}

// luaCheckTable is luaL_checktype(L, i, LUA_TTABLE) with Lua 5.1's message.
func luaCheckTable(L *lua.LState, i int, fn string) *lua.LTable {
	t, ok := L.Get(i).(*lua.LTable)
	if !ok {
		luaTypeError(L, i, fn, "table")
	}
	return t
}

func luaTypeError(L *lua.LState, i int, fn, want string) {
	got := "no value"
	if L.GetTop() >= i {
		got = L.Get(i).Type().String()
	}
	L.RaiseError("bad argument #%d to '%s' (%s expected, got %s)", i, fn, want, got)
}

// luaFormat is Lua 5.1's string.format: C's conversions (c d i o u x X e E f g G
// q s), flags "-+ #0", width and precision of at most two digits each (so a
// script cannot ask for a gigabyte of padding).
func luaFormat(L *lua.LState) int {
	format := L.CheckString(1)
	arg := 1
	var b []byte
	nextArg := func() lua.LValue {
		arg++
		if arg > L.GetTop() {
			L.RaiseError("bad argument #%d to 'format' (no value)", arg)
		}
		return L.Get(arg)
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b = append(b, '%')
			continue
		}
		// %[flags][width][.precision]conversion
		start := i
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		digits := func() {
			n := 0
			for i < len(format) && '0' <= format[i] && format[i] <= '9' {
				i++
				n++
			}
			if n > 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
		}
		digits()
		hasPrec := i < len(format) && format[i] == '.'
		if hasPrec {
			i++
			digits()
		}
		if i >= len(format) {
			L.RaiseError("%s", "invalid option '%' to 'format'")
		}
		spec := format[start:i]
		switch conv := format[i]; conv {
		case 'c':
			n := luaCheckNumberArg(L, nextArg(), arg)
			b = fmt.Appendf(b, "%"+spec+"c", rune(byte(luaToInt(n))))
		case 'd', 'i':
			n := luaCheckNumberArg(L, nextArg(), arg)
			b = fmt.Appendf(b, "%"+spec+"d", luaToInt(n))
		case 'o', 'u', 'x', 'X':
			n := uint64(luaToInt(luaCheckNumberArg(L, nextArg(), arg)))
			verb := map[byte]string{'o': "o", 'u': "d", 'x': "x", 'X': "X"}[conv]
			b = fmt.Appendf(b, "%"+spec+verb, n)
		case 'e', 'E', 'f', 'g', 'G':
			n := luaCheckNumberArg(L, nextArg(), arg)
			if math.IsInf(n, 0) || math.IsNaN(n) {
				text := "inf"
				switch {
				case math.IsNaN(n) && math.Signbit(n):
					text = "-nan" // glibc shows the sign of 0/0's NaN
				case math.IsNaN(n):
					text = "nan"
				case n < 0:
					text = "-inf"
				case strings.Contains(spec, "+"):
					text = "+inf"
				}
				if conv == 'E' || conv == 'G' {
					text = strings.ToUpper(text)
				}
				rest := strings.TrimLeft(spec, "-+ #0")
				width, _, _ := strings.Cut(rest, ".")
				if strings.Contains(spec[:len(spec)-len(rest)], "-") {
					width = "-" + width
				}
				b = fmt.Appendf(b, "%"+width+"s", text)
				continue
			}
			if !hasPrec && (conv == 'g' || conv == 'G') {
				spec += ".6" // C's default; Go's %g would print the shortest form
			}
			b = fmt.Appendf(b, "%"+spec+string(conv), n)
		case 'q':
			b = luaQuote(b, luaArgString(L, nextArg(), arg))
		case 's':
			s := luaArgString(L, nextArg(), arg)
			if hasPrec {
				if p := luaFormatPrecision(spec); p < len(s) {
					s = s[:p] // C counts bytes
				}
				spec = spec[:strings.IndexByte(spec, '.')]
			}
			b = fmt.Appendf(b, "%"+spec+"s", s)
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func luaFormatPrecision(spec string) int {
	p, _ := strconv.Atoi(spec[strings.IndexByte(spec, '.')+1:])
	return p
}

func luaCheckNumberArg(L *lua.LState, v lua.LValue, arg int) float64 {
	f, ok := luaNumber(v)
	if !ok {
		L.RaiseError("bad argument #%d to 'format' (number expected, got %s)", arg, v.Type().String())
	}
	return f
}

func luaArgString(L *lua.LState, v lua.LValue, arg int) string {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return luaNumberString(float64(v))
	}
	L.RaiseError("bad argument #%d to 'format' (string expected, got %s)", arg, v.Type().String())
	return ""
}

// luaQuote is %q: a Lua string literal that reads back as s.
func luaQuote(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b = append(b, '\\', c)
		case '\r':
			b = append(b, '\\', 'r')
		case 0:
			b = append(b, '\\', '0', '0', '0')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
