package myredis

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Bit-level work on string values: the pieces SETBIT, GETBIT, BITCOUNT, BITPOS,
// BITOP and BITFIELD share. Bits are numbered as Redis numbers them: bit 0 is
// the most significant bit of byte 0, so a bitfield read at a byte-aligned
// offset is a big-endian integer.

// writableString returns the string value b of entry e ready to be changed in
// place. String values are changed in place by the bit commands, SETRANGE and
// the HyperLogLog commands, as Redis changes its sds strings; the one exception
// is an AOF rewrite in progress, which may still hold the old bytes (it captures
// strings by reference, see aof_rewrite.go): then the key gets a copy first.
// Runs on the executor goroutine.
func (x *Ctx) writableString(e *entry, b []byte) []byte {
	if x.s.beforeWrite != nil {
		b = append(make([]byte, 0, cap(b)), b...)
		e.setValue(b)
	}
	return b
}

// growZero returns b extended with zero bytes to length n (n > len(b)) in a new
// array with room to grow, as sds's greedy growth leaves it: double up to 1 MB,
// then 1 MB more.
func growZero(b []byte, n int) []byte {
	c := n
	if c < 1<<20 {
		c *= 2
	} else {
		c += 1 << 20
	}
	nb := make([]byte, n, c)
	copy(nb, b)
	return nb
}

// stringForBits finds key's string for a command that writes bits up to bit
// maxbit, creating it or padding it with zero bytes so that the bit exists, as
// Redis's lookupStringForBitCommand does. dirty reports that the key was created
// or grew. ok is false (WRONGTYPE written) when key holds another type. The
// caller has checked maxbit against proto-max-bulk-len. Runs on the executor.
func (x *Ctx) stringForBits(key string, maxbit uint64) (b []byte, dirty, ok bool) {
	need := int(maxbit>>3) + 1
	e := x.db.lookup(key)
	if e == nil {
		b = make([]byte, need)
		x.db.add(key, b)
		return b, true, true
	}
	cur, isStr := e.str()
	if !isStr {
		x.wrongType()
		return nil, false, false
	}
	if len(cur) >= need {
		return x.writableString(e, cur), false, true
	}
	b = growZero(cur, need)
	e.setValue(b)
	return b, true, true
}

// parseBitOffset parses a bit offset as Redis's getBitOffsetFromArgument: a
// non-negative integer whose byte is below proto-max-bulk-len; with hash, "#N"
// means N*width (BITFIELD). ok is false for anything else.
func parseBitOffset(arg []byte, hash bool, width int, maxBulk int64) (uint64, bool) {
	useHash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	n, ok := parseRedisInt(arg)
	if !ok {
		return 0, false
	}
	if useHash {
		n *= int64(width) // wraps as C's long long multiplication does
	}
	if n < 0 || n>>3 >= maxBulk {
		return 0, false
	}
	return uint64(n), true
}

// getBit reports bit off of b (zero past the end).
func getBit(b []byte, off uint64) bool {
	i := off >> 3
	return i < uint64(len(b)) && b[i]&(0x80>>(off&7)) != 0
}

// popcount counts the bits set in b.
func popcount(b []byte) int64 {
	var n int
	for len(b) >= 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(b[24:]))
		b = b[32:]
	}
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// bitpos is Redis's redisBitpos: the position of the first bit equal to bit in
// b. With none, -1 when looking for a one, and the first bit past b (len*8) when
// looking for a zero: the string is taken as padded with zeros on the right.
func bitpos(b []byte, bit bool) int64 {
	skip := byte(0)
	if !bit {
		skip = 0xff
	}
	for i, c := range b {
		if c == skip {
			continue
		}
		if !bit {
			c = ^c
		}
		return int64(i)*8 + int64(bits.LeadingZeros8(c))
	}
	if bit {
		return -1
	}
	return int64(len(b)) * 8
}

// bitRange turns BITCOUNT/BITPOS start and end (bytes, or bits with isBit) into
// the byte range [start, end] and masks of the bits of the first and last byte
// that lie outside the range, as Redis computes them. totlen is the string
// length in bytes. empty reports start > end.
type bitRange struct {
	start, end         int64
	firstMask, lastNeg byte // bits of the edge bytes outside the range
	empty              bool
}

func makeBitRange(start, end, totlen int64, isBit bool) bitRange {
	if isBit {
		totlen <<= 3
	}
	if start < 0 {
		start += totlen
	}
	if end < 0 {
		end += totlen
	}
	start, end = max(start, 0), max(end, 0)
	if end >= totlen {
		end = totlen - 1
	}
	r := bitRange{start: start, end: end}
	if isBit && start <= end {
		r.firstMask = ^byte((1 << (8 - (start & 7))) - 1)
		r.lastNeg = byte((1 << (7 - (end & 7))) - 1)
		r.start, r.end = start>>3, end>>3
	}
	r.empty = r.start > r.end
	return r
}

// count is BITCOUNT over the range of p.
func (r bitRange) count(p []byte) int64 {
	n := popcount(p[r.start : r.end+1])
	if r.firstMask != 0 {
		n -= int64(bits.OnesCount8(p[r.start] & r.firstMask))
	}
	if r.lastNeg != 0 {
		n -= int64(bits.OnesCount8(p[r.end] & r.lastNeg))
	}
	return n
}

// bitposIn is BITPOS over the range of p, as Redis's bitposCommand computes it:
// the edge bytes are searched with the bits outside the range forced to the
// value not looked for. With endGiven, a search for a zero that runs off the
// range's end finds none (-1) instead of the padding bit past it.
func (r bitRange) bitposIn(p []byte, bit, endGiven bool) int64 {
	force := func(c, mask byte) byte {
		if bit {
			return c &^ mask
		}
		return c | mask
	}
	start, end := r.start, r.end
	nbytes := end - start + 1
	var pos int64
	found := func() int64 {
		if endGiven && !bit && pos == nbytes<<3 {
			return -1
		}
		if pos != -1 {
			pos += start << 3
		}
		return pos
	}
	if r.firstMask != 0 {
		c := force(p[start], r.firstMask)
		if r.lastNeg != 0 && nbytes == 1 {
			c = force(c, r.lastNeg)
		}
		pos = bitpos([]byte{c}, bit)
		if nbytes == 1 || (pos != -1 && pos != 8) {
			return found()
		}
		start++
		nbytes--
	}
	cur := nbytes
	if r.lastNeg != 0 {
		cur--
	}
	if cur > 0 {
		pos = bitpos(p[start:start+cur], bit)
		if nbytes == cur || (pos != -1 && pos != cur<<3) {
			return found()
		}
		start += cur
		nbytes -= cur
	}
	pos = bitpos([]byte{force(p[end], r.lastNeg)}, bit)
	return found()
}

// Bitfield integers: width bits at bit offset off, most significant bit first.

func getUnsignedField(p []byte, off uint64, width int) uint64 {
	var v uint64
	for j := 0; j < width; j++ {
		v = v<<1 | b2u(getBit(p, off))
		off++
	}
	return v
}

func getSignedField(p []byte, off uint64, width int) int64 {
	v := int64(getUnsignedField(p, off, width))
	if width < 64 && v&(1<<(width-1)) != 0 {
		v |= -1 << width
	}
	return v
}

// setUnsignedField writes the low width bits of v; p must hold them.
func setUnsignedField(p []byte, off uint64, width int, v uint64) {
	for j := 0; j < width; j++ {
		mask := byte(0x80 >> (off & 7))
		if v&(1<<(width-1-j)) != 0 {
			p[off>>3] |= mask
		} else {
			p[off>>3] &^= mask
		}
		off++
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Overflow modes of BITFIELD.
const (
	overflowWrap = iota
	overflowSat
	overflowFail
)

// unsignedOverflow is Redis's checkUnsignedBitfieldOverflow: 0 if value+incr
// fits width bits, else 1 (overflow) or -1 (underflow), with limit the value
// to store under WRAP or SAT.
func unsignedOverflow(value uint64, incr int64, width, mode int) (int, uint64) {
	maxv := uint64(math.MaxUint64)
	if width < 64 {
		maxv = 1<<width - 1
	}
	maxincr := int64(maxv - value)
	minincr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) &^ (math.MaxUint64 << width) }
	switch {
	case value > maxv || (incr > 0 && incr > maxincr):
		switch mode {
		case overflowWrap:
			return 1, wrap()
		case overflowSat:
			return 1, maxv
		}
		return 1, 0
	case incr < 0 && incr < minincr:
		switch mode {
		case overflowWrap:
			return 1, wrap()
		case overflowSat:
			return -1, 0
		}
		return -1, 0
	}
	return 0, 0
}

// signedOverflow is Redis's checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, width, mode int) (int, int64) {
	maxv := int64(math.MaxInt64)
	if width < 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxincr := int64(uint64(maxv) - uint64(value))
	minincr := minv - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << width
			if c&(1<<(width-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	switch {
	case value > maxv || (width != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr):
		switch mode {
		case overflowWrap:
			return 1, wrap()
		case overflowSat:
			return 1, maxv
		}
		return 1, 0
	case value < minv || (width != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr):
		switch mode {
		case overflowWrap:
			return 1, wrap()
		case overflowSat:
			return -1, minv
		}
		return -1, 0
	}
	return 0, 0
}

// BITFIELD operations.
const (
	bfGet = iota
	bfSet
	bfIncrby
)

// bitfieldOp is one parsed BITFIELD subcommand.
type bitfieldOp struct {
	op     int
	off    uint64
	width  int
	signed bool
	mode   int   // overflow mode in force for this op
	val    int64 // SET value or INCRBY increment
}

// bitfieldArgs is BITFIELD's parsed argument list.
type bitfieldArgs struct {
	ops     []bitfieldOp
	write   bool   // any SET or INCRBY
	highest uint64 // highest bit written
}

// parseBitfield parses BITFIELD's subcommands (args after the key) as Redis's
// bitfieldGeneric does, in order, stopping at the first error, whose text it
// returns. maxBulk is proto-max-bulk-len.
func parseBitfield(args [][]byte, maxBulk int64) (bitfieldArgs, string) {
	var a bitfieldArgs
	mode := overflowWrap
	for j := 0; j < len(args); j++ {
		rem := len(args) - j - 1
		var op int
		switch {
		case eqFold(args[j], "get") && rem >= 2:
			op = bfGet
		case eqFold(args[j], "set") && rem >= 3:
			op = bfSet
		case eqFold(args[j], "incrby") && rem >= 3:
			op = bfIncrby
		case eqFold(args[j], "overflow") && rem >= 1:
			j++
			switch {
			case eqFold(args[j], "wrap"):
				mode = overflowWrap
			case eqFold(args[j], "sat"):
				mode = overflowSat
			case eqFold(args[j], "fail"):
				mode = overflowFail
			default:
				return a, msgBitfieldOverflow
			}
			continue
		default:
			return a, msgSyntax
		}
		signed, width, ok := parseBitfieldType(args[j+1])
		if !ok {
			return a, msgBitfieldType
		}
		off, ok := parseBitOffset(args[j+2], true, width, maxBulk)
		if !ok {
			return a, msgBitOffset
		}
		o := bitfieldOp{op: op, off: off, width: width, signed: signed, mode: mode}
		if op != bfGet {
			a.write = true
			a.highest = max(a.highest, off+uint64(width)-1)
			if o.val, ok = parseRedisInt(args[j+3]); !ok {
				return a, msgNotInt
			}
			j++
		}
		a.ops = append(a.ops, o)
		j += 2
	}
	return a, ""
}

// parseBitfieldType parses "i1".."i64" and "u1".."u63".
func parseBitfieldType(b []byte) (signed bool, width int, ok bool) {
	if len(b) == 0 || (b[0] != 'i' && b[0] != 'u') {
		return false, 0, false
	}
	signed = b[0] == 'i'
	n, ok := parseRedisInt(cstringBytes(b[1:]))
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, int(n), true
}

// cstringBytes is b up to its first NUL byte, as C's strlen sees it.
func cstringBytes(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// apply runs a SET or INCRBY op on p (which holds its bits) and returns the
// reply value, whether to reply null (FAIL), and whether the bits changed.
func (o bitfieldOp) apply(p []byte) (reply int64, null, changed bool) {
	if o.signed {
		old := getSignedField(p, o.off, o.width)
		var nv, ret int64
		var ovf int
		var lim int64
		if o.op == bfIncrby {
			ovf, lim = signedOverflow(old, o.val, o.width, o.mode)
			nv = old + o.val // wraps in Go as in C's two's complement
			if ovf != 0 {
				nv = lim
			}
			ret = nv
		} else {
			nv = o.val
			if ovf, lim = signedOverflow(nv, 0, o.width, o.mode); ovf != 0 {
				nv = lim
			}
			ret = old
		}
		if ovf != 0 && o.mode == overflowFail {
			return 0, true, false
		}
		setUnsignedField(p, o.off, o.width, uint64(nv))
		return ret, false, old != nv
	}
	old := getUnsignedField(p, o.off, o.width)
	var nv, ret, lim uint64
	var ovf int
	if o.op == bfIncrby {
		nv = old + uint64(o.val)
		if ovf, lim = unsignedOverflow(old, o.val, o.width, o.mode); ovf != 0 {
			nv = lim
		}
		ret = nv
	} else {
		nv = uint64(o.val)
		if ovf, lim = unsignedOverflow(nv, 0, o.width, o.mode); ovf != 0 {
			nv = lim
		}
		ret = old
	}
	if ovf != 0 && o.mode == overflowFail {
		return 0, true, false
	}
	setUnsignedField(p, o.off, o.width, nv)
	return int64(ret), false, old != nv
}

// get runs a GET op on p, reading zeros past its end.
func (o bitfieldOp) get(p []byte) int64 {
	var buf [9]byte
	byteOff := o.off >> 3
	if byteOff < uint64(len(p)) {
		copy(buf[:], p[byteOff:])
	}
	rel := o.off - byteOff*8
	if o.signed {
		return getSignedField(buf[:], rel, o.width)
	}
	return int64(getUnsignedField(buf[:], rel, o.width))
}
