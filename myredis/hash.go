package myredis

import (
	"math/rand/v2"
	"sort"

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
// Layout. index maps a field to its slot; slots hold the fields in order. Deleting
// leaves a hole so no other slot moves, and holes are squeezed out once they outnumber
// the live fields (amortised O(1) per delete). Every slot carries a sequence number
// that only grows along slots, which is what an HSCAN cursor holds: squeezing moves
// slots but keeps their numbers, so a scan returns every field present from its start
// to its end exactly once.
//
// Values are never changed in place: each write stores a new slice, so whoever holds
// a value (a reply being built, an AOF rewrite capture) never sees it change.
type hashValue struct {
	index   map[string]int // field -> position in slots
	slots   []hashSlot
	holes   int             // deleted slots still in slots
	nextSeq uint64          // sequence number of the next added field; starts at 1
	big     bool            // has outgrown Redis's listpack limits (sticky, as Redis's conversion)
	lim     *EncodingLimits // the server's hash-max-listpack-* (nil: Redis's defaults)
	bytes   int64           // the fields' and values' bytes (memUsage)
}

type hashSlot struct {
	field string
	val   []byte
	seq   uint64 // kept by a hole, so the numbers always grow along slots
	hole  bool
}

// limits are hash-max-listpack-entries and -value: within them a Redis hash is a
// listpack, which HSCAN returns whole in one call.
func (h *hashValue) limits() (entries, value int64) {
	l := h.lim
	if l == nil {
		l = &defaultEncodingLimits
	}
	return l.HashEntries, l.HashValue
}

func newHash() *hashValue {
	return &hashValue{index: make(map[string]int), nextSeq: 1}
}

func (h *hashValue) typeName() string { return "hash" }

// Len is the number of fields.
func (h *hashValue) Len() int { return len(h.index) }

// memUsage is what Redis would allocate for the hash (memory.go): a listpack
// of fields and values while small, a dict of sds pairs beyond. O(1).
func (h *hashValue) memUsage(*EncodingLimits) int64 {
	if !h.big {
		return robjBytes + listpackMem(2*h.Len(), h.bytes)
	}
	return robjBytes + hashtableMem(h.Len(), h.bytes, true)
}

// get returns field's value. Looking up with a []byte converted in the map index
// expression does not allocate.
func (h *hashValue) get(field []byte) ([]byte, bool) {
	i, ok := h.index[string(field)]
	if !ok {
		return nil, false
	}
	return h.slots[i].val, true
}

// set stores val under field and reports whether the field is new. The hash keeps
// val: the caller must not change it afterwards.
func (h *hashValue) set(field, val []byte) (added bool) {
	maxEntries, maxValue := h.limits()
	if int64(len(field)) > maxValue || int64(len(val)) > maxValue {
		h.big = true
	}
	if i, ok := h.index[string(field)]; ok {
		h.bytes += int64(len(val) - len(h.slots[i].val))
		h.slots[i].val = val
		return false
	}
	h.bytes += int64(len(field) + len(val))
	f := string(field)
	h.index[f] = len(h.slots)
	h.slots = append(h.slots, hashSlot{field: f, val: val, seq: h.nextSeq})
	h.nextSeq++
	if int64(len(h.index)) > maxEntries {
		h.big = true
	}
	return true
}

// del removes field and reports whether it was there.
func (h *hashValue) del(field []byte) bool {
	i, ok := h.index[string(field)]
	if !ok {
		return false
	}
	delete(h.index, string(field))
	h.bytes -= int64(len(field) + len(h.slots[i].val))
	h.slots[i] = hashSlot{seq: h.slots[i].seq, hole: true}
	h.holes++
	for n := len(h.slots); n > 0 && h.slots[n-1].hole; n-- { // trailing holes go at once
		h.slots = h.slots[:n-1]
		h.holes--
	}
	if h.holes > len(h.index) {
		h.squeeze()
	}
	return true
}

// squeeze removes the holes, keeping the order and the sequence numbers.
func (h *hashValue) squeeze() {
	live := h.slots[:0]
	for _, s := range h.slots {
		if !s.hole {
			h.index[s.field] = len(live)
			live = append(live, s)
		}
	}
	clear(h.slots[len(live):])
	h.slots = live
	h.holes = 0
}

// Range calls fn for every field in order until fn returns false. fn must not
// change the hash.
func (h *hashValue) Range(fn func(field string, val []byte) bool) {
	for _, s := range h.slots {
		if !s.hole && !fn(s.field, s.val) {
			return
		}
	}
}

// random returns a uniformly random field. The hash must not be empty. Holes are at
// most half the slots, so this takes two tries on average.
func (h *hashValue) random() hashSlot {
	for {
		if s := h.slots[rand.IntN(len(h.slots))]; !s.hole {
			return s
		}
	}
}

// sample returns n distinct random fields (0 < n < Len), in hash order.
func (h *hashValue) sample(n int) []hashSlot {
	out := make([]hashSlot, 0, n)
	if n*3 > h.Len() {
		// a large share: one pass that keeps each field with the probability
		// still needed / still left (Knuth's selection sampling)
		left := h.Len()
		for _, s := range h.slots {
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
		i := rand.IntN(len(h.slots))
		if _, dup := picked[i]; dup || h.slots[i].hole {
			continue
		}
		picked[i] = struct{}{}
		pos = append(pos, i)
	}
	sort.Ints(pos)
	for _, i := range pos {
		out = append(out, h.slots[i])
	}
	return out
}

// scan calls fn for up to count fields from cursor on and returns the next cursor,
// 0 when the walk is done. Cursor 0 starts at the first field; cursor c > 0 at the
// first field whose sequence number is at least c.
func (h *hashValue) scan(cursor uint64, count int, fn func(s hashSlot)) uint64 {
	i := sort.Search(len(h.slots), func(j int) bool { return h.slots[j].seq >= cursor })
	for ; i < len(h.slots) && count > 0; i++ {
		if !h.slots[i].hole {
			fn(h.slots[i])
			count--
		}
	}
	for ; i < len(h.slots); i++ {
		if !h.slots[i].hole {
			return h.slots[i].seq
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
	return h.appendRewrite(b, key, 0, len(h.slots))
}

// sliceLen is the number of slots, holes included: the positions an AOF rewrite
// slices a large hash by.
func (h *hashValue) sliceLen() int { return len(h.slots) }

// appendRewrite encodes the fields in slots [from, to) as HMSET commands of
// hmsetBatch fields each.
func (h *hashValue) appendRewrite(b []byte, key string, from, to int) []byte {
	live := 0
	for _, s := range h.slots[from:to] {
		if !s.hole {
			live++
		}
	}
	i := 0
	for _, s := range h.slots[from:to] {
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
