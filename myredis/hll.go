package myredis

import (
	"encoding/binary"
	"math"
)

// HyperLogLog, in Redis's own byte layout, so that a PF key is a plain string
// whose bytes (GET, the AOF, a future DUMP) are the ones Redis would hold after
// the same commands.
//
// A value is a 16-byte header followed by the registers:
//
//	"HYLL" | encoding (0 dense, 1 sparse) | 3 unused bytes | cached cardinality
//
// The cardinality is 8 bytes little endian; its top bit set means "stale,
// recompute". 16384 registers (P = 14) of 6 bits each hold the longest run of
// zeros (+1) seen in the 50 hash bits left after the 14 index bits of a 64-bit
// MurmurHash64A.
//
// Dense: 12288 bytes, register i in bits 6i..6i+5 counted from the least
// significant bit of byte 0 upward.
//
// Sparse: a run-length code, purely positional, of three opcodes:
//
//	ZERO  00xxxxxx           xxxxxx+1 registers (1..64) are zero
//	XZERO 01xxxxxx yyyyyyyy  xxxxxxyyyyyyyy+1 registers (1..16384) are zero
//	VAL   1vvvvvxx           xx+1 registers (1..4) hold vvvvv+1 (1..32)
//
// A new HLL is sparse (one XZERO of 16384); it turns dense when a register
// needs a value above 32 or when the sparse form would outgrow
// hll-sparse-max-bytes. Every decoder here walks a value that may be corrupted
// (SETRANGE can write anything into it): each step moves forward, reads past
// the end see a zero byte (Redis's sds terminator), and a code that does not
// cover exactly 16384 registers is reported, never trusted.

const (
	hllP           = 14
	hllQ           = 64 - hllP
	hllRegisters   = 1 << hllP
	hllPMask       = hllRegisters - 1
	hllBits        = 6
	hllRegisterMax = 1<<hllBits - 1
	hllHdrSize     = 16
	hllDenseSize   = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense       = 0
	hllSparse      = 1
	hllMaxEncoding = 1

	hllSparseValMaxValue = 32
	hllSparseValMaxLen   = 4
	hllSparseZeroMaxLen  = 64
	hllSparseXZeroMaxLen = 16384

	hllAlphaInf = 0.721347520444481703680 // 0.5/ln(2)
	hllSeed     = 0xadc83b19
)

// murmurHash64A is MurmurHash2, 64-bit version, reading 8-byte blocks little
// endian as Redis's endian-neutral variant does.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen hashes ele and returns its register and the length of its "000..1"
// pattern (1..hllQ+1).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, hllSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ // the loop ends, count <= Q+1
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// newHLL is an empty HLL: sparse, one XZERO covering every register.
func newHLL() []byte {
	b := make([]byte, hllHdrSize+2)
	copy(b, "HYLL")
	b[4] = hllSparse
	b[hllHdrSize] = byte((hllSparseXZeroMaxLen-1)>>8) | 0x40
	b[hllHdrSize+1] = byte((hllSparseXZeroMaxLen - 1) & 0xff)
	return b
}

// isHLL reports whether b has a valid HLL header and, if dense, length.
func isHLL(b []byte) bool {
	return len(b) >= hllHdrSize && string(b[:4]) == "HYLL" && b[4] <= hllMaxEncoding &&
		(b[4] != hllDense || len(b) == hllDenseSize)
}

func hllInvalidateCache(b []byte) { b[15] |= 0x80 }
func hllCacheValid(b []byte) bool { return b[15]&0x80 == 0 }

// --- dense ---

func hllDenseGet(regs []byte, i int) uint8 {
	pos := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(regs[pos])
	var b1 uint
	if pos+1 < len(regs) {
		b1 = uint(regs[pos+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegisterMax)
}

func hllDenseSetReg(regs []byte, i int, v uint8) {
	pos := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	regs[pos] &^= byte(hllRegisterMax << fb)
	regs[pos] |= byte(uint(v) << fb)
	if pos+1 < len(regs) {
		regs[pos+1] &^= byte(hllRegisterMax >> (8 - fb))
		regs[pos+1] |= byte(uint(v) >> (8 - fb))
	}
}

// hllDenseSet raises register i to count if it is lower; reports a change.
func hllDenseSet(regs []byte, i int, count uint8) bool {
	if count > hllDenseGet(regs, i) {
		hllDenseSetReg(regs, i, count)
		return true
	}
	return false
}

// hllDenseDecode unpacks a dense HLL's registers, four per three bytes.
func hllDenseDecode(regs []byte, out *[hllRegisters]uint8) {
	regs = regs[:hllRegisters*hllBits/8]
	for i, j := 0, 0; i < hllRegisters; i, j = i+4, j+3 {
		b0, b1, b2 := regs[j], regs[j+1], regs[j+2]
		out[i] = b0 & 63
		out[i+1] = (b0>>6 | b1<<2) & 63
		out[i+2] = (b1>>4 | b2<<4) & 63
		out[i+3] = b2 >> 2
	}
}

func hllDenseHisto(regs []byte, h *[64]int) {
	regs = regs[:hllRegisters*hllBits/8]
	for j := 0; j+2 < len(regs); j += 3 {
		b0, b1, b2 := regs[j], regs[j+1], regs[j+2]
		h[b0&63]++
		h[(b0>>6|b1<<2)&63]++
		h[(b1>>4|b2<<4)&63]++
		h[b2>>2]++
	}
}

// --- sparse opcodes ---

// sparseAt reads the opcode at p of code (the registers after the header): its
// byte length, its span of registers and its value (0 for ZERO and XZERO).
// A byte past the end reads as zero.
func sparseAt(code []byte, p int) (oplen, span int, val uint8) {
	c := code[p]
	switch {
	case c&0xc0 == 0: // ZERO
		return 1, int(c&0x3f) + 1, 0
	case c&0xc0 == 0x40: // XZERO
		var lo byte
		if p+1 < len(code) {
			lo = code[p+1]
		}
		return 2, (int(c&0x3f)<<8 | int(lo)) + 1, 0
	default: // VAL
		return 1, int(c&0x3) + 1, (c>>2)&0x1f + 1
	}
}

func isVal(c byte) bool { return c&0x80 != 0 }

func sparseVal(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }

// appendSparseZero appends the shortest zero run of n registers.
func appendSparseZero(seq []byte, n int) []byte {
	if n > hllSparseZeroMaxLen {
		return append(seq, byte((n-1)>>8)|0x40, byte((n-1)&0xff))
	}
	return append(seq, byte(n-1))
}

// hllSparseRegisters decodes a sparse code into one byte per register. ok is
// false unless the code covers exactly 16384 registers.
func hllSparseRegisters(code []byte, regs *[hllRegisters]uint8) bool {
	idx := 0
	for p := 0; p < len(code); {
		oplen, span, val := sparseAt(code, p)
		p += oplen
		if val == 0 {
			idx += span
			continue
		}
		if idx+span > hllRegisters {
			return false
		}
		for ; span > 0; span-- {
			regs[idx] = max(regs[idx], val)
			idx++
		}
	}
	return idx == hllRegisters
}

// hllSparseToDense converts a sparse HLL into a new dense one keeping the header
// (the cached cardinality too); ok is false for a corrupted code.
func hllSparseToDense(b []byte) ([]byte, bool) {
	if b[4] == hllDense {
		return b, true
	}
	var regs [hllRegisters]uint8
	if !hllSparseRegisters(b[hllHdrSize:], &regs) {
		return nil, false
	}
	d := make([]byte, hllDenseSize)
	copy(d, b[:hllHdrSize])
	d[4] = hllDense
	for i, v := range regs {
		if v != 0 {
			hllDenseSetReg(d[hllHdrSize:], i, v)
		}
	}
	return d, true
}

// hllSparseSet raises register index of sparse HLL b to count if lower, as
// Redis's hllSparseSet: the opcode covering it is split, neighbouring VALs
// merged, and the HLL promoted to dense when count does not fit a VAL or the code
// would outgrow maxBytes. It returns the value (possibly a new slice) and 1 if
// it changed, 0 if not, -1 if the code is corrupted.
func hllSparseSet(b []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	if count > hllSparseValMaxValue {
		return hllPromote(b, index, count)
	}
	code := b[hllHdrSize:]
	first, span, prev, p := 0, 0, -1, 0
	oplen := 0
	var val uint8
	for p < len(code) {
		oplen, span, val = sparseAt(code, p)
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= len(code) {
		return b, -1
	}
	isZero := !isVal(code[p])
	runlen := span
	if !isZero {
		if val >= count { // case A: nothing to do
			return b, 0
		}
		if runlen == 1 { // case B
			code[p] = sparseVal(int(count), 1)
			return hllSparseMerge(b, prev), 1
		}
	}
	if isZero && oplen == 1 && runlen == 1 { // case C: a ZERO of one register
		code[p] = sparseVal(int(count), 1)
		return hllSparseMerge(b, prev), 1
	}
	// General case: split the opcode into up to three.
	seq := make([]byte, 0, 5)
	last := first + span - 1
	if isZero {
		if index != first {
			seq = appendSparseZero(seq, index-first)
		}
		seq = append(seq, sparseVal(int(count), 1))
		if index != last {
			seq = appendSparseZero(seq, last-index)
		}
	} else {
		cur := int(val)
		if index != first {
			seq = append(seq, sparseVal(cur, index-first))
		}
		seq = append(seq, sparseVal(int(count), 1))
		if index != last {
			seq = append(seq, sparseVal(cur, last-index))
		}
	}
	delta := len(seq) - oplen
	if delta > 0 && int64(len(b)+delta) > maxBytes {
		return hllPromote(b, index, count)
	}
	return hllSparseMerge(spliceSparse(b, hllHdrSize+p, oplen, seq), prev), 1
}

// spliceSparse replaces the oplen-byte opcode at byte at of b by seq, in place
// when b has the room. An XZERO cut short by the end of b loses the byte it
// lacked, as it does in Redis.
func spliceSparse(b []byte, at, oplen int, seq []byte) []byte {
	newLen := len(b) + len(seq) - oplen
	tail := b[min(at+oplen, len(b)):]
	work := at + len(seq) + len(tail)
	var nb []byte
	if work <= cap(b) {
		nb = b[:work]
	} else {
		nb = make([]byte, work, work+work/4+8)
		copy(nb, b[:at])
	}
	copy(nb[at+len(seq):], tail) // before seq: the two may overlap in b
	copy(nb[at:], seq)
	return nb[:newLen]
}

// hllPromote converts sparse b to dense and sets the register.
func hllPromote(b []byte, index int, count uint8) ([]byte, int) {
	d, ok := hllSparseToDense(b)
	if !ok {
		return b, -1
	}
	hllDenseSet(d[hllHdrSize:], index, count)
	return d, 1
}

// hllSparseMerge joins adjacent VAL opcodes of equal value (up to 4 registers),
// scanning at most 5 opcodes from prev (-1: the start), and invalidates the
// cached cardinality.
func hllSparseMerge(b []byte, prev int) []byte {
	code := b[hllHdrSize:]
	p := max(prev, 0)
	for scan := 5; p < len(code) && scan > 0; scan-- {
		c := code[p]
		if !isVal(c) {
			if c&0xc0 == 0x40 {
				p += 2
			} else {
				p++
			}
			continue
		}
		if p+1 < len(code) && isVal(code[p+1]) {
			v1, v2 := (c>>2)&0x1f+1, (code[p+1]>>2)&0x1f+1
			if v1 == v2 {
				if n := int(c&3) + int(code[p+1]&3) + 2; n <= hllSparseValMaxLen {
					code[p+1] = sparseVal(int(v1), n)
					copy(code[p:], code[p+1:])
					code = code[:len(code)-1]
					continue
				}
			}
		}
		p++
	}
	b = b[:hllHdrSize+len(code)]
	hllInvalidateCache(b)
	return b
}

// hllSparseHisto adds the sparse code's registers to h; ok is false unless it
// covers exactly 16384 registers.
func hllSparseHisto(code []byte, h *[64]int) bool {
	idx := 0
	for p := 0; p < len(code); {
		oplen, span, val := sparseAt(code, p)
		p += oplen
		idx += span
		h[val] += span
	}
	return idx == hllRegisters
}

// hllAdd adds ele to HLL b; see hllSparseSet for the results.
func hllAdd(b, ele []byte, maxBytes int64) ([]byte, int) {
	index, count := hllPatLen(ele)
	return hllSet(b, index, count, maxBytes)
}

// hllSet raises register index of b to count in either encoding.
func hllSet(b []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	switch b[4] {
	case hllDense:
		if hllDenseSet(b[hllHdrSize:], index, count) {
			return b, 1
		}
		return b, 0
	case hllSparse:
		return hllSparseSet(b, index, count, maxBytes)
	}
	return b, -1
}

// hllHisto is the register histogram of b; ok is false for a corrupted code.
func hllHisto(b []byte) (h [64]int, ok bool) {
	if b[4] == hllDense {
		hllDenseHisto(b[hllHdrSize:], &h)
		return h, true
	}
	ok = hllSparseHisto(b[hllHdrSize:], &h)
	return h, ok
}

// hllMerge raises regs to the registers of HLL b; false for a corrupted code.
func hllMerge(regs *[hllRegisters]uint8, b []byte) bool {
	if b[4] == hllDense {
		var d [hllRegisters]uint8
		hllDenseDecode(b[hllHdrSize:], &d)
		for i, v := range d {
			regs[i] = max(regs[i], v)
		}
		return true
	}
	return hllSparseRegisters(b[hllHdrSize:], regs)
}

func hllRawHisto(regs *[hllRegisters]uint8) (h [64]int) {
	for _, v := range regs {
		h[v&63]++
	}
	return h
}

// hllEstimate is the cardinality estimate of a register histogram, Otmar Ertl's
// improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284) exactly as Redis computes it in
// doubles. The float64 conversions keep each step rounded, as in C.
func hllEstimate(h *[64]int) uint64 {
	m := float64(hllRegisters)
	z := m * hllTau(float64(float64(m-float64(h[hllQ+1]))/m))
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(h[0])/m))
	return uint64(math.Round(float64(float64(hllAlphaInf*m)*m) / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zPrime := z
		z += float64(x * y)
		y += y
		if zPrime == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if zPrime == z {
			return z / 3
		}
	}
}

// hllCachedCard reads the cached cardinality (valid only if hllCacheValid).
func hllCachedCard(b []byte) uint64 { return binary.LittleEndian.Uint64(b[8:16]) }

func hllSetCachedCard(b []byte, card uint64) { binary.LittleEndian.PutUint64(b[8:16], card) }
