package myredis

import (
	"encoding/binary"
	"slices"

	"github.com/tidwall/redcon"
)

// list is the list type: a deque of nodes, each node a packed run of elements, as
// Redis's quicklist is a linked list of listpacks. Every method runs on the executor
// goroutine.
//
// Layout. A node's elements sit back to back in one byte slice, each as
//
//	uvarint(len) | bytes | uvarint(len) written backwards
//
// so a node is walked from either end (a 3-byte element costs 5 bytes, as in a
// listpack). A node holds up to listNodeBytes bytes (Redis's list-max-listpack-size
// -2: 8 KB), or one element of any size. The live bytes of a node are b[off:]: a
// pop at the front moves off, a push at the front writes just before it while
// there is room, so pushing and popping at either end moves no bytes, and a node
// that must grow doubles its buffer, giving the new room to the end that asked.
// The nodes themselves sit in a slice with room kept at its front too.
//
// Costs. LPUSH, RPUSH, LPOP, RPOP: O(1) amortised. Reaching index i walks the nodes
// from the nearer end, then the node's elements from its nearer end: cheap near
// either end, O(N/1600) node hops in the middle. An insert or replacement in the
// middle rewrites one node (at most 8 KB), splitting it if it grows too big.
//
// Elements returned by methods point into the node buffers: they stay valid only
// until the list changes again, so callers write them out (or copy them) at once.
type list struct {
	nodes []*listNode // live nodes are nodes[head:]
	head  int
	n     int // elements
	fill  int // list-max-listpack-size when the list was made
	bytes int // the elements' encoded bytes, sum of the nodes' size() (memUsage)
}

type listNode struct {
	b   []byte // elements live in b[off:]
	off int
	n   int // elements in this node
}

// listNodeBytes is the fill limit of a node under Redis's default
// list-max-listpack-size, -2. A variable so that tests can build many-node lists
// from a few elements.
var listNodeBytes = 8192

// listSafetyBytes bounds a node filled by element count (a positive fill), as
// Redis's SIZE_SAFETY_LIMIT.
const listSafetyBytes = 8192

// newList makes an empty list whose nodes follow fill, list-max-listpack-size:
// -1..-5 caps a node at 4, 8, 16, 32 or 64 KB; n >= 0 at n elements (and 8 KB).
func newList(fill int) *list { return &list{fill: fill} }

// maxNodeBytes is the most bytes a node of l holds (unless one element is bigger).
func (l *list) maxNodeBytes() int {
	switch {
	case l.fill >= 0:
		return listSafetyBytes
	case l.fill == -2:
		return listNodeBytes
	}
	return 4096 << min(-l.fill-1, 4)
}

// fits reports whether an element of size encoded bytes may join nd.
func (l *list) fits(nd *listNode, size int) bool {
	if nd.size()+size > l.maxNodeBytes() {
		return false
	}
	return l.fill < 0 || nd.n < l.fill
}

func (l *list) typeName() string { return "list" }

// objectEncoding is what OBJECT ENCODING answers: Redis 7.0 keeps every list in a
// quicklist (its listpack encoding for small lists came with 7.2).
func (l *list) objectEncoding(*EncodingLimits) string { return "quicklist" }

// Len is the number of elements.
func (l *list) Len() int { return l.n }

// --- element encoding ---

func uvarintLen(n int) int {
	k := 1
	for n >= 0x80 {
		n >>= 7
		k++
	}
	return k
}

// entrySize is the encoded size of an element of n bytes.
func entrySize(n int) int { return n + 2*uvarintLen(n) }

// putEntry encodes v into dst, which holds exactly entrySize(len(v)) bytes.
func putEntry(dst, v []byte) {
	i := binary.PutUvarint(dst, uint64(len(v)))
	i += copy(dst[i:], v)
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], uint64(len(v)))
	for j := range k {
		dst[i+j] = tmp[k-1-j]
	}
}

// entryAt decodes the element starting at p and returns it and where the next starts.
func entryAt(b []byte, p int) (v []byte, next int) {
	n, k := binary.Uvarint(b[p:])
	start := p + k
	end := start + int(n)
	return b[start:end:end], end + k
}

// entryBefore decodes the element ending at end and returns it and where it starts.
func entryBefore(b []byte, end int) (v []byte, start int) {
	var n uint64
	i, shift := end-1, 0
	for {
		c := b[i]
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		i--
		shift += 7
	}
	k := end - i
	dataEnd := i
	dataStart := dataEnd - int(n)
	return b[dataStart:dataEnd:dataEnd], dataStart - k
}

// --- nodes ---

func (nd *listNode) size() int { return len(nd.b) - nd.off }

// room makes size free bytes at the front (front) or the back of nd, growing its
// buffer by doubling up to limit bytes.
func (nd *listNode) room(size int, front bool, limit int) {
	used := nd.size()
	need := used + size
	newCap := cap(nd.b)
	if newCap < need {
		newCap = max(newCap, 16)
		for newCap < need {
			newCap *= 2
		}
		if newCap > limit && need <= limit {
			newCap = limit
		}
	}
	var nb []byte
	if newCap == cap(nd.b) {
		nb = nd.b[:cap(nd.b)] // enough bytes, at the wrong end: move within
	} else {
		nb = make([]byte, newCap)
	}
	if front {
		// the data ends at the buffer's end; on a move within, keep half the
		// spare room behind it for pushes at the other end
		end := newCap
		if newCap == cap(nd.b) {
			end = newCap - (newCap-need)/2
		}
		copy(nb[end-used:end], nd.b[nd.off:])
		nd.b, nd.off = nb[:end], end-used
		return
	}
	start := 0
	if newCap == cap(nd.b) {
		start = (newCap - need) / 2
	}
	copy(nb[start:start+used], nd.b[nd.off:])
	nd.b, nd.off = nb[:start+used], start
}

func (nd *listNode) pushBack(v []byte, limit int) {
	size := entrySize(len(v))
	if cap(nd.b)-len(nd.b) < size {
		nd.room(size, false, limit)
	}
	end := len(nd.b)
	nd.b = nd.b[:end+size]
	putEntry(nd.b[end:], v)
	nd.n++
}

func (nd *listNode) pushFront(v []byte, limit int) {
	size := entrySize(len(v))
	if nd.off < size {
		nd.room(size, true, limit)
	}
	nd.off -= size
	putEntry(nd.b[nd.off:nd.off+size], v)
	nd.n++
}

func (nd *listNode) popFront() []byte {
	v, next := entryAt(nd.b, nd.off)
	nd.off = next
	nd.n--
	return v
}

func (nd *listNode) popBack() []byte {
	v, start := entryBefore(nd.b, len(nd.b))
	nd.b = nd.b[:start]
	nd.n--
	return v
}

// offsetOf returns where element k (0-based) of nd starts, walking from the nearer end.
func (nd *listNode) offsetOf(k int) int {
	if k <= nd.n/2 {
		p := nd.off
		for range k {
			_, p = entryAt(nd.b, p)
		}
		return p
	}
	p := len(nd.b)
	for range nd.n - k {
		_, p = entryBefore(nd.b, p)
	}
	return p
}

// splice replaces the del bytes at p with the encoded element v (nil: insert
// nothing), rewriting the node into a buffer of its new size.
func (nd *listNode) splice(p, del int, v []byte, add int) {
	size := nd.size() - del
	ins := 0
	if v != nil {
		ins = entrySize(len(v))
	}
	nb := make([]byte, size+ins)
	w := copy(nb, nd.b[nd.off:p])
	if v != nil {
		putEntry(nb[w:w+ins], v)
		w += ins
	}
	copy(nb[w:], nd.b[p+del:])
	nd.b, nd.off = nb, 0
	nd.n += add
}

// packed returns nd's bytes in a buffer of exactly their size.
func (nd *listNode) packed() *listNode {
	return &listNode{b: slices.Clone(nd.b[nd.off:]), n: nd.n}
}

// --- the node deque ---

func (l *list) first() *listNode { return l.nodes[l.head] }
func (l *list) last() *listNode  { return l.nodes[len(l.nodes)-1] }
func (l *list) nodeCount() int   { return len(l.nodes) - l.head }

func (l *list) addNodeBack(nd *listNode) {
	if len(l.nodes) == cap(l.nodes) && l.head > 0 && l.head >= l.nodeCount() {
		n := copy(l.nodes, l.nodes[l.head:])
		clear(l.nodes[n:])
		l.nodes, l.head = l.nodes[:n], 0
	}
	l.nodes = append(l.nodes, nd)
}

func (l *list) addNodeFront(nd *listNode) {
	if l.head == 0 {
		live := l.nodeCount()
		spare := max(live, 4)
		nn := make([]*listNode, spare+live, spare+live+max(live/2, 4))
		copy(nn[spare:], l.nodes)
		l.nodes, l.head = nn, spare
	}
	l.head--
	l.nodes[l.head] = nd
}

func (l *list) dropFirstNode() {
	l.nodes[l.head] = nil
	l.head++
	if l.head == len(l.nodes) {
		l.nodes, l.head = l.nodes[:0], 0
	}
}

func (l *list) dropLastNode() {
	l.nodes[len(l.nodes)-1] = nil
	l.nodes = l.nodes[:len(l.nodes)-1]
	if l.head == len(l.nodes) {
		l.nodes, l.head = l.nodes[:0], 0
	}
}

// --- ends ---

// PushBack appends v (copied).
func (l *list) PushBack(v []byte) {
	if l.nodeCount() == 0 || !l.fits(l.last(), entrySize(len(v))) {
		l.addNodeBack(&listNode{})
	}
	l.last().pushBack(v, l.maxNodeBytes())
	l.n++
	l.bytes += entrySize(len(v))
}

// PushFront prepends v (copied).
func (l *list) PushFront(v []byte) {
	if l.nodeCount() == 0 || !l.fits(l.first(), entrySize(len(v))) {
		l.addNodeFront(&listNode{})
	}
	l.first().pushFront(v, l.maxNodeBytes())
	l.n++
	l.bytes += entrySize(len(v))
}

// PopFront removes and returns the first element; the list must not be empty.
func (l *list) PopFront() []byte {
	nd := l.first()
	v := nd.popFront()
	if nd.n == 0 {
		l.dropFirstNode()
	}
	l.n--
	l.bytes -= entrySize(len(v))
	return v
}

// PopBack removes and returns the last element; the list must not be empty.
func (l *list) PopBack() []byte {
	nd := l.last()
	v := nd.popBack()
	if nd.n == 0 {
		l.dropLastNode()
	}
	l.n--
	l.bytes -= entrySize(len(v))
	return v
}

// --- positions ---

// locate finds element i (0 <= i < Len): its node's index in l.nodes, its index k
// within the node, walking the nodes from the nearer end.
func (l *list) locate(i int) (ni, k int) {
	if i < l.n/2 {
		ni = l.head
		for i >= l.nodes[ni].n {
			i -= l.nodes[ni].n
			ni++
		}
		return ni, i
	}
	j := l.n - 1 - i // counted from the back
	ni = len(l.nodes) - 1
	for j >= l.nodes[ni].n {
		j -= l.nodes[ni].n
		ni--
	}
	return ni, l.nodes[ni].n - 1 - j
}

// Index returns element i (0 <= i < Len).
func (l *list) Index(i int) []byte {
	ni, k := l.locate(i)
	nd := l.nodes[ni]
	v, _ := entryAt(nd.b, nd.offsetOf(k))
	return v
}

// Set replaces element i (0 <= i < Len) with v (copied).
func (l *list) Set(i int, v []byte) {
	ni, k := l.locate(i)
	nd := l.nodes[ni]
	p := nd.offsetOf(k)
	_, next := entryAt(nd.b, p)
	l.bytes += entrySize(len(v)) - (next - p)
	nd.splice(p, next-p, v, 0)
	l.resplit(ni)
}

// Insert puts v (copied) at index i (0 <= i <= Len): before the element now there.
func (l *list) Insert(i int, v []byte) {
	switch {
	case i == 0:
		l.PushFront(v)
		return
	case i == l.n:
		l.PushBack(v)
		return
	}
	ni, k := l.locate(i)
	nd := l.nodes[ni]
	nd.splice(nd.offsetOf(k), 0, v, 1)
	l.n++
	l.bytes += entrySize(len(v))
	l.resplit(ni)
}

// resplit splits node ni into nodes within the fill limit if it has outgrown it.
func (l *list) resplit(ni int) {
	nd := l.nodes[ni]
	if nd.n == 1 || (nd.size() <= l.maxNodeBytes() && (l.fill < 0 || nd.n <= l.fill)) {
		return
	}
	var parts []*listNode
	cur := &listNode{}
	for p := nd.off; p < len(nd.b); {
		v, next := entryAt(nd.b, p)
		if cur.n > 0 && !l.fits(cur, next-p) {
			parts = append(parts, cur.packed())
			cur = &listNode{}
		}
		cur.pushBack(v, l.maxNodeBytes())
		p = next
	}
	parts = append(parts, cur.packed())
	l.nodes = slices.Replace(l.nodes, ni, ni+1, parts...)
}

// --- walking ---

// Range calls fn with elements from..to-1 (0 <= from <= to <= Len) in order, until
// fn returns false.
func (l *list) Range(from, to int, fn func(v []byte) bool) {
	if from >= to {
		return
	}
	ni, k := l.locate(from)
	nd := l.nodes[ni]
	p := nd.offsetOf(k)
	for left := to - from; left > 0; left-- {
		for p == len(nd.b) {
			ni++
			nd = l.nodes[ni]
			p = nd.off
		}
		var v []byte
		v, p = entryAt(nd.b, p)
		if !fn(v) {
			return
		}
	}
}

// RangeBack calls fn with the elements from the last to the first, with their
// indexes, until fn returns false.
func (l *list) RangeBack(fn func(i int, v []byte) bool) {
	i := l.n - 1
	for ni := len(l.nodes) - 1; ni >= l.head; ni-- {
		nd := l.nodes[ni]
		for p := len(nd.b); p > nd.off; i-- {
			var v []byte
			v, p = entryBefore(nd.b, p)
			if !fn(i, v) {
				return
			}
		}
	}
}

// --- removing in bulk ---

// TrimFront removes the first n elements (n <= Len).
func (l *list) TrimFront(n int) {
	for n > 0 {
		nd := l.first()
		if nd.n <= n {
			n -= nd.n
			l.n -= nd.n
			l.bytes -= nd.size()
			l.dropFirstNode()
			continue
		}
		for ; n > 0; n-- {
			l.PopFront()
		}
	}
}

// TrimBack removes the last n elements (n <= Len).
func (l *list) TrimBack(n int) {
	for n > 0 {
		nd := l.last()
		if nd.n <= n {
			n -= nd.n
			l.n -= nd.n
			l.bytes -= nd.size()
			l.dropLastNode()
			continue
		}
		for ; n > 0; n-- {
			l.PopBack()
		}
	}
}

// Remove deletes up to limit elements equal to v (limit 0: all), scanning from the
// head, or from the tail when fromTail, and returns how many went.
func (l *list) Remove(v []byte, limit int, fromTail bool) int {
	removed := 0
	want := func() int {
		if limit == 0 {
			return -1
		}
		return limit - removed
	}
	if !fromTail {
		for ni := l.head; ni < len(l.nodes) && want() != 0; ni++ {
			removed += l.removeIn(l.nodes[ni], v, want(), false)
		}
	} else {
		for ni := len(l.nodes) - 1; ni >= l.head && want() != 0; ni-- {
			removed += l.removeIn(l.nodes[ni], v, want(), true)
		}
	}
	if removed > 0 {
		l.n -= removed
		l.dropEmptyNodes()
	}
	return removed
}

// removeIn is removeMatches on node nd of l, keeping l.bytes.
func (l *list) removeIn(nd *listNode, v []byte, want int, fromBack bool) int {
	before := nd.size()
	n := nd.removeMatches(v, want, fromBack)
	l.bytes -= before - nd.size()
	return n
}

// memUsage is what Redis would allocate for the list (memory.go): a quicklist
// whose nodes hold listpacks of the same elements. O(1).
func (l *list) memUsage(*EncodingLimits) int64 {
	nodes := int64(l.nodeCount())
	return robjBytes + 48 + nodes*(32+listpackOverhead) + int64(l.bytes)
}

// removeMatches deletes up to want elements equal to v (want < 0: all) from the
// front of the node, or from its back when fromBack, in one rewrite of the node.
func (nd *listNode) removeMatches(v []byte, want int, fromBack bool) int {
	matches := 0
	for p := nd.off; p < len(nd.b); {
		var e []byte
		e, p = entryAt(nd.b, p)
		if string(e) == string(v) {
			matches++
		}
	}
	if matches == 0 {
		return 0
	}
	drop := matches
	if want >= 0 {
		drop = min(matches, want)
	}
	skip := 0 // matches kept before the dropped ones
	if fromBack {
		skip = matches - drop
	}
	nb := make([]byte, 0, nd.size())
	seen := 0
	for p := nd.off; p < len(nd.b); {
		start := p
		var e []byte
		e, p = entryAt(nd.b, p)
		if string(e) == string(v) {
			seen++
			if seen > skip && seen <= skip+drop {
				continue
			}
		}
		nb = append(nb, nd.b[start:p]...)
	}
	nd.b, nd.off = nb[:len(nb):len(nb)], 0
	nd.n -= drop
	return drop
}

// dropEmptyNodes removes the nodes left empty by Remove.
func (l *list) dropEmptyNodes() {
	live := l.nodes[:l.head]
	for _, nd := range l.nodes[l.head:] {
		if nd.n > 0 {
			live = append(live, nd)
		}
	}
	clear(l.nodes[len(live):])
	l.nodes = live
	if l.head == len(l.nodes) {
		l.nodes, l.head = l.nodes[:0], 0
	}
}

// copyValue returns a deep copy (COPY), its nodes packed tight.
func (l *list) copyValue() any {
	c := &list{n: l.n, fill: l.fill, bytes: l.bytes, nodes: make([]*listNode, 0, l.nodeCount())}
	for _, nd := range l.nodes[l.head:] {
		c.nodes = append(c.nodes, nd.packed())
	}
	return c
}

// appendRewrite encodes the elements [from, to) as RPUSH commands of up to
// rpushBatch elements each (Redis batches 64 per command too): a list is
// sliceable, so the AOF rewrite captures a big one a slice per step.
// sliceLen is the number of positions the AOF rewrite slices (elements).
func (l *list) sliceLen() int { return l.n }

func (l *list) appendRewrite(b []byte, key string, from, to int) []byte {
	const rpushBatch = 64
	i := from
	l.Range(from, to, func(v []byte) bool {
		if (i-from)%rpushBatch == 0 {
			b = redcon.AppendArray(b, 2+min(rpushBatch, to-i))
			b = redcon.AppendBulkString(b, "RPUSH")
			b = redcon.AppendBulkString(b, key)
		}
		b = redcon.AppendBulk(b, v)
		i++
		return true
	})
	return b
}

// sortElements gives SORT the elements, head to tail, copied (SORT on main takes
// a list through this method: its sortableList).
func (l *list) sortElements() [][]byte {
	out := make([][]byte, 0, l.n)
	l.Range(0, l.n, func(v []byte) bool {
		out = append(out, slices.Clone(v))
		return true
	})
	return out
}

// listFromElems builds the list SORT ... STORE writes, with the server's
// list-max-listpack-size.
func listFromElems(s *Server, elems [][]byte) any {
	l := newList(int(s.cfg.Enc.ListSize))
	for _, e := range elems {
		l.PushBack(e)
	}
	return l
}
