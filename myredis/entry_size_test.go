package myredis

import (
	"testing"
	"unsafe"
)

// TestValueHeaderSizes guards the per-key layouts that memory per key rests on
// (docs/performance.md, "Memory per key"): a field added to one of them moves
// every key of that shape into the next size class.
func TestValueHeaderSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"entry", unsafe.Sizeof(entry{}), 48},
		{"hashValue (a hash is its entry)", unsafe.Sizeof(hashValue{}), 48},
		{"ztree (a large sorted set's box)", unsafe.Sizeof(ztree{}), 32},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}
