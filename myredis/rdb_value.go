package myredis

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Values in RDB form: what DUMP writes and RESTORE and the file loader read.
// MyRedis writes the plain encodings (a string, a hash as field/value
// strings, a sorted set with binary scores, a list as quicklist nodes of
// listpacks), which every Redis since 2.x reads and converts to its compact
// forms itself; it reads every encoding Redis 7.0 writes, plus the ziplist
// and intset forms of older files.

// rdbEncoder is a value type that can write itself: it appends its
// serialisation to w and returns its RDB type byte.
type rdbEncoder interface {
	appendRDB(w *rdbWriter) byte
}

// appendRDBValue writes v's type byte and serialisation.
func appendRDBValue(w *rdbWriter, v any) bool {
	switch v := v.(type) {
	case []byte:
		w.byte1(rdbTypeString)
		w.str(v)
		return true
	case rdbEncoder:
		at := len(w.b)
		w.byte1(0) // the type, known once written
		w.b[at] = v.appendRDB(w)
		return true
	}
	return false
}

func (h *hashValue) appendRDB(w *rdbWriter) byte {
	if h.table() == nil {
		w.length(uint64(h.Len()))
		h.Range(func(field string, val []byte) bool {
			w.str([]byte(field))
			w.str(val)
			return true
		})
		return rdbTypeHash
	}
	return appendRDBWhole(w, h)
}

func (z *zset) appendRDB(w *rdbWriter) byte { return appendRDBWhole(w, z) }

// appendRDBWhole writes a sliceable value in one go: its head, then every slice.
func appendRDBWhole(w *rdbWriter, v rdbSliceable) byte {
	typ := v.appendRDBHead(w)
	v.appendRDBSlice(w, 0, v.rdbSliceLen())
	return typ
}

// rdbSliceable is a value whose RDB form a BGSAVE writes a slice of positions
// at a time (rdb_bgsave.go): the head (the element count), then the elements of
// each slice, rdbSliceStep positions per executor job.
type rdbSliceable interface {
	// rdbSliceLen is the number of positions: members, hash slots (holes
	// included), list elements, stream nodes.
	rdbSliceLen() int
	// rdbSliceStep is how many positions one job encodes.
	rdbSliceStep() int
	// appendRDBHead writes the count and returns the RDB type.
	appendRDBHead(w *rdbWriter) byte
	// appendRDBSlice writes the elements at positions [from, to); from is a
	// multiple of rdbSliceStep.
	appendRDBSlice(w *rdbWriter, from, to int)
}

func (z *zset) rdbSliceLen() int       { return z.sliceLen() }
func (z *zset) rdbSliceStep() int      { return zsetSlice }
func (h *hashValue) rdbSliceLen() int  { return h.sliceLen() }
func (h *hashValue) rdbSliceStep() int { return zsetSlice }
func (l *list) rdbSliceLen() int       { return l.Len() }
func (l *list) rdbSliceStep() int      { return zsetSlice } // a multiple of rdbListNodeEntries
func (s *setValue) rdbSliceLen() int   { return s.Len() }
func (s *setValue) rdbSliceStep() int  { return zsetSlice }
func (s *stream) rdbSliceLen() int     { return s.nodes.Len() }
func (s *stream) rdbSliceStep() int    { return streamRDBSlice }

func (z *zset) appendRDBHead(w *rdbWriter) byte {
	w.length(uint64(z.Len()))
	return rdbTypeZSet2
}

// appendRDBSlice writes positions [from, to) counted from the top: Redis writes
// a sorted set from its highest member (it loads faster).
func (z *zset) appendRDBSlice(w *rdbWriter, from, to int) {
	n := z.Len()
	z.Range(n-to, n-from, true, func(it zItem) bool {
		w.str([]byte(it.member))
		w.binaryDouble(it.score)
		return true
	})
}

func (h *hashValue) appendRDBHead(w *rdbWriter) byte {
	w.length(uint64(h.Len()))
	return rdbTypeHash
}

// appendRDBSlice writes the fields of slots [from, to) of a large hash (a small
// one is never sliced: appendRDB writes it whole).
func (h *hashValue) appendRDBSlice(w *rdbWriter, from, to int) {
	for _, s := range h.table().slots[from:to] {
		if !s.hole {
			w.str([]byte(s.field))
			w.str(s.val)
		}
	}
}

// rdbListNodeEntries bounds the entries of one listpack node MyRedis writes
// (Redis's default fill, -2, is 8 KB; 128 entries of any size stays near it).
const rdbListNodeEntries = 128

func (l *list) appendRDB(w *rdbWriter) byte { return appendRDBWhole(w, l) }

// appendRDBHead writes the number of quicklist nodes: one per
// rdbListNodeEntries elements.
func (l *list) appendRDBHead(w *rdbWriter) byte {
	w.length(uint64((l.Len() + rdbListNodeEntries - 1) / rdbListNodeEntries))
	return rdbTypeListQuick2
}

// appendRDBSlice writes the nodes of elements [from, to); from is a node's
// first element.
func (l *list) appendRDBSlice(w *rdbWriter, from, to int) {
	var entries [][]byte
	var lp []byte
	flush := func() {
		w.length(quicklistPacked)
		lp = appendListpack(lp[:0], entries)
		w.str(lp)
		entries = entries[:0]
	}
	l.Range(from, to, func(v []byte) bool {
		if entries = append(entries, v); len(entries) == rdbListNodeEntries {
			flush()
		}
		return true
	})
	if len(entries) > 0 {
		flush()
	}
}

func (s *setValue) appendRDB(w *rdbWriter) byte {
	if !s.hash { // an intset, in Redis's layout: width, count, little-endian members
		width := 2
		for _, v := range s.ints {
			switch {
			case v < math.MinInt32 || v > math.MaxInt32:
				width = 8
			case (v < math.MinInt16 || v > math.MaxInt16) && width < 4:
				width = 4
			}
		}
		b := binary.LittleEndian.AppendUint32(nil, uint32(width))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.ints)))
		for _, v := range s.ints {
			switch width {
			case 2:
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			case 4:
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
		}
		w.str(b)
		return rdbTypeSetIntset
	}
	return appendRDBWhole(w, s)
}

// appendRDBHead writes a hashtable set's count.
func (s *setValue) appendRDBHead(w *rdbWriter) byte {
	w.length(uint64(s.Len()))
	return rdbTypeSet
}

// appendRDBSlice writes the members at positions [from, to) of a hashtable
// set (an intset is never sliced: appendRDB writes it whole).
func (s *setValue) appendRDBSlice(w *rdbWriter, from, to int) {
	for i := from; i < to; i++ {
		w.str([]byte(s.entries[i].member))
	}
}

// readRDBValue reads a value of type typ. s gives the encoding settings
// new values are built with.
func readRDBValue(r *rdbReader, typ byte, s *Server) (any, error) {
	switch typ {
	case rdbTypeString:
		return r.str()
	case rdbTypeHash:
		return readPlainHash(r)
	case rdbTypeHashListpack, rdbTypeHashZiplist:
		return readPackedHash(r, typ)
	case rdbTypeZSet, rdbTypeZSet2:
		return readPlainZSet(r, typ)
	case rdbTypeZSetListpack, rdbTypeZSetZiplist:
		return readPackedZSet(r, typ)
	case rdbTypeList, rdbTypeListZiplist, rdbTypeListQuicklist, rdbTypeListQuick2:
		elems, err := readListElems(r, typ)
		if err != nil || len(elems) == 0 {
			return nil, errRDB
		}
		return listFromElems(s, elems), nil
	case rdbTypeSet, rdbTypeSetIntset:
		members, err := readSetMembers(r, typ)
		if err != nil || len(members) == 0 {
			return nil, errRDB
		}
		set := newSet()
		for _, m := range members {
			if !set.add(m, s.cfg.setMaxIntsetEntries()) {
				return nil, errRDB // a duplicate member
			}
		}
		return set, nil
	case rdbTypeStreamLP, rdbTypeStreamLP2:
		return readStreamRDB(r, typ)
	}
	return nil, errRDB // modules, zipmaps
}

func readPlainHash(r *rdbReader) (any, error) {
	n, err := r.count()
	if err != nil || n == 0 {
		return nil, errRDB
	}
	h := newHash()
	for range n {
		f, err := r.str()
		if err != nil {
			return nil, err
		}
		v, err := r.str()
		if err != nil {
			return nil, err
		}
		if !h.set(f, v, nil) {
			return nil, errRDB // duplicate field
		}
	}
	return h, nil
}

func readPackedHash(r *rdbReader, typ byte) (any, error) {
	elems, err := readPacked(r, typ == rdbTypeHashZiplist)
	if err != nil || len(elems) == 0 || len(elems)%2 != 0 {
		return nil, errRDB
	}
	h := newHash()
	for i := 0; i < len(elems); i += 2 {
		if !h.set(elems[i], elems[i+1], nil) {
			return nil, errRDB
		}
	}
	return h, nil
}

func readPlainZSet(r *rdbReader, typ byte) (any, error) {
	n, err := r.count()
	if err != nil || n == 0 {
		return nil, errRDB
	}
	z := newZSet()
	for range n {
		m, err := r.str()
		if err != nil {
			return nil, err
		}
		var score float64
		if typ == rdbTypeZSet2 {
			score, err = r.binaryDouble()
		} else {
			score, err = r.stringDouble()
		}
		if err != nil || math.IsNaN(score) {
			return nil, errRDB
		}
		if !z.Add(string(m), score) {
			return nil, errRDB // duplicate member
		}
	}
	return z, nil
}

func readPackedZSet(r *rdbReader, typ byte) (any, error) {
	elems, err := readPacked(r, typ == rdbTypeZSetZiplist)
	if err != nil || len(elems) == 0 || len(elems)%2 != 0 {
		return nil, errRDB
	}
	z := newZSet()
	for i := 0; i < len(elems); i += 2 {
		score, err := strconv.ParseFloat(string(elems[i+1]), 64)
		if err != nil || math.IsNaN(score) || !z.Add(string(elems[i]), score) {
			return nil, errRDB
		}
	}
	return z, nil
}

func readListElems(r *rdbReader, typ byte) ([][]byte, error) {
	switch typ {
	case rdbTypeList:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		elems := make([][]byte, 0, min(n, rdbMaxAlloc))
		for range n {
			e, err := r.str()
			if err != nil {
				return nil, err
			}
			elems = append(elems, e)
		}
		return elems, nil
	case rdbTypeListZiplist:
		return readPacked(r, true)
	}
	nodes, err := r.count()
	if err != nil || nodes == 0 {
		return nil, errRDB
	}
	var elems [][]byte
	for range nodes {
		container := uint64(quicklistPacked)
		if typ == rdbTypeListQuick2 {
			if container, _, err = r.length(); err != nil {
				return nil, err
			}
		}
		switch container {
		case quicklistPlain:
			e, err := r.str()
			if err != nil {
				return nil, err
			}
			elems = append(elems, e)
		case quicklistPacked:
			node, err := readPacked(r, typ == rdbTypeListQuicklist)
			if err != nil || len(node) == 0 {
				return nil, errRDB
			}
			elems = append(elems, node...)
		default:
			return nil, errRDB
		}
	}
	return elems, nil
}

func readSetMembers(r *rdbReader, typ byte) ([][]byte, error) {
	if typ == rdbTypeSetIntset {
		blob, err := r.str()
		if err != nil {
			return nil, err
		}
		return decodeIntset(blob)
	}
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	members := make([][]byte, 0, min(n, rdbMaxAlloc))
	for range n {
		m, err := r.str()
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	return members, nil
}

// readPacked reads a listpack (or a ziplist) stored as one RDB string and
// returns its entries.
func readPacked(r *rdbReader, ziplist bool) ([][]byte, error) {
	blob, err := r.str()
	if err != nil {
		return nil, err
	}
	if ziplist {
		return decodeZiplist(blob)
	}
	return decodeListpack(blob)
}

// ---- listpack ----

// appendListpack encodes entries as a listpack, integers in their integer
// encodings as Redis's lpAppend does.
func appendListpack(b []byte, entries [][]byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0) // total bytes, count
	for _, e := range entries {
		at := len(b)
		if v, ok := parseRedisInt(e); ok {
			b = appendLPInt(b, v)
		} else {
			b = appendLPString(b, e)
		}
		b = appendLPBacklen(b, uint64(len(b)-at))
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	binary.LittleEndian.PutUint16(b[start+4:], uint16(min(len(entries), math.MaxUint16)))
	return b
}

func appendLPInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(b, byte(u>>8)|0xc0, byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xf1), uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		return append(b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, 0xf3), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(v))
}

func appendLPString(b, s []byte) []byte {
	switch n := len(s); {
	case n < 64:
		b = append(b, 0x80|byte(n))
	case n < 4096:
		b = append(b, 0xe0|byte(n>>8), byte(n))
	default:
		b = binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(n))
	}
	return append(b, s...)
}

// appendLPBacklen writes an entry's length so it can be read right to left.
func appendLPBacklen(b []byte, l uint64) []byte {
	var tmp [5]byte
	n := lpBacklenSize(l)
	for i := n - 1; i >= 0; i-- {
		tmp[i] = byte(l & 127)
		if i != 0 {
			tmp[i] |= 128
		}
		l >>= 7
	}
	// the first byte written holds the highest bits, without the flag
	return append(b, tmp[:n]...)
}

// decodeListpack returns a listpack's entries (integers as decimal strings),
// checking every length against the blob.
func decodeListpack(lp []byte) ([][]byte, error) {
	if len(lp) < 7 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return nil, errRDB
	}
	count := int(binary.LittleEndian.Uint16(lp[4:]))
	entries := make([][]byte, 0, min(count, len(lp)))
	p := 6
	for lp[p] != 0xff {
		e, size, err := lpEntry(lp[p : len(lp)-1])
		if err != nil {
			return nil, err
		}
		bl := lpBacklenSize(uint64(size))
		if p+size+bl > len(lp)-1 || !lpBacklenOK(lp[p+size:p+size+bl], uint64(size)) {
			return nil, errRDB
		}
		entries = append(entries, e)
		p += size + bl
	}
	if count != math.MaxUint16 && count != len(entries) {
		return nil, errRDB
	}
	return entries, nil
}

func lpBacklenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

func lpBacklenOK(b []byte, l uint64) bool {
	var v uint64
	for _, c := range b {
		v = v<<7 | uint64(c&127)
	}
	return v == l
}

// lpEntry decodes the entry at the start of p: its value and its size
// without the backlen.
func lpEntry(p []byte) ([]byte, int, error) {
	c := p[0]
	need := func(n int) error {
		if n > len(p) {
			return errRDB
		}
		return nil
	}
	le := func(b []byte) uint64 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	signed := func(u uint64, bits uint) []byte {
		v := int64(u<<(64-bits)) >> (64 - bits)
		return strconv.AppendInt(nil, v, 10)
	}
	switch {
	case c&0x80 == 0:
		return strconv.AppendInt(nil, int64(c), 10), 1, nil
	case c&0xc0 == 0x80:
		n := int(c & 0x3f)
		if err := need(1 + n); err != nil {
			return nil, 0, err
		}
		return append([]byte(nil), p[1:1+n]...), 1 + n, nil
	case c&0xe0 == 0xc0:
		if err := need(2); err != nil {
			return nil, 0, err
		}
		return signed(uint64(c&0x1f)<<8|uint64(p[1]), 13), 2, nil
	case c&0xf0 == 0xe0:
		if err := need(2); err != nil {
			return nil, 0, err
		}
		n := int(c&0x0f)<<8 | int(p[1])
		if err := need(2 + n); err != nil {
			return nil, 0, err
		}
		return append([]byte(nil), p[2:2+n]...), 2 + n, nil
	}
	switch c {
	case 0xf0:
		if err := need(5); err != nil {
			return nil, 0, err
		}
		n := int(binary.LittleEndian.Uint32(p[1:]))
		if n < 0 || need(5+n) != nil {
			return nil, 0, errRDB
		}
		return append([]byte(nil), p[5:5+n]...), 5 + n, nil
	case 0xf1, 0xf2, 0xf3, 0xf4:
		width := map[byte]int{0xf1: 2, 0xf2: 3, 0xf3: 4, 0xf4: 8}[c]
		if err := need(1 + width); err != nil {
			return nil, 0, err
		}
		return signed(le(p[1:1+width]), uint(width*8)), 1 + width, nil
	}
	return nil, 0, errRDB
}

// ---- ziplist (files of Redis before 7.0) ----

func decodeZiplist(zl []byte) ([][]byte, error) {
	if len(zl) < 11 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xff {
		return nil, errRDB
	}
	var entries [][]byte
	p := 10
	for p < len(zl) && zl[p] != 0xff {
		if zl[p] == 0xfe { // prevlen: 1 byte, or 0xfe and 4 bytes
			p += 5
		} else {
			p++
		}
		if p >= len(zl)-1 {
			return nil, errRDB
		}
		e, size, err := zipEntry(zl[p : len(zl)-1])
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
		p += size
	}
	return entries, nil
}

func zipEntry(p []byte) ([]byte, int, error) {
	c := p[0]
	str := func(hdr, n int) ([]byte, int, error) {
		if n < 0 || hdr+n > len(p) {
			return nil, 0, errRDB
		}
		return append([]byte(nil), p[hdr:hdr+n]...), hdr + n, nil
	}
	integer := func(width int) ([]byte, int, error) {
		if 1+width > len(p) {
			return nil, 0, errRDB
		}
		var u uint64
		for i := width; i >= 1; i-- {
			u = u<<8 | uint64(p[i])
		}
		v := int64(u<<(64-8*width)) >> (64 - 8*width)
		return strconv.AppendInt(nil, v, 10), 1 + width, nil
	}
	switch c >> 6 {
	case 0:
		return str(1, int(c&0x3f))
	case 1:
		if len(p) < 2 {
			return nil, 0, errRDB
		}
		return str(2, int(c&0x3f)<<8|int(p[1]))
	case 2:
		if len(p) < 5 {
			return nil, 0, errRDB
		}
		return str(5, int(binary.BigEndian.Uint32(p[1:])))
	}
	switch {
	case c == 0xc0:
		return integer(2)
	case c == 0xd0:
		return integer(4)
	case c == 0xe0:
		return integer(8)
	case c == 0xf0:
		return integer(3)
	case c == 0xfe:
		return integer(1)
	case c >= 0xf1 && c <= 0xfd:
		return strconv.AppendInt(nil, int64(c&0x0f)-1, 10), 1, nil
	}
	return nil, 0, errRDB
}

// ---- intset ----

func decodeIntset(b []byte) ([][]byte, error) {
	if len(b) < 8 {
		return nil, errRDB
	}
	width := int(binary.LittleEndian.Uint32(b))
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if (width != 2 && width != 4 && width != 8) || n < 0 || n > (len(b)-8)/width || 8+n*width != len(b) {
		return nil, errRDB
	}
	members := make([][]byte, n)
	for i := range n {
		p := b[8+i*width:]
		var v int64
		switch width {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		members[i] = strconv.AppendInt(nil, v, 10)
	}
	return members, nil
}

// ---- streams ----

// appendRDB writes a stream as Redis 7.0 does (RDB_TYPE_STREAM_LISTPACKS_2): its
// node listpacks as they are, keyed by their 128-bit big-endian master IDs, the
// counters, then each group with its PEL and consumers.
func (s *stream) appendRDB(w *rdbWriter) byte { return appendRDBWhole(w, s) }

// streamRDBSlice is how many stream nodes (up to stream-node-max-entries
// entries or stream-node-max-bytes each) a BGSAVE job encodes.
const streamRDBSlice = 64

func (s *stream) appendRDBHead(w *rdbWriter) byte {
	w.length(uint64(s.nodes.Len()))
	return rdbTypeStreamLP2
}

// appendRDBSlice writes the nodes [from, to), and after the last node the
// counters and the consumer groups.
func (s *stream) appendRDBSlice(w *rdbWriter, from, to int) {
	i := 0
	s.nodes.Scan(func(n *streamNode) bool {
		if i >= to {
			return false
		}
		if i >= from {
			w.str(streamIDKey(n.master))
			w.str(n.lp)
		}
		i++
		return true
	})
	if to == s.nodes.Len() {
		s.appendRDBTail(w)
	}
}

// appendRDBTail writes what follows the nodes: the length, the IDs, the
// counters and each group with its PEL and consumers.
func (s *stream) appendRDBTail(w *rdbWriter) {
	w.length(s.length)
	for _, id := range []streamID{s.lastID, s.firstID, s.maxDeletedID} {
		w.length(id.ms)
		w.length(id.seq)
	}
	w.length(s.entriesAdded)
	groups := s.sortedGroups()
	w.length(uint64(len(groups)))
	for _, g := range groups {
		w.str([]byte(g.name))
		w.length(g.lastID.ms)
		w.length(g.lastID.seq)
		w.length(uint64(g.entriesRead))
		w.length(uint64(g.pel.Len()))
		g.pel.Scan(func(p *pendingEntry) bool {
			w.b = append(w.b, streamIDKey(p.id)...)
			w.millis(p.deliveryTime)
			w.length(p.deliveryCount)
			return true
		})
		names := g.consumerNames()
		w.length(uint64(len(names)))
		for _, name := range names {
			c := g.consumers[name]
			w.str([]byte(name))
			w.millis(c.seenTime)
			w.length(uint64(c.pel.Len()))
			c.pel.Scan(func(p *pendingEntry) bool {
				w.b = append(w.b, streamIDKey(p.id)...)
				return true
			})
		}
	}
}

// streamIDKey is an ID as Redis keys its radix trees: 128 bits, big-endian.
func streamIDKey(id streamID) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), id.ms)
	return binary.BigEndian.AppendUint64(b, id.seq)
}

func streamIDFromKey(b []byte) streamID {
	return streamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// readStreamRDB reads a stream of RDB type 15 (Redis 5 to 6.2) or 19 (7.0),
// validating every node listpack and every reference as Redis's deep
// sanitization does, so a corrupt payload is refused, never half-loaded.
func readStreamRDB(r *rdbReader, typ byte) (any, error) {
	s := newStream()
	nodes, err := r.count()
	if err != nil {
		return nil, err
	}
	var prevMaster streamID
	for i := range nodes {
		key, err := r.str()
		if err != nil || len(key) != 16 {
			return nil, errRDB
		}
		lp, err := r.str()
		if err != nil {
			return nil, errRDB
		}
		master := streamIDFromKey(key)
		if (i > 0 && !prevMaster.less(master)) || validateStreamNode(lp, master) != nil {
			return nil, errRDB
		}
		prevMaster = master
		n := &streamNode{master: master, lp: lp}
		if h, _ := n.head(); h.count == 0 {
			return nil, errRDB // Redis never keeps an empty node
		}
		s.nodes.Set(n)
	}
	ids := 1
	if typ == rdbTypeStreamLP2 {
		ids = 3
	}
	var nums [8]uint64
	want := 1 + 2*ids
	if typ == rdbTypeStreamLP2 {
		want++
	}
	for i := range want {
		if nums[i], err = r.plainLength(); err != nil {
			return nil, err
		}
	}
	s.length = nums[0]
	s.lastID = streamID{nums[1], nums[2]}
	if typ == rdbTypeStreamLP2 {
		s.firstID = streamID{nums[3], nums[4]}
		s.maxDeletedID = streamID{nums[5], nums[6]}
		s.entriesAdded = nums[7]
	} else {
		s.entriesAdded = s.length
		s.firstID = s.edge(true, false)
	}
	if s.length != countLive(s) {
		return nil, errRDB
	}
	if s.length == 0 {
		s.firstID = streamID{}
	}
	groups, err := r.count()
	if err != nil {
		return nil, err
	}
	for range groups {
		if err := readStreamGroup(r, s, typ); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// countLive counts the live entries of s's nodes.
func countLive(s *stream) uint64 {
	var n uint64
	s.nodes.Scan(func(nd *streamNode) bool {
		h, _ := nd.head()
		n += uint64(h.count)
		return true
	})
	return n
}

func readStreamGroup(r *rdbReader, s *stream, typ byte) error {
	name, err := r.str()
	if err != nil {
		return errRDB
	}
	var ms, seq, read uint64
	if ms, err = r.plainLength(); err != nil {
		return err
	}
	if seq, err = r.plainLength(); err != nil {
		return err
	}
	last := streamID{ms, seq}
	entriesRead := int64(-1)
	if typ == rdbTypeStreamLP2 {
		if read, err = r.plainLength(); err != nil {
			return err
		}
		entriesRead = int64(read)
	} else {
		entriesRead = s.estimateEntriesRead(last)
	}
	g := s.createGroup(string(name), last, entriesRead)
	if g == nil {
		return errRDB // a duplicate group
	}
	pel, err := r.count()
	if err != nil {
		return err
	}
	for range pel {
		raw, err := r.take(16)
		if err != nil {
			return err
		}
		p := &pendingEntry{id: streamIDFromKey(raw)}
		if p.deliveryTime, err = r.millis(); err != nil {
			return err
		}
		if p.deliveryCount, err = r.plainLength(); err != nil {
			return err
		}
		if _, dup := g.pel.Set(p); dup {
			return errRDB
		}
	}
	consumers, err := r.count()
	if err != nil {
		return err
	}
	for range consumers {
		cname, err := r.str()
		if err != nil {
			return errRDB
		}
		seen, err := r.millis()
		if err != nil {
			return err
		}
		c := g.createConsumer(string(cname), seen)
		if c == nil {
			return errRDB // a duplicate consumer
		}
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			raw, err := r.take(16)
			if err != nil {
				return err
			}
			p := g.pending(streamIDFromKey(raw))
			if p == nil || p.consumer != nil {
				return errRDB // not in the group's PEL, or owned twice
			}
			p.consumer = c
			c.pel.Set(p)
		}
	}
	var orphan bool
	g.pel.Scan(func(p *pendingEntry) bool {
		orphan = p.consumer == nil
		return !orphan
	})
	if orphan {
		return errRDB // a pending entry without a consumer
	}
	return nil
}
