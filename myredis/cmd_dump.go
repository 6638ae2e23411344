package myredis

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// commandsDump registers DUMP and RESTORE: a value in Redis's serialisation
// (its RDB encoding, the RDB version and a CRC64), so a DUMP taken from Redis
// RESTOREs here and the other way round.
func commandsDump() []*command {
	return []*command{
		{name: "dump", arity: 2, flags: flagReadonly, fn: cmdDump, firstKey: 1, lastKey: 1},
		{name: "restore", arity: -4, flags: flagWrite, fn: cmdRestore, firstKey: 1, lastKey: 1},
	}
}

// dumpPayload serialises v as DUMP does; ok is false for a type without an
// RDB encoding.
func dumpPayload(v any) ([]byte, bool) {
	w := rdbWriter{compress: true}
	if !appendRDBValue(&w, v) {
		return nil, false
	}
	w.b = binary.LittleEndian.AppendUint16(w.b, rdbVersion)
	w.b = binary.LittleEndian.AppendUint64(w.b, crc64(0, w.b))
	return w.b, true
}

// verifyDumpPayload checks the version and the checksum of a payload.
func verifyDumpPayload(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion {
		return false
	}
	return binary.LittleEndian.Uint64(footer[2:]) == crc64(0, p[:len(p)-8])
}

// loadDumpPayload decodes a verified payload's value.
func loadDumpPayload(p []byte, s *Server) (any, error) {
	r := rdbReader{p: p[:len(p)-10]}
	typ, err := r.byte1()
	if err != nil {
		return nil, err
	}
	return readRDBValue(&r, typ, s)
}

func cmdDump(x *Ctx) {
	e := x.lookupRead(x.arg(1))
	if e == nil {
		x.w.Null()
		return
	}
	p, ok := dumpPayload(e.value())
	if !ok {
		x.err(msgDumpUnsupported)
		return
	}
	x.w.Bulk(p)
}

// restoreOpts are RESTORE's options after the payload.
type restoreOpts struct {
	replace, absTTL bool
	idle, freq      int64 // -1 when not given
}

func (x *Ctx) parseRestoreOpts() (restoreOpts, bool) {
	o := restoreOpts{idle: -1, freq: -1}
	for j := 4; j < x.nargs(); j++ {
		more := x.nargs() - j - 1
		switch opt := strings.ToLower(x.arg(j)); {
		case opt == "replace":
			o.replace = true
		case opt == "absttl":
			o.absTTL = true
		case opt == "idletime" && more >= 1 && o.freq == -1:
			v, ok := x.argInt(j + 1)
			if !ok {
				return o, false
			}
			if v < 0 {
				x.err(msgInvalidIdletime)
				return o, false
			}
			o.idle, j = v, j+1
		case opt == "freq" && more >= 1 && o.idle == -1:
			v, ok := x.argInt(j + 1)
			if !ok {
				return o, false
			}
			if v < 0 || v > 255 {
				x.err(msgInvalidFreq)
				return o, false
			}
			o.freq, j = v, j+1
		default:
			x.err(msgSyntax)
			return o, false
		}
	}
	return o, true
}

// cmdRestore checks in Redis's order: options, an existing key, the TTL,
// the payload's checksum, then its contents.
func cmdRestore(x *Ctx) {
	o, ok := x.parseRestoreOpts()
	if !ok {
		return
	}
	key := x.arg(1)
	if !o.replace && x.db.lookup(key) != nil {
		x.err(msgBusyKey)
		return
	}
	ttl, ok := x.argInt(2)
	if !ok {
		return
	}
	if ttl < 0 {
		x.err(msgInvalidTTL)
		return
	}
	payload := x.args[3]
	if !verifyDumpPayload(payload) {
		x.err(msgDumpPayload)
		return
	}
	val, err := loadDumpPayload(payload, x.s)
	if err != nil {
		x.err(msgBadDataFormat)
		return
	}
	x.restore(key, val, ttl, o)
}

// restore stores a decoded value as RESTORE does: an already expired TTL
// only deletes the old key (REPLACE); the AOF gets an absolute TTL.
func (x *Ctx) restore(key string, val any, ttl int64, o restoreOpts) {
	deleted := o.replace && x.db.lookup(key) != nil && x.db.delete(key)
	if ttl > 0 && !o.absTTL {
		ttl += x.nowMs()
	}
	if ttl > 0 && ttl <= x.nowMs() && !x.s.loading {
		if deleted {
			x.dirty(1)
			x.propagateAs("DEL", key)
			x.notify(notifyGeneric, "del", key)
		}
		x.ok()
		return
	}
	x.db.add(key, val)
	if e := x.db.entry(key); e != nil {
		x.s.setLRUOrLFU(e, o.idle, o.freq) // evict.go
	}
	x.dirty(1)
	if ttl > 0 {
		x.db.setExpire(key, ttl)
		if !o.absTTL {
			// As Redis: the command as sent (its options and their case), the TTL
			// made absolute and ABSTTL added; with ABSTTL it goes unchanged.
			args := make([]string, 0, len(x.args)+1)
			for _, a := range x.args {
				args = append(args, string(a))
			}
			args[2] = strconv.FormatInt(ttl, 10)
			x.propagateAs(append(args, "ABSTTL")...)
		}
	}
	x.notify(notifyGeneric, "restore", key)
	x.ok()
}
