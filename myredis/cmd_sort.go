package myredis

import (
	"bytes"
	"math"
	"slices"
	"sort"
)

// commandsSort registers SORT and SORT_RO. They run on the executor goroutine,
// over sets, sorted sets and lists (sortableList), as Redis 7.0's sortCommand.
func commandsSort() []*command {
	return []*command{
		{name: "sort", arity: -2, flags: flagWrite, fn: sortCmd(false), firstKey: 1, lastKey: 1, keysFn: sortKeys},
		{name: "sort_ro", arity: -2, flags: flagReadonly, fn: sortCmd(true), firstKey: 1, lastKey: 1},
	}
}

// sortableList is how the list type plugs into SORT: its elements, head to tail.
type sortableList interface {
	sortElements() [][]byte
}

// sortKeys are SORT's key arguments: the sorted key and STORE's destination
// (COMMAND GETKEYS, and what the AOF rewrite captures before a write).
func sortKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	keys := [][]byte{args[1]}
	if opts, msg := parseSortOpts(args[2:], false); msg == "" && opts.store != nil {
		keys = append(keys, opts.store)
	}
	return keys
}

// sortOpts are SORT's options.
type sortOpts struct {
	desc, alpha bool
	dontsort    bool   // BY a pattern without '*': keep the value's own order
	by          []byte // BY pattern with a '*' (nil: sort by the elements)
	limitStart  int64
	limitCount  int64 // < 0: to the end
	gets        [][]byte
	store       []byte // STORE destination (nil: reply)
}

// parseSortOpts reads SORT's options (the arguments after the key) as Redis does,
// left to right, the last ASC/DESC, LIMIT, BY and STORE winning. It returns
// Redis's error text on bad input. readonly (SORT_RO) refuses STORE.
func parseSortOpts(args [][]byte, readonly bool) (sortOpts, string) {
	o := sortOpts{limitCount: -1}
	for j := 0; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case eqFold(a, "asc"):
			o.desc = false
		case eqFold(a, "desc"):
			o.desc = true
		case eqFold(a, "alpha"):
			o.alpha = true
		case eqFold(a, "limit") && left >= 2:
			start, ok1 := parseRedisInt(args[j+1])
			count, ok2 := parseRedisInt(args[j+2])
			if !ok1 || !ok2 {
				return o, msgNotInt
			}
			o.limitStart, o.limitCount = start, count
			j += 2
		case !readonly && eqFold(a, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case eqFold(a, "by") && left >= 1:
			o.by = args[j+1]
			o.dontsort = bytes.IndexByte(cstringBytes(o.by), '*') < 0
			if o.dontsort {
				o.by = nil
			}
			j++
		case eqFold(a, "get") && left >= 1:
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return o, msgSyntax
		}
	}
	return o, ""
}

// sortItem is one element being sorted and what it is compared by.
type sortItem struct {
	elem  string
	score float64 // numeric sort
	cmp   []byte  // ALPHA with BY: the looked-up value (nil: none, sorts first)
}

// sortCmd builds SORT and SORT_RO (readonly).
func sortCmd(readonly bool) func(*Ctx) {
	return func(x *Ctx) {
		o, msg := parseSortOpts(x.args[2:], readonly)
		if msg != "" {
			x.err(msg)
			return
		}
		elems, isSet, ordered, ok := x.sortSource(x.arg(1))
		if !ok {
			return
		}
		if o.dontsort && isSet && (o.store != nil || x.inScript) {
			// a set has no order of its own: a stored or scripted result is
			// sorted, so that it is the same everywhere (Redis forces ALPHA)
			o.dontsort, o.alpha = false, true
		}
		start, end := sortRange(o.limitStart, o.limitCount, len(elems))
		items := make([]sortItem, len(elems))
		for i, e := range elems {
			items[i].elem = e
		}
		if o.dontsort && ordered && o.desc {
			slices.Reverse(items)
		}
		if !o.dontsort && !x.sortItems(items, o) {
			x.err(msgSortNotDouble)
			return
		}
		items = items[start : end+1]
		if o.store != nil {
			x.sortStore(items, o)
			return
		}
		n := len(items) * max(len(o.gets), 1)
		x.w.Array(n)
		for _, it := range items {
			if len(o.gets) == 0 {
				x.w.BulkString(it.elem)
			}
			for _, g := range o.gets {
				if v, found := x.sortLookup(g, it.elem); found {
					x.w.Bulk(v)
				} else {
					x.w.Null()
				}
			}
		}
	}
}

// sortSource returns the elements of the value at key in its own order (a set's,
// a sorted set's by rank, a list's head to tail; none when missing). isSet tells
// a set; ordered that the value has an order DESC can reverse (BY nosort).
func (x *Ctx) sortSource(key string) (elems []string, isSet, ordered, ok bool) {
	e := x.lookupRead(key)
	if e == nil {
		return nil, false, true, true
	}
	switch v := e.value().(type) {
	case *setValue:
		return v.members(), true, false, true
	case *zset:
		items := v.Items(0, v.Len(), false)
		elems = make([]string, len(items))
		for i, it := range items {
			elems[i] = it.member
		}
		return elems, false, true, true
	case sortableList:
		for _, b := range v.sortElements() {
			elems = append(elems, string(b))
		}
		return elems, false, true, true
	}
	x.wrongType()
	return nil, false, false, false
}

// sortRange applies LIMIT start count to n elements as Redis does, returning the
// inclusive range [start, end] (end = start-1 when empty). The arithmetic
// saturates where Redis's would overflow.
func sortRange(limitStart, limitCount int64, n int) (int, int) {
	vlen := int64(n)
	start := max(limitStart, 0)
	end := vlen - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
		if limitCount > 0 && start > math.MaxInt64-limitCount {
			end = math.MaxInt64
		}
	}
	if start >= vlen {
		start, end = vlen-1, vlen-2
	}
	end = min(end, vlen-1)
	if end < start {
		return 0, -1
	}
	return int(start), int(end)
}

// sortItems computes what each item is compared by and sorts items. It reports
// false when a numeric sort meets a value that is not a double (Redis sorts
// nothing then and answers an error).
func (x *Ctx) sortItems(items []sortItem, o sortOpts) bool {
	valid := true
	for i := range items {
		it := &items[i]
		byval := []byte(it.elem)
		if o.by != nil {
			v, found := x.sortLookup(o.by, it.elem)
			if !found {
				continue // score 0, or no compare value (first) for ALPHA
			}
			byval = v
		}
		if o.alpha {
			if o.by != nil {
				it.cmp = byval
			}
			continue
		}
		f, ok := sortScore(byval)
		if !ok {
			valid = false
		}
		it.score = f
	}
	if !valid {
		return false
	}
	cmp := sortCompare(o)
	sort.SliceStable(items, func(i, j int) bool { return cmp(&items[i], &items[j]) < 0 })
	return true
}

// sortScore reads a value as SORT does with strtod: the whole C string must be
// the number (an empty one is 0), with no overflow and no NaN.
func sortScore(b []byte) (float64, bool) {
	c := cstringBytes(b)
	f, n, erange := strtod(string(c))
	return f, n == len(c) && !erange && !math.IsNaN(f)
}

// sortCompare is Redis's sortCompare for the options: numeric by score (ties by
// the elements' bytes), or ALPHA by the BY values (missing ones first) or the
// elements. Without STORE, ALPHA compares as strcoll in the C locale, that is
// up to the first NUL byte; with STORE, all the bytes.
func sortCompare(o sortOpts) func(a, b *sortItem) int {
	text := func(a, b []byte) int {
		if o.store == nil {
			a, b = cstringBytes(a), cstringBytes(b)
		}
		return bytes.Compare(a, b)
	}
	var cmp func(a, b *sortItem) int
	switch {
	case !o.alpha:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare([]byte(a.elem), []byte(b.elem))
		}
	case o.by != nil:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.cmp == nil && b.cmp == nil:
				return 0
			case a.cmp == nil:
				return -1
			case b.cmp == nil:
				return 1
			}
			return text(a.cmp, b.cmp)
		}
	default:
		cmp = func(a, b *sortItem) int { return text([]byte(a.elem), []byte(b.elem)) }
	}
	if o.desc {
		return func(a, b *sortItem) int { return -cmp(a, b) }
	}
	return cmp
}

// sortLookup is Redis's lookupKeyByPattern: "#" is the element itself; otherwise
// the first '*' of pattern is replaced by the element and the resulting key read
// as a string, or, when "->field" follows the '*', as that field of a hash.
// found is false when there is no '*', no such key, or a key of another type.
func (x *Ctx) sortLookup(pattern []byte, elem string) (v []byte, found bool) {
	if len(pattern) > 0 && pattern[0] == '#' && (len(pattern) == 1 || pattern[1] == 0) {
		return []byte(elem), true
	}
	cpat := cstringBytes(pattern)
	star := bytes.IndexByte(cpat, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	keyEnd := len(pattern)
	if f := bytes.Index(cpat[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cpat) {
		f += star + 1
		field, keyEnd = pattern[f+2:], f
	}
	key := make([]byte, 0, keyEnd+len(elem))
	key = append(append(append(key, pattern[:star]...), elem...), pattern[star+1:keyEnd]...)
	e := x.lookupRead(string(key))
	if e == nil {
		return nil, false
	}
	if field != nil {
		h, isHash := e.value().(*hashValue)
		if !isHash {
			return nil, false
		}
		return h.get(field)
	}
	s, isString := e.str()
	return s, isString
}

// sortStore writes the result as a list at the STORE key (missing GET values as
// empty strings), or deletes the key when the result is empty, and replies with
// the number of elements stored.
func (x *Ctx) sortStore(items []sortItem, o sortOpts) {
	var out [][]byte
	for _, it := range items {
		if len(o.gets) == 0 {
			out = append(out, []byte(it.elem))
		}
		for _, g := range o.gets {
			v, _ := x.sortLookup(g, it.elem)
			out = append(out, append([]byte{}, v...))
		}
	}
	dst := string(o.store)
	if len(out) == 0 {
		if x.db.lookup(dst) != nil && x.db.delete(dst) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", dst)
		}
		x.w.Int(0)
		return
	}
	x.db.set(dst, listFromElems(x.s, out), false)
	x.dirty(len(out))
	x.notify(notifyList, "sortstore", dst)
	x.w.Int(int64(len(out)))
}
