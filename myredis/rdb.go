package myredis

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The RDB serialisation of Redis 7.0 (RDB version 10): the primitives every
// value and the file share (lengths, strings with their integer and LZF
// encodings, doubles, the CRC64 that closes a file and a DUMP payload). The
// value encodings are in rdb_value.go, the file in rdb_file.go.

const rdbVersion = 10

// Length encodings: the two top bits of the first byte.
const (
	rdb6BitLen  = 0
	rdb14BitLen = 1
	rdb32BitLen = 0x80
	rdb64BitLen = 0x81
	rdbEncVal   = 3 // 11xxxxxx: a specially encoded string follows

	rdbEncInt8  = 0
	rdbEncInt16 = 1
	rdbEncInt32 = 2
	rdbEncLZF   = 3
)

// Object types (rdb.h).
const (
	rdbTypeString        = 0
	rdbTypeList          = 1
	rdbTypeSet           = 2
	rdbTypeZSet          = 3
	rdbTypeHash          = 4
	rdbTypeZSet2         = 5
	rdbTypeModule2       = 7
	rdbTypeHashZipmap    = 9
	rdbTypeListZiplist   = 10
	rdbTypeSetIntset     = 11
	rdbTypeZSetZiplist   = 12
	rdbTypeHashZiplist   = 13
	rdbTypeListQuicklist = 14
	rdbTypeStreamLP      = 15
	rdbTypeHashListpack  = 16
	rdbTypeZSetListpack  = 17
	rdbTypeListQuick2    = 18
	rdbTypeStreamLP2     = 19
)

// Opcodes of the file.
const (
	rdbOpFunction2    = 245
	rdbOpFunction     = 246
	rdbOpModuleAux    = 247
	rdbOpIdle         = 248
	rdbOpFreq         = 249
	rdbOpAux          = 250
	rdbOpResizeDB     = 251
	rdbOpExpireTimeMs = 252
	rdbOpExpireTime   = 253
	rdbOpSelectDB     = 254
	rdbOpEOF          = 255
)

// quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2).
const (
	quicklistPlain  = 1
	quicklistPacked = 2
)

// errRDB is every malformed-input error of the decoder: the callers answer
// Redis's "Bad data format" or stop loading a file.
var errRDB = errors.New("rdb: bad data format")

// rdbMaxAlloc bounds what a length read from untrusted input may make the
// decoder allocate before the bytes behind it have been seen.
const rdbMaxAlloc = 1 << 20

// ---- CRC64 (Jones polynomial, reflected, no inversion: Redis's crc64.c) ----

var crc64Table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9 reflected
	for i := range t {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc64 continues crc over p as Redis's crc64(crc, p, len) does.
func crc64(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc = crc64Table[byte(crc)^b] ^ crc>>8
	}
	return crc
}

// ---- writing ----

// rdbWriter appends RDB encodings to b.
type rdbWriter struct {
	b        []byte
	compress bool // rdbcompression: LZF for strings over 20 bytes
}

func (w *rdbWriter) byte1(c byte) { w.b = append(w.b, c) }

// length writes n in the shortest length encoding.
func (w *rdbWriter) length(n uint64) {
	switch {
	case n < 1<<6:
		w.b = append(w.b, byte(n))
	case n < 1<<14:
		w.b = append(w.b, byte(n>>8)|rdb14BitLen<<6, byte(n))
	case n <= math.MaxUint32:
		w.b = append(w.b, rdb32BitLen)
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	default:
		w.b = append(w.b, rdb64BitLen)
		w.b = binary.BigEndian.AppendUint64(w.b, n)
	}
}

// str writes s as Redis does: as an integer when it is one that fits 32 bits
// in canonical form, LZF-compressed when that saves space, otherwise raw.
func (w *rdbWriter) str(s []byte) {
	if len(s) <= 11 {
		if v, ok := parseRedisInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			w.intStr(v)
			return
		}
	}
	if w.compress && len(s) > 20 && w.lzfStr(s) {
		return
	}
	w.length(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *rdbWriter) intStr(v int64) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt16)
		w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v))
	default:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt32)
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v))
	}
}

// lzfStr writes s compressed, if compression saves at least 4 bytes (Redis's rule).
func (w *rdbWriter) lzfStr(s []byte) bool {
	out := lzfCompress(s, len(s)-4)
	if out == nil {
		return false
	}
	w.b = append(w.b, rdbEncVal<<6|rdbEncLZF)
	w.length(uint64(len(out)))
	w.length(uint64(len(s)))
	w.b = append(w.b, out...)
	return true
}

// binaryDouble writes f as 8 little-endian bytes (RDB_TYPE_ZSET_2 scores).
func (w *rdbWriter) binaryDouble(f float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
}

func (w *rdbWriter) millis(ms int64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, uint64(ms))
}

// ---- reading ----

// rdbReader reads RDB encodings from p, checking every bound.
type rdbReader struct {
	p   []byte
	off int
}

func (r *rdbReader) left() int { return len(r.p) - r.off }

func (r *rdbReader) take(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, errRDB
	}
	b := r.p[r.off : r.off+n]
	r.off += n
	return b, nil
}

func (r *rdbReader) byte1() (byte, error) {
	if r.left() < 1 {
		return 0, errRDB
	}
	c := r.p[r.off]
	r.off++
	return c, nil
}

// length reads a length; encoded reports a special string encoding instead
// (its kind in n).
func (r *rdbReader) length() (n uint64, encoded bool, err error) {
	c, err := r.byte1()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case rdb6BitLen:
		return uint64(c & 0x3f), false, nil
	case rdb14BitLen:
		d, err := r.byte1()
		return uint64(c&0x3f)<<8 | uint64(d), false, err
	case rdbEncVal:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case rdb32BitLen:
		b, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case rdb64BitLen:
		b, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, errRDB
}

// plainLength reads a length that is a number, not a string encoding.
func (r *rdbReader) plainLength() (uint64, error) {
	n, enc, err := r.length()
	if err != nil || enc {
		return 0, errRDB
	}
	return n, nil
}

// count reads a length that counts elements, each at least one byte of input.
func (r *rdbReader) count() (int, error) {
	n, enc, err := r.length()
	if err != nil || enc || n > uint64(r.left()) {
		return 0, errRDB
	}
	return int(n), nil
}

// str reads a string in any of its encodings into a new slice.
func (r *rdbReader) str() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > uint64(r.left()) {
			return nil, errRDB
		}
		b, _ := r.take(int(n))
		return append([]byte(nil), b...), nil
	}
	switch n {
	case rdbEncInt8:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(b[0])), 10), nil
	case rdbEncInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case rdbEncInt32:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case rdbEncLZF:
		return r.lzfStr()
	}
	return nil, errRDB
}

func (r *rdbReader) lzfStr() ([]byte, error) {
	clen, enc1, err := r.length()
	if err != nil || enc1 {
		return nil, errRDB
	}
	ulen, enc2, err := r.length()
	if err != nil || enc2 || clen > uint64(r.left()) || ulen == 0 || ulen > maxStringLen {
		return nil, errRDB
	}
	in, _ := r.take(int(clen))
	// LZF expands at most ~ 264x (a back reference of 264 bytes in 2-3 input bytes)
	if ulen > clen*264+8 {
		return nil, errRDB
	}
	out, ok := lzfDecompress(in, int(ulen))
	if !ok {
		return nil, errRDB
	}
	return out, nil
}

// binaryDouble reads 8 little-endian bytes.
func (r *rdbReader) binaryDouble() (float64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// stringDouble reads the old RDB_TYPE_ZSET score: a length byte with 253 =
// NaN, 254 = +inf, 255 = -inf, else that many ASCII bytes.
func (r *rdbReader) stringDouble() (float64, error) {
	n, err := r.byte1()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.take(int(n))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, errRDB
	}
	return f, nil
}

func (r *rdbReader) millis() (int64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// maxStringLen is Redis's limit on one string (proto-max-bulk-len's maximum).
const maxStringLen = 512 << 20
