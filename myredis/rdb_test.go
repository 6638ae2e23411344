package myredis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// testServer gives the decoders their settings (the defaults).
var testServer = &Server{cfg: DefaultConfig()}

func TestCRC64(t *testing.T) {
	assert.Equal(t, uint64(0xe9c6d914c4b8d9ca), crc64(0, []byte("123456789")), "Redis's crc64 test vector")
	// Redis 7.0.15's DUMP of SET s hello
	p := []byte("\x00\x05hello\n\x00cr\xdfve4 \n")
	assert.True(t, verifyDumpPayload(p))
	p[2] = 'j'
	assert.False(t, verifyDumpPayload(p))
}

// TestListpackAsRedisWritesIt: the listpack of Redis 7.0.15's DUMP of
// HSET h a 1 b two c -300000 d 5000 e 100000 f 2147483648.
func TestListpackAsRedisWritesIt(t *testing.T) {
	redis := []byte("8\x00\x00\x00\x0c\x00\x81a\x02\x01\x01\x81b\x02\x83two\x04\x81c\x02\xf2 l\xfb\x04\x81d\x02\xf1\x88\x13\x03\x81e\x02\xf2\xa0\x86\x01\x04\x81f\x02\xf4\x00\x00\x00\x80\x00\x00\x00\x00\t\xff")
	entries := [][]byte{[]byte("a"), []byte("1"), []byte("b"), []byte("two"), []byte("c"), []byte("-300000"),
		[]byte("d"), []byte("5000"), []byte("e"), []byte("100000"), []byte("f"), []byte("2147483648")}
	assert.Equal(t, redis, appendListpack(nil, entries))
	got, err := decodeListpack(redis)
	require.NoError(t, err)
	assert.Equal(t, entries, got)
}

func TestListpackRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var entries [][]byte
		for range rapid.IntRange(0, 50).Draw(t, "n") {
			if rapid.Bool().Draw(t, "int") {
				v := rapid.OneOf(rapid.Int64Range(-200, 200), rapid.Int64Range(-1<<24, 1<<24), rapid.Int64()).Draw(t, "v")
				entries = append(entries, []byte(formatInt(v)))
			} else {
				entries = append(entries, rapid.SliceOfN(rapid.Byte(), 0, rapid.SampledFrom([]int{10, 100, 5000}).Draw(t, "max")).Draw(t, "s"))
			}
		}
		lp := appendListpack(nil, entries)
		got, err := decodeListpack(lp)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(entries) {
			t.Fatalf("%d entries, want %d", len(got), len(entries))
		}
		for i := range got {
			if string(got[i]) != string(entries[i]) {
				t.Fatalf("entry %d: %q, want %q", i, got[i], entries[i])
			}
		}
	})
}

func formatInt(v int64) string { return string(appendInt(nil, v)) }

func appendInt(b []byte, v int64) []byte {
	if v == math.MinInt64 {
		return append(b, "-9223372036854775808"...)
	}
	if v < 0 {
		return appendInt(append(b, '-'), -v)
	}
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}

func TestRDBValueRoundTrip(t *testing.T) {
	h := newHash()
	h.set([]byte("f"), []byte("v"), nil)
	h.set([]byte("n"), []byte("12"), nil)
	z := newZSet()
	z.Add("a", math.Inf(-1))
	z.Add("b", 2.5)
	for _, v := range []any{[]byte("x"), []byte("123"), []byte(string(make([]byte, 500))), h, z} {
		p, ok := dumpPayload(v)
		require.True(t, ok)
		require.True(t, verifyDumpPayload(p))
		got, err := loadDumpPayload(p, testServer)
		require.NoError(t, err)
		switch v := v.(type) {
		case []byte:
			assert.Equal(t, v, got)
		case *hashValue:
			assert.Equal(t, v.Len(), got.(*hashValue).Len())
			val, _ := got.(*hashValue).get([]byte("n"))
			assert.Equal(t, "12", string(val))
		case *zset:
			assert.Equal(t, v.Items(0, 2, false), got.(*zset).Items(0, 2, false))
		}
	}
}

// FuzzRDBPayload: RESTORE's decoder on any bytes (the checksum is skipped)
// never panics, loops or allocates beyond its input.
func FuzzRDBPayload(f *testing.F) {
	for _, v := range []any{[]byte("hello"), []byte("12"), newZSet()} {
		if p, ok := dumpPayload(v); ok {
			f.Add(p[:len(p)-10])
		}
	}
	f.Add([]byte("\x10\x0888\x00\x00\x00\x0c\x00\x81a\x02\x01\x01\x81b\x02\x83two\x04\xff"))
	f.Add([]byte("\x0b\x0c\x02\x00\x00\x00\x01\x00\x00\x00\x05\x00"))
	f.Add([]byte("\x12\x01\x02\x05\x05\x00\x00\x00\x00\xff"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := rdbReader{p: body}
		typ, err := r.byte1()
		if err != nil {
			return
		}
		readRDBValue(&r, typ, testServer)
	})
}
