package myredis

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Calling a value that is not a function. Lua 5.1 (Redis's) names the callee
// from the caller's bytecode: "attempt to call field 'register_function' (a nil
// value)", "attempt to call local 'f' (a number value)"; gopher-lua says only
// "attempt to call a non-function object". gopher-lua looks for a __call
// metamethod before it gives up, and nil, booleans and numbers share one
// metatable per type, so a __call there sees every such call and raises Lua's
// text. (Tables keep gopher-lua's wording: each has its own metatable.)

// luaG_typeerror's texts for a call: of a named callee ("field 'x'", "local
// 'x'", "global 'x'", "method 'x'" or "upvalue 'x'"), and of one without a name.
const (
	msgLuaCallNamed    = "attempt to call %s (a %s value)"
	msgLuaCallNameless = "attempt to call a %s value"
)

// installCallErrors gives nil, booleans and numbers the __call that raises
// Lua 5.1's error, and keeps getmetatable answering nil for them, as in Redis.
func (e *luaEngine) installCallErrors() {
	L, G := e.L, e.globals
	callErr := L.NewFunction(luaCallError)
	for _, v := range []lua.LValue{lua.LNil, lua.LFalse, lua.LNumber(0)} {
		mt := L.NewTable()
		mt.RawSetString("__call", callErr)
		L.SetMetatable(v, mt)
	}
	if mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		mt.RawSetString("__call", callErr) // strings have the string library's
	}
	getmt := G.RawGetString("getmetatable")
	G.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
		switch L.Get(1).Type() {
		case lua.LTNil, lua.LTBool, lua.LTNumber:
			L.CheckAny(1) // getmetatable() without an argument still fails as before
			L.Push(lua.LNil)
			return 1
		}
		L.Insert(getmt, 1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))
}

// luaCallError is the __call of nil, booleans and numbers: its first argument
// is the value that was called.
func luaCallError(L *lua.LState) int {
	typ := L.Get(1).Type().String()
	fromLua, name := luaCalleeName(L)
	msg := fmt.Sprintf(msgLuaCallNameless, typ)
	if name != "" {
		msg = fmt.Sprintf(msgLuaCallNamed, name, typ)
	}
	if fromLua {
		L.RaiseError("%s", msg) // with the caller's position
	} else {
		L.Error(lua.LString(msg), 0) // called from Go (pcall): no position, as Lua
	}
	return 0
}

// luaCalleeName is Lua 5.1's getfuncname for the call being made from level 1:
// whether the caller is a Lua function, and the kind and name of what it
// called ("field 'x'"), "" when Lua would not name it.
func luaCalleeName(L *lua.LState) (fromLua bool, name string) {
	self, ok := L.GetStack(0) // this metamethod, named after the call site
	if !ok {
		return false, ""
	}
	caller, ok := L.GetStack(1)
	if !ok {
		return false, ""
	}
	fv, err := L.GetInfo("fl", caller, lua.LNil)
	fn, isFn := fv.(*lua.LFunction)
	if err != nil || !isFn || fn.IsG {
		return false, ""
	}
	if _, err := L.GetInfo("n", self, lua.LNil); err != nil || self.Name == "" {
		return true, ""
	}
	kind := luaCalleeKind(fn, self.Name, caller.CurrentLine)
	if kind == "" {
		return true, ""
	}
	return true, kind + " '" + self.Name + "'"
}

// luaCalleeKind finds the call to name on line in fn's code and tells how its
// function register was loaded, as Lua 5.1's getobjname: "local", "global",
// "field", "method" or "upvalue"; "" when it cannot tell.
func luaCalleeKind(fn *lua.LFunction, name string, line int) string {
	p := fn.Proto
	for _, call := range p.DbgCalls {
		if call.Name != name || call.Pc >= len(p.Code) || p.DbgSourcePositions[call.Pc] != line {
			continue
		}
		return luaRegisterKind(fn, call.Pc, luaArgA(p.Code[call.Pc]))
	}
	return ""
}

// luaRegisterKind is getobjname for register reg just before pc: a local
// variable's register is "local"; otherwise the last instruction before pc
// that wrote reg says.
func luaRegisterKind(fn *lua.LFunction, pc, reg int) string {
	if luaIsLocal(fn.Proto, reg, pc) {
		return "local"
	}
	code := fn.Proto.Code
	for i := pc - 1; i >= 0; i-- {
		inst := code[i]
		op, a := luaOpCode(inst), luaArgA(inst)
		switch {
		case op == lua.OP_JMP || op == lua.OP_EQ || op == lua.OP_LT || op == lua.OP_LE ||
			op == lua.OP_TEST || op == lua.OP_SETGLOBAL || op == lua.OP_SETUPVAL ||
			op == lua.OP_SETTABLE || op == lua.OP_SETTABLEKS || op == lua.OP_SETLIST ||
			op == lua.OP_CLOSE || op == lua.OP_NOP:
			continue // writes no register
		case op == lua.OP_SELF && (a == reg || a+1 == reg):
			if a == reg {
				return "method"
			}
			return ""
		case op == lua.OP_LOADNIL && a <= reg && reg <= luaArgB(inst):
			return ""
		case a != reg:
			continue
		case op == lua.OP_GETGLOBAL:
			return "global"
		case op == lua.OP_GETTABLEKS:
			return "field"
		case op == lua.OP_GETTABLE:
			return "field" // named '?' unless the key is a constant string, as Lua's kname
		case op == lua.OP_GETUPVAL:
			return "upvalue"
		case op == lua.OP_MOVE || op == lua.OP_MOVEN: // MOVEN: a MOVE, then C more
			if b := luaArgB(inst); b < a {
				return luaRegisterKind(fn, i, b)
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}

// luaIsLocal reports whether register reg holds a local variable at pc (Lua
// 5.1's luaF_getlocalname: the reg-th variable alive there). gopher-lua's
// LocalName is meant for a frame's pc, one past its instruction.
func luaIsLocal(p *lua.FunctionProto, reg, pc int) bool {
	for _, v := range p.DbgLocals {
		if v.StartPc > pc {
			break
		}
		if pc <= v.EndPc {
			if reg == 0 {
				return true
			}
			reg--
		}
	}
	return false
}

// gopher-lua 1.1.2's instruction layout (Lua 5.1's opcodes in its own bit
// order): opcode in bits 26-31, A in 18-25, C in 9-17, B in 0-8.
func luaOpCode(inst uint32) int { return int(inst >> 26) }
func luaArgA(inst uint32) int   { return int(inst>>18) & 0xff }
func luaArgB(inst uint32) int   { return int(inst & 0x1ff) }
func luaArgC(inst uint32) int   { return int(inst>>9) & 0x1ff }
