package myredis

import (
	"encoding/binary"
	"math"
	"strings"
	"unsafe"
)

// The small form of a sorted set, as Redis's listpack: while a set has at most
// zsetSmall members (zset-max-listpack-entries' default) none longer than
// zsetSmallValue bytes (zset-max-listpack-value's), its members live in one
// packed byte slice in order: each a packed score (appendPackScore), a uvarint
// length, the member's bytes. A 5-member set costs its bytes plus the slice instead of a
// tree node and its item array. Every operation walks the pack (at most 128
// entries) and every change builds a new one, so a member string handed out
// (packString) never changes under its holder. Past either limit the set moves
// to the B+tree for good (ztree.grow), as Redis converts for good.

// A packed score is a uvarint: an integer score (as most are: arrival numbers,
// millisecond deadlines) of magnitude up to 2^53 is its zigzag form shifted left
// once, so 1..63 take one byte, as a Redis listpack keeps integers compactly;
// any other score is the uvarint 1 and its 8 bytes.
const packScoreMaxInt = 1 << 53

func appendPackScore(p []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= -packScoreMaxInt && f <= packScoreMaxInt {
		i := int64(f)
		return binary.AppendUvarint(p, uint64(i<<1^i>>63)<<1)
	}
	p = append(p, 1)
	return binary.LittleEndian.AppendUint64(p, math.Float64bits(f))
}

// packScoreLen is the length of f's packed score.
func packScoreLen(f float64) int {
	var b [binary.MaxVarintLen64 + 1]byte
	return len(appendPackScore(b[:0], f))
}

// packScore decodes the score at off and returns it and the member's offset.
func packScore(p []byte, off int) (float64, int) {
	v, k := binary.Uvarint(p[off:])
	if v&1 == 1 {
		return math.Float64frombits(binary.LittleEndian.Uint64(p[off+k:])), off + k + 8
	}
	z := v >> 1
	return float64(int64(z>>1) ^ -int64(z&1)), off + k
}

// packFind returns member's score in the pack: one pass that skips a score
// without decoding it unless its member matches (ZSCORE, ZADD's lookup).
func (t *ztree) packFind(member string) (float64, bool) {
	p := t.packBytes()
	for off := 0; off < len(p); {
		at := off
		if p[off]&1 == 1 { // a float: the uvarint 1 and 8 bytes
			off += 9
		} else {
			for p[off] >= 0x80 {
				off++
			}
			off++
		}
		l, k := binary.Uvarint(p[off:])
		m := off + k
		off = m + int(l)
		if int(l) == len(member) && string(p[m:off]) == member {
			score, _ := packScore(p, at)
			return score, true
		}
	}
	return 0, false
}

// zsetSmallValue is the longest member the small form keeps.
var zsetSmallValue = 64

// packed reports whether t is in the small form.
func (t *ztree) packed() bool { return t.root == nil }

// packBytes is the small form's pack.
func (t *ztree) packBytes() []byte {
	if t.pk == nil {
		return nil
	}
	return unsafe.Slice(t.pk, t.plen)
}

// setPack stores p as the pack of n members. A pack holds at most zsetSmall
// members of at most zsetSmallValue bytes, far below 4 GiB.
func (t *ztree) setPack(p []byte, n int) {
	t.pk, t.plen, t.pn = nil, 0, uint32(n)
	if len(p) > 0 {
		t.pk, t.plen = unsafe.SliceData(p), uint32(len(p))
	}
}

// packItem decodes the entry at off and returns it and the next entry's offset.
func packItem(p []byte, off int) (zItem, int) {
	score, off := packScore(p, off)
	l, k := binary.Uvarint(p[off:])
	m := off + k
	return zItem{score: score, member: packString(p, m, m+int(l))}, m + int(l)
}

// packOffset returns the offset of entry i (len(pack) for i == n).
func (t *ztree) packOffset(i int) int {
	off := 0
	for ; i > 0; i-- {
		_, off = packItem(t.packBytes(), off)
	}
	return off
}

func (t *ztree) packAt(i int) zItem {
	it, _ := packItem(t.packBytes(), t.packOffset(i))
	return it
}

// packSearch is search over the pack: the index of the first entry for which
// past is true, and its offset.
func (t *ztree) packSearch(past func(zItem) bool) (int, int) {
	i, off, p := 0, 0, t.packBytes()
	for off < len(p) {
		it, next := packItem(p, off)
		if past(it) {
			break
		}
		i, off = i+1, next
	}
	return i, off
}

func (t *ztree) packInsert(it zItem) {
	_, off := t.packSearch(func(e zItem) bool { return !zLess(e, it) })
	old := t.packBytes()
	p := make([]byte, 0, len(old)+packScoreLen(it.score)+uvarintLen(len(it.member))+len(it.member))
	p = append(p, old[:off]...)
	p = appendPackScore(p, it.score)
	p = binary.AppendUvarint(p, uint64(len(it.member)))
	p = append(p, it.member...)
	t.setPack(append(p, old[off:]...), int(t.pn)+1)
}

func (t *ztree) packDeleteAt(i int) zItem {
	off := t.packOffset(i)
	old := t.packBytes()
	it, end := packItem(old, off)
	if t.pn == 1 {
		t.setPack(nil, 0)
		return it
	}
	p := make([]byte, 0, len(old)-(end-off))
	p = append(p, old[:off]...)
	t.setPack(append(p, old[end:]...), int(t.pn)-1)
	return it
}

func (t *ztree) packAscend(i int, fn func(zItem) bool) {
	p := t.packBytes()
	for off := t.packOffset(i); off < len(p); {
		it, next := packItem(p, off)
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
	return int(t.pn)+1 <= zsetSmall && len(it.member) <= zsetSmallValue
}

// grow moves a small set into the B+tree. The members are copied out of the
// pack, which is then dropped.
func (t *ztree) grow() {
	p, n := t.packBytes(), int(t.pn)
	t.setPack(nil, 0)
	x := t.ext()
	x.n, x.bytes = 0, 0
	t.root = &zNode{}
	for off := 0; off < len(p); {
		it, next := packItem(p, off)
		it.member = strings.Clone(it.member)
		t.insert(it)
		off = next
	}
	if x.n != n {
		panic("zset: a packed set lost members while growing")
	}
}
