package myredis

// struct: the binary packing library Redis 7.0 bundles (Roberto Ierusalimschy's
// lua_struct 0.2, as patched by Redis), for x86-64: "<" ">" "!n" set the byte
// order and alignment, "b B h H l L T i[n] I[n]" are integers (l, L and T 8
// bytes, i and I 4 unless sized, up to 32), "f d" floats, "c[n]" fixed strings
// (c0: the whole string, or on unpack the previous number's length), "s"
// zero-terminated strings, "x" a padding byte. Integers go through C's
// conversions on x86-64 (a double becomes a 64-bit integer; wider sizes keep
// only 64 bits), so the bytes are Redis's (lua_struct_compat_test.go).

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

const (
	structMaxIntSize = 32 // MAXINTSIZE
	structMaxAlign   = 8  // MAXALIGN on x86-64
)

// openStruct builds the struct table. Runs on the executor goroutine.
func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// structFormat walks a format string as lua_struct does, with its byte order
// and alignment state.
type structFormat struct {
	L      *lua.LState
	fn     string // the Lua function's name, for argument errors
	fmt    string
	i      int
	little bool
	align  int
}

func newStructFormat(L *lua.LState, fn string) *structFormat {
	return &structFormat{L: L, fn: fn, fmt: luaCheckLString(L, 1, fn), little: true, align: 1}
}

func (f *structFormat) argError(arg int, msg string) {
	luaLError(f.L, "bad argument #%d to '%s' (%s)", arg, f.fn, msg)
}

// next returns the next option byte; false at the end (or at a NUL, as C reads it).
func (f *structFormat) next() (byte, bool) {
	if f.i >= len(f.fmt) || f.fmt[f.i] == 0 {
		return 0, false
	}
	f.i++
	return f.fmt[f.i-1], true
}

// num is getnum: the digits after an option, or def when there are none.
func (f *structFormat) num(def int) int {
	if f.i >= len(f.fmt) || !isDigit(f.fmt[f.i]) {
		return def
	}
	a := 0
	for f.i < len(f.fmt) && isDigit(f.fmt[f.i]) {
		d := int(f.fmt[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaLError(f.L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// size is optsize: the option's byte size (0 for the control options and s).
func (f *structFormat) size(opt byte) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.num(1)
	case 'i', 'I':
		sz := f.num(4)
		if sz > structMaxIntSize {
			luaLError(f.L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

// toAlign is gettoalign: the padding before an option of size at offset n.
func (f *structFormat) toAlign(n uint64, opt byte, size int) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	size = min(size, f.align)
	s := uint64(size)
	return (s - (n & (s - 1))) & (s - 1)
}

// control is controloptions: byte order, alignment, spaces; else the option is invalid.
func (f *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.little = false
	case '<':
		f.little = true
	case '!':
		a := f.num(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			luaLError(f.L, "alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		f.argError(1, "invalid format option '"+string(rune(opt))+"'")
	}
}

// structToUint is lua_struct's (Uinttype) of a Lua number on x86-64: negative
// numbers through a signed 64-bit integer, others as gcc converts a double to
// an unsigned one (NaN gives 0x8000000000000000, 2^64 and past 0).
func structToUint(n float64) uint64 {
	if n >= 1<<63 {
		return uint64(luaToInt(n-(1<<63))) ^ 1<<63
	}
	return uint64(luaToInt(n))
}

func structPack(L *lua.LState) int {
	f := newStructFormat(L, "pack")
	arg := 2
	var b []byte
	for {
		opt, ok := f.next()
		if !ok {
			break
		}
		size := f.size(opt)
		pad := f.toAlign(uint64(len(b)), opt, size)
		b = append(b, make([]byte, pad)...)
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			v := structToUint(structCheckNumber(f, arg))
			arg++
			b = appendStructInt(b, v, size, f.little)
		case 'x':
			b = append(b, 0)
		case 'f':
			bits := math.Float32bits(float32(structCheckNumber(f, arg)))
			arg++
			if f.little {
				b = binary.LittleEndian.AppendUint32(b, bits)
			} else {
				b = binary.BigEndian.AppendUint32(b, bits)
			}
		case 'd':
			bits := math.Float64bits(structCheckNumber(f, arg))
			arg++
			if f.little {
				b = binary.LittleEndian.AppendUint64(b, bits)
			} else {
				b = binary.BigEndian.AppendUint64(b, bits)
			}
		case 'c', 's':
			if arg > L.GetTop() {
				structMissing(f, arg, "string")
			}
			s := luaCheckLString(L, arg, "pack")
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				f.argError(arg, "string too short") // lua_struct reports the next argument's number
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func structCheckNumber(f *structFormat, arg int) float64 {
	if f.fn == "pack" && arg > f.L.GetTop() {
		structMissing(f, arg, "number")
	}
	n, ok := luaNumber(f.L.Get(arg))
	if !ok {
		luaTypeError(f.L, arg, f.fn, "number")
	}
	return n
}

// structMissing is pack's error for an argument not given: pack pushes a nil
// after its arguments before reading them, so Lua 5.1 reports "got nil".
func structMissing(f *structFormat, arg int, want string) {
	f.argError(arg, want+" expected, got nil")
}

// appendStructInt writes the low size bytes of v (bytes past the eighth are 0).
func appendStructInt(b []byte, v uint64, size int, little bool) []byte {
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		j := size - 1 - i
		if little {
			j = i
		}
		buf[j] = byte(v)
		v >>= 8
	}
	return append(b, buf...)
}

// structGetInt is getinteger: a 64-bit accumulation of size bytes, then sign
// extension with x86-64's shift (its count taken modulo 64).
func structGetInt(p string, little, signed bool, size int) float64 {
	var l uint64
	for i := 0; i < size; i++ {
		j := i
		if little {
			j = size - 1 - i
		}
		l = l<<8 | uint64(p[j])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := newStructFormat(L, "unpack")
	data := luaCheckLString(L, 2, "unpack")
	ld := uint64(len(data))
	pos := uint64(1)
	if L.Get(3) != lua.LNil {
		pos = uint64(luaCheckInteger(L, 3, "unpack"))
	}
	if pos == 0 {
		f.argError(3, "offset must be 1 or greater")
	}
	pos--
	base := L.GetTop()
	var out []lua.LValue
	for {
		opt, ok := f.next()
		if !ok {
			break
		}
		size := uint64(f.size(opt))
		pos += f.toAlign(pos, opt, int(size))
		if size > ld || pos > ld-size {
			f.argError(2, "data string too short")
		}
		if base+len(out)+2 > luaMaxCStack {
			luaLError(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a'
			out = append(out, lua.LNumber(structGetInt(data[pos:pos+size], f.little, signed, int(size))))
		case 'x':
		case 'f':
			p := []byte(data[pos : pos+4])
			bits := binary.LittleEndian.Uint32(p)
			if !f.little {
				bits = binary.BigEndian.Uint32(p)
			}
			out = append(out, lua.LNumber(math.Float32frombits(bits)))
		case 'd':
			p := []byte(data[pos : pos+8])
			bits := binary.LittleEndian.Uint64(p)
			if !f.little {
				bits = binary.BigEndian.Uint64(p)
			}
			out = append(out, lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				n, isNum := lua.LValue(lua.LNil), false
				if len(out) > 0 {
					n = out[len(out)-1]
					_, isNum = luaNumber(n)
				}
				if !isNum {
					luaLError(L, "format 'c0' needs a previous size")
				}
				fl, _ := luaNumber(n)
				size = uint64(luaToInt(fl))
				out = out[:len(out)-1]
				if size > ld || pos > ld-size {
					f.argError(2, "data string too short")
				}
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case 's':
			end := -1
			for i := pos; i < ld; i++ {
				if data[i] == 0 {
					end = int(i)
					break
				}
			}
			if end < 0 {
				luaLError(L, "unfinished string in data")
			}
			size = uint64(end) - pos + 1
			out = append(out, lua.LString(data[pos:end]))
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(float64(pos + 1)))
	return len(out) + 1
}

func structSize(L *lua.LState) int {
	f := newStructFormat(L, "size")
	var pos uint64
	for {
		opt, ok := f.next()
		if !ok {
			break
		}
		size := f.size(opt)
		pos += f.toAlign(pos, opt, size)
		switch {
		case opt == 's':
			f.argError(1, "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			f.argError(1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt)
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(float64(int64(pos))))
	return 1
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}
