package myredis

// commandsStringRange registers the string commands that address part of a
// value: SETRANGE, GETRANGE (and its old name SUBSTR) and LCS.
func commandsStringRange() []*command {
	return []*command{
		{name: "setrange", arity: 4, flags: flagWrite, fn: cmdSetrange, firstKey: 1, lastKey: 1},
		{name: "getrange", arity: 4, flags: flagReadonly, fn: cmdGetrange, firstKey: 1, lastKey: 1},
		{name: "substr", arity: 4, flags: flagReadonly, fn: cmdGetrange, firstKey: 1, lastKey: 1},
		{name: "lcs", arity: -3, flags: flagReadonly, fn: cmdLcs, firstKey: 1, lastKey: 2},
	}
}

// checkStringLength is Redis's check that a string of size+add bytes stays
// within proto-max-bulk-len (and does not overflow), made before allocating.
func (x *Ctx) checkStringLength(size, add int64) bool {
	total := size + add
	if total > x.maxBulk() || total < size || total < add {
		x.err(msgStringTooLong)
		return false
	}
	return true
}

func cmdSetrange(x *Ctx) {
	off, ok := x.argInt(2)
	if !ok {
		return
	}
	if off < 0 {
		x.err(msgOffsetRange)
		return
	}
	key, val := x.arg(1), x.args[3]
	e := x.db.lookup(key)
	if e == nil {
		if len(val) == 0 {
			x.w.Int(0)
			return
		}
		if !x.checkStringLength(off, int64(len(val))) {
			return
		}
		b := make([]byte, int(off)+len(val))
		copy(b[off:], val)
		x.db.add(key, b)
		x.dirty(1)
		x.notify(notifyString, "setrange", key)
		x.w.Int(int64(len(b)))
		return
	}
	cur, isStr := e.str()
	if !isStr {
		x.wrongType()
		return
	}
	if len(val) == 0 {
		x.w.Int(int64(len(cur)))
		return
	}
	if !x.checkStringLength(off, int64(len(val))) {
		return
	}
	var b []byte
	if need := int(off) + len(val); need > len(cur) {
		b = growZero(cur, need)
		e.setValue(b)
	} else {
		b = x.writableString(e, cur)
	}
	copy(b[off:], val)
	x.db.modified(key)
	x.dirty(1)
	x.notify(notifyString, "setrange", key)
	x.w.Int(int64(len(b)))
}

// cmdGetrange parses both indexes before looking at the key, as Redis does.
func cmdGetrange(x *Ctx) {
	start, ok := x.argInt(2)
	if !ok {
		return
	}
	end, ok := x.argInt(3)
	if !ok {
		return
	}
	s, _, ok := x.getString(x.arg(1))
	if !ok {
		return
	}
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		x.w.Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		x.w.Bulk(nil)
		return
	}
	x.w.Bulk(s[start : end+1])
}

// lcsOpts are LCS's options.
type lcsOpts struct {
	getLen, getIdx, withMatchLen bool
	minMatchLen                  int64
}

// lcsMaxTable bounds the LCS table MyRedis allocates whatever proto-max-bulk-len
// allows: above it LCS answers as Redis does when its allocation fails.
const lcsMaxTable = 4 << 30

// cmdLcs is LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] with Redis's
// dynamic programming table: (len1+1)*(len2+1) 32-bit cells, refused before
// allocating when it would exceed proto-max-bulk-len bytes.
func cmdLcs(x *Ctx) {
	ea, eb := x.lookupRead(x.arg(1)), x.lookupRead(x.arg(2))
	a, okA := stringOrEmpty(ea)
	b, okB := stringOrEmpty(eb)
	if !okA || !okB {
		x.err(msgLCSNotString)
		return
	}
	var o lcsOpts
	for j := 3; j < x.nargs(); j++ {
		more := x.nargs() - 1 - j
		switch {
		case eqFold(x.args[j], "idx"):
			o.getIdx = true
		case eqFold(x.args[j], "len"):
			o.getLen = true
		case eqFold(x.args[j], "withmatchlen"):
			o.withMatchLen = true
		case eqFold(x.args[j], "minmatchlen") && more > 0:
			n, ok := x.argInt(j + 1)
			if !ok {
				return
			}
			o.minMatchLen = max(n, 0)
			j++
		default:
			x.err(msgSyntax)
			return
		}
	}
	if o.getLen && o.getIdx {
		x.err(msgLCSLenAndIdx)
		return
	}
	if int64(len(a)) >= 1<<32-2 || int64(len(b)) >= 1<<32-2 {
		x.err(msgLCSTooLong)
		return
	}
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	if cells*4 > uint64(x.maxBulk()) {
		x.err(msgLCSMemLimit)
		return
	}
	if cells*4 > lcsMaxTable {
		x.err(msgLCSMemFailed)
		return
	}
	x.lcsReply(a, b, o)
}

// stringOrEmpty is e's string, "" for a missing key; ok is false for another type.
func stringOrEmpty(e *entry) ([]byte, bool) {
	if e == nil {
		return nil, true
	}
	b, ok := e.str()
	return b, ok
}

// lcsRange is one matching range of LCS IDX: a[a0..a1] equals b[b0..b1].
type lcsRange struct{ a0, a1, b0, b1 uint32 }

// lcsReply fills the table and walks it back from the end as Redis does,
// collecting the LCS string and the matching ranges.
func (x *Ctx) lcsReply(a, b []byte, o lcsOpts) {
	alen, blen := uint32(len(a)), uint32(len(b))
	w := blen + 1
	t := make([]uint32, uint64(alen+1)*uint64(w))
	for i := uint32(1); i <= alen; i++ {
		row, prev := t[i*w:(i+1)*w], t[(i-1)*w:i*w]
		ai := a[i-1]
		for j := uint32(1); j <= blen; j++ {
			switch {
			case ai == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	at := func(i, j uint32) uint32 { return t[i*w+j] }
	total := at(alen, blen)
	if o.getLen {
		x.w.Int(int64(total))
		return
	}
	result := make([]byte, total)
	var ranges []lcsRange
	idx := total
	aStart, aEnd, bStart, bEnd := alen, uint32(0), uint32(0), uint32(0) // aStart == alen: no range open
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case aStart == alen:
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			case aStart == i && bStart == j: // contiguous: extend the range backward
				aStart--
				bStart--
			default:
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if at(i-1, j) > at(i, j-1) {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if matchLen := aEnd - aStart + 1; o.minMatchLen == 0 || int64(matchLen) >= o.minMatchLen {
				ranges = append(ranges, lcsRange{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	if !o.getIdx {
		x.w.Bulk(result)
		return
	}
	x.w.Map(2)
	x.w.BulkString("matches")
	x.w.Array(len(ranges))
	for _, r := range ranges {
		if o.withMatchLen {
			x.w.Array(3)
		} else {
			x.w.Array(2)
		}
		x.w.Array(2)
		x.w.Int(int64(r.a0))
		x.w.Int(int64(r.a1))
		x.w.Array(2)
		x.w.Int(int64(r.b0))
		x.w.Int(int64(r.b1))
		if o.withMatchLen {
			x.w.Int(int64(r.a1 - r.a0 + 1))
		}
	}
	x.w.BulkString("len")
	x.w.Int(int64(total))
}
