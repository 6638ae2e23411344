package myredis

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Number parsing as Redis's Lua 5.1 does it (gopher-lua's differs): tonumber,
// and math.huge as infinity.

// luaStr2d is Lua 5.1's luaO_str2d: C's strtod over the string (up to a NUL, as
// C sees it), trailing white space allowed, nothing else after the number. So
// "1e3", " 12 ", "0x10", "inf" and "1e-2" are numbers, "1e" and "12a" are not.
func luaStr2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f, n, _ := strtod(s)
	if n == 0 {
		return 0, false
	}
	for n < len(s) && isCSpace(s[n]) {
		n++
	}
	return f, n == len(s)
}

// luaToNumber is Lua 5.1's tonumber(e [, base]).
func luaToNumber(L *lua.LState) int {
	base := 10
	if v := L.Get(2); v != lua.LNil {
		f, ok := luaNumber(v)
		if !ok {
			luaTypeError(L, 2, "tonumber", "number")
		}
		base = int(f)
	}
	if base == 10 {
		if L.GetTop() < 1 {
			L.RaiseError("bad argument #1 to 'tonumber' (value expected)")
		}
		if f, ok := luaNumber(L.Get(1)); ok {
			L.Push(lua.LNumber(f))
			return 1
		}
		L.Push(lua.LNil)
		return 1
	}
	var s string
	switch v := L.Get(1).(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber:
		s = luaNumberString(float64(v))
	default:
		luaTypeError(L, 1, "tonumber", "string")
	}
	if base < 2 || base > 36 {
		L.RaiseError("bad argument #2 to 'tonumber' (base out of range)")
	}
	if n, ok := cStrtoul(s, base); ok {
		L.Push(lua.LNumber(float64(n)))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

// cStrtoul is C's strtoul as tonumber uses it: white space, a sign (a minus
// negates modulo 2^64), "0x" for base 16, at least one digit, then only white
// space up to the end. Overflow gives ULONG_MAX.
func cStrtoul(s string, base int) (uint64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' && digitValue(s[i+2]) < 16 {
		i += 2
	}
	start := i
	var n uint64
	overflow := false
	for ; i < len(s) && digitValue(s[i]) < base; i++ {
		d := uint64(digitValue(s[i]))
		if n > (math.MaxUint64-d)/uint64(base) {
			overflow = true
		}
		n = n*uint64(base) + d
	}
	if i == start {
		return 0, false
	}
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i != len(s) {
		return 0, false
	}
	switch {
	case overflow:
		n = math.MaxUint64
	case neg:
		n = -n
	}
	return n, true
}

// digitValue is a digit's value in bases up to 36 (36 or more for a non-digit).
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'z':
		return int(c|0x20-'a') + 10
	}
	return 36
}

// luaHuge is math.huge: HUGE_VAL, infinity (gopher-lua's is MaxFloat64).
var luaHuge = lua.LNumber(math.Inf(1))
