package myredis

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// commandsHLL registers the HyperLogLog commands. A PF key is a string in
// Redis's HLL layout (hll.go).
//
// PFCOUNT is flagged write although Redis calls it read-only: recomputing the
// cardinality rewrites the cache in the value's header, and Redis then
// propagates PFCOUNT (its may-replicate flag), so the AOF must record it to
// rebuild the same bytes; EVAL_RO refuses it as Redis does.
func commandsHLL() []*command {
	return []*command{
		{name: "pfadd", arity: -2, flags: flagWrite, fn: cmdPfadd, firstKey: 1, lastKey: 1},
		{name: "pfcount", arity: -2, flags: flagWrite, fn: cmdPfcount, firstKey: 1, lastKey: -1},
		{name: "pfmerge", arity: -2, flags: flagWrite, fn: cmdPfmerge, firstKey: 1, lastKey: -1},
		{name: "pfdebug", arity: 3, flags: flagWrite | flagAdmin, fn: cmdPfdebug, firstKey: 2, lastKey: 2},
		{name: "pfselftest", arity: 1, flags: flagAdmin, fn: cmdPfselftest},
	}
}

// hllSparseMaxBytes is hll-sparse-max-bytes.
func (x *Ctx) hllSparseMaxBytes() int64 { return x.s.cfg.hllSparseMaxBytes() }

// hllOf checks that e holds a valid HLL (a string with its header), writing
// WRONGTYPE if not.
func (x *Ctx) hllOf(e *entry) ([]byte, bool) {
	b, isStr := e.str()
	if !isStr {
		x.wrongType()
		return nil, false
	}
	if !isHLL(b) {
		x.err(msgHLLWrongType)
		return nil, false
	}
	return b, true
}

func cmdPfadd(x *Ctx) {
	key := x.arg(1)
	e := x.db.lookup(key)
	var b []byte
	updated := 0
	if e == nil {
		b = newHLL()
		updated++
	} else {
		cur, ok := x.hllOf(e)
		if !ok {
			return
		}
		b = x.writableString(e, cur)
	}
	maxBytes := x.hllSparseMaxBytes()
	for _, ele := range x.args[2:] {
		var r int
		b, r = hllAdd(b, ele, maxBytes)
		switch r {
		case 1:
			updated++
		case -1: // what changed before stays, unpropagated, as in Redis
			e.setValue(b)
			x.err(msgHLLCorrupt)
			return
		}
	}
	if updated == 0 {
		x.w.Int(0)
		return
	}
	hllInvalidateCache(b)
	if e == nil {
		x.db.add(key, b)
	} else {
		e.setValue(b)
		x.db.modified(key)
	}
	x.dirty(updated)
	x.notify(notifyString, "pfadd", key)
	x.w.Int(1)
}

func cmdPfcount(x *Ctx) {
	if x.nargs() > 2 {
		x.pfcountUnion()
		return
	}
	key := x.arg(1)
	e := x.lookupRead(key)
	if e == nil {
		x.w.Int(0)
		return
	}
	b, ok := x.hllOf(e)
	if !ok {
		return
	}
	if hllCacheValid(b) {
		x.w.Int(int64(hllCachedCard(b)))
		return
	}
	h, ok := hllHisto(b)
	if !ok {
		x.err(msgHLLCorrupt)
		return
	}
	card := hllEstimate(&h)
	b = x.writableString(e, b)
	hllSetCachedCard(b, card)
	x.db.modified(key)
	x.dirty(1)
	x.w.Int(int64(card))
}

// pfcountUnion is PFCOUNT of several keys: the estimate of their merged
// registers, cached nowhere.
func (x *Ctx) pfcountUnion() {
	var regs [hllRegisters]uint8
	for _, k := range x.args[1:] {
		e := x.lookupRead(string(k))
		if e == nil {
			continue
		}
		b, ok := x.hllOf(e)
		if !ok {
			return
		}
		if !hllMerge(&regs, b) {
			x.err(msgHLLCorrupt)
			return
		}
	}
	h := hllRawHisto(&regs)
	x.w.Int(int64(hllEstimate(&h)))
}

// cmdPfmerge merges every source (the destination included) into the
// destination, dense if any input is dense, registers set in ascending order as
// Redis sets them, so the sparse code comes out byte for byte the same.
func cmdPfmerge(x *Ctx) {
	var regs [hllRegisters]uint8
	useDense := false
	for _, k := range x.args[1:] {
		e := x.lookupRead(string(k))
		if e == nil {
			continue
		}
		b, ok := x.hllOf(e)
		if !ok {
			return
		}
		if b[4] == hllDense {
			useDense = true
		}
		if !hllMerge(&regs, b) {
			x.err(msgHLLCorrupt)
			return
		}
	}
	key := x.arg(1)
	e := x.db.lookup(key)
	var b []byte
	if e == nil {
		b = newHLL()
	} else {
		cur, _ := e.str() // checked as a source above
		b = x.writableString(e, cur)
	}
	if useDense {
		var ok bool
		if b, ok = hllSparseToDense(b); !ok {
			x.err(msgHLLCorrupt)
			return
		}
	}
	maxBytes := x.hllSparseMaxBytes()
	for i, v := range regs {
		if v != 0 {
			b, _ = hllSet(b, i, v, maxBytes)
		}
	}
	hllInvalidateCache(b)
	if e == nil {
		x.db.add(key, b)
	} else {
		e.setValue(b)
		x.db.modified(key)
	}
	x.dirty(1)
	x.notify(notifyString, "pfadd", key) // as Redis: PFMERGE's event is pfadd
	x.ok()
}

// cmdPfdebug is PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. The key is checked
// before the subcommand, as in Redis.
func cmdPfdebug(x *Ctx) {
	key := x.arg(2)
	e := x.db.lookup(key)
	if e == nil {
		x.err(msgPFDebugNoKey)
		return
	}
	b, ok := x.hllOf(e)
	if !ok {
		return
	}
	switch sub := x.args[1]; {
	case eqFold(sub, "getreg"):
		if b, ok = x.pfdebugToDense(e, key, b); !ok {
			return
		}
		x.w.Array(hllRegisters)
		for i := 0; i < hllRegisters; i++ {
			x.w.Int(int64(hllDenseGet(b[hllHdrSize:], i)))
		}
	case eqFold(sub, "decode"):
		if b[4] != hllSparse {
			x.err(msgPFDebugNotSparse)
			return
		}
		x.w.BulkString(hllDecode(b[hllHdrSize:]))
	case eqFold(sub, "encoding"):
		if b[4] == hllDense {
			x.w.Simple("dense")
		} else {
			x.w.Simple("sparse")
		}
	case eqFold(sub, "todense"):
		conv := b[4] == hllSparse
		if _, ok = x.pfdebugToDense(e, key, b); ok {
			x.w.Bool(conv)
		}
	default:
		x.w.Errorf(msgPFDebugUnknown, string(sub))
	}
}

// pfdebugToDense converts key's HLL to dense if it is sparse (a write,
// propagated as Redis forces it).
func (x *Ctx) pfdebugToDense(e *entry, key string, b []byte) ([]byte, bool) {
	if b[4] == hllDense {
		return b, true
	}
	d, ok := hllSparseToDense(b)
	if !ok {
		x.err(msgHLLCorrupt)
		return nil, false
	}
	e.setValue(d)
	x.db.modified(key)
	x.dirty(1)
	return d, true
}

// hllDecode is PFDEBUG DECODE's text: "z:N" ZERO, "Z:N" XZERO, "v:V,N" VAL.
func hllDecode(code []byte) string {
	var sb strings.Builder
	for p := 0; p < len(code); {
		oplen, span, val := sparseAt(code, p)
		switch {
		case val != 0:
			sb.WriteString("v:" + strconv.Itoa(int(val)) + "," + strconv.Itoa(span) + " ")
		case oplen == 2:
			sb.WriteString("Z:" + strconv.Itoa(span) + " ")
		default:
			sb.WriteString("z:" + strconv.Itoa(span) + " ")
		}
		p += oplen
	}
	return strings.Trim(sb.String(), " ")
}

// cmdPfselftest is Redis's PFSELFTEST: the dense register accessors keep every
// value and leave their neighbours alone, and for 1..10^7 distinct elements the
// sparse and dense forms agree and the estimate stays within six standard
// errors. It holds the executor for about a second, as it holds Redis.
func cmdPfselftest(x *Ctx) {
	dense := make([]byte, hllDenseSize)
	regs := dense[hllHdrSize:]
	var want [hllRegisters]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			want[i] = uint8(rand.IntN(hllRegisterMax + 1))
			hllDenseSetReg(regs, i, want[i])
		}
		for i, w := range want {
			if v := hllDenseGet(regs, i); v != w {
				x.w.Errorf("ERR TESTFAILED Register %d should be %d but is %d", i, w, v)
				return
			}
		}
	}
	clear(regs)
	copy(dense, "HYLL")
	sparse := newHLL()
	maxBytes := x.hllSparseMaxBytes()
	relerr := 1.04 / math.Sqrt(hllRegisters)
	seed := rand.Uint64()
	var ele [8]byte
	checkpoint := uint64(1)
	for j := uint64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], j^seed)
		hllAdd(dense, ele[:], maxBytes)
		sparse, _ = hllAdd(sparse, ele[:], maxBytes)
		if j != checkpoint {
			continue
		}
		if int64(j) < maxBytes/2 && sparse[4] != hllSparse {
			x.err("ERR TESTFAILED sparse encoding not used")
			return
		}
		hd, _ := hllHisto(dense)
		hs, _ := hllHisto(sparse)
		card := hllEstimate(&hd)
		if card != hllEstimate(&hs) {
			x.err("ERR TESTFAILED dense/sparse disagree")
			return
		}
		abserr := int64(checkpoint) - int64(card)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			x.w.Errorf("ERR TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr)
			return
		}
		checkpoint *= 10
	}
	x.ok()
}
