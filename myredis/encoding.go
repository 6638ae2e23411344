package myredis

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Encoding settings: Redis keeps small values in a compact encoding (listpack,
// intset) and converts them past these limits. MyRedis has one structure per type,
// but the limits still decide what Redis shows of the encoding: what ZSCAN and
// HSCAN return in one call (a listpack comes back whole) and what OBJECT ENCODING
// answers. They are set as redis.conf names them, the 6.x "ziplist" names being
// aliases of the 7.0 "listpack" ones.

// EncodingLimits are Redis 7.0's encoding settings.
type EncodingLimits struct {
	HashEntries, HashValue int64 // hash-max-listpack-entries, -value
	ZSetEntries, ZSetValue int64 // zset-max-listpack-entries, -value
	ListSize               int64 // list-max-listpack-size (negative: a size class)
	ListCompressDepth      int64 // list-compress-depth
	StreamNodeBytes        int64 // stream-node-max-bytes
	StreamNodeEntries      int64 // stream-node-max-entries
	// set-max-intset-entries lives in Config.SetMaxIntsetEntries (set.go's)
}

// defaultEncodingLimits are Redis 7.0's defaults.
var defaultEncodingLimits = EncodingLimits{
	HashEntries: 512, HashValue: 64,
	ZSetEntries: 128, ZSetValue: 64,
	ListSize: -2, ListCompressDepth: 0,
	StreamNodeBytes: 4096, StreamNodeEntries: 100,
}

// encodingSetting describes one name: where it lives, its kind and range.
type encodingSetting struct {
	field  func(l *EncodingLimits) *int64
	memory bool // a memory value ("1kb"), else an integer
	lo, hi int64
}

var encodingSettings = func() map[string]encodingSetting {
	hashEntries := func(l *EncodingLimits) *int64 { return &l.HashEntries }
	hashValue := func(l *EncodingLimits) *int64 { return &l.HashValue }
	zsetEntries := func(l *EncodingLimits) *int64 { return &l.ZSetEntries }
	zsetValue := func(l *EncodingLimits) *int64 { return &l.ZSetValue }
	listSize := func(l *EncodingLimits) *int64 { return &l.ListSize }
	size := encodingSetting{lo: 0, hi: math.MaxInt64}
	mem := encodingSetting{memory: true, lo: 0, hi: math.MaxInt64}
	with := func(s encodingSetting, f func(l *EncodingLimits) *int64) encodingSetting {
		s.field = f
		return s
	}
	m := map[string]encodingSetting{}
	for _, kind := range []string{"listpack", "ziplist"} {
		m["hash-max-"+kind+"-entries"] = with(size, hashEntries)
		m["hash-max-"+kind+"-value"] = with(mem, hashValue)
		m["zset-max-"+kind+"-entries"] = with(size, zsetEntries)
		m["zset-max-"+kind+"-value"] = with(mem, zsetValue)
		m["list-max-"+kind+"-size"] = encodingSetting{field: listSize, lo: math.MinInt32, hi: math.MaxInt32}
	}
	m["list-compress-depth"] = encodingSetting{
		field: func(l *EncodingLimits) *int64 { return &l.ListCompressDepth }, lo: 0, hi: math.MaxInt32}
	m["stream-node-max-bytes"] = with(mem, func(l *EncodingLimits) *int64 { return &l.StreamNodeBytes })
	m["stream-node-max-entries"] = with(size, func(l *EncodingLimits) *int64 { return &l.StreamNodeEntries })
	return m
}()

// set assigns one encoding setting by name, with CONFIG SET's error texts.
// errUnknownOption: not an encoding setting.
func (l *EncodingLimits) set(name, val string) error {
	st, ok := encodingSettings[strings.ToLower(name)]
	if !ok {
		return errUnknownOption
	}
	var n int64
	var err error
	if st.memory {
		n, err = ParseMemory(val)
		if err != nil {
			return errors.New("argument must be a memory value")
		}
	} else {
		n, err = strconv.ParseInt(val, 10, 64)
		if err != nil {
			return errors.New("argument couldn't be parsed into an integer")
		}
	}
	if n < st.lo || n > st.hi {
		return errors.New("argument must be between " + strconv.FormatInt(st.lo, 10) + " and " +
			strconv.FormatInt(st.hi, 10) + " inclusive")
	}
	*st.field(l) = n
	return nil
}

// params adds CONFIG GET's readers of the encoding settings to params.
func (l *EncodingLimits) params(params map[string]func() string) {
	for name, st := range encodingSettings {
		f := st.field
		params[name] = func() string { return strconv.FormatInt(*f(l), 10) }
	}
}

func init() {
	for name := range encodingSettings {
		runtimeSettable[name] = true
	}
}

// limits is the server's live encoding settings. Runs on the executor.
func (s *Server) limits() *EncodingLimits { return &s.cfg.Enc }

// objectEncoder is a value that can name its encoding as Redis would for a value
// of its size (OBJECT ENCODING). Every type plugs in by implementing it.
type objectEncoder interface {
	objectEncoding(l *EncodingLimits) string
}

// objectEncoding of a string: "int" for a 64-bit integer in canonical form (Redis
// stores it as a number), "embstr" up to 44 bytes, "raw" above.
func stringEncoding(b []byte) string {
	if len(b) <= 20 {
		if _, ok := parseRedisInt(b); ok {
			return "int"
		}
	}
	if len(b) <= 44 {
		return "embstr"
	}
	return "raw"
}

// encodingOf names the encoding of any stored value.
func (s *Server) encodingOf(val any) string {
	switch v := val.(type) {
	case []byte:
		return stringEncoding(v)
	case objectEncoder:
		return v.objectEncoding(s.limits())
	}
	return "unknown"
}

// objectEncoding: a sorted set within zset-max-listpack-entries members of at most
// zset-max-listpack-value bytes is a listpack in Redis, a skiplist beyond.
func (z *zset) objectEncoding(l *EncodingLimits) string {
	if isSmallZSet(z, l) {
		return "listpack"
	}
	return "skiplist"
}

// objectEncoding: a hash that has stayed within hash-max-listpack-entries fields
// and hash-max-listpack-value bytes is a listpack, else a hashtable (Redis never
// converts back, nor does this).
func (h *hashValue) objectEncoding(*EncodingLimits) string {
	if h.table() != nil {
		return "hashtable"
	}
	return "listpack"
}
