package myredis

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestMsgpackRoundTrip: what pack makes, unpack gives back, for the shapes the
// encoder tells apart (lua_cmsgpack_compat_test.go checks the bytes against Redis).
func TestMsgpackRoundTrip(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	for _, tc := range []struct{ expr, want string }{
		{"cmsgpack.unpack(cmsgpack.pack(0.1)) == 0.1", ":1\r\n"},
		{"cmsgpack.unpack(cmsgpack.pack(-2^63)) == -2^63", ":1\r\n"},
		{"cmsgpack.unpack(cmsgpack.pack(2^63)) == 2^63", ":1\r\n"},
		{"cmsgpack.unpack(cmsgpack.pack(1.5)) == 1.5", ":1\r\n"},
		{"cmsgpack.unpack(cmsgpack.pack(string.rep('y', 70000))) == string.rep('y', 70000)", ":1\r\n"},
		{"cmsgpack.unpack(cmsgpack.pack({a = {b = {c = 'd'}}})).a.b.c", "$1\r\nd\r\n"},
		{"#cmsgpack.unpack(cmsgpack.pack({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}))", ":17\r\n"},
		{"select('#', cmsgpack.unpack(cmsgpack.pack(1, 'a', true)))", ":3\r\n"},
	} {
		got := string(s.Do("EVAL", "return "+tc.expr, "0"))
		assert.Equal(t, tc.want, got, tc.expr)
	}
}

// TestMsgpackSparseKeysBounded: gopher-lua keeps integer keys below
// lua.MaxArrayIndex in a slice, so a map key of 60 million would allocate a
// gigabyte of nil slots from seven input bytes; the decoder refuses instead,
// and still takes keys a little past the end.
func TestMsgpackSparseKeysBounded(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	got := string(s.Do("EVAL", "return cmsgpack.unpack('\\129\\206\\3\\147\\135\\0\\1')", "0")) // {[60000000]=1}
	assert.Contains(t, got, msgMsgpackSparse)
	got = string(s.Do("EVAL", "return cmsgpack.unpack('\\129\\205\\3\\232\\7')[1000]", "0")) // {[1000]=7}
	assert.Equal(t, ":7\r\n", got)
}

// TestMsgpackPackOutputBounded: a table that holds itself many times expands
// to width^16 values; the encoder stops at its output limit with an error.
func TestMsgpackPackOutputBounded(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	e := &luaEngine{L: L, proxies: map[*lua.LTable]*lua.LTable{}}
	wide := L.NewTable()
	for i := 1; i <= 8; i++ {
		wide.RawSetInt(i, wide)
	}
	enc := msgpackEncoder{L: L, e: e, limit: 1 << 20}
	L.Push(L.NewFunction(func(L *lua.LState) int {
		enc.value(wide, 0)
		return 0
	}))
	err := L.PCall(0, 0, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), msgMsgpackTooLarge)
	assert.Less(t, len(enc.buf), 2<<20, "the encoder stopped near its limit")
}

// TestMsgpackStopsWhenKilled: a cancelled script context (SCRIPT KILL) stops a
// long pack between values, as it stops a Lua loop between instructions.
func TestMsgpackStopsWhenKilled(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	L.SetContext(ctx)
	e := &luaEngine{L: L, proxies: map[*lua.LTable]*lua.LTable{}}
	wide := L.NewTable()
	for i := 1; i <= 8; i++ {
		wide.RawSetInt(i, wide)
	}
	enc := msgpackEncoder{L: L, e: e, limit: msgpackMaxOutput}
	L.Push(L.NewFunction(func(L *lua.LState) int {
		enc.value(wide, 0)
		return 0
	}))
	err := L.PCall(0, 0, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), context.Canceled.Error())
	assert.Less(t, enc.count, 2*msgpackCheckEvery)
}

// FuzzMsgpackUnpack: any input gives values or one of lua-cmsgpack's errors,
// never a panic; what decodes also survives pack and unpack again.
func FuzzMsgpackUnpack(f *testing.F) {
	for _, seed := range []string{"", "\x01", "\x93\x01\xc0\x03", "\x81\xa1x\x01", "\xdd\xff\xff\xff\xff\x01",
		"\x81\xc0\x01", "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x01", "\xc1", "\x91\x91\x91\x91\x90",
		"\xdb\x00\x00\x00\x03abc", "\x81\xce\x03\x93\x87\x00\x01", strings.Repeat("\x91", 5000)} {
		f.Add(seed)
	}
	s := New(Config{})
	f.Cleanup(func() { s.Close() })
	script := `
local ok, err = pcall(function() return {cmsgpack.unpack(ARGV[1])} end)
if not ok then return {err = err} end
local again = #err > 0 and {cmsgpack.unpack(cmsgpack.pack(unpack(err)))} or {}
local off, one = cmsgpack.unpack_one(ARGV[1])
return #again`
	known := []string{msgMsgpackMissingBytes, msgMsgpackBadFormat, msgMsgpackTooManyVals, msgMsgpackArrayStack,
		msgLuaTableIndexNil, msgLuaTableIndexNaN, msgMsgpackSparse, "Too many arguments for MessagePack pack."}
	f.Fuzz(func(t *testing.T, in string) {
		got := string(s.Do("EVAL", script, "0", in))
		if strings.HasPrefix(got, ":") {
			return
		}
		for _, msg := range known {
			if strings.Contains(got, msg) {
				return
			}
		}
		t.Fatalf("unpack(%q) = %q", in, got)
	})
}
