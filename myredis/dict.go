package myredis

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// dict is a keyspace's hash table, as Redis's dict.c: a power-of-two array of
// buckets, each a chain of entries linked through entry.next. It costs a key
// one bucket pointer (at a load factor between one half and one) and the
// entry's next field, where a Go map with a separate slice for SCAN took about
// 65 bytes per key; and it gives SCAN its guarantee the way Redis does, with a
// reverse-binary cursor over the buckets (scan).
//
// Growing is incremental, as Redis's: while rehashing, tab[1] is the new table
// and each write moves one bucket of tab[0] over, so no command pays for a
// whole table. Shrinking (below a tenth full) moves everything at once and only
// when the DB allows it (nothing is walking the table with a cursor that must
// not repeat keys: see DB.canShrink). Runs on the executor goroutine.
type dict struct {
	seed      maphash.Seed
	tab       [2][]*entry // tab[1] is the table being filled while rehashing
	used      [2]int
	rehashIdx int // the next bucket of tab[0] to move; -1 when not rehashing
	paused    int // iterations running: entries must stay in their buckets
}

const dictInitialSize = 4

func newDict() *dict {
	return &dict{seed: maphash.MakeSeed(), rehashIdx: -1}
}

func (d *dict) len() int        { return d.used[0] + d.used[1] }
func (d *dict) rehashing() bool { return d.rehashIdx >= 0 }

func (d *dict) bucket(t int, key string) uint64 {
	return maphash.String(d.seed, key) & uint64(len(d.tab[t])-1)
}

// find returns key's entry, or nil.
func (d *dict) find(key string) *entry {
	if d.len() == 0 {
		return nil
	}
	for t := 0; t < 2; t++ {
		for e := d.tab[t][d.bucket(t, key)]; e != nil; e = e.next {
			if e.key == key {
				return e
			}
		}
		if !d.rehashing() {
			break
		}
	}
	return nil
}

// add links e in. The caller has checked that e.key is absent.
func (d *dict) add(e *entry) {
	d.growIfNeeded()
	d.rehashStep()
	t := 0
	if d.rehashing() {
		t = 1
	}
	i := d.bucket(t, e.key)
	e.next = d.tab[t][i]
	d.tab[t][i] = e
	d.used[t]++
}

// remove unlinks key's entry and returns it, or nil when key is absent.
func (d *dict) remove(key string) *entry {
	if d.len() == 0 {
		return nil
	}
	d.rehashStep()
	for t := 0; t < 2; t++ {
		link := &d.tab[t][d.bucket(t, key)]
		for e := *link; e != nil; link, e = &e.next, e.next {
			if e.key == key {
				*link = e.next
				e.next = nil
				d.used[t]--
				return e
			}
		}
		if !d.rehashing() {
			break
		}
	}
	return nil
}

// replace puts nu in old's place (same key); old is left as it was.
func (d *dict) replace(old, nu *entry) {
	for t := 0; t < 2; t++ {
		if len(d.tab[t]) == 0 {
			continue
		}
		for link := &d.tab[t][d.bucket(t, old.key)]; *link != nil; link = &(*link).next {
			if *link == old {
				nu.next = old.next
				*link = nu
				return
			}
		}
	}
}

// growIfNeeded starts rehashing into a table twice as large once there are as
// many entries as buckets (Redis's load factor of 1).
func (d *dict) growIfNeeded() {
	switch {
	case d.rehashing():
	case len(d.tab[0]) == 0:
		d.tab[0] = make([]*entry, dictInitialSize)
	case d.used[0] >= len(d.tab[0]):
		d.tab[1] = make([]*entry, dictSizeFor(d.used[0]+1))
		d.rehashIdx = 0
	}
}

// dictSizeFor is the smallest power of two holding n entries, at least 4.
func dictSizeFor(n int) int {
	if n <= dictInitialSize {
		return dictInitialSize
	}
	return 1 << bits.Len(uint(n-1))
}

// shrinkIfSparse moves the entries to a smaller table, all at once, when the
// table is under a tenth full (Redis's HASHTABLE_MIN_FILL).
func (d *dict) shrinkIfSparse() {
	if d.rehashing() || d.paused > 0 || len(d.tab[0]) <= dictInitialSize || d.used[0]*10 >= len(d.tab[0]) {
		return
	}
	d.tab[1] = make([]*entry, dictSizeFor(d.used[0]))
	d.rehashIdx = 0
	d.rehash(len(d.tab[0]))
}

func (d *dict) rehashStep() {
	if d.rehashing() && d.paused == 0 {
		d.rehash(1)
	}
}

// rehash moves up to n buckets of tab[0] to tab[1], visiting at most 10n
// empty ones, and ends the rehash when tab[0] is empty.
func (d *dict) rehash(n int) {
	empty := n * 10
	for ; n > 0 && d.used[0] > 0; n-- {
		for d.tab[0][d.rehashIdx] == nil {
			d.rehashIdx++
			if empty--; empty == 0 {
				return
			}
		}
		for e := d.tab[0][d.rehashIdx]; e != nil; {
			next := e.next
			i := d.bucket(1, e.key)
			e.next = d.tab[1][i]
			d.tab[1][i] = e
			d.used[0]--
			d.used[1]++
			e = next
		}
		d.tab[0][d.rehashIdx] = nil
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.tab[0], d.tab[1] = d.tab[1], nil
		d.used[0], d.used[1] = d.used[1], 0
		d.rehashIdx = -1
	}
}

// random returns a random entry, or nil when the table is empty: a random
// non-empty bucket, then a random entry of its chain (Redis's dictGetRandomKey).
func (d *dict) random() *entry {
	if d.len() == 0 {
		return nil
	}
	d.rehashStep()
	for {
		var e *entry
		if d.rehashing() { // buckets of tab[0] below rehashIdx are empty
			i := d.rehashIdx + rand.IntN(len(d.tab[0])+len(d.tab[1])-d.rehashIdx)
			if i < len(d.tab[0]) {
				e = d.tab[0][i]
			} else {
				e = d.tab[1][i-len(d.tab[0])]
			}
		} else {
			e = d.tab[0][rand.IntN(len(d.tab[0]))]
		}
		if e == nil {
			continue
		}
		n := 0
		for x := e; x != nil; x = x.next {
			n++
		}
		for k := rand.IntN(n); k > 0; k-- {
			e = e.next
		}
		return e
	}
}

// scan calls fn for the entries of the bucket(s) cursor v names and returns
// the next cursor, 0 when the walk is complete: Redis's dictScan. The cursor
// counts with its bits reversed, so a walk begun before the table grew (or
// while it rehashes) still visits every entry present the whole time; a shrink
// can make it return some twice.
func (d *dict) scan(v uint64, fn func(*entry)) uint64 {
	if d.len() == 0 {
		return 0
	}
	d.paused++
	defer func() { d.paused-- }()
	small, big := d.tab[0], d.tab[1]
	if !d.rehashing() {
		m := uint64(len(small) - 1)
		emitChain(small[v&m], fn)
		return nextCursor(v, m)
	}
	if len(small) > len(big) {
		small, big = big, small
	}
	m0, m1 := uint64(len(small)-1), uint64(len(big)-1)
	emitChain(small[v&m0], fn)
	for {
		emitChain(big[v&m1], fn) // the buckets of the big table that expand v&m0
		v = nextCursor(v, m1)
		if v&(m0^m1) == 0 {
			return v
		}
	}
}

// nextCursor increments the bits of v under mask m, most significant first.
func nextCursor(v, m uint64) uint64 {
	v |= ^m
	v = bits.Reverse64(v)
	v++
	return bits.Reverse64(v)
}

// emitChain calls fn for each entry of a chain, reading the chain first, so
// that fn may delete keys.
func emitChain(e *entry, fn func(*entry)) {
	var buf [8]*entry
	chain := buf[:0]
	for ; e != nil; e = e.next {
		chain = append(chain, e)
	}
	for _, e := range chain {
		fn(e)
	}
}

// each calls fn for every entry. fn may read and delete keys; keys it adds
// may or may not be visited.
func (d *dict) each(fn func(*entry)) {
	d.paused++
	defer func() { d.paused-- }()
	for t := 0; t < 2; t++ {
		for i := 0; i < len(d.tab[t]); i++ {
			emitChain(d.tab[t][i], fn)
		}
	}
}
