package myredis

import (
	"encoding/binary"
	"math"
	"strings"
)

// The small form of a sorted set, as Redis's listpack: while a set has at most
// zsetSmall members (zset-max-listpack-entries' default) none longer than
// zsetSmallValue bytes (zset-max-listpack-value's), its members live in one
// packed byte slice in order: each an 8-byte score, a uvarint length, the
// member's bytes. A 5-member set costs its bytes plus the slice instead of a
// tree node and its item array. Every operation walks the pack (at most 128
// entries) and every change builds a new one, so a member string handed out
// (packString) never changes under its holder. Past either limit the set moves
// to the B+tree for good (ztree.grow), as Redis converts for good.

// zsetSmallValue is the longest member the small form keeps.
var zsetSmallValue = 64

// packed reports whether t is in the small form.
func (t *ztree) packed() bool { return t.root == nil }

// packItem decodes the entry at off and returns it and the next entry's offset.
func packItem(p []byte, off int) (zItem, int) {
	score := math.Float64frombits(binary.LittleEndian.Uint64(p[off:]))
	l, k := binary.Uvarint(p[off+8:])
	m := off + 8 + k
	return zItem{score: score, member: packString(p, m, m+int(l))}, m + int(l)
}

// packOffset returns the offset of entry i (len(pack) for i == n).
func (t *ztree) packOffset(i int) int {
	off := 0
	for ; i > 0; i-- {
		_, off = packItem(t.pack, off)
	}
	return off
}

func (t *ztree) packAt(i int) zItem {
	it, _ := packItem(t.pack, t.packOffset(i))
	return it
}

// packSearch is search over the pack: the index of the first entry for which
// past is true, and its offset.
func (t *ztree) packSearch(past func(zItem) bool) (int, int) {
	i, off := 0, 0
	for off < len(t.pack) {
		it, next := packItem(t.pack, off)
		if past(it) {
			break
		}
		i, off = i+1, next
	}
	return i, off
}

func (t *ztree) packInsert(it zItem) {
	_, off := t.packSearch(func(e zItem) bool { return !zLess(e, it) })
	p := make([]byte, 0, len(t.pack)+8+binary.MaxVarintLen32+len(it.member))
	p = append(p, t.pack[:off]...)
	p = binary.LittleEndian.AppendUint64(p, math.Float64bits(it.score))
	p = binary.AppendUvarint(p, uint64(len(it.member)))
	p = append(p, it.member...)
	t.pack = append(p, t.pack[off:]...)
}

func (t *ztree) packDeleteAt(i int) zItem {
	off := t.packOffset(i)
	it, end := packItem(t.pack, off)
	if t.n == 1 {
		t.pack = nil
		return it
	}
	p := make([]byte, 0, len(t.pack)-(end-off))
	p = append(p, t.pack[:off]...)
	t.pack = append(p, t.pack[end:]...)
	return it
}

func (t *ztree) packAscend(i int, fn func(zItem) bool) {
	for off := t.packOffset(i); off < len(t.pack); {
		it, next := packItem(t.pack, off)
		if !fn(it) {
			return
		}
		off = next
	}
}

func (t *ztree) packDescend(i int, fn func(zItem) bool) {
	var stack [128]zItem
	items := stack[:0]
	t.packAscend(0, func(it zItem) bool {
		items = append(items, it)
		return len(items) <= i
	})
	for j := i; j >= 0; j-- {
		if !fn(items[j]) {
			return
		}
	}
}

// fitsPacked reports whether the set may stay small with it added.
func (t *ztree) fitsPacked(it zItem) bool {
	return t.n+1 <= zsetSmall && len(it.member) <= zsetSmallValue
}

// grow moves a small set into the B+tree. The members are copied out of the
// pack, which is then dropped.
func (t *ztree) grow() {
	p, n := t.pack, t.n
	t.pack, t.n = nil, 0
	t.root = &zNode{}
	for off := 0; off < len(p); {
		it, next := packItem(p, off)
		it.member = strings.Clone(it.member)
		t.insert(it)
		off = next
	}
	if t.n != n {
		panic("zset: a packed set lost members while growing")
	}
}
