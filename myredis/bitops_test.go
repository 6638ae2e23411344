package myredis

import (
	"bytes"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// TestBitfieldOverflowModel checks BITFIELD INCRBY on every width against
// exact integer arithmetic: WRAP keeps the sum modulo 2^width, SAT clamps it,
// and the overflow direction is the sum's.
func TestBitfieldOverflowModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		signed := rapid.Bool().Draw(t, "signed")
		maxWidth := 63
		if signed {
			maxWidth = 64
		}
		width := rapid.IntRange(1, maxWidth).Draw(t, "width")
		lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), uint(width))
		if signed {
			lo.Neg(new(big.Int).Lsh(big.NewInt(1), uint(width-1)))
			hi.Lsh(big.NewInt(1), uint(width-1))
		}
		hi.Sub(hi, big.NewInt(1))
		// a stored value: anything the field can hold
		raw := rapid.Uint64().Draw(t, "raw")
		p := make([]byte, 9)
		setUnsignedField(p, 3, width, raw)
		incr := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-300, 300)).Draw(t, "incr")
		mode := rapid.IntRange(overflowWrap, overflowFail).Draw(t, "mode")
		op := bitfieldOp{op: bfIncrby, off: 3, width: width, signed: signed, mode: mode, val: incr}
		var old *big.Int
		if signed {
			old = big.NewInt(getSignedField(p, 3, width))
		} else {
			old = new(big.Int).SetUint64(getUnsignedField(p, 3, width))
		}
		sum := new(big.Int).Add(old, big.NewInt(incr))
		over, under := sum.Cmp(hi) > 0, sum.Cmp(lo) < 0
		want := new(big.Int).Set(sum)
		switch {
		case (over || under) && mode == overflowSat && over:
			want.Set(hi)
		case (over || under) && mode == overflowSat:
			want.Set(lo)
		case over || under: // wrap
			m := new(big.Int).Lsh(big.NewInt(1), uint(width))
			want.Sub(sum, lo).Mod(want, m).Add(want, lo)
		}
		reply, null, _ := op.apply(p)
		if mode == overflowFail && (over || under) {
			if !null {
				t.Fatalf("FAIL mode: %v+%d in %d bits answered %d", old, incr, width, reply)
			}
			return
		}
		var got *big.Int
		if signed {
			got = big.NewInt(reply)
		} else {
			got = new(big.Int).SetUint64(uint64(reply))
		}
		if null || got.Cmp(want) != 0 {
			t.Fatalf("%v+%d in %d bits (signed %v, mode %d): got %v null %v, want %v", old, incr, width, signed, mode, got, null, want)
		}
	})
}

// TestBitposRange: BITPOS over a bit range finds what a bit-by-bit scan finds.
func TestBitposRange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 0xff, 0x80, 0x01, 0x5a}), 1, 20).Draw(t, "p")
		bits := int64(len(p)) * 8
		start := rapid.Int64Range(0, bits-1).Draw(t, "start")
		end := rapid.Int64Range(start, bits-1).Draw(t, "end")
		bit := rapid.Bool().Draw(t, "bit")
		want := int64(-1)
		for i := start; i <= end; i++ {
			if getBit(p, uint64(i)) == bit {
				want = i
				break
			}
		}
		r := makeBitRange(start, end, int64(len(p)), true)
		if got := r.bitposIn(p, bit, true); got != want {
			t.Fatalf("bitpos %v in [%d,%d] of % x: got %d, want %d", bit, start, end, p, got, want)
		}
		n := int64(0)
		for i := start; i <= end; i++ {
			if getBit(p, uint64(i)) {
				n++
			}
		}
		if got := r.count(p); got != n {
			t.Fatalf("bitcount [%d,%d] of % x: got %d, want %d", start, end, p, got, n)
		}
	})
}

// FuzzBitfieldArgs parses arbitrary BITFIELD argument lists and runs what
// parses on a string of the size the parse asks for: no panic, and no op
// reaches past the bits the parse promised.
func FuzzBitfieldArgs(f *testing.F) {
	f.Add([]byte("GET i8 0 SET u4 #3 7 OVERFLOW SAT INCRBY i64 100 -1"))
	f.Add([]byte("OVERFLOW FAIL INCRBY u63 #1 9223372036854775807 GET i1 4294967295"))
	f.Add([]byte("GET u64 0"))
	f.Add([]byte("SET i8 #-1 1"))
	f.Fuzz(func(t *testing.T, line []byte) {
		args := bytes.Fields(line)
		const maxBulk = 1 << 12
		a, msg := parseBitfield(args, maxBulk)
		if msg != "" {
			return
		}
		p := make([]byte, a.highest/8+1)
		for _, o := range a.ops {
			if o.width < 1 || o.width > 64 || (!o.signed && o.width > 63) {
				t.Fatalf("width %d signed %v", o.width, o.signed)
			}
			if o.off>>3 >= maxBulk {
				t.Fatalf("offset %d past proto-max-bulk-len", o.off)
			}
			if o.op == bfGet {
				o.get(p)
				continue
			}
			if o.off+uint64(o.width)-1 > a.highest {
				t.Fatalf("write at %d+%d beyond highest %d", o.off, o.width, a.highest)
			}
			o.apply(p)
		}
	})
}
