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
	msgLuaLenNamed      = "attempt to get length of %s (a %s value)"
	msgLuaLenNameless   = "attempt to get length of a %s value"
	msgLuaIndexNamed    = "attempt to index %s (a %s value)"
	msgLuaIndexNameless = "attempt to index a %s value"
	msgLuaCallNamed     = "attempt to call %s (a %s value)"
	msgLuaCallNameless  = "attempt to call a %s value"
)

// installCallErrors gives nil, booleans and numbers the __call that raises
// Lua 5.1's error, and keeps getmetatable answering nil for them, as in Redis.
func (e *luaEngine) installCallErrors() {
	L, G := e.L, e.globals
	callErr, indexErr, lenErr := L.NewFunction(luaCallError), L.NewFunction(luaIndexError), L.NewFunction(luaLenError)
	for _, v := range []lua.LValue{lua.LNil, lua.LFalse, lua.LNumber(0)} {
		mt := L.NewTable()
		mt.RawSetString("__call", callErr)
		mt.RawSetString("__index", indexErr)
		mt.RawSetString("__newindex", indexErr)
		mt.RawSetString("__len", lenErr)
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

// luaLenError is the __len of nil, booleans and numbers: Lua 5.1's "attempt to
// get length of local 't' (a nil value)".
func luaLenError(L *lua.LState) int {
	typ := L.Get(1).Type().String()
	msg := fmt.Sprintf(msgLuaLenNameless, typ)
	if name := luaOperandName(L, luaLenOperand, lua.LNil); name != "" {
		msg = fmt.Sprintf(msgLuaLenNamed, name, typ)
	}
	L.RaiseError("%s", msg)
	return 0
}

// luaLenOperand is the operand register of a length instruction (no key).
func luaLenOperand(inst uint32) (obj, rk int, ok bool) {
	if luaOpCode(inst) != lua.OP_LEN {
		return 0, 0, false
	}
	return luaArgB(inst), 0, true
}

// luaIndexOperand is the indexed register and the key operand of an indexing
// instruction.
func luaIndexOperand(inst uint32) (obj, rk int, ok bool) {
	switch luaOpCode(inst) {
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
		return luaArgB(inst), luaArgC(inst), true
	case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
		return luaArgA(inst), luaArgB(inst), true
	}
	return 0, 0, false
}

// luaIndexError is the __index and __newindex of nil, booleans and numbers:
// Lua 5.1's "attempt to index local 't' (a nil value)".
func luaIndexError(L *lua.LState) int {
	typ := L.Get(1).Type().String()
	msg := fmt.Sprintf(msgLuaIndexNameless, typ)
	if name := luaOperandName(L, luaIndexOperand, L.Get(2)); name != "" {
		msg = fmt.Sprintf(msgLuaIndexNamed, name, typ)
	}
	L.RaiseError("%s", msg)
	return 0
}

// luaOperandName names the operand of the failing instruction of the Lua
// function at level 1 ("field 'a'"), from the instructions on its current line
// that operand matches: those whose key is the constant key first, then those
// with a key in a register (or none); "" unless they agree on one name.
func luaOperandName(L *lua.LState, operand func(uint32) (obj, rk int, ok bool), key lua.LValue) string {
	caller, ok := L.GetStack(1)
	if !ok {
		return ""
	}
	fv, err := L.GetInfo("fl", caller, lua.LNil)
	fn, isFn := fv.(*lua.LFunction)
	if err != nil || !isFn || fn.IsG {
		return ""
	}
	p := fn.Proto
	var byKey, byRegister []string
	for pc, inst := range p.Code {
		if pc >= len(p.DbgSourcePositions) || p.DbgSourcePositions[pc] != caller.CurrentLine {
			continue
		}
		obj, rk, ok := operand(inst)
		if !ok {
			continue
		}
		kind, name := luaRegisterName(fn, pc, obj)
		described := ""
		if kind != "" {
			described = kind + " '" + name + "'"
		}
		switch {
		case rk < luaConstBit:
			byRegister = append(byRegister, described)
		case rk-luaConstBit < len(p.Constants) && p.Constants[rk-luaConstBit] == key:
			byKey = append(byKey, described)
		}
	}
	if len(byKey) == 0 {
		byKey = byRegister
	}
	if len(byKey) == 0 {
		return ""
	}
	for _, d := range byKey[1:] {
		if d != byKey[0] {
			return ""
		}
	}
	return byKey[0]
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
	kind, called := luaCalleeKind(fn, self.Name, caller.CurrentLine)
	if kind == "" {
		return true, ""
	}
	return true, kind + " '" + called + "'"
}

// luaCalleeKind finds the call to name on line in fn's code and tells how its
// function register was loaded, as Lua 5.1's getobjname: the kind ("local",
// "global", "field", "method", "upvalue"; "" when it cannot tell) and name.
func luaCalleeKind(fn *lua.LFunction, name string, line int) (kind, called string) {
	p := fn.Proto
	for _, call := range p.DbgCalls {
		if call.Name != name || call.Pc >= len(p.Code) || p.DbgSourcePositions[call.Pc] != line {
			continue
		}
		return luaRegisterName(fn, call.Pc, luaArgA(p.Code[call.Pc]))
	}
	return "", ""
}

// luaRegisterName is Lua 5.1's getobjname for register reg just before pc: a
// local variable's register is ("local", its name); otherwise the last
// instruction before pc that wrote reg says: "global", "field", "method" or
// "upvalue" and the name. kind is "" when it cannot tell.
func luaRegisterName(fn *lua.LFunction, pc, reg int) (kind, name string) {
	p := fn.Proto
	if name, ok := luaLocalName(p, reg, pc); ok {
		return "local", name
	}
	for i := pc - 1; i >= 0; i-- {
		inst := p.Code[i]
		op, a := luaOpCode(inst), luaArgA(inst)
		switch {
		case op == lua.OP_JMP || op == lua.OP_EQ || op == lua.OP_LT || op == lua.OP_LE ||
			op == lua.OP_TEST || op == lua.OP_SETGLOBAL || op == lua.OP_SETUPVAL ||
			op == lua.OP_SETTABLE || op == lua.OP_SETTABLEKS || op == lua.OP_SETLIST ||
			op == lua.OP_CLOSE || op == lua.OP_NOP:
			continue // writes no register
		case op == lua.OP_SELF && (a == reg || a+1 == reg):
			if a == reg {
				return "method", luaConstName(p, luaArgC(inst))
			}
			return "", ""
		case op == lua.OP_LOADNIL && a <= reg && reg <= luaArgB(inst):
			return "", ""
		case a != reg:
			continue
		case op == lua.OP_GETGLOBAL:
			return "global", luaConstName(p, luaConstBit+luaArgBx(inst))
		case op == lua.OP_GETTABLEKS || op == lua.OP_GETTABLE:
			return "field", luaConstName(p, luaArgC(inst)) // '?' for a key not constant
		case op == lua.OP_GETUPVAL:
			if b := luaArgB(inst); b < len(p.DbgUpvalues) {
				return "upvalue", p.DbgUpvalues[b]
			}
			return "", ""
		case op == lua.OP_MOVE || op == lua.OP_MOVEN: // MOVEN: a MOVE, then C more
			if b := luaArgB(inst); b < a {
				return luaRegisterName(fn, i, b)
			}
			return "", ""
		default:
			return "", ""
		}
	}
	return "", ""
}

// luaConstName is Lua 5.1's kname: the constant string an RK operand names,
// "?" for anything else.
func luaConstName(p *lua.FunctionProto, rk int) string {
	if rk >= luaConstBit && rk-luaConstBit < len(p.Constants) {
		if s, ok := p.Constants[rk-luaConstBit].(lua.LString); ok {
			return string(s)
		}
	}
	return "?"
}

// luaLocalName is Lua 5.1's luaF_getlocalname: the name of the reg-th variable
// alive at pc, if there is one. (gopher-lua's LocalName is meant for a frame's
// pc, one past its instruction.)
func luaLocalName(p *lua.FunctionProto, reg, pc int) (string, bool) {
	for _, v := range p.DbgLocals {
		if v.StartPc > pc {
			break
		}
		if pc <= v.EndPc {
			if reg == 0 {
				return v.Name, true
			}
			reg--
		}
	}
	return "", false
}

// gopher-lua 1.1.2's instruction layout (Lua 5.1's opcodes in its own bit
// order): opcode in bits 26-31, A in 18-25, C in 9-17, B in 0-8.
func luaOpCode(inst uint32) int { return int(inst >> 26) }
func luaArgA(inst uint32) int   { return int(inst>>18) & 0xff }
func luaArgB(inst uint32) int   { return int(inst & 0x1ff) }
func luaArgC(inst uint32) int   { return int(inst>>9) & 0x1ff }
func luaArgBx(inst uint32) int  { return int(inst & 0x3ffff) }

// luaConstBit marks an RK operand that is a constant (its index plus this).
const luaConstBit = 1 << 8
