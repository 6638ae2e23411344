package myredis

// LZF, the compression of RDB strings (liblzf's format, as Redis uses it):
// a stream of literal runs (a control byte 0..31 = run length - 1, then the
// bytes) and back references (control byte = length-2 in the top 3 bits, 7
// meaning "a length byte follows", and the offset's high 5 bits; then the
// offset's low byte). Offsets reach 8 KB back, lengths 3..264.

const (
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = 1<<8 + 1<<3
	lzfHLog   = 14
)

// lzfCompress compresses in; nil when the result would exceed maxOut bytes
// (the caller then stores the string raw) or in is empty.
func lzfCompress(in []byte, maxOut int) []byte {
	if len(in) == 0 || maxOut <= 0 {
		return nil
	}
	var htab [1 << lzfHLog]int32 // position + 1 of the last 3-byte sequence with this hash
	out := make([]byte, 1, min(maxOut+1, len(in)+len(in)/32+2))
	litPos, lit := 0, 0 // the open literal run's control byte and length
	closeLit := func() {
		if lit == 0 {
			out = out[:len(out)-1] // drop the reserved control byte
		} else {
			out[litPos] = byte(lit - 1)
		}
	}
	for i := 0; i < len(in); {
		if m, off := lzfMatch(in, i, &htab); m > 0 {
			closeLit()
			n := m - 2
			if n < 7 {
				out = append(out, byte(n<<5|off>>8), byte(off))
			} else {
				out = append(out, byte(7<<5|off>>8), byte(n-7), byte(off))
			}
			i += m
			litPos, lit = len(out), 0
			out = append(out, 0)
		} else {
			out = append(out, in[i])
			i++
			if lit++; lit == lzfMaxLit {
				out[litPos] = lzfMaxLit - 1
				litPos, lit = len(out), 0
				out = append(out, 0)
			}
		}
		if len(out) > maxOut+1 {
			return nil
		}
	}
	closeLit()
	if len(out) > maxOut {
		return nil
	}
	return out
}

// lzfMatch looks for an earlier occurrence of the 3 bytes at i and returns
// the match length (0: none) and the offset to encode.
func lzfMatch(in []byte, i int, htab *[1 << lzfHLog]int32) (int, int) {
	if i+2 >= len(in) {
		return 0, 0
	}
	h := (uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])) * 2654435761 >> (32 - lzfHLog)
	ref := int(htab[h]) - 1
	htab[h] = int32(i + 1)
	if ref < 0 || i-ref-1 >= lzfMaxOff || in[ref] != in[i] || in[ref+1] != in[i+1] || in[ref+2] != in[i+2] {
		return 0, 0
	}
	m, limit := 3, min(len(in)-i, lzfMaxRef)
	for m < limit && in[ref+m] == in[i+m] {
		m++
	}
	return m, i - ref - 1
}

// lzfDecompress expands in to exactly n bytes; ok is false for any stream
// that is malformed or does not produce n bytes.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < lzfMaxLit {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		length += 2
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ { // overlapping copies repeat bytes
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}
