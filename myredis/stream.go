package myredis

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/btree"
)

// stream is the stream type, laid out as Redis 7.0 lays it out: the entries sit
// in nodes of at most stream-node-max-entries entries and stream-node-max-bytes
// bytes, each node one listpack in Redis's own stream format, and the nodes sit in
// a B-tree ordered by their master ID (the ID of the node's first entry). So XRANGE
// from an ID is a tree seek plus a walk of one node (O(log n)); approximate
// trimming (MAXLEN ~, MINID ~) removes whole nodes exactly where Redis does; a node
// is written to an RDB file or a DUMP payload byte for byte; and memory is what a
// listpack costs, a few bytes of overhead per entry.
//
// A node's listpack holds a master entry then the entries:
//
//	count | deleted | num-fields | field-1 ... field-N | 0
//	flags | ms-diff | seq-diff | [num-fields | field-1 | value-1 ... | value-N] lp-count
//
// where the fields are left out (and the flags say SAMEFIELDS) when an entry has
// the master entry's fields. XDEL only flags an entry deleted (a tombstone); a node
// goes when its last live entry does. Every method runs on the executor goroutine.
type stream struct {
	nodes        *btree.BTreeG[*streamNode]
	length       uint64
	lastID       streamID // the last ID ever added (or set by XSETID)
	firstID      streamID // the first live entry's ID, 0-0 when empty
	maxDeletedID streamID // the greatest ID deleted by XDEL
	entriesAdded uint64
	groups       map[string]*streamGroup // consumer groups, nil until the first
}

// streamNode is one listpack of entries; master is its first entry's ID.
type streamNode struct {
	master streamID
	lp     []byte
}

// Entry flags, as Redis's STREAM_ITEM_FLAG_*.
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

// streamListpackMax is the largest listpack Redis builds (STREAM_LISTPACK_MAX_SIZE).
const streamListpackMax = 1 << 30

func newStream() *stream {
	return &stream{nodes: newStreamNodes()}
}

func newStreamNodes() *btree.BTreeG[*streamNode] {
	return btree.NewBTreeGOptions(func(a, b *streamNode) bool { return a.master.less(b.master) },
		btree.Options{NoLocks: true})
}

func (s *stream) typeName() string { return "stream" }

func (s *stream) objectEncoding(*EncodingLimits) string { return "stream" }

// ---- IDs ----

// streamID is an entry ID: milliseconds and a sequence number.
type streamID struct{ ms, seq uint64 }

var maxStreamID = streamID{^uint64(0), ^uint64(0)}

func (a streamID) less(b streamID) bool {
	return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq)
}

func (a streamID) cmp(b streamID) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

func (a streamID) isZero() bool { return a.ms == 0 && a.seq == 0 }

// incr is the next ID; false (and 0-0) past the last possible one.
func (a streamID) incr() (streamID, bool) {
	switch {
	case a.seq != ^uint64(0):
		a.seq++
	case a.ms != ^uint64(0):
		a.ms, a.seq = a.ms+1, 0
	default:
		return streamID{}, false
	}
	return a, true
}

// decr is the previous ID; false (and the maximum) before 0-0.
func (a streamID) decr() (streamID, bool) {
	switch {
	case a.seq != 0:
		a.seq--
	case a.ms != 0:
		a.ms, a.seq = a.ms-1, ^uint64(0)
	default:
		return maxStreamID, false
	}
	return a, true
}

func (a streamID) appendTo(b []byte) []byte {
	b = strconv.AppendUint(b, a.ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.seq, 10)
}

func (a streamID) String() string { return string(a.appendTo(nil)) }

func (a streamID) bytes() []byte { return a.appendTo(make([]byte, 0, 24)) }

// parseStreamID reads an ID as Redis's streamGenericParseIDOrReply: "-" and "+"
// (unless strict), "<ms>-<seq>", "<ms>" (seq is missingSeq) and, when autoSeq,
// "<ms>-*" (seqGiven false). Numbers are read as string2ull reads them.
func parseStreamID(b []byte, missingSeq uint64, strict, autoSeq bool) (id streamID, seqGiven, ok bool) {
	if len(b) > 127 {
		return id, false, false
	}
	b = []byte(cstring(b))
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return id, false, false
		}
		if b[0] == '+' {
			return maxStreamID, true, true
		}
		return id, true, true
	}
	msPart, seqPart, dash := b, []byte(nil), false
	for i, c := range b {
		if c == '-' {
			msPart, seqPart, dash = b[:i], b[i+1:], true
			break
		}
	}
	if id.ms, ok = string2ull(msPart); !ok {
		return id, false, false
	}
	seqGiven = true
	switch {
	case !dash:
		id.seq = missingSeq
	case autoSeq && len(seqPart) == 1 && seqPart[0] == '*':
		seqGiven = false
	default:
		if id.seq, ok = string2ull(seqPart); !ok {
			return id, false, false
		}
	}
	return id, seqGiven, true
}

// string2ull is Redis's: a canonical integer (string2ll) that is not negative,
// else whatever C's strtoull reads in full (spaces, '+', leading zeros, and a
// '-' that wraps around).
func string2ull(b []byte) (uint64, bool) {
	if v, ok := parseRedisInt(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:]), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// ---- listpack elements ----

// lpVal is one listpack element: a string (aliasing the listpack) or an integer.
type lpVal struct {
	s     []byte
	v     int64
	isInt bool
}

// text is the element as bytes: s, or the integer in decimal (into buf).
func (e lpVal) text(buf []byte) []byte {
	if e.isInt {
		return strconv.AppendInt(buf[:0], e.v, 10)
	}
	return e.s
}

// lpAt decodes the element at p and returns the position of the next one; ok
// is false when the element does not fit in lp (a corrupt payload).
func lpAt(lp []byte, p int) (e lpVal, next int, ok bool) {
	if p < 0 || p >= len(lp)-1 {
		return e, 0, false
	}
	c := lp[p]
	size := 0
	signed := func(u uint64, bits uint) int64 { return int64(u<<(64-bits)) >> (64 - bits) }
	need := func(n int) bool { return p+n <= len(lp)-1 }
	switch {
	case c&0x80 == 0:
		e, size = lpVal{v: int64(c), isInt: true}, 1
	case c&0xc0 == 0x80:
		size = 1 + int(c&0x3f)
		if !need(size) {
			return e, 0, false
		}
		e.s = lp[p+1 : p+size]
	case c&0xe0 == 0xc0:
		if !need(2) {
			return e, 0, false
		}
		e, size = lpVal{v: signed(uint64(c&0x1f)<<8|uint64(lp[p+1]), 13), isInt: true}, 2
	case c&0xf0 == 0xe0:
		if !need(2) {
			return e, 0, false
		}
		size = 2 + (int(c&0x0f)<<8 | int(lp[p+1]))
		if !need(size) {
			return e, 0, false
		}
		e.s = lp[p+2 : p+size]
	case c == 0xf0:
		if !need(5) {
			return e, 0, false
		}
		n := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
		if n > uint64(len(lp)) || !need(5+int(n)) {
			return e, 0, false
		}
		size = 5 + int(n)
		e.s = lp[p+5 : p+size]
	case c >= 0xf1 && c <= 0xf4:
		width := [...]int{2, 3, 4, 8}[c-0xf1]
		if !need(1 + width) {
			return e, 0, false
		}
		var u uint64
		for i := width; i >= 1; i-- {
			u = u<<8 | uint64(lp[p+i])
		}
		e, size = lpVal{v: signed(u, uint(width*8)), isInt: true}, 1+width
	default:
		return e, 0, false
	}
	bl := lpBacklenSize(uint64(size))
	if p+size+bl > len(lp)-1 {
		return e, 0, false
	}
	return e, p + size + bl, true
}

// lpAppendValue appends b as lpAppend does: an integer encoding when b is one.
func lpAppendValue(lp []byte, b []byte) []byte {
	if v, ok := parseRedisInt(b); ok {
		return lpAppendInt(lp, v)
	}
	at := len(lp)
	lp = appendLPString(lp, b)
	return appendLPBacklen(lp, uint64(len(lp)-at))
}

func lpAppendInt(lp []byte, v int64) []byte {
	at := len(lp)
	lp = appendLPInt(lp, v)
	return appendLPBacklen(lp, uint64(len(lp)-at))
}

// lpValueSize is the bytes lpAppendValue would add for b.
func lpValueSize(b []byte) int {
	var tmp [16]byte
	var n int
	if v, ok := parseRedisInt(b); ok {
		n = len(appendLPInt(tmp[:0], v))
	} else {
		n = len(appendLPString(tmp[:0], nil)) + len(b)
	}
	return n + lpBacklenSize(uint64(n))
}

// lpEmpty is an empty listpack: its header and terminator.
func lpEmpty() []byte { return []byte{7, 0, 0, 0, 0, 0, 0xff} }

// lpFinish writes lp's header after elements were added before its terminator.
func lpFinish(lp []byte, added int) []byte {
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if n := binary.LittleEndian.Uint16(lp[4:]); n != 0xffff {
		binary.LittleEndian.PutUint16(lp[4:], uint16(min(int(n)+added, 0xffff)))
	}
	return lp
}

// lpReplaceInt puts integer v in place of the element at p.
func lpReplaceInt(lp []byte, p int, v int64) []byte {
	_, next, _ := lpAt(lp, p)
	enc := lpAppendInt(make([]byte, 0, 16), v)
	if len(enc) == next-p {
		copy(lp[p:], enc)
		return lp
	}
	out := make([]byte, 0, len(lp)-(next-p)+len(enc))
	out = append(append(append(out, lp[:p]...), enc...), lp[next:]...)
	return lpFinish(out, 0)
}

// ---- node layout ----

// nodeHead is a node's master entry.
type nodeHead struct {
	count, deleted int64
	fields         []int // positions of the master fields
	entries        int   // position of the first entry's flags
}

// nodeEntry is one entry of a node, tombstones included.
type nodeEntry struct {
	id      streamID
	flags   int64
	at      int // position of its flags
	body    int // position of its first field (or value, SAMEFIELDS)
	nfields int
	next    int // position after its lp-count
}

func (e *nodeEntry) deleted() bool { return e.flags&streamFlagDeleted != 0 }

// lpInt decodes the integer at p (ok false when it is not one).
func lpInt(lp []byte, p int) (int64, int, bool) {
	e, next, ok := lpAt(lp, p)
	return e.v, next, ok && e.isInt
}

// head decodes the master entry.
func (n *streamNode) head() (h nodeHead, ok bool) {
	lp := n.lp
	p := 6
	var nf int64
	if h.count, p, ok = lpInt(lp, p); !ok {
		return h, false
	}
	if h.deleted, p, ok = lpInt(lp, p); !ok {
		return h, false
	}
	if nf, p, ok = lpInt(lp, p); !ok || nf < 0 || nf > int64(len(lp)) {
		return h, false
	}
	h.fields = make([]int, nf)
	for i := range h.fields {
		h.fields[i] = p
		if _, p, ok = lpAt(lp, p); !ok {
			return h, false
		}
	}
	var zero int64
	if zero, p, ok = lpInt(lp, p); !ok || zero != 0 {
		return h, false
	}
	h.entries = p
	return h, true
}

// entryAt decodes the entry whose flags are at p.
func (n *streamNode) entryAt(h *nodeHead, p int) (e nodeEntry, ok bool) {
	lp := n.lp
	e.at = p
	var msd, seqd, nf int64
	if e.flags, p, ok = lpInt(lp, p); !ok {
		return e, false
	}
	if msd, p, ok = lpInt(lp, p); !ok {
		return e, false
	}
	if seqd, p, ok = lpInt(lp, p); !ok {
		return e, false
	}
	e.id = streamID{n.master.ms + uint64(msd), n.master.seq + uint64(seqd)}
	elems := 0
	if e.flags&streamFlagSameFields != 0 {
		e.nfields = len(h.fields)
		elems = e.nfields
	} else {
		if nf, p, ok = lpInt(lp, p); !ok || nf < 0 || nf > int64(len(lp)) {
			return e, false
		}
		e.nfields = int(nf)
		elems = 2 * e.nfields
	}
	e.body = p
	for range elems {
		if _, p, ok = lpAt(lp, p); !ok {
			return e, false
		}
	}
	if _, p, ok = lpInt(lp, p); !ok { // lp-count
		return e, false
	}
	e.next = p
	return e, true
}

// end reports whether p is the node's terminator.
func (n *streamNode) end(p int) bool { return p >= len(n.lp)-1 }

// each calls fn for every entry of the node, tombstones included, in order.
func (n *streamNode) each(fn func(h *nodeHead, e *nodeEntry) bool) {
	h, ok := n.head()
	if !ok {
		return
	}
	for p := h.entries; !n.end(p); {
		e, ok := n.entryAt(&h, p)
		if !ok || !fn(&h, &e) {
			return
		}
		p = e.next
	}
}

// fieldValues appends the entry's fields and values (field, value, ...) to dst.
// Strings alias the listpack; integers are written out in decimal.
func (n *streamNode) fieldValues(h *nodeHead, e *nodeEntry, dst [][]byte) [][]byte {
	lp := n.lp
	p := e.body
	var v lpVal
	for i := range e.nfields {
		var f lpVal
		if e.flags&streamFlagSameFields != 0 {
			f, _, _ = lpAt(lp, h.fields[i])
		} else {
			f, p, _ = lpAt(lp, p)
		}
		v, p, _ = lpAt(lp, p)
		dst = append(dst, f.text(nil), v.text(nil))
	}
	return dst
}

// newStreamNodeLP builds a node listpack whose master entry has fv's fields.
func newStreamNodeLP(fv [][]byte) []byte {
	lp := lpEmpty()
	lp = lp[:len(lp)-1]
	lp = lpAppendInt(lp, 0) // count, set by the first append
	lp = lpAppendInt(lp, 0)
	lp = lpAppendInt(lp, int64(len(fv)/2))
	for i := 0; i < len(fv); i += 2 {
		lp = lpAppendValue(lp, fv[i])
	}
	lp = lpAppendInt(lp, 0)
	lp = append(lp, 0xff)
	return lpFinish(lp, 4+len(fv)/2)
}

// sameFields reports whether fv has exactly the master entry's fields, in order.
func (n *streamNode) sameFields(h *nodeHead, fv [][]byte) bool {
	if len(fv)/2 != len(h.fields) {
		return false
	}
	var buf [24]byte
	for i, p := range h.fields {
		f, _, _ := lpAt(n.lp, p)
		if string(f.text(buf[:0])) != string(fv[2*i]) {
			return false
		}
	}
	return true
}

// appendEntry adds an entry to the node and counts it in the master entry.
func (n *streamNode) appendEntry(h *nodeHead, id streamID, fv [][]byte) {
	flags := int64(0)
	same := n.sameFields(h, fv)
	if same {
		flags = streamFlagSameFields
	}
	lp := n.lp[:len(n.lp)-1]
	elems := 4
	lp = lpAppendInt(lp, flags)
	lp = lpAppendInt(lp, int64(id.ms-n.master.ms))
	lp = lpAppendInt(lp, int64(id.seq-n.master.seq))
	if !same {
		lp = lpAppendInt(lp, int64(len(fv)/2))
		elems++
	}
	for i := 0; i < len(fv); i += 2 {
		if !same {
			lp = lpAppendValue(lp, fv[i])
			elems++
		}
		lp = lpAppendValue(lp, fv[i+1])
		elems++
	}
	lpCount := int64(len(fv) / 2)
	lpCount += 3
	if !same {
		lpCount += int64(len(fv)/2) + 1
	}
	lp = lpAppendInt(lp, lpCount)
	lp = append(lp, 0xff)
	n.lp = lpFinish(lp, elems)
	n.setCounts(h.count+1, h.deleted)
}

// setCounts rewrites the master entry's live and deleted counts.
func (n *streamNode) setCounts(count, deleted int64) {
	n.lp = lpReplaceInt(n.lp, 6, count)
	_, p, _ := lpAt(n.lp, 6)
	n.lp = lpReplaceInt(n.lp, p, deleted)
}

// markDeleted flags the entry at e as deleted; the caller fixes the counts.
func (n *streamNode) markDeleted(e *nodeEntry) {
	n.lp = lpReplaceInt(n.lp, e.at, e.flags|streamFlagDeleted)
}

// ---- the stream ----

// Len is the number of live entries.
func (s *stream) Len() int { return int(s.length) }

// nextID is the ID XADD * gives at unix ms now.
func (s *stream) nextID(now uint64) streamID {
	if now > s.lastID.ms {
		return streamID{now, 0}
	}
	id, _ := s.lastID.incr()
	return id
}

// add appends an entry with an ID greater than lastID (the caller checked).
// maxBytes and maxEntries are stream-node-max-bytes and -entries.
func (s *stream) add(id streamID, fv [][]byte, maxBytes, maxEntries int64) {
	total := 0
	for _, b := range fv {
		total += len(b)
	}
	tail, ok := s.nodes.Max()
	if ok {
		if maxBytes <= 0 || maxBytes > streamListpackMax {
			maxBytes = streamListpackMax
		}
		h, _ := tail.head()
		if int64(len(tail.lp)+total) >= maxBytes ||
			(maxEntries > 0 && h.count+h.deleted >= maxEntries) {
			ok = false
		} else {
			tail.appendEntry(&h, id, fv)
		}
	}
	if !ok {
		n := &streamNode{master: id, lp: newStreamNodeLP(fv)}
		h, _ := n.head()
		n.appendEntry(&h, id, fv)
		s.nodes.Set(n)
	}
	s.length++
	s.entriesAdded++
	s.lastID = id
	if s.length == 1 {
		s.firstID = id
	}
}

// nodeFor is the node that would hold id: the last one whose master is <= id.
func (s *stream) nodeFor(id streamID) *streamNode {
	var found *streamNode
	s.nodes.Descend(&streamNode{master: id}, func(n *streamNode) bool {
		found = n
		return false
	})
	return found
}

// scan calls fn for the live entries from start to end (inclusive), in order or
// (rev) in reverse, until fn returns false. fv is valid only during the call.
func (s *stream) scan(start, end streamID, rev bool, fn func(id streamID, fv [][]byte) bool) {
	s.scanEntries(start, end, rev, false, func(n *streamNode, h *nodeHead, e *nodeEntry) bool {
		return fn(e.id, n.fieldValues(h, e, nil))
	})
}

// scanEntries walks the entries from start to end, tombstones too if asked.
func (s *stream) scanEntries(start, end streamID, rev, tombstones bool,
	fn func(n *streamNode, h *nodeHead, e *nodeEntry) bool) {
	if end.less(start) {
		return
	}
	if !rev {
		pivot := &streamNode{master: start}
		if first := s.nodeFor(start); first != nil {
			pivot = first
		}
		s.nodes.Ascend(pivot, func(n *streamNode) bool {
			more := true
			n.each(func(h *nodeHead, e *nodeEntry) bool {
				if e.id.less(start) || (e.deleted() && !tombstones) {
					return true
				}
				if end.less(e.id) {
					more = false
					return false
				}
				more = fn(n, h, e)
				return more
			})
			return more
		})
		return
	}
	s.nodes.Descend(&streamNode{master: end}, func(n *streamNode) bool {
		var all []nodeEntry
		var head nodeHead
		n.each(func(h *nodeHead, e *nodeEntry) bool {
			head = *h
			all = append(all, *e)
			return true
		})
		for i := len(all) - 1; i >= 0; i-- {
			e := &all[i]
			if end.less(e.id) || (e.deleted() && !tombstones) {
				continue
			}
			if e.id.less(start) {
				return false
			}
			if !fn(n, &head, e) {
				return false
			}
		}
		return true
	})
}

// has reports whether a live entry has ID id.
func (s *stream) has(id streamID) bool {
	found := false
	s.scanEntries(id, id, false, false, func(*streamNode, *nodeHead, *nodeEntry) bool {
		found = true
		return false
	})
	return found
}

// get returns the fields and values of entry id (ok false when absent).
func (s *stream) get(id streamID) (fv [][]byte, ok bool) {
	s.scan(id, id, false, func(_ streamID, f [][]byte) bool {
		fv, ok = f, true
		return false
	})
	return fv, ok
}

// edge is the first (or last) entry's ID, tombstones skipped unless asked; the
// maximum ID (first) or 0-0 (last) when there is none, as streamGetEdgeID.
func (s *stream) edge(first, tombstones bool) streamID {
	id, found := streamID{}, false
	s.scanEntries(streamID{}, maxStreamID, !first, tombstones, func(_ *streamNode, _ *nodeHead, e *nodeEntry) bool {
		id, found = e.id, true
		return false
	})
	if !found && first {
		return maxStreamID
	}
	return id
}

// lastValid is the last live entry's ID (0-0 when empty).
func (s *stream) lastValid() streamID { return s.edge(false, false) }

// remove deletes entry id (XDEL) and reports whether it was there. The caller
// keeps firstID and maxDeletedID.
func (s *stream) remove(id streamID) bool {
	n := s.nodeFor(id)
	if n == nil {
		return false
	}
	var hit nodeEntry
	var head nodeHead
	found := false
	n.each(func(h *nodeHead, e *nodeEntry) bool {
		if e.id == id {
			found, hit, head = !e.deleted(), *e, *h
			return false
		}
		return !id.less(e.id)
	})
	if !found {
		return false
	}
	if head.count == 1 {
		s.nodes.Delete(n)
	} else {
		n.markDeleted(&hit)
		n.setCounts(head.count-1, head.deleted+1)
	}
	s.length--
	return true
}

// trimArgs are XADD's and XTRIM's trimming options.
type trimArgs struct {
	strategy int // trimNone, trimMaxlen, trimMinID
	approx   bool
	limit    int64 // 0: none
	maxlen   int64
	minID    streamID
	argAt    int // the index of the MAXLEN/MINID value in the command (AOF rewrite)
}

const (
	trimNone = iota
	trimMaxlen
	trimMinID
)

// trim removes entries from the head as Redis's streamTrim does (whole nodes;
// entries of the first remaining node only when not approximate) and returns
// how many went.
func (s *stream) trim(a *trimArgs) int64 {
	if a.strategy == trimNone {
		return 0
	}
	var deleted int64
	for {
		n, ok := s.nodes.Min()
		if !ok {
			break
		}
		if a.strategy == trimMaxlen && int64(s.length) <= a.maxlen {
			break
		}
		h, _ := n.head()
		entries := h.count
		if a.limit > 0 && deleted+entries > a.limit {
			break
		}
		var removeNode bool
		if a.strategy == trimMaxlen {
			removeNode = int64(s.length)-entries >= a.maxlen
		} else {
			removeNode = s.nodeLastID(n, &h).less(a.minID)
		}
		if removeNode {
			s.nodes.Delete(n)
			s.length -= uint64(entries)
			deleted += entries
			continue
		}
		if a.approx {
			break
		}
		var fromNode int64
		n.each(func(h *nodeHead, e *nodeEntry) bool {
			stop := false
			if a.strategy == trimMaxlen {
				stop = int64(s.length) <= a.maxlen
			} else {
				stop = !e.id.less(a.minID)
			}
			if stop {
				return false
			}
			if !e.deleted() {
				n.markDeleted(e)
				fromNode++
				s.length--
			}
			return true
		})
		deleted += fromNode
		n.setCounts(entries-fromNode, h.deleted+fromNode)
		break
	}
	if s.length == 0 {
		s.firstID = streamID{}
	} else if deleted > 0 {
		s.firstID = s.edge(true, false)
	}
	return deleted
}

// nodeLastID is the ID of the node's last entry, tombstone or not.
func (s *stream) nodeLastID(n *streamNode, h *nodeHead) streamID {
	last := n.master
	n.each(func(_ *nodeHead, e *nodeEntry) bool {
		last = e.id
		return true
	})
	return last
}

// rangeHasTombstones reports whether an XDEL left a hole between start and end
// (as streamRangeHasTombstones).
func (s *stream) rangeHasTombstones(start, end streamID) bool {
	if s.length == 0 || s.maxDeletedID.isZero() {
		return false
	}
	if s.maxDeletedID.less(s.firstID) {
		return false
	}
	return !s.maxDeletedID.less(start) && !end.less(s.maxDeletedID)
}

// estimateEntriesRead is the logical read counter of id, or -1 when it cannot
// be known (streamEstimateDistanceFromFirstEverEntry).
func (s *stream) estimateEntriesRead(id streamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && !s.lastID.less(id) {
		return int64(s.entriesAdded)
	}
	switch id.cmp(s.lastID) {
	case 0:
		return int64(s.entriesAdded)
	case 1:
		return -1
	}
	if s.maxDeletedID.isZero() || s.maxDeletedID.less(s.firstID) {
		switch id.cmp(s.firstID) {
		case -1:
			return int64(s.entriesAdded - s.length)
		case 0:
			return int64(s.entriesAdded-s.length) + 1
		}
	}
	return -1
}

// lag is a group's lag (ok false: unknown, a null in XINFO).
func (s *stream) lag(g *streamGroup) (int64, bool) {
	if s.entriesAdded == 0 {
		return 0, true
	}
	if g.entriesRead != -1 && !s.rangeHasTombstones(g.lastID, maxStreamID) {
		return int64(s.entriesAdded) - g.entriesRead, true
	}
	if read := s.estimateEntriesRead(g.lastID); read != -1 {
		return int64(s.entriesAdded) - read, true
	}
	return 0, false
}

// nodeCount is the number of nodes (XINFO's radix-tree-keys).
func (s *stream) nodeCount() int { return s.nodes.Len() }

// copyValue is COPY's deep copy.
func (s *stream) copyValue() any {
	c := &stream{nodes: newStreamNodes(), length: s.length, lastID: s.lastID, firstID: s.firstID,
		maxDeletedID: s.maxDeletedID, entriesAdded: s.entriesAdded}
	s.nodes.Scan(func(n *streamNode) bool {
		c.nodes.Set(&streamNode{master: n.master, lp: append([]byte(nil), n.lp...)})
		return true
	})
	for _, g := range s.sortedGroups() {
		cg := c.createGroup(g.name, g.lastID, g.entriesRead)
		for _, name := range g.consumerNames() {
			oc := g.consumers[name]
			cc := cg.createConsumer(name, oc.seenTime)
			oc.pel.Scan(func(p *pendingEntry) bool {
				np := &pendingEntry{id: p.id, deliveryTime: p.deliveryTime, deliveryCount: p.deliveryCount, consumer: cc}
				cg.pel.Set(np)
				cc.pel.Set(np)
				return true
			})
		}
	}
	return c
}

// ---- consumer groups ----

// streamGroup is a consumer group: the last delivered ID, its read counter
// (-1: unknown), the pending entries list and the consumers.
type streamGroup struct {
	name        string
	lastID      streamID
	entriesRead int64
	pel         *btree.BTreeG[*pendingEntry]
	consumers   map[string]*streamConsumer
}

// streamConsumer is one consumer of a group and its own pending entries.
type streamConsumer struct {
	name     string
	seenTime int64
	pel      *btree.BTreeG[*pendingEntry]
}

// pendingEntry is a delivered, not yet acknowledged entry (a NACK); the group's
// PEL and its consumer's share it.
type pendingEntry struct {
	id            streamID
	deliveryTime  int64
	deliveryCount uint64
	consumer      *streamConsumer
}

func newPEL() *btree.BTreeG[*pendingEntry] {
	return btree.NewBTreeGOptions(func(a, b *pendingEntry) bool { return a.id.less(b.id) },
		btree.Options{NoLocks: true})
}

// group finds a consumer group (nil when absent).
func (s *stream) group(name string) *streamGroup { return s.groups[name] }

// createGroup adds a group; nil when the name is taken.
func (s *stream) createGroup(name string, last streamID, entriesRead int64) *streamGroup {
	if s.groups == nil {
		s.groups = make(map[string]*streamGroup)
	}
	if s.groups[name] != nil {
		return nil
	}
	g := &streamGroup{name: name, lastID: last, entriesRead: entriesRead, pel: newPEL(),
		consumers: make(map[string]*streamConsumer)}
	s.groups[name] = g
	return g
}

// sortedGroups are the groups in name order (Redis keeps them in a radix tree).
func (s *stream) sortedGroups() []*streamGroup {
	names := make([]string, 0, len(s.groups))
	for name := range s.groups {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]*streamGroup, len(names))
	for i, name := range names {
		out[i] = s.groups[name]
	}
	return out
}

func (g *streamGroup) consumerNames() []string {
	names := make([]string, 0, len(g.consumers))
	for name := range g.consumers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// createConsumer adds a consumer; nil when the name is taken.
func (g *streamGroup) createConsumer(name string, now int64) *streamConsumer {
	if g.consumers[name] != nil {
		return nil
	}
	c := &streamConsumer{name: name, seenTime: now, pel: newPEL()}
	g.consumers[name] = c
	return c
}

// deleteConsumer drops a consumer and its pending entries.
func (g *streamGroup) deleteConsumer(c *streamConsumer) {
	c.pel.Scan(func(p *pendingEntry) bool {
		g.pel.Delete(p)
		return true
	})
	delete(g.consumers, c.name)
}

// pending finds id in the group's PEL.
func (g *streamGroup) pending(id streamID) *pendingEntry {
	p, _ := g.pel.Get(&pendingEntry{id: id})
	return p
}

// ack removes a pending entry from the group and its consumer.
func (g *streamGroup) ack(p *pendingEntry) {
	g.pel.Delete(p)
	if p.consumer != nil {
		p.consumer.pel.Delete(p)
	}
}

// validateStreamNode checks a node listpack read from outside (an RDB file, a
// DUMP payload) completely, so that no later walk can run off it: the listpack
// header, the master entry, every entry's shape and lp-count, IDs ascending from
// master, and the master counts.
func validateStreamNode(lp []byte, master streamID) error {
	bad := func(what string) error { return fmt.Errorf("stream node: %s", what) }
	if len(lp) < 7 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return bad("listpack header")
	}
	n := &streamNode{master: master, lp: lp}
	h, ok := n.head()
	if !ok || h.count < 0 || h.deleted < 0 {
		return bad("master entry")
	}
	elems := 4 + len(h.fields)
	var count, deleted int64
	prev := streamID{}
	first := true
	for p := h.entries; !n.end(p); {
		e, ok := n.entryAt(&h, p)
		if !ok || e.flags&^(streamFlagDeleted|streamFlagSameFields) != 0 {
			return bad("entry")
		}
		if e.id.less(master) || (!first && !prev.less(e.id)) {
			return bad("entry IDs out of order")
		}
		first, prev = false, e.id
		want := int64(e.nfields + 3)
		parts := 4 + e.nfields
		if e.flags&streamFlagSameFields == 0 {
			want += int64(e.nfields) + 1
			parts += e.nfields + 1
		}
		// lp-count: the last element before next
		if lpCount, _, ok := lpInt(lp, lastElem(lp, e.at, e.next)); !ok || lpCount != want {
			return bad("lp-count")
		}
		elems += parts
		if e.deleted() {
			deleted++
		} else {
			count++
		}
		p = e.next
	}
	if count != h.count || deleted != h.deleted {
		return bad("master counts")
	}
	if c := binary.LittleEndian.Uint16(lp[4:]); c != 0xffff && int(c) != elems {
		return bad("element count")
	}
	return nil
}

// lastElem is the position of the last element in lp[from:to).
func lastElem(lp []byte, from, to int) int {
	last := from
	for p := from; p < to; {
		last = p
		_, p, _ = lpAt(lp, p)
		if p == 0 {
			return from
		}
	}
	return last
}

// ---- AOF rewrite ----

// sliceLen makes a stream one slice for the AOF rewrite (aof_rewrite.go): it is
// encoded whole, in one executor job.
func (s *stream) sliceLen() int { return 1 }

// appendRewrite encodes the stream as Redis's rewriteStreamObject does: an XADD
// per entry (an empty stream as XADD MAXLEN 0 0-1 x y), XSETID with the last ID
// and counters, then per group XGROUP CREATE ... ENTRIESREAD, and per consumer
// an XCLAIM ... FORCE per pending entry, or XGROUP CREATECONSUMER when it has none.
func (s *stream) appendRewrite(b []byte, key string, _, _ int) []byte {
	k := []byte(key)
	if s.length > 0 {
		s.scan(streamID{}, maxStreamID, false, func(id streamID, fv [][]byte) bool {
			args := append([][]byte{[]byte("XADD"), k, id.bytes()}, fv...)
			b = appendCommand(b, args)
			return true
		})
	} else {
		b = appendCommand(b, bargs("XADD", key, "MAXLEN", "0", "0-1", "x", "y"))
	}
	b = appendCommand(b, [][]byte{[]byte("XSETID"), k, s.lastID.bytes(),
		[]byte("ENTRIESADDED"), strconv.AppendUint(nil, s.entriesAdded, 10),
		[]byte("MAXDELETEDID"), s.maxDeletedID.bytes()})
	for _, g := range s.sortedGroups() {
		name := []byte(g.name)
		b = appendCommand(b, [][]byte{[]byte("XGROUP"), []byte("CREATE"), k, name, g.lastID.bytes(),
			[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.entriesRead, 10)})
		for _, cname := range g.consumerNames() {
			c := g.consumers[cname]
			if c.pel.Len() == 0 {
				b = appendCommand(b, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), k, name, []byte(cname)})
				continue
			}
			c.pel.Scan(func(p *pendingEntry) bool {
				b = appendCommand(b, [][]byte{[]byte("XCLAIM"), k, name, []byte(cname), []byte("0"), p.id.bytes(),
					[]byte("TIME"), strconv.AppendInt(nil, p.deliveryTime, 10),
					[]byte("RETRYCOUNT"), strconv.AppendUint(nil, p.deliveryCount, 10),
					[]byte("JUSTID"), []byte("FORCE")})
				return true
			})
		}
	}
	return b
}
