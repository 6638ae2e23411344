package myredis

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE with Redis's algorithm (debug.c's
// computeDatasetDigest): SHA1 digests combined by xor where order does not
// matter (keys, set members, hash fields) and by mixing (SHA1 of the digest
// xored with the data's SHA1) where it does (list elements, stream entries),
// so the same dataset digests the same here and in Redis.

type digest [20]byte

// xor adds data's SHA1 to d, order-free.
func (d *digest) xor(data []byte) {
	h := sha1.Sum(data)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix adds data to d in order: d = SHA1(d xor SHA1(data)).
func (d *digest) mix(data []byte) {
	d.xor(data)
	*d = sha1.Sum(d[:])
}

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// Redis's object type numbers, hashed into a value's digest.
const (
	objString = 0
	objList   = 1
	objSet    = 2
	objZSet   = 3
	objHash   = 4
	objStream = 6
)

// digestScore formats a score as C's "%.17g".
func digestScore(f float64) string { return formatC(f, 'g', 17) }

// digestValue adds e's value (and whether it expires) to d, as Redis's
// xorObjectDigest. It reports false for a value it has no digest for.
func digestValue(d *digest, e *entry) bool {
	typ := func(t uint32) { d.mix(binary.BigEndian.AppendUint32(nil, t)) }
	pair := func(a, b []byte) {
		var el digest
		el.mix(a)
		el.mix(b)
		d.xor(el[:])
	}
	switch v := e.value().(type) {
	case []byte:
		typ(objString)
		d.mix(v)
	case *list:
		typ(objList)
		v.Range(0, v.Len(), func(el []byte) bool { d.mix(el); return true })
	case *setValue:
		typ(objSet)
		if !v.hash {
			for _, n := range v.ints {
				d.xor(strconv.AppendInt(nil, n, 10))
			}
		} else {
			for _, en := range v.entries {
				d.xor([]byte(en.member))
			}
		}
	case *zset:
		typ(objZSet)
		v.Range(0, v.Len(), false, func(it zItem) bool {
			pair([]byte(it.member), []byte(digestScore(it.score)))
			return true
		})
	case *hashValue:
		typ(objHash)
		v.Range(func(field string, val []byte) bool { pair([]byte(field), val); return true })
	case *stream:
		typ(objStream)
		v.scan(streamID{}, maxStreamID, false, func(id streamID, fv [][]byte) bool {
			d.mix([]byte(strconv.FormatUint(id.ms, 10) + "." + strconv.FormatUint(id.seq, 10)))
			for _, b := range fv {
				d.mix(b)
			}
			return true
		})
	default:
		return false
	}
	if e.hasTTL() {
		d.xor([]byte("!!expire!!"))
	}
	return true
}

// debugDigest answers DEBUG DIGEST: the whole dataset's digest, logically
// expired keys included (as Redis, which walks its dicts). Runs on the executor.
func debugDigest(x *Ctx) {
	var final digest
	for i, db := range x.s.dbs {
		if db.Size() == 0 {
			continue
		}
		final.mix(binary.BigEndian.AppendUint32(nil, uint32(i)))
		db.each(func(key string, e *entry) {
			var kv digest
			kv.mix([]byte(key))
			digestValue(&kv, e)
			final.xor(kv[:])
		})
	}
	x.w.Simple(final.hex())
}

// debugDigestValue answers DEBUG DIGEST-VALUE key...: each key's value digest,
// zeros for a missing key. Runs on the executor.
func debugDigestValue(x *Ctx) {
	x.w.Array(x.nargs() - 2)
	for _, k := range x.args[2:] {
		var d digest
		if e := x.db.dict.find(string(k)); e != nil {
			digestValue(&d, e)
		}
		x.w.Simple(d.hex())
	}
}
