package myredis

import (
	"strings"
	"testing"
)

// FuzzStructFormat: any format string and data give values or a Lua error from
// struct.unpack, struct.size and struct.pack, never a Go panic (gopher-lua turns
// one into a "runtime error").
func FuzzStructFormat(f *testing.F) {
	for _, seed := range [][2]string{{"bhilfdTxL", "0123456789abcdefghijklmnopqrstuvwxyz012345"}, {"!4bi", "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{"bc0", "\x02ab"}, {"s", "ab\x00"}, {">i32", strings.Repeat("\xff", 32)}, {"c99999999999", "x"}, {"!3", ""}, {"i9", "123456789"}} {
		f.Add(seed[0], seed[1])
	}
	s := New(Config{})
	f.Cleanup(func() { s.Close() })
	script := `
local r = {pcall(struct.unpack, ARGV[1], ARGV[2])}
local ok, size = pcall(struct.size, ARGV[1])
local okp, packed = pcall(struct.pack, ARGV[1], 1, 2, 3, 'abc', 4)
return {r[1] and 1 or r[2], ok and 1 or size, okp and 1 or packed}`
	f.Fuzz(func(t *testing.T, format, data string) {
		got := string(s.Do("EVAL", script, "0", format, data))
		if strings.Contains(got, "runtime error") || !strings.HasPrefix(got, "*3\r\n") {
			t.Fatalf("struct(%q, %q) = %q", format, data, got)
		}
	})
}
