package myredis

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/tidwall/redcon"
)

// setValue is the set type. Every method runs on the executor goroutine.
//
// Encodings, as Redis 7.0 has them (7.0 has no listpack sets):
//
//   - intset: while every member is an integer in Redis's canonical form
//     (parseRedisInt) and there are at most set-max-intset-entries of them, the
//     members are a sorted []int64. SMEMBERS and SSCAN answer in that order, as
//     Redis's intset does, so small integer sets compare byte for byte.
//   - hashtable: otherwise (and for good: Redis never converts back). The members
//     are a dense slice, entries, with no holes: removing one moves the last entry
//     into its place, so a random member is one random index (SPOP, SRANDMEMBER
//     are O(count)) and a cursor walking the slice from the top down sees every
//     member that stays present (SSCAN, as DB.scan). An index of chained buckets
//     (index+1 of the chain's first entry, 0 = empty) finds a member by its hash;
//     each entry keeps its hash and the next entry of its chain. This costs about
//     54 bytes a member against Redis's 72 (dictEntry, sds, bucket pointer). The
//     index grows and shrinks incrementally, so no single write rehashes it all.
//
// Members are never changed in place; an entry's member string is immutable.
type setValue struct {
	ints    []int64    // intset encoding: the members, ascending
	hash    bool       // hashtable encoding (entries, buckets)
	entries []setEntry // hashtable: the members, dense, in no particular order
	buckets []int32    // hashtable: len is a power of two
	// Resizing the index is incremental, as Redis's rehash: old is the previous
	// index, drained a few buckets per write; an entry whose bucket in old is
	// below rehashed has moved to buckets, the others are still in old.
	old      []int32
	rehashed int
	bytes    int64 // hashtable: the members' bytes (memUsage)
}

type setEntry struct {
	member string
	hash   uint32
	next   int32 // index+1 of the next entry in the bucket's chain, 0 = none
}

// setMaxIntsetEntries is Redis 7.0's default set-max-intset-entries.
const setMaxIntsetEntries = 512

// setSeed is the hash seed of every set, fixed for the process.
var setSeed = maphash.MakeSeed()

func newSet() *setValue { return &setValue{} }

func (s *setValue) typeName() string { return "set" }

// objectEncoding is OBJECT ENCODING's answer, as Redis 7.0 would give it.
func (s *setValue) objectEncoding(*EncodingLimits) string {
	if s.hash {
		return "hashtable"
	}
	return "intset"
}

// memUsage is what Redis would allocate for the set (memory.go): an intset
// of 2-, 4- or 8-byte integers, or a dict of sds members. O(1).
func (s *setValue) memUsage(*EncodingLimits) int64 {
	if s.hash {
		return robjBytes + hashtableMem(len(s.entries), s.bytes, false)
	}
	width := int64(2)
	if n := len(s.ints); n > 0 {
		lo, hi := s.ints[0], s.ints[n-1]
		switch {
		case lo < math.MinInt32 || hi > math.MaxInt32:
			width = 8
		case lo < math.MinInt16 || hi > math.MaxInt16:
			width = 4
		}
	}
	return robjBytes + jemallocSize(8+width*int64(len(s.ints)))
}

// copyValue returns an independent copy (COPY).
func (s *setValue) copyValue() any {
	c := &setValue{hash: s.hash, bytes: s.bytes}
	c.ints = slices.Clone(s.ints)
	c.entries = slices.Clone(s.entries)
	c.buckets = slices.Clone(s.buckets)
	c.old, c.rehashed = slices.Clone(s.old), s.rehashed
	return c
}

// Len is the number of members.
func (s *setValue) Len() int {
	if s.hash {
		return len(s.entries)
	}
	return len(s.ints)
}

func hashMember(m []byte) uint32 { return uint32(maphash.Bytes(setSeed, m)) }

// find returns the index of m in entries, or -1. Hashtable encoding only.
func (s *setValue) find(m []byte, h uint32) int {
	for i := *s.chain(h); i != 0; {
		e := &s.entries[i-1]
		if e.hash == h && e.member == string(m) {
			return int(i - 1)
		}
		i = e.next
	}
	return -1
}

// intsetFind returns m's position in ints and whether it is there.
func (s *setValue) intsetFind(n int64) (int, bool) {
	return slices.BinarySearch(s.ints, n)
}

// has reports whether m is a member.
func (s *setValue) has(m []byte) bool {
	if s.hash {
		return s.find(m, hashMember(m)) >= 0
	}
	n, ok := parseRedisInt(m)
	if !ok {
		return false
	}
	_, found := s.intsetFind(n)
	return found
}

// add adds m and reports whether it is new. maxInts is set-max-intset-entries.
func (s *setValue) add(m []byte, maxInts int) bool {
	if !s.hash {
		n, isInt := parseRedisInt(m)
		if isInt {
			i, found := s.intsetFind(n)
			if found {
				return false
			}
			if len(s.ints) < maxInts {
				s.ints = slices.Insert(s.ints, i, n)
				return true
			}
		}
		s.toHashtable()
	}
	h := hashMember(m)
	if s.find(m, h) >= 0 {
		return false
	}
	s.insert(string(m), h)
	return true
}

// insert appends a member known to be absent. Hashtable encoding only.
func (s *setValue) insert(m string, h uint32) {
	s.rehashStep()
	if len(s.entries) >= len(s.buckets) {
		s.resize(max(len(s.buckets)*2, 4))
	}
	head := s.chain(h)
	s.bytes += int64(len(m))
	s.entries = append(s.entries, setEntry{member: m, hash: h, next: *head})
	*head = int32(len(s.entries))
}

// chain returns the head of the bucket chain that holds (or would hold) an entry
// of hash h: in old while that bucket has not moved yet.
func (s *setValue) chain(h uint32) *int32 {
	if s.old != nil {
		if b := int(h & uint32(len(s.old)-1)); b >= s.rehashed {
			return &s.old[b]
		}
	}
	return &s.buckets[h&uint32(len(s.buckets)-1)]
}

// resize starts moving the entries to a new index of size buckets (a power of
// two), finishing any resize still under way first.
func (s *setValue) resize(size int) {
	for s.old != nil {
		s.rehashStep()
	}
	if len(s.buckets) == 0 {
		s.buckets = make([]int32, size)
		return
	}
	s.old, s.rehashed = s.buckets, 0
	s.buckets = make([]int32, size)
}

// rehashStep moves a few buckets of old to the new index (up to 4 chains, or 40
// empty buckets), as Redis's dictRehash does on each write. A resize starts when
// the entries reach the bucket count and the next one needs that many more
// writes, so every resize is done before the next.
func (s *setValue) rehashStep() {
	if s.old == nil {
		return
	}
	mask := uint32(len(s.buckets) - 1)
	for moved, empty := 0, 0; moved < 4 && empty < 40 && s.rehashed < len(s.old); s.rehashed++ {
		i := s.old[s.rehashed]
		if i == 0 {
			empty++
			continue
		}
		for i != 0 {
			e := &s.entries[i-1]
			next := e.next
			b := e.hash & mask
			e.next = s.buckets[b]
			s.buckets[b] = i
			i = next
		}
		s.old[s.rehashed] = 0
		moved++
	}
	if s.rehashed == len(s.old) {
		s.old, s.rehashed = nil, 0
	}
}

// rebuild links every entry into a new index of size buckets at once (small
// sets: the conversion from an intset).
func (s *setValue) rebuild(size int) {
	s.old, s.rehashed = nil, 0
	s.buckets = make([]int32, size)
	mask := uint32(size - 1)
	for i := range s.entries {
		e := &s.entries[i]
		b := e.hash & mask
		e.next = s.buckets[b]
		s.buckets[b] = int32(i + 1)
	}
}

// toHashtable converts an intset to the hashtable encoding.
func (s *setValue) toHashtable() {
	ints := s.ints
	s.hash, s.ints = true, nil
	s.entries = make([]setEntry, 0, len(ints)+1)
	s.rebuild(max(4, nextPow2(len(ints)+1)))
	var buf [20]byte
	for _, n := range ints {
		b := strconv.AppendInt(buf[:0], n, 10)
		s.insert(string(b), hashMember(b))
	}
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// remove deletes m and reports whether it was there.
func (s *setValue) remove(m []byte) bool {
	if !s.hash {
		n, ok := parseRedisInt(m)
		if !ok {
			return false
		}
		i, found := s.intsetFind(n)
		if found {
			s.ints = slices.Delete(s.ints, i, i+1)
		}
		return found
	}
	i := s.find(m, hashMember(m))
	if i < 0 {
		return false
	}
	s.removeAt(i)
	return true
}

// removeAt deletes the member at position i (0 <= i < Len) of either encoding.
// In the hashtable the last entry takes its place.
func (s *setValue) removeAt(i int) {
	if !s.hash {
		s.ints = slices.Delete(s.ints, i, i+1)
		return
	}
	s.rehashStep()
	s.unlink(i)
	s.bytes -= int64(len(s.entries[i].member))
	last := len(s.entries) - 1
	if i != last {
		s.unlink(last)
		moved := s.entries[last]
		head := s.chain(moved.hash)
		moved.next = *head
		s.entries[i] = moved
		*head = int32(i + 1)
	}
	s.entries[last] = setEntry{}
	s.entries = s.entries[:last]
	s.shrink()
}

// unlink takes entry i out of its bucket's chain.
func (s *setValue) unlink(i int) {
	e := &s.entries[i]
	p := s.chain(e.hash)
	for *p != int32(i+1) {
		p = &s.entries[*p-1].next
	}
	*p = e.next
}

// shrink gives memory back when the set has lost most of its members.
func (s *setValue) shrink() {
	n := len(s.entries)
	if s.old == nil && len(s.buckets) > 64 && n < len(s.buckets)/8 {
		s.resize(max(nextPow2(n*2), 4))
	}
	if cap(s.entries) > 64 && n < cap(s.entries)/4 {
		s.entries = slices.Clip(slices.Clone(s.entries[:n:n]))
	}
}

// at returns the member at position i (0 <= i < Len): the intset's i-th smallest,
// or the hashtable's i-th entry.
func (s *setValue) at(i int) string {
	if s.hash {
		return s.entries[i].member
	}
	return strconv.FormatInt(s.ints[i], 10)
}

// appendAt appends the member at position i to b (no allocation for integers).
func (s *setValue) appendAt(b []byte, i int) []byte {
	if s.hash {
		return append(b, s.entries[i].member...)
	}
	return strconv.AppendInt(b, s.ints[i], 10)
}

// random returns a uniformly random position. The set must not be empty.
func (s *setValue) random() int { return rand.IntN(s.Len()) }

// sample returns n distinct uniformly random positions (0 < n < Len), ascending.
// O(n): a large share is one pass of Knuth's selection sampling, a small one is
// drawn until n distinct positions are found.
func (s *setValue) sample(n int) []int {
	size := s.Len()
	out := make([]int, 0, n)
	if n*3 > size {
		left := size
		for i := 0; i < size && len(out) < n; i++ {
			if rand.IntN(left) < n-len(out) {
				out = append(out, i)
			}
			left--
		}
		return out
	}
	picked := make(map[int]struct{}, n)
	for len(out) < n {
		i := rand.IntN(size)
		if _, dup := picked[i]; dup {
			continue
		}
		picked[i] = struct{}{}
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// members returns every member in the set's order.
func (s *setValue) members() []string {
	out := make([]string, s.Len())
	for i := range out {
		out[i] = s.at(i)
	}
	return out
}

// scan calls fn for up to count members from cursor on and returns the next
// cursor, 0 when done. Hashtable encoding only. Cursor c > 0 means "next position
// c-1"; the walk goes down from the top, and removals only move the last entry
// down, so every member present for the whole walk is seen (some maybe twice).
func (s *setValue) scan(cursor uint64, count int, fn func(m string)) uint64 {
	n := len(s.entries)
	if n == 0 {
		return 0
	}
	i := n - 1
	if cursor != 0 {
		i = int(min(cursor-1, uint64(n-1)))
	}
	for ; i >= 0 && count > 0; i-- {
		fn(s.entries[i].member)
		count--
	}
	if i < 0 {
		return 0
	}
	return uint64(i) + 1
}

// saddBatch is the number of members per SADD in a rewritten AOF (Redis's
// AOF_REWRITE_ITEMS_PER_CMD).
const saddBatch = 64

// appendRewrite encodes the members [from, to) of s as SADD commands of saddBatch
// members each, as Redis's AOF rewrite does (aof_rewrite.go).
// sliceLen is the number of positions the rewrite slices (members).
func (s *setValue) sliceLen() int { return s.Len() }

func (s *setValue) appendRewrite(b []byte, key string, from, to int) []byte {
	var buf []byte
	for i := from; i < to; i++ {
		if (i-from)%saddBatch == 0 {
			b = redcon.AppendArray(b, 2+min(saddBatch, to-i))
			b = redcon.AppendBulkString(b, "SADD")
			b = redcon.AppendBulkString(b, key)
		}
		buf = s.appendAt(buf[:0], i)
		b = redcon.AppendBulk(b, buf)
	}
	return b
}
