package myredis

// string.dump. Redis's Lua 5.1 dumps a function as a binary chunk, and loads none
// (loadstring reads such a chunk as text and fails on its first byte), so in a
// script a dump is only ever a string to look at or store. Ours has the layout
// of a Lua 5.1 chunk for x86-64 (the 12-byte header Redis writes, then the
// function's source, lines, counts, code, constants, nested functions and line
// info) but the instructions are gopher-lua's, not Lua 5.1's: past the header
// the bytes differ from Redis's, and no Lua 5.1 could run them.

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// luaBinarySignature starts every binary chunk (LUA_SIGNATURE).
const luaBinarySignature = "\x1bLua"

// luaDumpHeader is Lua 5.1's chunk header on x86-64: version 5.1, official
// format, little endian, 4-byte int, 8-byte size_t, 4-byte instruction,
// 8-byte double numbers.
const luaDumpHeader = luaBinarySignature + "Q\x00\x01\x04\x08\x04\x08\x00"

const msgLuaDumpGo = "unable to dump given function"

// luaStringDump is string.dump(f).
func luaStringDump(L *lua.LState) int {
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		luaTypeError(L, 1, "dump", "function")
	}
	if fn.IsG {
		luaLError(L, msgLuaDumpGo)
	}
	b := appendLuaDumpProto([]byte(luaDumpHeader), fn.Proto, "")
	L.Push(lua.LString(b))
	return 1
}

// appendLuaDumpProto writes p as Lua 5.1's DumpFunction lays a function out; a
// nested function of the same source writes no source, as there.
func appendLuaDumpProto(b []byte, p *lua.FunctionProto, parentSource string) []byte {
	src := luaSourceName(p.SourceName)
	if src == parentSource {
		b = binary.LittleEndian.AppendUint64(b, 0)
	} else {
		b = appendLuaDumpString(b, src)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(p.LineDefined))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.LastLineDefined))
	b = append(b, p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Code)))
	for _, ins := range p.Code {
		b = binary.LittleEndian.AppendUint32(b, ins)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Constants)))
	for _, k := range p.Constants {
		switch k := k.(type) {
		case lua.LBool:
			v := byte(0)
			if k {
				v = 1
			}
			b = append(b, 1, v) // LUA_TBOOLEAN
		case lua.LNumber:
			b = binary.LittleEndian.AppendUint64(append(b, 3), math.Float64bits(float64(k))) // LUA_TNUMBER
		case lua.LString:
			b = appendLuaDumpString(append(b, 4), string(k)) // LUA_TSTRING
		default:
			b = append(b, 0) // LUA_TNIL
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.FunctionPrototypes)))
	for _, child := range p.FunctionPrototypes {
		b = appendLuaDumpProto(b, child, src)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.DbgSourcePositions)))
	for _, line := range p.DbgSourcePositions {
		b = binary.LittleEndian.AppendUint32(b, uint32(line))
	}
	b = binary.LittleEndian.AppendUint32(b, 0)    // local variables: none kept
	return binary.LittleEndian.AppendUint32(b, 0) // upvalue names: none kept
}

// appendLuaDumpString is DumpString: a size_t length counting a closing NUL.
func appendLuaDumpString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)+1))
	return append(append(b, s...), 0)
}
