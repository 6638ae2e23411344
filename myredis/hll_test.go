package myredis

import (
	"bytes"
	"encoding/binary"
	"testing"

	"pgregory.net/rapid"
)

// hllRegs decodes any valid HLL into one byte per register.
func hllRegs(t interface{ Fatalf(string, ...any) }, b []byte) [hllRegisters]uint8 {
	var regs [hllRegisters]uint8
	if !isHLL(b) {
		t.Fatalf("not an HLL: % x", b[:min(len(b), 16)])
	}
	if !hllMerge(&regs, b) {
		t.Fatalf("corrupted code % x", b[hllHdrSize:])
	}
	return regs
}

func TestNewHLL(t *testing.T) {
	want := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff")
	if got := newHLL(); !bytes.Equal(got, want) {
		t.Fatalf("newHLL = % x, want % x", got, want)
	}
	h, ok := hllHisto(newHLL())
	if !ok || h[0] != hllRegisters || hllEstimate(&h) != 0 {
		t.Fatalf("empty HLL: histogram ok=%v zeros=%d estimate=%d", ok, h[0], hllEstimate(&h))
	}
}

// TestHLLDenseRegisters: every register keeps its value and leaves its
// neighbours alone, the last one included (it has no byte after it).
func TestHLLDenseRegisters(t *testing.T) {
	regs := make([]byte, hllDenseSize-hllHdrSize)
	for i := 0; i < hllRegisters; i++ {
		hllDenseSetReg(regs, i, uint8((i*7+3)&hllRegisterMax))
	}
	for i := 0; i < hllRegisters; i++ {
		if got, want := hllDenseGet(regs, i), uint8((i*7+3)&hllRegisterMax); got != want {
			t.Fatalf("register %d = %d, want %d", i, got, want)
		}
	}
}

// TestHLLSparseModel sets random registers through the sparse code and checks
// it against a plain array: the code always decodes to the model, stays within
// hll-sparse-max-bytes or turns dense, and the sparse and dense forms estimate
// the same cardinality.
func TestHLLSparseModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxBytes := int64(rapid.SampledFrom([]int{0, 20, 100, 3000, 100000}).Draw(t, "maxBytes"))
		b := newHLL()
		var model [hllRegisters]uint8
		n := rapid.IntRange(1, 300).Draw(t, "n")
		near := rapid.IntRange(0, hllRegisters-1).Draw(t, "near")
		for i := 0; i < n; i++ {
			idx := rapid.OneOf(rapid.IntRange(0, hllRegisters-1),
				rapid.IntRange(max(near-8, 0), min(near+8, hllRegisters-1))).Draw(t, "idx")
			count := uint8(rapid.IntRange(1, hllQ+1).Draw(t, "count"))
			wasSparse := b[4] == hllSparse
			before := len(b)
			var r int
			b, r = hllSet(b, idx, count, maxBytes)
			changed := count > model[idx]
			if changed {
				model[idx] = count
			}
			if r != map[bool]int{true: 1, false: 0}[changed] {
				t.Fatalf("set %d to %d: result %d, changed %v", idx, count, r, changed)
			}
			if b[4] == hllSparse && len(b) > before && int64(len(b)) > maxBytes {
				t.Fatalf("sparse code grew to %d bytes over the limit %d", len(b), maxBytes)
			}
			if !wasSparse && b[4] == hllSparse {
				t.Fatal("dense turned sparse")
			}
			if got := hllRegs(t, b); got != model {
				t.Fatalf("after setting %d to %d the registers differ from the model", idx, count)
			}
		}
		if b[4] == hllSparse {
			d, ok := hllSparseToDense(b)
			if !ok {
				t.Fatal("valid sparse code refused")
			}
			hs, _ := hllHisto(b)
			hd, _ := hllHisto(d)
			if hllEstimate(&hs) != hllEstimate(&hd) {
				t.Fatal("sparse and dense estimates differ")
			}
		}
	})
}

// TestHLLEstimate: the estimate stays within a few standard errors (1.04/128).
func TestHLLEstimate(t *testing.T) {
	b := newHLL()
	var ele [8]byte
	for n := 1; n <= 200000; n++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(n))
		b, _ = hllAdd(b, ele[:], 3000)
		if n == 10 || n == 1000 || n == 200000 {
			h, _ := hllHisto(b)
			est := float64(hllEstimate(&h))
			if d := est - float64(n); d*d > (0.05*float64(n)+1)*(0.05*float64(n)+1) {
				t.Fatalf("estimate %v for %d elements", est, n)
			}
		}
	}
	if b[4] != hllDense {
		t.Fatal("200000 elements still sparse")
	}
}

// FuzzHLLSparse feeds arbitrary sparse codes (as SETRANGE can leave them) to
// every decoder and to the register update: nothing may panic or loop, and the
// decoders agree on whether the code is valid.
func FuzzHLLSparse(f *testing.F) {
	f.Add([]byte{0x7f, 0xff}, []byte("a"), int64(3000))
	f.Add([]byte{0x7f}, []byte("b"), int64(3000))
	f.Add([]byte{0x40, 0x00, 0x80, 0x7f, 0xfd}, []byte("c"), int64(20))
	f.Add([]byte{0x80, 0x81, 0xff, 0x3f}, []byte(""), int64(0))
	f.Fuzz(func(t *testing.T, code, ele []byte, maxBytes int64) {
		b := append([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"), code...)
		var regs [hllRegisters]uint8
		valid := hllSparseRegisters(b[hllHdrSize:], &regs)
		_, histOK := hllHisto(b)
		_, denseOK := hllSparseToDense(b)
		if denseOK != valid {
			t.Fatalf("toDense %v, decode %v", denseOK, valid)
		}
		if valid && !histOK {
			t.Fatal("valid code with a bad histogram")
		}
		_ = hllDecode(b[hllHdrSize:])
		nb, r := hllAdd(append([]byte(nil), b...), ele, maxBytes)
		if r != -1 && !isHLL(nb) {
			t.Fatalf("add gave a bad header: % x", nb[:hllHdrSize])
		}
		if valid && r == -1 {
			t.Fatal("add refused a valid code")
		}
		if valid && r != -1 {
			if got := hllRegs(t, nb); true {
				idx, count := hllPatLen(ele)
				regs[idx] = max(regs[idx], count)
				if got != regs {
					t.Fatal("add changed other registers")
				}
			}
		}
	})
}
