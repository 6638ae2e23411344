package myredis

// cmsgpack: the MessagePack library Redis 7.0 bundles (lua-cmsgpack 0.4.0), with
// its exact encodings and its quirks:
//
//   - a number is an integer when it converts to int64 and back unchanged, else
//     a float (0xca) when float32 holds it exactly, else a double (0xcb);
//   - a table is an array when its keys are exactly 1..n (n fitting an int),
//     else a map; tables nested 16 deep are encoded as nil (so a circular table
//     becomes a 16-deep copy); functions and other values are nil;
//   - decoding knows nil, booleans, the integer and float types, str 8/16/32 and
//     the array and map types; bin and ext bytes are "Bad data format";
//   - every decoded value takes a slot of the C function's stack, which Lua 5.1
//     caps at LUAI_MAXCSTACK (8000): too many results, or nesting thousands
//     deep, fails with Lua's "stack overflow (...)" error. That cap is also what
//     bounds the decoder's recursion here.
//
// Map keys come out in the order the table iterates, which is gopher-lua's
// (insertion order), not Lua 5.1's hash order: a map of several keys can encode
// to the same pairs in another order than Redis's. Everything else is byte for
// byte Redis's (msgpack_compat_test.go compares against a real redis-server).
//
// Encoding a table that refers to itself several times multiplies work at each
// of the 16 levels, as in Redis; here the encoder and decoder look at the
// script's context every few thousand values, so SCRIPT KILL and the busy
// watchdog stop them, and the encoder gives up past msgpackMaxOutput bytes
// instead of growing without bound.

import (
	"encoding/binary"
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

const (
	msgpackMaxNesting = 16   // LUACMSGPACK_MAX_NESTING
	luaMaxCStack      = 8000 // LUAI_MAXCSTACK: stack slots one C function may use
	// msgpackMaxOutput caps one pack result (proto-max-bulk-len's default):
	// past it a reply could not carry the string anyway.
	msgpackMaxOutput = 512 << 20
	// msgpackPadBudget bounds the nil slots one unpack may make gopher-lua
	// allocate: it keeps integer keys below lua.MaxArrayIndex in a slice, so
	// the map {[60000000]=1} (7 bytes) would cost a gigabyte. Lua 5.1 hashes
	// such a key; past this budget (plus 8 slots per input byte) we fail instead.
	msgpackPadBudget = 1 << 20
	// msgpackCheckEvery is how many values pass between looks at the script's
	// context (SCRIPT KILL).
	msgpackCheckEvery = 4096
)

// Error texts of lua-cmsgpack (raised as Lua errors, so the script sees them).
const (
	msgMsgpackNoInput      = "bad argument #0 to 'pack' (MessagePack pack needs input.)"
	msgMsgpackTooManyArgs  = "bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)"
	msgMsgpackMissingBytes = "Missing bytes in input."
	msgMsgpackBadFormat    = "Bad data format in input."
	msgMsgpackNegative     = "Invalid request to unpack with offset of %d and limit of %d."
	msgMsgpackOffset       = "Start offset %d greater than input length %d."
	msgMsgpackTooManyVals  = "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
	msgMsgpackArrayStack   = "stack overflow (in function mp_decode_to_lua_array)"
	msgMsgpackUnpackStack  = "stack overflow (in function mp_unpack_full)"
	msgMsgpackTooLarge     = "MessagePack pack: result larger than 512MB"
	msgLuaTableIndexNil    = "table index is nil"
	msgMsgpackSparse       = "MessagePack unpack: integer map keys too sparse to store"
	msgLuaTableIndexNaN    = "table index is NaN"
)

// openCmsgpack builds the cmsgpack table. Runs on the executor goroutine.
func (e *luaEngine) openCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(e.msgpackPack))
	t.RawSetString("unpack", L.NewFunction(e.msgpackUnpack))
	t.RawSetString("unpack_one", L.NewFunction(e.msgpackUnpackOne))
	t.RawSetString("unpack_limit", L.NewFunction(e.msgpackUnpackLimit))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// --- pack ---

// msgpackPack is cmsgpack.pack(v1, ...): the encodings of its arguments, concatenated.
func (e *luaEngine) msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		luaLError(L, msgMsgpackNoInput)
	}
	if 2*n > luaMaxCStack { // lua_checkstack(L, nargs) with nargs already on the stack
		luaLError(L, msgMsgpackTooManyArgs)
	}
	enc := msgpackEncoder{L: L, e: e, limit: msgpackMaxOutput}
	for i := 1; i <= n; i++ {
		enc.value(L.Get(i), 0)
	}
	L.Push(lua.LString(enc.buf))
	return 1
}

// msgpackEncoder appends MessagePack encodings of Lua values to buf.
type msgpackEncoder struct {
	L     *lua.LState
	e     *luaEngine
	buf   []byte
	limit int // output size past which pack fails
	count int // values encoded, for the periodic context check
}

func (enc *msgpackEncoder) value(v lua.LValue, level int) {
	if enc.count++; enc.count%msgpackCheckEvery == 0 {
		enc.e.checkKilled(enc.L)
	}
	if len(enc.buf) > enc.limit {
		luaLError(enc.L, msgMsgpackTooLarge)
	}
	switch v := v.(type) {
	case lua.LString:
		enc.buf = appendMsgpackString(enc.buf, string(v))
	case lua.LBool:
		b := byte(0xc2)
		if v {
			b = 0xc3
		}
		enc.buf = append(enc.buf, b)
	case lua.LNumber:
		enc.buf = appendMsgpackNumber(enc.buf, float64(v))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			enc.buf = append(enc.buf, 0xc0)
			return
		}
		enc.table(enc.e.seeThrough(v), level)
	default:
		enc.buf = append(enc.buf, 0xc0)
	}
}

func (enc *msgpackEncoder) table(t *lua.LTable, level int) {
	if n, ok := msgpackArrayLen(t); ok {
		enc.buf = appendMsgpackHeader(enc.buf, 0x90, 0xdc, uint64(n))
		for i := 1; i <= n; i++ {
			enc.value(t.RawGetInt(i), level+1)
		}
		return
	}
	n := 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n++
	}
	enc.buf = appendMsgpackHeader(enc.buf, 0x80, 0xde, uint64(n))
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		enc.value(k, level+1)
		enc.value(v, level+1)
	}
}

// msgpackArrayLen is table_is_an_array: the keys are exactly 1..n, each a
// number that a C int holds. An empty table is an empty array.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, maxKey := 0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f <= 0 || f > math.MaxInt32 || f != math.Trunc(f) {
			return 0, false
		}
		maxKey = max(maxKey, int(f))
		count++
	}
	return count, maxKey == count
}

// appendMsgpackNumber encodes f as lua-cmsgpack does on Lua 5.1: as an integer
// when an int64 holds it exactly, else as a float or a double.
func appendMsgpackNumber(b []byte, f float64) []byte {
	if f >= -(1<<63) && f < 1<<63 && f == math.Trunc(f) {
		return appendMsgpackInt(b, int64(f))
	}
	if f32 := float32(f); float64(f32) == f {
		b = append(b, 0xca)
		return binary.BigEndian.AppendUint32(b, math.Float32bits(f32))
	}
	b = append(b, 0xcb)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendMsgpackInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(b, byte(n))
	case n >= 0 && n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// appendMsgpackString is mp_encode_bytes: fixstr, str 8, str 16 or str 32.
func appendMsgpackString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// appendMsgpackHeader writes an array or map header: the fix form (fix|n) up to
// 15 entries, then the 16-bit form (op16), then the 32-bit one (op16+1).
func appendMsgpackHeader(b []byte, fix, op16 byte, n uint64) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, op16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, op16+1), uint32(n))
}

// --- unpack ---

// msgpackUnpack is cmsgpack.unpack(s): every value encoded in s.
func (e *luaEngine) msgpackUnpack(L *lua.LState) int {
	return e.msgpackUnpackFull(L, 0, 0)
}

// msgpackUnpackOne is cmsgpack.unpack_one(s [, offset]): the next offset (-1
// at the end) and the one value at offset.
func (e *luaEngine) msgpackUnpackOne(L *lua.LState) int {
	offset := luaOptInteger(L, 2, "unpack_one", 0)
	L.SetTop(1)
	return e.msgpackUnpackFull(L, 1, offset)
}

// msgpackUnpackLimit is cmsgpack.unpack_limit(s, limit [, offset]): the next
// offset and at most limit values from offset.
func (e *luaEngine) msgpackUnpackLimit(L *lua.LState) int {
	limit := luaCheckInteger(L, 2, "unpack_limit")
	offset := luaOptInteger(L, 3, "unpack_limit", 0)
	L.SetTop(1)
	return e.msgpackUnpackFull(L, limit, offset)
}

// msgpackUnpackFull is mp_unpack_full. limit 0 and offset 0 together mean
// "everything, without an offset in front".
func (e *luaEngine) msgpackUnpackFull(L *lua.LState, limit, offset int64) int {
	s := luaCheckLString(L, 1, "unpack")
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		luaLError(L, msgMsgpackNegative, int32(offset), int32(len(s)))
	}
	if offset > int64(len(s)) {
		luaLError(L, msgMsgpackOffset, int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := msgpackDecoder{L: L, e: e, in: s[offset:], used: L.GetTop(), pad: msgpackPadBudget + 8*len(s)}
	var out []lua.LValue
	for int64(len(out)) < limit && len(d.in) > 0 {
		v, err := d.value()
		if err == msgLuaTableIndexNil || err == msgLuaTableIndexNaN {
			L.Error(lua.LString(err), 0) // raised by the VM inside the C function: no position
		}
		if err != "" {
			luaLError(L, "%s", err)
		}
		out = append(out, v)
		d.used++
	}
	if !decodeAll {
		if d.used+1 > luaMaxCStack {
			luaLError(L, msgMsgpackUnpackStack)
		}
		next := int64(len(s) - len(d.in))
		if len(d.in) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range out {
		L.Push(v)
	}
	if !decodeAll {
		return len(out) + 1
	}
	return len(out)
}

// msgpackDecoder reads values from in. used mirrors the Lua stack slots the C
// decoder would hold at this point, so its limits fail where Redis's do.
type msgpackDecoder struct {
	L     *lua.LState
	e     *luaEngine
	in    string
	used  int
	count int
	pad   int // nil slots left that sparse integer keys may still add
}

// value decodes the next value; the error is the Lua error text.
func (d *msgpackDecoder) value() (lua.LValue, string) {
	if len(d.in) == 0 {
		return lua.LNil, msgMsgpackMissingBytes
	}
	if d.used+1 > luaMaxCStack {
		return lua.LNil, msgMsgpackTooManyVals
	}
	if d.count++; d.count%msgpackCheckEvery == 0 {
		d.e.checkKilled(d.L)
	}
	c := d.in[0]
	switch {
	case c <= 0x7f: // positive fixint
		d.in = d.in[1:]
		return lua.LNumber(c), ""
	case c >= 0xe0: // negative fixint
		d.in = d.in[1:]
		return lua.LNumber(int8(c)), ""
	case c&0xe0 == 0xa0: // fixstr
		return d.str(1, int(c&0x1f))
	case c&0xf0 == 0x90: // fixarray
		d.in = d.in[1:]
		return d.array(int(c & 0xf))
	case c&0xf0 == 0x80: // fixmap
		d.in = d.in[1:]
		return d.hash(int(c & 0xf))
	}
	switch c {
	case 0xc0:
		d.in = d.in[1:]
		return lua.LNil, ""
	case 0xc2, 0xc3:
		d.in = d.in[1:]
		return lua.LBool(c == 0xc3), ""
	case 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xca, 0xcb:
		return d.number(c)
	case 0xd9, 0xda, 0xdb:
		size := 1 << (c - 0xd9) // length bytes: 1, 2, 4
		n, ok := d.length(size)
		if !ok {
			return lua.LNil, msgMsgpackMissingBytes
		}
		return d.str(1+size, n)
	case 0xdc, 0xdd, 0xde, 0xdf:
		size := 2 << ((c - 0xdc) & 1) // length bytes: 2 or 4
		n, ok := d.length(size)
		if !ok {
			return lua.LNil, msgMsgpackMissingBytes
		}
		d.in = d.in[1+size:]
		if c <= 0xdd {
			return d.array(n)
		}
		return d.hash(n)
	}
	return lua.LNil, msgMsgpackBadFormat
}

// length reads the big-endian length of size bytes after the type byte.
func (d *msgpackDecoder) length(size int) (int, bool) {
	if len(d.in) < 1+size {
		return 0, false
	}
	n := 0
	for _, b := range []byte(d.in[1 : 1+size]) {
		n = n<<8 | int(b)
	}
	return n, true
}

// str takes a string of n bytes after a header of hdr bytes.
func (d *msgpackDecoder) str(hdr, n int) (lua.LValue, string) {
	if len(d.in)-hdr < n {
		return lua.LNil, msgMsgpackMissingBytes
	}
	s := d.in[hdr : hdr+n]
	d.in = d.in[hdr+n:]
	return lua.LString(s), ""
}

// number decodes the fixed-size integer and float types. Every integer becomes
// a Lua number; uint 64 goes through a signed 64-bit integer first, as
// lua_pushinteger does, so values past 2^63 come out negative.
func (d *msgpackDecoder) number(c byte) (lua.LValue, string) {
	size := map[byte]int{0xcc: 1, 0xd0: 1, 0xcd: 2, 0xd1: 2, 0xce: 4, 0xd2: 4, 0xca: 4, 0xcf: 8, 0xd3: 8, 0xcb: 8}[c]
	if len(d.in) < 1+size {
		return lua.LNil, msgMsgpackMissingBytes
	}
	p := []byte(d.in[1 : 1+size])
	d.in = d.in[1+size:]
	var f float64
	switch c {
	case 0xcc:
		f = float64(p[0])
	case 0xd0:
		f = float64(int8(p[0]))
	case 0xcd:
		f = float64(binary.BigEndian.Uint16(p))
	case 0xd1:
		f = float64(int16(binary.BigEndian.Uint16(p)))
	case 0xce:
		f = float64(binary.BigEndian.Uint32(p))
	case 0xd2:
		f = float64(int32(binary.BigEndian.Uint32(p)))
	case 0xcf, 0xd3:
		f = float64(int64(binary.BigEndian.Uint64(p)))
	case 0xca:
		f = float64(math.Float32frombits(binary.BigEndian.Uint32(p)))
	case 0xcb:
		f = math.Float64frombits(binary.BigEndian.Uint64(p))
	}
	return lua.LNumber(f), ""
}

// array decodes n values into a table keyed 1..n. The table and the index
// being filled hold two stack slots while an element decodes. The table is
// not presized: n comes from the input and may be a lie.
func (d *msgpackDecoder) array(n int) (lua.LValue, string) {
	t := d.L.NewTable()
	d.used++ // the table
	if d.used+1 > luaMaxCStack {
		return lua.LNil, msgMsgpackArrayStack
	}
	d.used++ // the index
	defer func() { d.used -= 2 }()
	for i := 1; i <= n; i++ {
		v, err := d.value()
		if err != "" {
			return lua.LNil, err
		}
		if v != lua.LNil {
			t.RawSetInt(i, v)
		}
	}
	return t, ""
}

// hash decodes n key/value pairs into a table. A nil or NaN key is the error
// lua_settable raises.
func (d *msgpackDecoder) hash(n int) (lua.LValue, string) {
	t := d.L.NewTable()
	arrayLen := 0
	d.used++ // the table
	defer func() { d.used-- }()
	for range n {
		k, err := d.value()
		if err != "" {
			return lua.LNil, err
		}
		d.used++ // the key, while the value decodes
		v, err := d.value()
		d.used--
		if err != "" {
			return lua.LNil, err
		}
		if k == lua.LNil {
			return lua.LNil, msgLuaTableIndexNil
		}
		if f, ok := k.(lua.LNumber); ok && math.IsNaN(float64(f)) {
			return lua.LNil, msgLuaTableIndexNaN
		}
		if v == lua.LNil && t.RawGet(k) == lua.LNil {
			continue // t[k] = nil on an absent key changes nothing
		}
		if !d.payPadding(&arrayLen, k) {
			return lua.LNil, msgMsgpackSparse
		}
		t.RawSet(k, v)
	}
	return t, ""
}

// payPadding charges the nil slots that setting t[k] makes gopher-lua append
// to the array part of a table whose array is *arrayLen long (gopher-lua's
// array only grows, and only this decoder has touched t); false when the
// budget is spent.
func (d *msgpackDecoder) payPadding(arrayLen *int, k lua.LValue) bool {
	n, ok := k.(lua.LNumber)
	f := float64(n)
	if !ok || f < 1 || f >= float64(lua.MaxArrayIndex) || f != math.Trunc(f) {
		return true
	}
	if gap := int(f) - 1 - *arrayLen; gap > 0 {
		if d.pad -= gap; d.pad < 0 {
			return false
		}
	}
	*arrayLen = max(*arrayLen, int(f))
	return true
}

// checkKilled raises the error gopher-lua raises between instructions once the
// script's context is cancelled (SCRIPT KILL, or the server shutting down), so
// a long pack or unpack stops as a long loop would.
func (e *luaEngine) checkKilled(L *lua.LState) {
	if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
		L.RaiseError("%s", ctx.Err().Error())
	}
}

// --- argument helpers (lauxlib's, with Lua 5.1's messages) ---

// luaLError is luaL_error: the message prefixed with the position of the Lua
// function that called the running Go function ("" when a Go function such
// as pcall called it).
func luaLError(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if where := luaWhere(L, 1); where != "" {
		msg = where + " " + msg
	}
	L.Error(lua.LString(msg), 0)
}

// luaCheckLString is luaL_checklstring: a string, or a number as its text.
func luaCheckLString(L *lua.LState, i int, fn string) string {
	switch v := L.Get(i).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return luaNumberString(float64(v))
	}
	luaTypeError(L, i, fn, "string")
	return ""
}

// luaCheckInteger is luaL_checkinteger: a number (or numeric string) truncated.
func luaCheckInteger(L *lua.LState, i int, fn string) int64 {
	f, ok := luaNumber(L.Get(i))
	if !ok {
		luaTypeError(L, i, fn, "number")
	}
	return luaToInt(f)
}

// luaOptInteger is luaL_optinteger: def when the argument is nil or absent.
func luaOptInteger(L *lua.LState, i int, fn string, def int64) int64 {
	if L.Get(i) == lua.LNil {
		return def
	}
	return luaCheckInteger(L, i, fn)
}
