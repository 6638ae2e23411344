package myredis

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"sync"
	"unsafe"

	"github.com/tidwall/redcon"
)

// hashValue is the hash type: field -> value, in insertion order. Every method runs
// on the executor goroutine.
//
// Order. HGETALL, HKEYS, HVALS, HSCAN and HRANDFIELD return fields in the order they
// were added: setting an existing field keeps its place, deleting and adding it again
// moves it to the end. A small Redis hash (a listpack) keeps the same order, so for
// hashes within Redis's listpack limits (hash-max-listpack-entries and -value) the
// replies are Redis's byte for byte; a bigger Redis hash is a hash table with no
// useful order, while this one stays in insertion order.
//
// Two forms, as Redis's listpack and hash table. A small hash (within the listpack
// limits) is one packed byte slice: each field and each value a uvarint length then
// its bytes, in order. Lookups walk it (at most hash-max-listpack-entries fields, 128
// by default), and a waiting room's ticket hash costs its bytes plus one header
// instead of a map and a slot array. Past the limits it becomes a hashTable for good
// (sticky, as Redis's conversion).
//
// Values are never changed in place: each write stores a new slice (a small hash a
// new pack), so whoever holds a value (a reply being built, an AOF rewrite capture)
// never sees it change.
//
// Size. A ticket hash of the waiting room is one of many keys, so a hash has no
// header of its own: a *hashValue is its key's entry (db.go), whose value
// pointer holds the small form's pack (kind: kindHashPack and the pack's
// length) or the *hashTable (kind: kindHash). The pack starts with the field
// count as a uvarint, as a listpack's header holds its count. The limits that
// decide the conversion are passed to set by the caller rather than kept per
// hash.
//
// A hash made outside the keyspace (newHash: a command creating its key, the
// RDB loader, RESTORE, COPY) is an entry of its own, marked detached; the DB
// adopts that entry as the key's when it inserts the hash (DB.insert), so a
// new hash costs one object and the handler that created it keeps writing to
// the key's hash.
type hashValue entry

// kindHashPack marks a small hash in entry.kind; the pack's length is below it.
// It lies above the other kinds (kindTag|1...), which are all below 1<<30.
const kindHashPack = kindTag | 1<<30

// vposDetached is entry.vpos of a hash not in a DB yet (newHash).
const vposDetached = -2

// hashPackMax is the most bytes a pack may hold: past it the hash converts, as a
// Redis listpack does past LISTPACK_MAX_SAFETY_SIZE (lpSafeToAdd). It leaves
// room for the count under the 30 bits kind keeps the length in.
const hashPackMax = 1<<30 - binary.MaxVarintLen64

// table is the large form, nil while the hash is small.
func (h *hashValue) table() *hashTable {
	if h.kind == kindHash {
		return (*hashTable)(h.vptr)
	}
	return nil
}

// raw is the small form's whole pack, count included; nil when empty or big.
func (h *hashValue) raw() []byte {
	if h.kind <= kindHashPack || h.vptr == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.vptr), h.kind&^kindHashPack)
}

// packBytes is the small form's fields and values, after the count.
func (h *hashValue) packBytes() []byte {
	p := h.raw()
	if p == nil {
		return nil
	}
	_, k := binary.Uvarint(p)
	return p[k:]
}

// count is the small form's number of fields.
func (h *hashValue) count() int {
	p := h.raw()
	if p == nil {
		return 0
	}
	n, _ := binary.Uvarint(p)
	return int(n)
}

// newPack returns an empty pack of n fields with room for size more bytes:
// the count is written, the caller appends the fields and values.
func newPack(n, size int) []byte {
	p := make([]byte, 0, uvarintLen(n)+size)
	return binary.AppendUvarint(p, uint64(n))
}

// setRaw stores p, built by newPack, as the pack; nil empties the hash.
func (h *hashValue) setRaw(p []byte) {
	h.vptr, h.kind = nil, kindHashPack
	if len(p) > 0 && p[0] != 0 {
		h.vptr, h.kind = unsafe.Pointer(unsafe.SliceData(p)), kindHashPack|uint32(len(p))
	}
}

// hashTable is a large hash. index maps a field to its slot; slots hold the fields
// in order. Deleting leaves a hole so no other slot moves, and holes are squeezed out
// once they outnumber the live fields (amortised O(1) per delete). Every slot carries
// a sequence number that only grows along slots, which is what an HSCAN cursor holds:
// squeezing moves slots but keeps their numbers, so a scan returns every field
// present from its start to its end exactly once.
type hashTable struct {
	index   map[string]int // field -> position in slots
	slots   []hashSlot
	holes   int    // deleted slots still in slots
	nextSeq uint64 // sequence number of the next added field; starts at 1
	bytes   int64  // the fields' and values' bytes (hashValue.memUsage)
}

func newHashTable(n int) *hashTable {
	return &hashTable{index: make(map[string]int, n), slots: make([]hashSlot, 0, n), nextSeq: 1}
}

// Len is the number of fields.
func (t *hashTable) Len() int { return len(t.index) }

type hashSlot struct {
	field string
	val   []byte
	seq   uint64 // kept by a hole, so the numbers always grow along slots
	hole  bool
}

// hashLimits are hash-max-listpack-entries and -value of l (nil: Redis's
// defaults): within them a Redis hash is a listpack, which HSCAN returns whole in
// one call.
func hashLimits(l *EncodingLimits) (entries, value int64) {
	if l == nil {
		l = &defaultEncodingLimits
	}
	return l.HashEntries, l.HashValue
}

// newHash returns an empty hash, detached: the DB adopts it as the key's entry
// when it is added (see hashValue).
func newHash() *hashValue { return &hashValue{vpos: vposDetached, kind: kindHashPack} }

func (h *hashValue) typeName() string { return "hash" }

// Len is the number of fields.
func (h *hashValue) Len() int {
	if t := h.table(); t != nil {
		return len(t.index)
	}
	return h.count()
}

// memUsage is what Redis would allocate for the hash (memory.go): a listpack
// while small (the pack's uvarint lengths stand for the listpack's entry
// headers, plus a back-length byte per element), a dict of sds pairs beyond. O(1).
func (h *hashValue) memUsage(*EncodingLimits) int64 {
	if t := h.table(); t != nil {
		return robjBytes + hashtableMem(t.Len(), t.bytes, true)
	}
	return robjBytes + jemallocSize(listpackOverhead+int64(len(h.packBytes()))+2*int64(h.count()))
}

// packEntry is one field and its value inside a pack: their byte ranges.
type packEntry struct{ f0, f1, v0, v1 int }

// nextPackEntry decodes the entry starting at off.
func nextPackEntry(p []byte, off int) packEntry {
	fl, k := binary.Uvarint(p[off:])
	e := packEntry{f0: off + k}
	e.f1 = e.f0 + int(fl)
	vl, k := binary.Uvarint(p[e.f1:])
	e.v0 = e.f1 + k
	e.v1 = e.v0 + int(vl)
	return e
}

// packString is the field at p[a:b] as a string without a copy: a pack is never
// written once built, so the string stays as it is.
func packString(p []byte, a, b int) string {
	if a == b {
		return ""
	}
	return unsafe.String(&p[a], b-a)
}

// find returns field's entry in the pack.
func (h *hashValue) find(field []byte) (packEntry, bool) {
	return findPackEntry(h.packBytes(), field)
}

// findPackEntry returns field's entry in the fields and values p.
func findPackEntry(p []byte, field []byte) (packEntry, bool) {
	for off := 0; off < len(p); {
		e := nextPackEntry(p, off)
		if string(p[e.f0:e.f1]) == string(field) {
			return e, true
		}
		off = e.v1
	}
	return packEntry{}, false
}

// get returns field's value.
func (h *hashValue) get(field []byte) ([]byte, bool) {
	if t := h.table(); t != nil {
		return t.get(field)
	}
	e, ok := h.find(field)
	if !ok {
		return nil, false
	}
	return h.packBytes()[e.v0:e.v1:e.v1], true
}

// set stores val under field and reports whether the field is new. The hash keeps
// val (a large hash) or a copy (a small one): the caller must not change it
// afterwards. lim holds the conversion limits (nil: Redis's defaults).
func (h *hashValue) set(field, val []byte, lim *EncodingLimits) (added bool) {
	if t := h.table(); t != nil {
		return t.set(field, val)
	}
	maxEntries, maxValue := hashLimits(lim)
	e, found := h.find(field)
	n := h.count()
	grown := len(h.packBytes()) + uvarintLen(len(val)) + len(val)
	if !found {
		grown += uvarintLen(len(field)) + len(field)
	}
	if int64(len(field)) > maxValue || int64(len(val)) > maxValue ||
		!found && int64(n)+1 > maxEntries || grown > hashPackMax {
		return h.grow().set(field, val)
	}
	old := h.packBytes()
	if found { // a new pack with the value replaced in place
		p := newPack(n, len(old)-(e.v1-e.f1)+uvarintLen(len(val))+len(val))
		p = append(p, old[:e.f1]...)
		p = binary.AppendUvarint(p, uint64(len(val)))
		p = append(p, val...)
		h.setRaw(append(p, old[e.v1:]...))
		return false
	}
	p := newPack(n+1, grown)
	p = append(p, old...)
	p = binary.AppendUvarint(p, uint64(len(field)))
	p = append(p, field...)
	p = binary.AppendUvarint(p, uint64(len(val)))
	h.setRaw(append(p, val...))
	return true
}

// setPairs stores the field/value pairs of kv (field, value, field, value...)
// as set would one after the other, copying the values, and returns how many
// fields are new. While the hash is small the pairs are applied to a reused
// scratch buffer and the new pack is allocated once: one pack per pair, and a
// copy of each value besides, would be garbage in the size classes of the keys
// and the entries that stay, leaving their spans part-empty after collection
// (docs/performance.md, "Memory per key"). Pairs past the listpack limits go to
// the hashTable, as set does.
func (h *hashValue) setPairs(kv [][]byte, lim *EncodingLimits) (added int) {
	i := 0
	if h.table() == nil {
		added, i = h.packPairs(kv, lim)
	}
	if i < len(kv) {
		t := h.table()
		if t == nil {
			t = h.grow()
		}
		for ; i < len(kv); i += 2 {
			if t.set(kv[i], own(kv[i+1])) {
				added++
			}
		}
	}
	return added
}

// hashScratch holds setPairs' two buffers between commands.
var hashScratch = sync.Pool{New: func() any { return new([2][]byte) }}

// hashScratchMax is the most a scratch buffer keeps between commands.
const hashScratchMax = 64 << 10

// packPairs applies the pairs of kv to the small form until one would take it
// past the listpack limits, writes the new pack, and returns the fields added
// and the index in kv of the first pair not applied.
func (h *hashValue) packPairs(kv [][]byte, lim *EncodingLimits) (added, i int) {
	maxEntries, maxValue := hashLimits(lim)
	sc := hashScratch.Get().(*[2][]byte)
	a, b := append(sc[0][:0], h.packBytes()...), sc[1][:0]
	n := h.count()
	changed := false
	for ; i < len(kv); i += 2 {
		field, val := kv[i], kv[i+1]
		e, found := findPackEntry(a, field)
		grown := len(a) + uvarintLen(len(val)) + len(val)
		if !found {
			grown += uvarintLen(len(field)) + len(field)
		}
		if int64(len(field)) > maxValue || int64(len(val)) > maxValue ||
			!found && int64(n)+1 > maxEntries || grown > hashPackMax {
			break
		}
		changed = true
		if found { // the value replaced in place
			b = append(b[:0], a[:e.f1]...)
			b = binary.AppendUvarint(b, uint64(len(val)))
			b = append(b, val...)
			a, b = append(b, a[e.v1:]...), a
			continue
		}
		a = binary.AppendUvarint(a, uint64(len(field)))
		a = append(a, field...)
		a = binary.AppendUvarint(a, uint64(len(val)))
		a = append(a, val...)
		n++
		added++
	}
	if changed {
		h.setRaw(append(newPack(n, len(a)), a...))
	}
	if cap(a) <= hashScratchMax && cap(b) <= hashScratchMax {
		sc[0], sc[1] = a[:0], b[:0]
		hashScratch.Put(sc)
	}
	return added, i
}

// grow turns a small hash into a hashTable with the same fields in the same
// order, and returns the table.
func (h *hashValue) grow() *hashTable {
	t := newHashTable(h.count() + 1)
	p := h.packBytes()
	for off := 0; off < len(p); {
		e := nextPackEntry(p, off)
		t.set(p[e.f0:e.f1], bytes.Clone(p[e.v0:e.v1]))
		off = e.v1
	}
	h.setTable(t)
	return t
}

// setTable makes t the hash's large form.
func (h *hashValue) setTable(t *hashTable) { h.vptr, h.kind = unsafe.Pointer(t), kindHash }

// del removes field and reports whether it was there.
func (h *hashValue) del(field []byte) bool {
	if t := h.table(); t != nil {
		return t.del(field)
	}
	e, ok := h.find(field)
	if !ok {
		return false
	}
	n := h.count()
	if n == 1 {
		h.setRaw(nil)
		return true
	}
	old := h.packBytes()
	start := e.f0 - uvarintLen(e.f1-e.f0)
	p := newPack(n-1, len(old)-(e.v1-start))
	p = append(p, old[:start]...)
	h.setRaw(append(p, old[e.v1:]...))
	return true
}

// Range calls fn for every field in order until fn returns false. fn must not
// change the hash.
func (h *hashValue) Range(fn func(field string, val []byte) bool) {
	if t := h.table(); t != nil {
		t.Range(fn)
		return
	}
	p := h.packBytes()
	for off := 0; off < len(p); {
		e := nextPackEntry(p, off)
		if !fn(packString(p, e.f0, e.f1), p[e.v0:e.v1:e.v1]) {
			return
		}
		off = e.v1
	}
}

// at returns the small hash's i-th field (0 <= i < n).
func (h *hashValue) at(i int) hashSlot {
	p := h.packBytes()
	off := 0
	for ; i > 0; i-- {
		off = nextPackEntry(p, off).v1
	}
	e := nextPackEntry(p, off)
	return hashSlot{field: packString(p, e.f0, e.f1), val: p[e.v0:e.v1:e.v1]}
}

// random returns a uniformly random field. The hash must not be empty.
func (h *hashValue) random() hashSlot {
	if t := h.table(); t != nil {
		return t.random()
	}
	return h.at(rand.IntN(h.count()))
}

// sample returns n distinct random fields (0 < n < Len), in hash order.
func (h *hashValue) sample(n int) []hashSlot {
	if t := h.table(); t != nil {
		return t.sample(n)
	}
	out := make([]hashSlot, 0, n)
	left := h.count()
	h.Range(func(f string, v []byte) bool { // selection sampling, as hashTable.sample
		if rand.IntN(left) < n-len(out) {
			out = append(out, hashSlot{field: f, val: v})
		}
		left--
		return len(out) < n
	})
	return out
}

// scan calls fn for up to count fields from cursor on and returns the next cursor,
// 0 when the walk is done (see hashTable.scan). A small hash is walked whole.
func (h *hashValue) scan(cursor uint64, count int, fn func(s hashSlot)) uint64 {
	if t := h.table(); t != nil {
		return t.scan(cursor, count, fn)
	}
	h.Range(func(f string, v []byte) bool {
		fn(hashSlot{field: f, val: v})
		return true
	})
	return 0
}

func (t *hashTable) get(field []byte) ([]byte, bool) {
	i, ok := t.index[string(field)] // the []byte conversion in an index does not allocate
	if !ok {
		return nil, false
	}
	return t.slots[i].val, true
}

func (t *hashTable) set(field, val []byte) (added bool) {
	if i, ok := t.index[string(field)]; ok {
		t.bytes += int64(len(val) - len(t.slots[i].val))
		t.slots[i].val = val
		return false
	}
	t.bytes += int64(len(field) + len(val))
	f := string(field)
	t.index[f] = len(t.slots)
	t.slots = append(t.slots, hashSlot{field: f, val: val, seq: t.nextSeq})
	t.nextSeq++
	return true
}

func (t *hashTable) del(field []byte) bool {
	i, ok := t.index[string(field)]
	if !ok {
		return false
	}
	delete(t.index, string(field))
	t.bytes -= int64(len(field) + len(t.slots[i].val))
	t.slots[i] = hashSlot{seq: t.slots[i].seq, hole: true}
	t.holes++
	for n := len(t.slots); n > 0 && t.slots[n-1].hole; n-- { // trailing holes go at once
		t.slots = t.slots[:n-1]
		t.holes--
	}
	if t.holes > len(t.index) {
		t.squeeze()
	}
	return true
}

// squeeze removes the holes, keeping the order and the sequence numbers.
func (t *hashTable) squeeze() {
	live := t.slots[:0]
	for _, s := range t.slots {
		if !s.hole {
			t.index[s.field] = len(live)
			live = append(live, s)
		}
	}
	clear(t.slots[len(live):])
	t.slots = live
	t.holes = 0
}

func (t *hashTable) Range(fn func(field string, val []byte) bool) {
	for _, s := range t.slots {
		if !s.hole && !fn(s.field, s.val) {
			return
		}
	}
}

// random returns a uniformly random field. Holes are at most half the slots, so this
// takes two tries on average.
func (t *hashTable) random() hashSlot {
	for {
		if s := t.slots[rand.IntN(len(t.slots))]; !s.hole {
			return s
		}
	}
}

// sample returns n distinct random fields (0 < n < Len), in hash order.
func (t *hashTable) sample(n int) []hashSlot {
	out := make([]hashSlot, 0, n)
	if n*3 > len(t.index) {
		// a large share: one pass that keeps each field with the probability
		// still needed / still left (Knuth's selection sampling)
		left := len(t.index)
		for _, s := range t.slots {
			if s.hole {
				continue
			}
			if rand.IntN(left) < n-len(out) {
				out = append(out, s)
				if len(out) == n {
					break
				}
			}
			left--
		}
		return out
	}
	// a small share: draw positions until n distinct live ones, then put them in order
	picked := make(map[int]struct{}, n)
	pos := make([]int, 0, n)
	for len(pos) < n {
		i := rand.IntN(len(t.slots))
		if _, dup := picked[i]; dup || t.slots[i].hole {
			continue
		}
		picked[i] = struct{}{}
		pos = append(pos, i)
	}
	sort.Ints(pos)
	for _, i := range pos {
		out = append(out, t.slots[i])
	}
	return out
}

// scan calls fn for up to count fields from cursor on and returns the next cursor,
// 0 when the walk is done. Cursor 0 starts at the first field; cursor c > 0 at the
// first field whose sequence number is at least c.
func (t *hashTable) scan(cursor uint64, count int, fn func(s hashSlot)) uint64 {
	i := sort.Search(len(t.slots), func(j int) bool { return t.slots[j].seq >= cursor })
	for ; i < len(t.slots) && count > 0; i++ {
		if !t.slots[i].hole {
			fn(t.slots[i])
			count--
		}
	}
	for ; i < len(t.slots); i++ {
		if !t.slots[i].hole {
			return t.slots[i].seq
		}
	}
	return 0
}

// hmsetBatch is the number of fields per HMSET in a rewritten AOF (Redis's
// AOF_REWRITE_ITEMS_PER_CMD).
const hmsetBatch = 64

// appendHashRewrite encodes h as the commands that rebuild it, as Redis's AOF
// rewrite does: HMSET key f v ... with hmsetBatch fields each, in the hash's order,
// so a replay rebuilds the same order too. The hash changes in place (fields are
// added to it), so an AOF rewrite encodes it when it captures it; a large one a
// slice of slots at a time (appendRewrite).
func appendHashRewrite(b []byte, key string, h *hashValue) []byte {
	return h.appendRewrite(b, key, 0, h.sliceLen())
}

// sliceLen is the number of slots, holes included: the positions an AOF rewrite
// slices a large hash by.
func (h *hashValue) sliceLen() int {
	if t := h.table(); t != nil {
		return len(t.slots)
	}
	return h.count()
}

// appendRewrite encodes the fields in slots [from, to) as HMSET commands of
// hmsetBatch fields each.
func (h *hashValue) appendRewrite(b []byte, key string, from, to int) []byte {
	var slots []hashSlot
	if t := h.table(); t != nil {
		slots = t.slots[from:to]
	} else {
		h.Range(func(f string, v []byte) bool {
			slots = append(slots, hashSlot{field: f, val: v})
			return len(slots) < to
		})
		slots = slots[from:]
	}
	live := 0
	for _, s := range slots {
		if !s.hole {
			live++
		}
	}
	i := 0
	for _, s := range slots {
		if s.hole {
			continue
		}
		if i%hmsetBatch == 0 {
			b = redcon.AppendArray(b, 2+2*min(hmsetBatch, live-i))
			b = redcon.AppendBulkString(b, "HMSET")
			b = redcon.AppendBulkString(b, key)
		}
		b = redcon.AppendBulkString(b, s.field)
		b = redcon.AppendBulk(b, s.val)
		i++
	}
	return b
}
