package myredis

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson and bit libraries Redis bundles with its Lua, rewritten in Go with
// lua-cjson's and LuaBitOp's rules for the functions scripts use.

// openCjson builds the cjson table: encode, decode, the null sentinel and the
// settings scripts use (each Lua state has its own, as each lua-cjson module).
func openCjson(L *lua.LState) *lua.LTable {
	cfg := &cjsonConfig{null: L.NewUserData(), encodeMaxDepth: cjsonMaxDepth, decodeMaxDepth: cjsonMaxDepth, keepBuffer: 1}
	t := L.NewTable()
	t.RawSetString("null", cfg.null)
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
		}
		var b bytes.Buffer
		if msg := cjsonEncode(&b, L.Get(1), cfg, 0); msg != "" {
			cjsonRaise(L, msg)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
		}
		v, msg := cjsonDecode(L, L.CheckString(1), cfg)
		if msg != "" {
			cjsonRaise(L, msg)
		}
		L.Push(v)
		return 1
	}))
	t.RawSetString("encode_max_depth", L.NewFunction(func(L *lua.LState) int {
		return cjsonIntOption(L, "encode_max_depth", &cfg.encodeMaxDepth)
	}))
	t.RawSetString("decode_max_depth", L.NewFunction(func(L *lua.LState) int {
		return cjsonIntOption(L, "decode_max_depth", &cfg.decodeMaxDepth)
	}))
	t.RawSetString("encode_invalid_numbers", L.NewFunction(func(L *lua.LState) int {
		return cjsonEnumOption(L, "encode_invalid_numbers", &cfg.invalidNumbers, []string{"off", "on", "null"})
	}))
	t.RawSetString("encode_keep_buffer", L.NewFunction(func(L *lua.LState) int {
		// lua-cjson reuses its encode buffer when on; Go's encoder keeps none,
		// so the setting is recorded and reported, with nothing else to change
		return cjsonEnumOption(L, "encode_keep_buffer", &cfg.keepBuffer, []string{"off", "on"})
	}))
	return t
}

// cjsonRaise raises msg as lua-cjson's luaL_error does: prefixed with the
// caller's position when the caller is Lua code, bare when it is pcall.
func cjsonRaise(L *lua.LState, msg string) {
	where := luaWhere(L, 1)
	if where != "" {
		where += " "
	}
	L.Error(lua.LString(where+msg), 0)
}

// cjsonConfig is one cjson module's settings.
type cjsonConfig struct {
	null                           *lua.LUserData // cjson.null: JSON null inside tables
	encodeMaxDepth, decodeMaxDepth int
	invalidNumbers                 int // cjsonInvalidOff, On (nan, inf) or Null
	keepBuffer                     int // 1: on (lua-cjson's default)
}

const (
	cjsonInvalidOff = iota
	cjsonInvalidOn
	cjsonInvalidNull
)

// cjsonArgs is lua-cjson's json_arg_init: at most one argument.
func cjsonArgs(L *lua.LState, name string) {
	if L.GetTop() > 1 {
		L.RaiseError("bad argument #2 to '%s' (found too many arguments)", name)
	}
}

// cjsonIntOption is lua-cjson's json_integer_option over 1..INT_MAX: nil reads
// the setting, an integer sets it; the current value is returned.
func cjsonIntOption(L *lua.LState, name string, setting *int) int {
	cjsonArgs(L, name)
	if v := L.Get(1); v != lua.LNil {
		n, ok := luaNumber(v)
		if !ok {
			L.RaiseError("bad argument #1 to '%s' (number expected, got %s)", name, v.Type().String())
		}
		if n < 1 || n > math.MaxInt32 {
			L.RaiseError("bad argument #1 to '%s' (expected integer between 1 and 2147483647)", name)
		}
		*setting = int(n)
	}
	L.Push(lua.LNumber(*setting))
	return 1
}

// cjsonEnumOption is lua-cjson's json_enum_option with a boolean for the first two
// options: nil reads, a boolean or an option name sets; the current value is
// returned as a boolean, or as its name past the first two.
func cjsonEnumOption(L *lua.LState, name string, setting *int, options []string) int {
	cjsonArgs(L, name)
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*setting = 0
		if v {
			*setting = 1
		}
	default:
		s, ok := luaIsString(v)
		found := false
		for i, o := range options {
			if ok && s == o {
				*setting, found = i, true
			}
		}
		if !found {
			if !ok {
				L.RaiseError("bad argument #1 to '%s' (string expected, got %s)", name, v.Type().String())
			}
			L.RaiseError("bad argument #1 to '%s' (invalid option '%s')", name, s)
		}
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
	return 1
}

// cjsonMaxDepth is lua-cjson's default nesting limit for encode and decode.
const cjsonMaxDepth = 1000

// cjsonEncode appends v as JSON; it returns lua-cjson's error text on failure.
func cjsonEncode(b *bytes.Buffer, v lua.LValue, cfg *cjsonConfig, depth int) string {
	switch v := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			switch cfg.invalidNumbers {
			case cjsonInvalidOff:
				return "Cannot serialise number: must not be NaN or Inf"
			case cjsonInvalidNull:
				b.WriteString("null")
				return ""
			}
		}
		b.WriteString(luaNumberString(f))
	case lua.LString:
		cjsonString(b, string(v))
	case *lua.LUserData:
		if v != cfg.null {
			return "Cannot serialise userdata: type not supported"
		}
		b.WriteString("null")
	case *lua.LTable:
		depth++
		if depth > cfg.encodeMaxDepth {
			return "Cannot serialise, excessive nesting (" + strconv.Itoa(depth) + ")"
		}
		n, isArray, msg := cjsonArrayLength(v)
		if msg != "" {
			return msg
		}
		if isArray {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				if msg := cjsonEncode(b, v.RawGetInt(i), cfg, depth); msg != "" {
					return msg
				}
			}
			b.WriteByte(']')
			return ""
		}
		b.WriteByte('{')
		first := true
		var failed string
		v.ForEach(func(k, val lua.LValue) {
			if failed != "" {
				return
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				cjsonString(b, string(k))
			case lua.LNumber:
				cjsonString(b, luaNumberString(float64(k)))
			default:
				failed = "Cannot serialise " + k.Type().String() + ": table key must be a number or string"
				return
			}
			b.WriteByte(':')
			failed = cjsonEncode(b, val, cfg, depth)
		})
		if failed != "" {
			return failed
		}
		b.WriteByte('}')
	default:
		return "Cannot serialise " + v.Type().String() + ": type not supported"
	}
	return ""
}

// cjsonArrayLength is lua-cjson's lua_array_length: a table whose keys are all
// positive integers is an array of its largest key, unless that is excessively
// sparse (more than twice the count and above 10).
func cjsonArrayLength(t *lua.LTable) (n int, isArray bool, msg string) {
	count, max := 0, 0
	array := true
	t.ForEach(func(k, _ lua.LValue) {
		num, ok := k.(lua.LNumber)
		f := float64(num)
		if !ok || f < 1 || f != math.Floor(f) {
			array = false
			return
		}
		if int(f) > max {
			max = int(f)
		}
		count++
	})
	if !array {
		return 0, false, ""
	}
	if max > 10 && max > count*2 {
		return 0, false, "Cannot serialise table: excessively sparse array"
	}
	if max == 0 {
		return 0, false, "" // {} encodes as an object
	}
	return max, true, ""
}

// cjsonString writes s quoted and escaped as lua-cjson does ("/" too).
func cjsonString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// cjsonDecode parses one JSON value into Lua values (null -> cjson.null) with
// lua-cjson's tokens and error texts ("Expected value but found T_END at
// character 1").
func cjsonDecode(L *lua.LState, s string, cfg *cjsonConfig) (lua.LValue, string) {
	p := &cjsonParser{L: L, s: s, null: cfg.null, maxDepth: cfg.decodeMaxDepth}
	p.next()
	v := p.value(0)
	if p.err == "" {
		p.next()
		if p.tok != cjsonEnd {
			p.fail("the end")
		}
	}
	if p.err != "" {
		return nil, p.err
	}
	return v, ""
}

type cjsonToken int

const (
	cjsonObjBegin cjsonToken = iota
	cjsonObjEnd
	cjsonArrBegin
	cjsonArrEnd
	cjsonStr
	cjsonNum
	cjsonBool
	cjsonNull
	cjsonColon
	cjsonComma
	cjsonEnd
	cjsonError
)

var cjsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
	"T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_ERROR"}

type cjsonParser struct {
	L    *lua.LState
	s    string
	pos  int
	null *lua.LUserData
	// maxDepth is cjson.decode_max_depth
	maxDepth int

	tok    cjsonToken
	at     int // where the token starts
	val    lua.LValue
	tokErr string // T_ERROR's text
	err    string
}

// fail records lua-cjson's error for the current token.
func (p *cjsonParser) fail(expected string) {
	if p.err != "" {
		return
	}
	found := cjsonTokenNames[p.tok]
	if p.tok == cjsonError {
		found = p.tokErr
	}
	p.err = "Expected " + expected + " but found " + found + " at character " + strconv.Itoa(p.at+1)
}

func (p *cjsonParser) value(depth int) lua.LValue {
	switch p.tok {
	case cjsonStr, cjsonNum, cjsonBool, cjsonNull:
		return p.val
	case cjsonObjBegin, cjsonArrBegin:
		if depth+1 > p.maxDepth {
			if p.err == "" {
				p.err = "Found too many nested data structures (" + strconv.Itoa(depth+1) + ") at character " + strconv.Itoa(p.at+1)
			}
			return nil
		}
		if p.tok == cjsonObjBegin {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	}
	p.fail("value")
	return nil
}

func (p *cjsonParser) object(depth int) lua.LValue {
	t := p.L.NewTable()
	p.next()
	if p.tok == cjsonObjEnd {
		return t
	}
	for p.err == "" {
		if p.tok != cjsonStr {
			p.fail("object key string")
			break
		}
		key := p.val
		p.next()
		if p.tok != cjsonColon {
			p.fail("colon")
			break
		}
		p.next()
		v := p.value(depth)
		if p.err != "" {
			break
		}
		t.RawSet(key, v)
		p.next()
		if p.tok == cjsonObjEnd {
			return t
		}
		if p.tok != cjsonComma {
			p.fail("comma or object end")
			break
		}
		p.next()
	}
	return nil
}

func (p *cjsonParser) array(depth int) lua.LValue {
	t := p.L.NewTable()
	p.next()
	if p.tok == cjsonArrEnd {
		return t
	}
	for i := 1; p.err == ""; i++ {
		v := p.value(depth)
		if p.err != "" {
			break
		}
		t.RawSetInt(i, v)
		p.next()
		if p.tok == cjsonArrEnd {
			return t
		}
		if p.tok != cjsonComma {
			p.fail("comma or array end")
			break
		}
		p.next()
	}
	return nil
}

// next reads the next token.
func (p *cjsonParser) next() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.pos]) >= 0 {
		p.pos++
	}
	p.at = p.pos
	if p.pos >= len(p.s) {
		p.tok = cjsonEnd
		return
	}
	c := p.s[p.pos]
	if t, ok := map[byte]cjsonToken{'{': cjsonObjBegin, '}': cjsonObjEnd, '[': cjsonArrBegin,
		']': cjsonArrEnd, ':': cjsonColon, ',': cjsonComma}[c]; ok {
		p.tok = t
		p.pos++
		return
	}
	switch {
	case c == '"':
		p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		end := p.pos + 1
		for end < len(p.s) && strings.IndexByte("0123456789+-.eE", p.s[end]) >= 0 {
			end++
		}
		f, err := strconv.ParseFloat(p.s[p.pos:end], 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			p.tokError("invalid number")
			return
		}
		p.tok, p.val, p.pos = cjsonNum, lua.LNumber(f), end
	case strings.HasPrefix(p.s[p.pos:], "true"):
		p.tok, p.val, p.pos = cjsonBool, lua.LTrue, p.pos+4
	case strings.HasPrefix(p.s[p.pos:], "false"):
		p.tok, p.val, p.pos = cjsonBool, lua.LFalse, p.pos+5
	case strings.HasPrefix(p.s[p.pos:], "null"):
		p.tok, p.val, p.pos = cjsonNull, p.null, p.pos+4
	default:
		p.tokError("invalid token")
	}
}

func (p *cjsonParser) tokError(msg string) {
	p.tok, p.tokErr = cjsonError, msg
}

// str reads a string token, decoding escapes (\uXXXX to UTF-8).
func (p *cjsonParser) str() {
	var b []byte
	i := p.pos + 1
	for {
		if i >= len(p.s) {
			p.at = i
			p.tokError("unexpected end of string")
			return
		}
		c := p.s[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(p.s) {
			p.at = i
			p.tokError("unexpected end of string")
			return
		}
		esc := p.s[i+1]
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n := p.unicodeEscape(i)
			if n == 0 {
				p.at = i
				p.tokError("invalid unicode escape code")
				return
			}
			b = utf8.AppendRune(b, r)
			i += n
			continue
		default:
			p.at = i
			p.tokError("invalid escape code")
			return
		}
		i += 2
	}
	p.tok, p.val, p.pos = cjsonStr, lua.LString(b), i+1
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at i; n is the
// number of bytes read, 0 when invalid.
func (p *cjsonParser) unicodeEscape(i int) (rune, int) {
	hex4 := func(at int) (rune, bool) {
		if at+6 > len(p.s) || p.s[at] != '\\' || p.s[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(p.s[at+2:at+6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(i)
	if !ok {
		return 0, 0
	}
	if 0xD800 <= r && r < 0xDC00 {
		lo, ok := hex4(i + 6)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		return utf16.DecodeRune(r, lo), 12
	}
	if 0xDC00 <= r && r <= 0xDFFF {
		return 0, 0
	}
	return r, 6
}

// --- bit (LuaBitOp) ---

// openBit builds the bit table. Every operand is reduced to a signed 32-bit
// integer first, as LuaBitOp does.
func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	unary := map[string]func(x uint32) uint32{
		"tobit": func(x uint32) uint32 { return x },
		"bnot":  func(x uint32) uint32 { return ^x },
		"bswap": func(x uint32) uint32 { return x>>24 | x>>8&0xff00 | x<<8&0xff0000 | x<<24 },
	}
	for name, fn := range unary {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			L.Push(bitResult(fn(bitArg(L, 1, name))))
			return 1
		}))
	}
	fold := map[string]func(a, b uint32) uint32{
		"band": func(a, b uint32) uint32 { return a & b },
		"bor":  func(a, b uint32) uint32 { return a | b },
		"bxor": func(a, b uint32) uint32 { return a ^ b },
	}
	for name, fn := range fold {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			acc := bitArg(L, 1, name)
			for i := 2; i <= L.GetTop(); i++ {
				acc = fn(acc, bitArg(L, i, name))
			}
			L.Push(bitResult(acc))
			return 1
		}))
	}
	shift := map[string]func(x uint32, n uint) uint32{
		"lshift":  func(x uint32, n uint) uint32 { return x << n },
		"rshift":  func(x uint32, n uint) uint32 { return x >> n },
		"arshift": func(x uint32, n uint) uint32 { return uint32(int32(x) >> n) },
		"rol":     func(x uint32, n uint) uint32 { return x<<n | x>>(32-n) },
		"ror":     func(x uint32, n uint) uint32 { return x>>n | x<<(32-n) },
	}
	for name, fn := range shift {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			x, n := bitArg(L, 1, name), bitArg(L, 2, name)&31
			L.Push(bitResult(fn(x, uint(n))))
			return 1
		}))
	}
	t.RawSetString("tohex", L.NewFunction(func(L *lua.LState) int {
		x := bitArg(L, 1, "tohex")
		n := int32(8)
		if L.GetTop() >= 2 {
			n = int32(bitArg(L, 2, "tohex"))
		}
		digits := "0123456789abcdef"
		if n < 0 {
			n, digits = -n, "0123456789ABCDEF"
		}
		n = min(n, 8)
		buf := make([]byte, n)
		for i := n - 1; i >= 0; i-- {
			buf[i] = digits[x&15]
			x >>= 4
		}
		L.Push(lua.LString(buf))
		return 1
	}))
	return t
}

// bitArg is LuaBitOp's barg: the number modulo 2^32, rounded to an integer.
func bitArg(L *lua.LState, i int, fn string) uint32 {
	f, ok := luaNumber(L.Get(i))
	if !ok {
		luaTypeError(L, i, fn, "number")
	}
	f = math.RoundToEven(f)
	return uint32(int64(math.Mod(f, 4294967296)))
}

func bitResult(x uint32) lua.LNumber { return lua.LNumber(int32(x)) }
