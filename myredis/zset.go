package myredis

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// A sorted set keeps its members twice: a map from member to score for
// O(1) ZSCORE and membership, and an order-statistic B+tree of (score,
// member) pairs for everything positional. Every node of the tree knows how
// many members each of its children holds, so rank (ZRANK), index access
// (ZRANGE 0 9, ZREMRANGEBYRANK, ZPOPMIN) and counting a score or lex range
// (the rank of its upper bound minus the rank of its lower bound) all walk
// one root-to-leaf path: O(log n).
//
// Why a tree of our own:
//   - github.com/google/btree keeps no subtree counts, so rank and index
//     access are linear scans.
//   - github.com/tidwall/btree's BTreeG keeps counts and has GetAt and
//     DeleteAt, but no rank: the rank of an item costs a binary search over
//     GetAt, O(log² n). On 1M members that was 2.5 µs a lookup, no faster
//     than Redis's whole ZRANK (skip list, 2.45 µs usec_per_call), before
//     any protocol work. BenchmarkZSetRank compares the two in one run.
//
// The tree is a B+tree: members live in leaves only; inner nodes hold, for
// each child, its member count and a separator key. Deletion rebalances, so
// a set that grows and shrinks (the waiting room's queue) keeps its leaves
// filled and its depth at log64(n).
//
// Not safe for concurrent use: a zset belongs to the executor goroutine (in
// --workers mode each exported method of zset is one locked primitive; see mu).

// zItem is one member of a sorted set and its score.
type zItem struct {
	score  float64
	member string
}

// zLess orders members by score, then by raw member bytes, as Redis does.
func zLess(a, b zItem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.member < b.member
}

// zNodeMax is the most items a leaf, or children an inner node, holds.
// Tests shrink it to exercise splits and merges on small sets.
var zNodeMax = 64

// zNodeMin is the fewest a node other than the root holds before it borrows
// from or merges with a sibling: a quarter full, and never one child alone.
func zNodeMin() int { return max(zNodeMax/4, 2) }

// zNode is a leaf (items) or an inner node (kids, counts, keys).
// For an inner node, counts[i] is the number of members under kids[i], and
// keys[i] (i >= 1) separates kids[i-1] from kids[i]: every member under
// kids[i-1] is less than keys[i], every member under kids[i] is not.
// keys[0] is unused. A separator may outlive the member it was copied from;
// it still separates.
type zNode struct {
	items  []zItem
	kids   []*zNode
	counts []int
	keys   []zItem
}

func (n *zNode) leaf() bool { return n.kids == nil }

// width is the number of items (leaf) or children (inner node).
func (n *zNode) width() int {
	if n.leaf() {
		return len(n.items)
	}
	return len(n.kids)
}

// size is the number of members under n.
func (n *zNode) size() int {
	if n.leaf() {
		return len(n.items)
	}
	s := 0
	for _, c := range n.counts {
		s += c
	}
	return s
}

// ztree is an order-statistic B+tree of zItems. It holds no duplicates; the
// zset guarantees that.
//
// A sorted set of the waiting room is often one of many small keys, so the
// header is 32 bytes: the small form's pack as its first byte, a 32-bit length
// and count; what only a large set needs (its count, its members' bytes, the
// member->score map) and --workers mode's lock live in x, allocated when
// needed.
type ztree struct {
	root *zNode // nil while the set is small and packed (zset_pack.go)
	pk   *byte  // the pack's first byte (packBytes); nil when empty or large
	plen uint32 // the pack's length
	pn   uint32 // members in the pack
	x    *zextra
}

// zextra is the part of a sorted set that small sets do without.
type zextra struct {
	n int // members of the large form
	// bytes are the large form's members' bytes (zset.memUsage); a packed set
	// counts its pack's length instead.
	bytes int64
	// scores maps a member to its score once the set is in its large form (a
	// B+tree); a small, packed set (zset_pack.go) finds a member by walking it.
	scores map[string]float64
	// mu is nil except in --workers mode, where every exported method of zset is
	// one locked primitive (workers.go sets it when the set enters a DB). The
	// unexported helpers they share take no lock.
	mu *sync.Mutex
}

// ext returns x, allocating it on first use.
func (t *ztree) ext() *zextra {
	if t.x == nil {
		t.x = &zextra{}
	}
	return t.x
}

func (t *ztree) len() int {
	if t.packed() {
		return int(t.pn)
	}
	return t.x.n
}

// childFor returns the child of inner node n whose range holds it.
func (n *zNode) childFor(it zItem) int {
	// the number of separators keys[1:] that are <= it
	lo, hi := 1, len(n.keys)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if zLess(it, n.keys[h]) {
			hi = h
		} else {
			lo = h + 1
		}
	}
	return lo - 1
}

// insert adds it, which must not be in the tree.
func (t *ztree) insert(it zItem) {
	if t.packed() {
		if t.fitsPacked(it) {
			t.packInsert(it)
			return
		}
		t.grow()
	}
	if right, sep := t.root.insert(it, leftEdge|rightEdge); right != nil {
		left := t.root
		t.root = &zNode{
			kids:   []*zNode{left, right},
			counts: []int{left.size(), right.size()},
			keys:   []zItem{{}, sep},
		}
	}
	t.x.n++
	t.x.bytes += int64(len(it.member))
}

// Which edges of the tree a node lies on: the first and the last leaf are
// where ascending and descending runs of scores arrive.
const (
	leftEdge = 1 << iota
	rightEdge
)

// insert adds it under n, which lies on the given tree edges. If n
// overflows it splits, and insert returns the new right sibling and the
// separator between the two.
func (n *zNode) insert(it zItem, edges int) (*zNode, zItem) {
	if n.leaf() {
		lo, hi := 0, len(n.items)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if zLess(n.items[h], it) {
				lo = h + 1
			} else {
				hi = h
			}
		}
		if len(n.items) < zNodeMax {
			n.items = slices.Insert(roomFor(n.items, len(n.items)+1), lo, it)
			return nil, zItem{}
		}
		// Full: split (see leafSplit for where). When the new item goes
		// before the first member of the whole set, it is probably one of a
		// descending run: it starts a leaf of its own and the full one stays
		// full.
		right := &zNode{items: make([]zItem, 0, zNodeMax)}
		switch {
		case lo == 0 && edges&leftEdge != 0:
			right.items = append(right.items, n.items...)
			clear(n.items)
			n.items = append(n.items[:0], it)
			return right, right.items[0]
		}
		at, sep := n.leafSplit(lo, it, edges)
		right.items = append(right.items, n.items[at:]...)
		clear(n.items[at:])
		n.items = n.items[:at]
		if lo < at {
			n.items = slices.Insert(n.items, lo, it)
		} else {
			right.items = slices.Insert(right.items, lo-at, it)
		}
		if sep == nil {
			sep = &right.items[0]
		}
		return right, *sep
	}
	k := n.childFor(it)
	kidEdges := 0
	if k == 0 {
		kidEdges |= edges & leftEdge
	}
	if k == len(n.kids)-1 {
		kidEdges |= edges & rightEdge
	}
	right, sep := n.kids[k].insert(it, kidEdges)
	n.counts[k]++
	if right == nil {
		return nil, zItem{}
	}
	rsize := right.size()
	n.counts[k] -= rsize
	n.kids = slices.Insert(n.kids, k+1, right)
	n.counts = slices.Insert(n.counts, k+1, rsize)
	n.keys = slices.Insert(n.keys, k+1, sep)
	if len(n.kids) <= zNodeMax {
		return nil, zItem{}
	}
	at := len(n.kids) / 2
	r := &zNode{
		kids:   append(make([]*zNode, 0, zNodeMax+1), n.kids[at:]...),
		counts: append(make([]int, 0, zNodeMax+1), n.counts[at:]...),
		keys:   append(make([]zItem, 0, zNodeMax+1), n.keys[at:]...),
	}
	sep = r.keys[0]
	r.keys[0] = zItem{}
	clear(n.kids[at:])
	clear(n.keys[at:])
	n.kids, n.counts, n.keys = n.kids[:at], n.counts[:at], n.keys[:at]
	return r, sep
}

// leafSplit tells where full leaf n splits for it, which goes at lo: the
// items from at on move to the new right leaf. In the middle, unless n is the
// last leaf of the set and it goes into its upper half: it is probably one of
// a run of appends (a queue ordered by arrival time), whose scores may tie (a
// deadline in milliseconds: the members of one millisecond arrive in any
// order, not always past the last one). Then the leaf splits where the new
// item's score starts, with (score, "") as the separator: every later item of
// that score or above goes right, and the left part, full or nearly, is never
// split again, so such sets pack densely. Likewise the first leaf, for a run
// that descends, at the new item.
func (n *zNode) leafSplit(lo int, it zItem, edges int) (at int, sep *zItem) {
	half := len(n.items) / 2
	switch {
	case lo > half && edges&rightEdge != 0:
		at = lo
		for at > half && n.items[at-1].score == it.score {
			at--
		}
		if at > half { // items[:at] score below it, the rest not
			return at, &zItem{score: it.score}
		}
		return lo, nil
	case lo < half && lo > 0 && edges&leftEdge != 0:
		return lo, nil
	}
	return half, nil
}

// roomFor returns items with capacity for need items, growing it by
// doubling but never past zNodeMax, so a leaf's array stays one 1.5 KiB
// allocation at most and a small set stays small.
func roomFor(items []zItem, need int) []zItem {
	if need <= cap(items) {
		return items
	}
	c := max(need, min(2*cap(items), zNodeMax), 2)
	return append(make([]zItem, 0, c), items...)
}

// at returns the item at index i (0 <= i < len).
func (t *ztree) at(i int) zItem {
	if t.packed() {
		return t.packAt(i)
	}
	n := t.root
	for !n.leaf() {
		k := 0
		for i >= n.counts[k] {
			i -= n.counts[k]
			k++
		}
		n = n.kids[k]
	}
	return n.items[i]
}

// rank returns the number of items less than it.
func (t *ztree) rank(it zItem) int {
	if t.packed() {
		i, _ := t.packSearch(func(e zItem) bool { return !zLess(e, it) })
		return i
	}
	r := 0
	n := t.root
	for !n.leaf() {
		k := n.childFor(it)
		for _, c := range n.counts[:k] {
			r += c
		}
		n = n.kids[k]
	}
	lo, hi := 0, len(n.items)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if zLess(n.items[h], it) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return r + lo
}

// search returns the index of the first item for which past is true, or len
// if there is none. past must be monotone over the tree's order: false for
// every item before some point, true from it on.
func (t *ztree) search(past func(zItem) bool) int {
	if t.packed() {
		i, _ := t.packSearch(past)
		return i
	}
	r := 0
	n := t.root
	for !n.leaf() {
		// the last child whose separator is not past
		lo, hi := 1, len(n.keys)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if past(n.keys[h]) {
				hi = h
			} else {
				lo = h + 1
			}
		}
		k := lo - 1
		for _, c := range n.counts[:k] {
			r += c
		}
		n = n.kids[k]
	}
	lo, hi := 0, len(n.items)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if past(n.items[h]) {
			hi = h
		} else {
			lo = h + 1
		}
	}
	return r + lo
}

// deleteAt removes and returns the item at index i (0 <= i < len).
func (t *ztree) deleteAt(i int) zItem {
	if t.packed() {
		return t.packDeleteAt(i)
	}
	it := t.root.deleteAt(i)
	t.x.n--
	t.x.bytes -= int64(len(it.member))
	for !t.root.leaf() && len(t.root.kids) == 1 {
		t.root = t.root.kids[0]
	}
	return it
}

func (n *zNode) deleteAt(i int) zItem {
	if n.leaf() {
		it := n.items[i]
		n.items = slices.Delete(n.items, i, i+1)
		return it
	}
	k := 0
	for i >= n.counts[k] {
		i -= n.counts[k]
		k++
	}
	it := n.kids[k].deleteAt(i)
	n.counts[k]--
	if n.kids[k].width() < zNodeMin() {
		n.rebalance(k)
	}
	return it
}

// rebalance refills child k, which fell below zNodeMin, from a neighbour:
// the two merge if they fit in one node, otherwise they share evenly.
func (n *zNode) rebalance(k int) {
	if len(n.kids) < 2 {
		return
	}
	if k == len(n.kids)-1 {
		k--
	}
	a, b := n.kids[k], n.kids[k+1]
	total := a.width() + b.width()
	if total <= zNodeMax {
		if a.leaf() {
			a.items = append(roomFor(a.items, total), b.items...)
		} else {
			a.kids = append(a.kids, b.kids...)
			a.counts = append(a.counts, b.counts...)
			a.keys = append(append(a.keys, n.keys[k+1]), b.keys[1:]...)
		}
		n.counts[k] += n.counts[k+1]
		n.kids = slices.Delete(n.kids, k+1, k+2)
		n.counts = slices.Delete(n.counts, k+1, k+2)
		n.keys = slices.Delete(n.keys, k+1, k+2)
		return
	}
	half := total / 2
	if a.leaf() {
		// move items across the boundary in place (ZPOPMIN does this every
		// few dozen pops)
		if m := half - len(a.items); m > 0 {
			a.items = append(roomFor(a.items, half), b.items[:m]...)
			rest := copy(b.items, b.items[m:])
			clear(b.items[rest:])
			b.items = b.items[:rest]
		} else if m < 0 {
			b.items = slices.Insert(roomFor(b.items, total-half), 0, a.items[half:]...)
			clear(a.items[half:])
			a.items = a.items[:half]
		}
		n.keys[k+1] = b.items[0]
		n.counts[k], n.counts[k+1] = half, total-half
		return
	}
	kids := append(append(make([]*zNode, 0, total), a.kids...), b.kids...)
	counts := append(append(make([]int, 0, total), a.counts...), b.counts...)
	keys := append(append(append(make([]zItem, 0, total), a.keys...), n.keys[k+1]), b.keys[1:]...)
	clear(a.kids)
	clear(a.keys)
	clear(b.kids)
	clear(b.keys)
	a.kids = append(a.kids[:0], kids[:half]...)
	a.counts = append(a.counts[:0], counts[:half]...)
	a.keys = append(a.keys[:0], keys[:half]...)
	b.kids = append(b.kids[:0], kids[half:]...)
	b.counts = append(b.counts[:0], counts[half:]...)
	b.keys = append(b.keys[:0], keys[half:]...)
	n.keys[k+1] = b.keys[0]
	b.keys[0] = zItem{}
	n.counts[k], n.counts[k+1] = a.size(), b.size()
}

// ascend calls fn for the items from index i upwards until fn returns false.
func (t *ztree) ascend(i int, fn func(zItem) bool) {
	if i < 0 || i >= t.len() {
		return
	}
	if t.packed() {
		t.packAscend(i, fn)
		return
	}
	t.root.ascend(i, fn)
}

func (n *zNode) ascend(i int, fn func(zItem) bool) bool {
	if n.leaf() {
		for _, it := range n.items[i:] {
			if !fn(it) {
				return false
			}
		}
		return true
	}
	k := 0
	for i >= n.counts[k] {
		i -= n.counts[k]
		k++
	}
	for ; k < len(n.kids); k++ {
		if !n.kids[k].ascend(i, fn) {
			return false
		}
		i = 0
	}
	return true
}

// descend calls fn for the items from index i downwards until fn returns
// false.
func (t *ztree) descend(i int, fn func(zItem) bool) {
	if i < 0 || i >= t.len() {
		return
	}
	if t.packed() {
		t.packDescend(i, fn)
		return
	}
	t.root.descend(i, fn)
}

func (n *zNode) descend(i int, fn func(zItem) bool) bool {
	if n.leaf() {
		for j := i; j >= 0; j-- {
			if !fn(n.items[j]) {
				return false
			}
		}
		return true
	}
	k := 0
	for i >= n.counts[k] {
		i -= n.counts[k]
		k++
	}
	for ; k >= 0; k-- {
		if !n.kids[k].descend(i, fn) {
			return false
		}
		if k > 0 {
			i = n.counts[k-1] - 1
		}
	}
	return true
}

// zset is a Redis sorted set: its key's entry (db.go), as a hash is (hash.go).
// A small set whose pack fits entry.kind's bits (kindZSetPack: the member
// count and the pack's length) is held there, the pack hanging off the entry's
// value pointer with no header object; any other set (large, or locked in
// --workers mode) points at its ztree (kindZSet), a box it keeps for good.
// Every method works on a ztree: the box, or a copy of the small form on the
// caller's stack (open), written back after a change (save).
//
// newZSet returns a detached entry that the DB adopts as the key's when it is
// added (DB.insert). Runs on the executor goroutine only.
type zset entry

// Bits of entry.kind for a sorted set held in its entry: kindZSetPack, then the
// member count above the pack's length.
const (
	kindZSetPack   = kindTag | 1<<29 // below kindHashPack, above the other kinds
	zpackLenBits   = 18
	zpackCountBits = 11
	zpackLenMask   = 1<<zpackLenBits - 1
	zpackCountMask = 1<<zpackCountBits - 1
)

// open returns the set's ztree: its box, or tmp filled from the entry.
func (z *zset) open(tmp *ztree) *ztree {
	if z.kind == kindZSet {
		return (*ztree)(z.vptr)
	}
	*tmp = ztree{pk: (*byte)(z.vptr), plen: z.kind & zpackLenMask, pn: z.kind >> zpackLenBits & zpackCountMask}
	return tmp
}

// save writes t, which open returned, back after a change: a small set stays
// in the entry while it fits the bits; else it moves to a box for good.
func (z *zset) save(t *ztree) {
	if z.kind == kindZSet { // changed in its box
		return
	}
	if t.root == nil && t.x == nil && t.pn <= zpackCountMask && t.plen <= zpackLenMask {
		z.vptr, z.kind = unsafe.Pointer(t.pk), kindZSetPack|t.pn<<zpackLenBits|t.plen
		return
	}
	box := new(ztree)
	*box = *t
	z.vptr, z.kind = unsafe.Pointer(box), kindZSet
}

// box moves the set to a box (--workers mode's lock lives there) and returns it.
func (z *zset) box() *ztree {
	if z.kind != kindZSet {
		t := *z.open(&ztree{})
		box := &t
		z.vptr, z.kind = unsafe.Pointer(box), kindZSet
	}
	return (*ztree)(z.vptr)
}

// scores is the member->score map of a large set, nil for a small one.
func (t *ztree) scores() map[string]float64 {
	if t.x == nil {
		return nil
	}
	return t.x.scores
}

// locked reports whether the set has --workers mode's lock (workers.go).
func (z *zset) locked() bool {
	if z.kind != kindZSet {
		return false
	}
	t := (*ztree)(z.vptr)
	return t.x != nil && t.x.mu != nil
}

// newZSet returns an empty set, detached: the DB adopts it as the key's entry.
func newZSet() *zset { return &zset{vpos: vposDetached, kind: kindZSetPack} }

// zsetSmall is the most members a set keeps packed (zset_pack.go), without a
// tree or a scores map: Redis's zset-max-listpack-entries default. Tests change
// it to exercise both forms.
var zsetSmall = 128

// scoreOf returns member's score.
func (t *ztree) scoreOf(member string) (float64, bool) {
	if m := t.scores(); m != nil {
		s, ok := m[member]
		return s, ok
	}
	if t.packed() {
		return t.packFind(member)
	}
	var s float64
	found := false
	t.ascend(0, func(it zItem) bool {
		if it.member == member {
			s, found = it.score, true
		}
		return !found
	})
	return s, found
}

// noteScore records member's score in the map, building the map when the set
// has just left its packed form.
func (t *ztree) noteScore(member string, score float64) {
	if m := t.scores(); m != nil {
		m[member] = score
		return
	}
	if t.packed() {
		return
	}
	m := make(map[string]float64, t.len())
	t.ascend(0, func(it zItem) bool {
		m[it.member] = it.score
		return true
	})
	t.x.scores = m
}

// forget drops member from the map.
func (t *ztree) forget(member string) {
	if m := t.scores(); m != nil {
		delete(m, member)
	}
}

// Len is the number of members (ZCARD).
func (z *zset) Len() int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.len()
}

// Score returns member's score (ZSCORE).
func (z *zset) Score(member string) (float64, bool) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.scoreOf(member)
}

// Add sets member's score, inserting the member if it is new, and reports
// whether it was new. score must not be NaN.
//
// A score of -0 is stored as 0, as Redis's listpack encoding (every set of
// up to 128 members) does.
func (z *zset) Add(member string, score float64) (added bool) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	if score == 0 {
		score = 0
	}
	old, ok := t.scoreOf(member)
	if !ok {
		t.insert(zItem{score, member})
		t.noteScore(member, score)
		return true
	}
	if old == score {
		return false
	}
	// Reuse the stored string so the map and the tree share its bytes.
	it := t.deleteAt(t.rank(zItem{old, member}))
	it.score = score
	t.insert(it)
	t.noteScore(it.member, score)
	return false
}

// memUsage is what Redis would allocate for the sorted set (memory.go): a
// listpack while packed (the pack's bytes stand for the listpack's, plus a
// back-length byte per element), else a dict plus a skiplist (a node of about
// 1.33 levels and an sds member per element). O(1).
func (z *zset) memUsage(*EncodingLimits) int64 {
	t := z.open(&ztree{})
	n := t.len()
	if t.packed() {
		return robjBytes + jemallocSize(listpackOverhead+int64(t.plen)+2*int64(n))
	}
	skiplistNode := jemallocSize(32 + 16*4/3)
	return robjBytes + hashtableMem(n, t.x.bytes, false) + 32 + int64(n)*skiplistNode
}

// Remove deletes member and reports whether it was there (ZREM).
func (z *zset) Remove(member string) bool {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	s, ok := t.scoreOf(member)
	if !ok {
		return false
	}
	t.deleteAt(t.rank(zItem{s, member}))
	t.forget(member)
	return true
}

// Rank returns member's 0-based position, counting from the lowest score,
// or from the highest when reverse is set (ZRANK, ZREVRANK).
func (z *zset) Rank(member string, reverse bool) (int, bool) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	s, ok := t.scoreOf(member)
	if !ok {
		return 0, false
	}
	r := t.rank(zItem{s, member})
	if reverse {
		r = t.len() - 1 - r
	}
	return r, true
}

// At returns the member at ascending index i, 0 <= i < Len.
func (z *zset) At(i int) zItem {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.at(i)
}

// Range calls fn for the members at ascending indices [start, end), in
// ascending order, or in descending order (end-1 first) when reverse is
// set, until fn returns false. Out-of-range bounds are clipped.
func (z *zset) Range(start, end int, reverse bool, fn func(zItem) bool) {
	if z.locked() { // --workers mode (workers.go): copy under the lock, call fn outside it
		for _, it := range z.Items(start, end, reverse) {
			if !fn(it) {
				return
			}
		}
		return
	}
	z.open(&ztree{}).walk(start, end, reverse, fn)
}

func (t *ztree) walk(start, end int, reverse bool, fn func(zItem) bool) {
	start, end = max(start, 0), min(end, t.len())
	if start >= end {
		return
	}
	if reverse {
		left := end - start
		t.descend(end-1, func(it zItem) bool {
			left--
			return fn(it) && left > 0
		})
		return
	}
	left := end - start
	t.ascend(start, func(it zItem) bool {
		left--
		return fn(it) && left > 0
	})
}

// Items returns the members at ascending indices [start, end), reversed
// when reverse is set.
func (z *zset) Items(start, end int, reverse bool) []zItem {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	var out []zItem
	if n := min(end, t.len()) - max(start, 0); n > 0 {
		out = make([]zItem, 0, n)
	}
	t.walk(start, end, reverse, func(it zItem) bool {
		out = append(out, it)
		return true
	})
	return out
}

// RankSpan turns Redis's inclusive rank arguments (negative counts from the
// end) into ascending indices [start, end), as ZRANGE and ZREMRANGEBYRANK
// read them. With reverse set, ranks count from the highest score.
func (z *zset) RankSpan(start, stop int, reverse bool) (int, int) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.rankSpan(start, stop, reverse)
}

func (t *ztree) rankSpan(start, stop int, reverse bool) (int, int) {
	n := t.len()
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	start = max(start, 0)
	if start > stop || start >= n {
		return 0, 0
	}
	stop = min(stop, n-1)
	if reverse {
		return n - 1 - stop, n - start
	}
	return start, stop + 1
}

// scoreRange is a score interval; an exclusive end is written "(x".
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

func (r scoreRange) aboveMin(s float64) bool {
	return s > r.min || (!r.minEx && s == r.min)
}

func (r scoreRange) aboveMax(s float64) bool {
	return s > r.max || (r.maxEx && s == r.max)
}

// ScoreSpan returns the ascending indices [start, end) of the members whose
// scores fall in r. An empty range gives start == end.
func (z *zset) ScoreSpan(r scoreRange) (int, int) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.scoreSpan(r)
}

func (t *ztree) scoreSpan(r scoreRange) (int, int) {
	start := t.search(func(it zItem) bool { return r.aboveMin(it.score) })
	end := t.search(func(it zItem) bool { return r.aboveMax(it.score) })
	return start, max(start, end)
}

// lexBound is one end of a lex range: "-" (inf -1), "+" (inf 1), or a
// member, inclusive ("[a") or exclusive ("(a").
type lexBound struct {
	s   string
	inf int
	ex  bool
}

// lexRange is an interval of members. As in Redis it is meaningful only
// when all members share one score.
type lexRange struct {
	min, max lexBound
}

func (r lexRange) aboveMin(m string) bool {
	switch r.min.inf {
	case -1:
		return true
	case 1:
		return false
	}
	return m > r.min.s || (!r.min.ex && m == r.min.s)
}

func (r lexRange) aboveMax(m string) bool {
	switch r.max.inf {
	case -1:
		return true
	case 1:
		return false
	}
	return m > r.max.s || (r.max.ex && m == r.max.s)
}

// empty reports whether r can hold nothing whatever the set: its min above its
// max, or one point with an exclusive end (Redis's sdscmplex check).
func (r lexRange) empty() bool {
	c := compareLexBounds(r.min, r.max)
	return c > 0 || (c == 0 && (r.min.ex || r.max.ex))
}

func compareLexBounds(a, b lexBound) int {
	if a.inf != 0 || b.inf != 0 {
		return a.inf - b.inf
	}
	return strings.Compare(a.s, b.s)
}

// LexSpan returns the ascending indices [start, end) of the members in r: what
// ZRANGEBYLEX returns, or with reverse what ZREVRANGEBYLEX returns (from end-1
// down). Redis defines lex ranges only when every member has the same score;
// then this is two O(log n) searches. Otherwise it walks the set as Redis does a
// listpack (the encoding of every set up to 128 members), in O(n): forward from
// the first member not below min while members stay below max, or backward
// from the last member not above max while members stay above min.
func (z *zset) LexSpan(r lexRange, reverse bool) (int, int) {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	return t.lexSpan(r, reverse)
}

func (t *ztree) lexSpan(r lexRange, reverse bool) (int, int) {
	n := t.len()
	if n == 0 {
		return 0, 0
	}
	first, last := t.at(0), t.at(n-1)
	if first.score == last.score {
		start := t.search(func(it zItem) bool { return r.aboveMin(it.member) })
		end := t.search(func(it zItem) bool { return r.aboveMax(it.member) })
		return start, max(start, end)
	}
	if r.empty() || !r.aboveMin(last.member) || r.aboveMax(first.member) {
		return 0, 0
	}
	if !reverse {
		start, end := -1, 0
		t.ascend(0, func(it zItem) bool {
			if start < 0 {
				if !r.aboveMin(it.member) {
					end++
					return true
				}
				if r.aboveMax(it.member) { // the first member above min is past max: nothing
					start = end
					return false
				}
				start, end = end, end+1
				return true
			}
			if r.aboveMax(it.member) {
				return false
			}
			end++
			return true
		})
		return start, end
	}
	end, start := -1, n
	t.descend(n-1, func(it zItem) bool {
		start--
		if end < 0 {
			if r.aboveMax(it.member) {
				return true
			}
			if !r.aboveMin(it.member) {
				start = -1 // the last member below max is below min: nothing
				return false
			}
			end = start + 1
			return true
		}
		if !r.aboveMin(it.member) {
			start++
			return false
		}
		return true
	})
	if start < 0 || end < 0 {
		return 0, 0
	}
	return start, end
}

// CountScore counts the members with scores in r (ZCOUNT) in O(log n).
func (z *zset) CountScore(r scoreRange) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	start, end := t.scoreSpan(r)
	return end - start
}

// CountLex counts the members in r (ZLEXCOUNT), in O(log n) when the scores are
// equal.
func (z *zset) CountLex(r lexRange) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	start, end := t.lexSpan(r, false)
	return end - start
}

// RemoveSpan removes the members at ascending indices [start, end) and
// returns how many it removed (ZREMRANGEBY*).
func (z *zset) RemoveSpan(start, end int) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	return t.removeSpan(start, end)
}

func (t *ztree) removeSpan(start, end int) int {
	start, end = max(start, 0), min(end, t.len())
	for i := start; i < end; i++ {
		it := t.deleteAt(start)
		t.forget(it.member)
	}
	return max(end-start, 0)
}

// RemoveRangeByScore removes the members with scores in r.
func (z *zset) RemoveRangeByScore(r scoreRange) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	return t.removeSpan(t.scoreSpan(r))
}

// RemoveRangeByLex removes the members in r.
func (z *zset) RemoveRangeByLex(r lexRange) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	return t.removeSpan(t.lexSpan(r, false))
}

// RemoveRangeByRank removes the members ranked start..stop (inclusive,
// negative from the end).
func (z *zset) RemoveRangeByRank(start, stop int) int {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	return t.removeSpan(t.rankSpan(start, stop, false))
}

// PopMin removes and returns up to n members with the lowest scores, lowest
// first (ZPOPMIN).
func (z *zset) PopMin(n int) []zItem {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	n = min(n, t.len())
	if n <= 0 {
		return nil
	}
	out := make([]zItem, n)
	for i := range out {
		out[i] = t.deleteAt(0)
		t.forget(out[i].member)
	}
	return out
}

// PopMax removes and returns up to n members with the highest scores,
// highest first (ZPOPMAX).
func (z *zset) PopMax(n int) []zItem {
	if z.locked() { // --workers mode: one lock per primitive (workers.go)
		defer z.hold()()
	}
	t := z.open(&ztree{})
	defer z.save(t)
	n = min(n, t.len())
	if n <= 0 {
		return nil
	}
	out := make([]zItem, n)
	for i := range out {
		out[i] = t.deleteAt(t.len() - 1)
		t.forget(out[i].member)
	}
	return out
}

// Scores on the wire: Redis reads them with C's strtod and prints them with
// "%.17g". The helpers below reproduce both exactly, so replies match Redis
// 7.0 byte for byte.

// parseScore reads a score argument (ZADD, ZINCRBY) as Redis's string2d
// does: the whole argument must be a C float literal (decimal, hex, "inf",
// "infinity", any case, optional sign), with no white space; NaN, overflow
// ("1e400") and underflow to zero ("1e-400") are rejected.
func parseScore(s string) (float64, bool) {
	if s == "" || isCSpace(s[0]) {
		return 0, false
	}
	f, n, erange := strtod(s)
	if n != len(s) || f != f || erange {
		return 0, false
	}
	return f, true
}

// parseScoreBound reads one end of a score range as Redis's zslParseRange
// does: "(" makes it exclusive; then strtod, which here may skip leading
// white space, overflows to ±inf and reads the empty string as 0; the
// argument ends at its first NUL byte, as a C string would; NaN is
// rejected.
func parseScoreBound(s string) (f float64, ex, ok bool) {
	if s != "" && s[0] == '(' {
		ex = true
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			s = s[:i]
			break
		}
	}
	f, n, _ := strtod(s)
	if n == 0 {
		// no conversion: strtod leaves its end pointer at the start
		return 0, ex, s == ""
	}
	if n != len(s) || f != f {
		return 0, false, false
	}
	return f, ex, true
}

// parseScoreRange reads the min and max arguments of ZCOUNT,
// ZRANGEBYSCORE and friends. On false the reply is errMinMaxNotFloat.
func parseScoreRange(min, max string) (scoreRange, bool) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minEx, ok1 = parseScoreBound(min)
	r.max, r.maxEx, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

// parseLexBound reads one end of a lex range: "-", "+", "[member" or
// "(member". Like Redis, which sees a C string, "+" and "-" may be followed
// by a NUL byte and anything after it.
func parseLexBound(s string) (lexBound, bool) {
	if s == "" {
		return lexBound{}, false
	}
	switch s[0] {
	case '+', '-':
		if len(s) > 1 && s[1] != 0 {
			return lexBound{}, false
		}
		if s[0] == '+' {
			return lexBound{inf: 1, ex: true}, true
		}
		return lexBound{inf: -1, ex: true}, true
	case '(':
		return lexBound{s: s[1:], ex: true}, true
	case '[':
		return lexBound{s: s[1:]}, true
	}
	return lexBound{}, false
}

// parseLexRange reads the min and max arguments of ZRANGEBYLEX, ZLEXCOUNT
// and ZREMRANGEBYLEX. On false the reply is errLexRange.
func parseLexRange(min, max string) (lexRange, bool) {
	lo, ok1 := parseLexBound(min)
	hi, ok2 := parseLexBound(max)
	return lexRange{lo, hi}, ok1 && ok2
}

// formatScore prints a score as Redis 7.0 does: "%.17g" (so 1.1 is
// "1.1000000000000001" and 3 is "3"), and "inf" / "-inf".
func formatScore(f float64) string {
	return string(appendScore(nil, f))
}

// appendScore appends formatScore(f) to dst.
func appendScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0 && math.Signbit(f):
		return append(dst, "-0"...)
	case f > -1e17 && f < 1e17 && f == math.Trunc(f):
		// An integer of at most 17 digits, which %.17g prints in full: the
		// common case (the waiting room's scores are times in ms), and
		// several times faster than the 17-digit float path.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if math.IsNaN(f) { // only a script's {double=0/0}: glibc's %.17g spelling
		if math.Signbit(f) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	}
	// Go's 'g' with precision 17 matches C's %.17g, trailing-zero removal
	// and two-digit exponents included (checked against glibc on 200k
	// values, and by TestFormatScore).
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
