package myredis

import "encoding/binary"

// commandsBitops registers the bitmap commands: SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP, BITFIELD and BITFIELD_RO. They work on string values (see
// bitops.go for the bit numbering).
func commandsBitops() []*command {
	return []*command{
		{name: "setbit", arity: 4, flags: flagWrite, fn: cmdSetbit, firstKey: 1, lastKey: 1},
		{name: "getbit", arity: 3, flags: flagReadonly, fn: cmdGetbit, firstKey: 1, lastKey: 1},
		{name: "bitcount", arity: -2, flags: flagReadonly, fn: cmdBitcount, firstKey: 1, lastKey: 1},
		{name: "bitpos", arity: -3, flags: flagReadonly, fn: cmdBitpos, firstKey: 1, lastKey: 1},
		{name: "bitop", arity: -4, flags: flagWrite, fn: cmdBitop, firstKey: 2, lastKey: -1},
		{name: "bitfield", arity: -2, flags: flagWrite, fn: cmdBitfield, firstKey: 1, lastKey: 1},
		{name: "bitfield_ro", arity: -2, flags: flagReadonly, fn: cmdBitfieldRO, firstKey: 1, lastKey: 1},
	}
}

// maxBulk is proto-max-bulk-len, the largest string a command may build.
func (x *Ctx) maxBulk() int64 { return x.s.cfg.ProtoMaxBulkLen }

// argLong parses argument i as Redis's getLongFromObjectOrReply with a custom
// error text.
func (x *Ctx) argLong(i int, msg string) (int64, bool) {
	n, ok := parseRedisInt(x.args[i])
	if !ok {
		x.err(msg)
	}
	return n, ok
}

func cmdSetbit(x *Ctx) {
	off, ok := parseBitOffset(x.args[2], false, 0, x.maxBulk())
	if !ok {
		x.err(msgBitOffset)
		return
	}
	on, ok := x.argLong(3, msgBitValue)
	if !ok {
		return
	}
	if on&^1 != 0 {
		x.err(msgBitValue)
		return
	}
	key := x.arg(1)
	b, dirty, ok := x.stringForBits(key, off)
	if !ok {
		return
	}
	old := getBit(b, off)
	if dirty || old != (on == 1) {
		mask := byte(0x80 >> (off & 7))
		if on == 1 {
			b[off>>3] |= mask
		} else {
			b[off>>3] &^= mask
		}
		x.db.modified(key)
		x.dirty(1)
		x.notify(notifyString, "setbit", key)
	}
	x.w.Bool(old)
}

func cmdGetbit(x *Ctx) {
	off, ok := parseBitOffset(x.args[2], false, 0, x.maxBulk())
	if !ok {
		x.err(msgBitOffset)
		return
	}
	b, _, ok := x.getString(x.arg(1))
	if ok {
		x.w.Bool(getBit(b, off))
	}
}

// cmdBitcount checks the key before its arguments, as Redis does: a missing key
// answers 0 whatever follows it.
func cmdBitcount(x *Ctx) {
	p, found, ok := x.getString(x.arg(1))
	if !ok {
		return
	}
	if !found {
		x.w.Int(0)
		return
	}
	var r bitRange
	switch x.nargs() {
	case 4, 5:
		start, ok := x.argInt(2)
		if !ok {
			return
		}
		end, ok := x.argInt(3)
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			x.w.Int(0)
			return
		}
		isBit := false
		if x.nargs() == 5 {
			if isBit, ok = x.bitOrByte(4); !ok {
				return
			}
		}
		r = makeBitRange(start, end, int64(len(p)), isBit)
	case 2:
		r = bitRange{start: 0, end: int64(len(p)) - 1, empty: len(p) == 0}
	default:
		x.err(msgSyntax)
		return
	}
	if r.empty {
		x.w.Int(0)
		return
	}
	x.w.Int(r.count(p))
}

// bitOrByte parses the BIT|BYTE unit of BITCOUNT and BITPOS.
func (x *Ctx) bitOrByte(i int) (isBit, ok bool) {
	switch {
	case eqFold(x.args[i], "bit"):
		return true, true
	case eqFold(x.args[i], "byte"):
		return false, true
	}
	x.err(msgSyntax)
	return false, false
}

func cmdBitpos(x *Ctx) {
	want, ok := x.argInt(2)
	if !ok {
		return
	}
	if want != 0 && want != 1 {
		x.err(msgBitArg)
		return
	}
	bit := want == 1
	p, found, ok := x.getString(x.arg(1))
	if !ok {
		return
	}
	if !found {
		if bit {
			x.w.Int(-1)
		} else {
			x.w.Int(0)
		}
		return
	}
	var r bitRange
	endGiven := false
	switch x.nargs() {
	case 4, 5, 6:
		start, ok := x.argInt(3)
		if !ok {
			return
		}
		isBit := false
		if x.nargs() == 6 {
			if isBit, ok = x.bitOrByte(5); !ok {
				return
			}
		}
		end := int64(len(p)) - 1
		if x.nargs() >= 5 {
			if end, ok = x.argInt(4); !ok {
				return
			}
			endGiven = true
		}
		r = makeBitRange(start, end, int64(len(p)), isBit)
	case 3:
		r = bitRange{start: 0, end: int64(len(p)) - 1, empty: len(p) == 0}
	default:
		x.err(msgSyntax)
		return
	}
	if r.empty {
		x.w.Int(-1)
		return
	}
	x.w.Int(r.bitposIn(p, bit, endGiven))
}

// BITOP operations.
const (
	bitopAnd = iota
	bitopOr
	bitopXor
	bitopNot
)

func cmdBitop(x *Ctx) {
	var op int
	switch {
	case eqFold(x.args[1], "and"):
		op = bitopAnd
	case eqFold(x.args[1], "or"):
		op = bitopOr
	case eqFold(x.args[1], "xor"):
		op = bitopXor
	case eqFold(x.args[1], "not"):
		op = bitopNot
	default:
		x.err(msgSyntax)
		return
	}
	if op == bitopNot && x.nargs() != 4 {
		x.err(msgBitopNot)
		return
	}
	srcs := make([][]byte, 0, x.nargs()-3)
	maxlen := 0
	for _, k := range x.args[3:] {
		e := x.lookupRead(string(k))
		if e == nil {
			srcs = append(srcs, nil)
			continue
		}
		b, isStr := e.str()
		if !isStr {
			x.wrongType()
			return
		}
		srcs = append(srcs, b)
		maxlen = max(maxlen, len(b))
	}
	dest := x.arg(2)
	if maxlen == 0 {
		if x.db.delete(dest) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", dest)
		}
		x.w.Int(0)
		return
	}
	x.db.set(dest, bitop(op, srcs, maxlen), false)
	x.dirty(1)
	x.notify(notifyString, "set", dest)
	x.w.Int(int64(maxlen))
}

// bitop computes BITOP over srcs, each taken as padded with zero bytes to
// maxlen, into a new string of maxlen bytes, eight bytes at a time.
func bitop(op int, srcs [][]byte, maxlen int) []byte {
	res := make([]byte, maxlen)
	copy(res, srcs[0])
	if op == bitopNot {
		n := len(res) &^ 7
		for i := 0; i < n; i += 8 {
			le.PutUint64(res[i:], ^le.Uint64(res[i:]))
		}
		for i := n; i < len(res); i++ {
			res[i] = ^res[i]
		}
		return res
	}
	for _, s := range srcs[1:] {
		n := len(s) &^ 7
		switch op {
		case bitopAnd:
			for i := 0; i < n; i += 8 {
				le.PutUint64(res[i:], le.Uint64(res[i:])&le.Uint64(s[i:]))
			}
			for i := n; i < len(s); i++ {
				res[i] &= s[i]
			}
			clear(res[len(s):])
		case bitopOr:
			for i := 0; i < n; i += 8 {
				le.PutUint64(res[i:], le.Uint64(res[i:])|le.Uint64(s[i:]))
			}
			for i := n; i < len(s); i++ {
				res[i] |= s[i]
			}
		case bitopXor:
			for i := 0; i < n; i += 8 {
				le.PutUint64(res[i:], le.Uint64(res[i:])^le.Uint64(s[i:]))
			}
			for i := n; i < len(s); i++ {
				res[i] ^= s[i]
			}
		}
	}
	return res
}

// le reads and writes the 64-bit words of BITOP (any byte order would do).
var le = binary.LittleEndian

func cmdBitfield(x *Ctx)   { x.bitfield(false) }
func cmdBitfieldRO(x *Ctx) { x.bitfield(true) }

// bitfield runs BITFIELD (or BITFIELD_RO, which refuses SET and INCRBY): every
// subcommand is parsed before the key is touched.
func (x *Ctx) bitfield(readonly bool) {
	a, msg := parseBitfield(x.args[2:], x.maxBulk())
	if msg != "" {
		x.err(msg)
		return
	}
	key := x.arg(1)
	var p []byte
	var dirty bool
	if !a.write {
		b, _, ok := x.getString(key)
		if !ok {
			return
		}
		p = b
	} else {
		if readonly {
			x.err(msgBitfieldRO)
			return
		}
		var ok bool
		if p, dirty, ok = x.stringForBits(key, a.highest); !ok {
			return
		}
	}
	x.w.Array(len(a.ops))
	changes := 0
	for _, o := range a.ops {
		if o.op == bfGet {
			x.w.Int(o.get(p))
			continue
		}
		v, null, changed := o.apply(p)
		if null {
			x.w.Null()
			continue
		}
		x.w.Int(v)
		if dirty || changed {
			changes++
		}
	}
	if changes > 0 {
		x.db.modified(key)
		x.dirty(changes)
		x.notify(notifyString, "setbit", key)
	}
}
