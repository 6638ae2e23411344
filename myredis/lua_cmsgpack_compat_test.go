package myredis_test

// Differential cases for the cmsgpack Lua library: TestCompat (compat_test.go)
// runs them against a real redis-server and compares every reply byte for byte.
// Maps of several keys are left out: their order is the table's iteration
// order, which is Lua 5.1's hash order in Redis (lua_cmsgpack.go).

import (
	"fmt"
	"strings"
)

func init() {
	diffCases = append(diffCases,
		diffCase{"cmsgpack pack encodings", msgpackPackCmds()},
		diffCase{"cmsgpack unpack values", msgpackUnpackCmds()},
		diffCase{"cmsgpack unpack errors", msgpackUnpackErrorCmds()},
		diffCase{"cmsgpack offsets and limits", msgpackOffsetCmds()},
		diffCase{"cmsgpack stack limits", msgpackStackCmds()},
	)
}

// msgpackHex is a script prelude: hex(s) spells a string's bytes.
const msgpackHex = `local function hex(s) local h = {} for i = 1, #s do h[i] = string.format("%02x", string.byte(s, i)) end return table.concat(h) end `

// msgpackShow is a script prelude: show(...) describes every value it gets,
// tables through cjson (whose order for one key or an array is fixed).
const msgpackShow = `local function show(...) local o = {} for i = 1, select("#", ...) do local v = select(i, ...) if type(v) == "table" then o[#o+1] = "T:" .. cjson.encode(v) else o[#o+1] = type(v) .. ":" .. tostring(v) end end return table.concat(o, " ") end `

// luaBytes writes hex bytes as a Lua 5.1 string literal (decimal escapes).
func luaBytes(h string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i+1 < len(h); i += 2 {
		var c byte
		fmt.Sscanf(h[i:i+2], "%02x", &c)
		fmt.Fprintf(&b, "\\%d", c)
	}
	b.WriteByte('"')
	return b.String()
}

func msgpackPackCmds() [][]string {
	values := []string{
		"0.1", "-1099511627776", "0", "1", "127", "128", "255", "256", "65535", "65536",
		"4294967295", "4294967296", "2^53", "-1", "-32", "-33", "-128", "-129", "-32768",
		"-32769", "-2147483648", "-2147483649", "2^63", "-2^63", "2^64", "-2^64", "1/0",
		"-1/0", "1.5", "-1.5", "1e300", "3.4e38", "1e-300", "0.5^149", "-0.0",
		"'abc'", "''", "string.rep('x', 31)", "string.rep('x', 32)", "string.rep('x', 255)",
		"string.rep('x', 256)", "string.rep('x', 65535)", "string.rep('x', 65536)",
		"true", "false", "nil", "{}", "{1, 2, 3}", "{a = 1}", "{[1] = 1, [3] = 3}",
		"{[0] = 1}", "{[-1] = 1}", "{[1.5] = 1}", "{[2^31] = 1}", "{[2^31 - 1] = 'x'}",
		"{1, nil, 3}", "{{{{}}}}", "{true, false, 'x', 0.25}", "redis.call",
		"1, 2, 3", "'a', {1}, nil, false", "{[true] = 1}",
	}
	var cmds [][]string
	for _, v := range values {
		cmds = append(cmds, []string{"EVAL", msgpackHex + "return hex(cmsgpack.pack(" + v + "))", "0"})
	}
	for _, n := range []int{14, 15, 16, 65535, 65536} {
		cmds = append(cmds, []string{"EVAL", msgpackHex + fmt.Sprintf(
			"local t = {} for i = 1, %d do t[i] = i end local s = cmsgpack.pack(t) return {#s, hex(s:sub(1, 8))}", n), "0"})
	}
	// nesting: 16 levels of tables, then nil; a circular table the same way
	cmds = append(cmds,
		[]string{"EVAL", msgpackHex + "local t = {} for i = 1, 20 do t = {t} end return hex(cmsgpack.pack(t))", "0"},
		[]string{"EVAL", msgpackHex + "local a = {} a[1] = a return hex(cmsgpack.pack(a))", "0"},
		[]string{"EVAL", msgpackHex + "local a = {y = 5} a.x = {x = a} return hex(cmsgpack.pack(a))", "0"},
		[]string{"EVAL", msgpackHex + "return hex(cmsgpack.pack(setmetatable({}, {__index = function() return 1 end})))", "0"},
		[]string{"EVAL", "return cmsgpack.pack()", "0"},
		[]string{"EVAL", "cmsgpack.pack = 1", "0"},
		[]string{"EVAL", "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}", "0"},
	)
	return cmds
}

func msgpackUnpackCmds() [][]string {
	inputs := []string{
		"00", "7f", "ff", "e0", "cc80", "ccff", "cd0100", "cdffff", "ce00010000", "ceffffffff",
		"cf0000000100000000", "cfffffffffffffffff", "cf8000000000000001", "d0df", "d080",
		"d1ff7f", "d18000", "d2ffff7fff", "d280000000", "d38000000000000001", "d3ffffffffffffffff",
		"ca3fc00000", "ca7f800000", "cb3fb999999999999a", "cbfff0000000000000", "c0", "c2", "c3",
		"a3616263", "a0", "d903616263", "da0003616263", "db00000003616263", "93010203", "9301c003",
		"dc0002c3c2", "dd00000001a178", "81a17801", "de0001a17801", "df00000001a17801",
		"8101c0", "81ff01", "8201c00202", "82a1610101a16102", "010203", "", "9091929190",
		"81cb3ff000000000000001",
	}
	var cmds [][]string
	for _, in := range inputs {
		cmds = append(cmds, []string{"EVAL", msgpackShow + "return show(cmsgpack.unpack(" + luaBytes(in) + "))", "0"})
	}
	// round trips of the test suite's shapes
	cmds = append(cmds,
		[]string{"EVAL", msgpackShow + "return show(cmsgpack.unpack(cmsgpack.pack({1, {2, {3, 'x'}}, {a = {b = true}}, 0.1, -5})))", "0"},
		[]string{"EVAL", "local t = {} for i = 1, 100000 do t[i] = i end local u = cmsgpack.unpack(cmsgpack.pack(t)) return {#u, u[1], u[100000]}", "0"},
		[]string{"EVAL", "return cmsgpack.unpack(cmsgpack.pack(ARGV[1]))", "0", strings.Repeat("\x00\xff", 40000)},
		[]string{"EVAL", "return cmsgpack.unpack(ARGV[1])", "0", "\xa3abc"},
	)
	return cmds
}

func msgpackUnpackErrorCmds() [][]string {
	inputs := []string{
		"c1", "c4", "c401", "c5000161", "c7", "d4", "d8", "cc", "cd01", "cf00", "ca00", "cb00",
		"9201", "81", "8101", "a5616263", "d9", "d905", "da00", "db00000005616263",
		"dbffffffff61", "dc", "dcffff", "ddffffffff01", "dfffffffff0101", "81c001",
		"81cb7ff800000000000001", "81c0c0", "9101c1",
	}
	var cmds [][]string
	for _, in := range inputs {
		cmds = append(cmds, []string{"EVAL", "return cmsgpack.unpack(" + luaBytes(in) + ")", "0"})
	}
	cmds = append(cmds,
		[]string{"EVAL", "return cmsgpack.unpack()", "0"},
		[]string{"EVAL", "return cmsgpack.unpack({})", "0"},
		[]string{"EVAL", "return cmsgpack.unpack(1)", "0"},
		[]string{"EVAL", "return {pcall(cmsgpack.unpack, '\\193')}", "0"},
		[]string{"EVAL", "return {pcall(cmsgpack.unpack, '\\129\\192\\1')}", "0"},
	)
	return cmds
}

func msgpackOffsetCmds() [][]string {
	calls := []string{
		"cmsgpack.unpack_one('\\1\\2\\3')", "cmsgpack.unpack_one('\\1\\2\\3', 0)",
		"cmsgpack.unpack_one('\\1\\2\\3', 1)", "cmsgpack.unpack_one('\\1\\2\\3', 2)",
		"cmsgpack.unpack_one('\\1\\2\\3', 3)", "cmsgpack.unpack_one('\\1\\2\\3', 4)",
		"cmsgpack.unpack_one('\\1\\2\\3', -1)", "cmsgpack.unpack_one('\\1\\2\\3', '1')",
		"cmsgpack.unpack_one('\\1\\2\\3', 1.9)", "cmsgpack.unpack_one('\\1\\2\\3', {})",
		"cmsgpack.unpack_one('\\1\\2\\3', nil)", "cmsgpack.unpack_one('')",
		"cmsgpack.unpack_limit('\\1\\2\\3', 0, 0)", "cmsgpack.unpack_limit('\\1\\2\\3', 0, 1)",
		"cmsgpack.unpack_limit('\\1\\2\\3', 2)", "cmsgpack.unpack_limit('\\1\\2\\3', 2, 2)",
		"cmsgpack.unpack_limit('\\1\\2\\3', 5)", "cmsgpack.unpack_limit('\\1\\2\\3', -2)",
		"cmsgpack.unpack_limit('\\1\\2\\3', 'x')", "cmsgpack.unpack_limit('\\1\\2\\3')",
		"cmsgpack.unpack_limit('\\1\\2\\3', '2', '1')", "cmsgpack.unpack_limit('\\1\\2\\3', 1, 7)",
		"cmsgpack.unpack_one('\\146\\1')", "cmsgpack.unpack('\\1\\2', 'ignored', 3)",
	}
	var cmds [][]string
	for _, c := range calls {
		cmds = append(cmds, []string{"EVAL", msgpackShow + "return show(" + c + ")", "0"})
	}
	return cmds
}

// msgpackStackCmds probe Lua 5.1's 8000-slot C stack around its edges: the
// number of results, the nesting depth of arrays and maps, pack's argument count.
func msgpackStackCmds() [][]string {
	var cmds [][]string
	for _, n := range []int{7998, 7999, 8000} {
		cmds = append(cmds,
			[]string{"EVAL", fmt.Sprintf("return select('#', cmsgpack.unpack(string.rep('\\1', %d)))", n), "0"},
			[]string{"EVAL", fmt.Sprintf("return select('#', cmsgpack.unpack(string.rep('\\1', %d), 'x'))", n), "0"},
			[]string{"EVAL", fmt.Sprintf("return select('#', cmsgpack.unpack_limit(string.rep('\\1', %d), %d))", n, n), "0"},
		)
	}
	for _, n := range []int{3997, 3998, 3999, 4000} {
		cmds = append(cmds,
			[]string{"EVAL", fmt.Sprintf("return type(cmsgpack.unpack(string.rep('\\145', %d) .. '\\1'))", n), "0"},
			[]string{"EVAL", fmt.Sprintf("return type(cmsgpack.unpack(string.rep('\\129\\1', %d) .. '\\1'))", n), "0"},
			[]string{"EVAL", fmt.Sprintf("return type(cmsgpack.unpack(string.rep('\\129\\145\\1', %d) .. '\\1'))", n/2), "0"},
		)
	}
	for _, n := range []int{3999, 4000, 4001} {
		cmds = append(cmds, []string{"EVAL", fmt.Sprintf(
			"local t = {} for i = 1, %d do t[i] = i end return #cmsgpack.pack(unpack(t))", n), "0"})
	}
	return cmds
}
