package myredis

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{
		bytes.Repeat([]byte("a"), 1000),
		bytes.Repeat([]byte("abcdefghij"), 500),
		[]byte("hello hello hello hello hello world"),
	}
	for range 50 {
		b := make([]byte, rng.IntN(20000)+1)
		alphabet := rng.IntN(4) + 2
		for i := range b {
			b[i] = byte('a' + rng.IntN(alphabet))
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		c := lzfCompress(in, len(in)-4)
		require.NotNil(t, c, "compressible input of %d bytes", len(in))
		assert.Less(t, len(c), len(in))
		out, ok := lzfDecompress(c, len(in))
		require.True(t, ok)
		require.Equal(t, in, out)
	}
	random := make([]byte, 1000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	assert.Nil(t, lzfCompress(random, len(random)-4), "incompressible input is stored raw")
}

// TestLZFDecompressesLiblzf reads a stream liblzf produced: Redis 7.0.15's
// DUMP of SET k <"a" x 100> carries these 9 bytes.
func TestLZFDecompressesLiblzf(t *testing.T) {
	stream := []byte{0x01, 'a', 'a', 0xe0, 0x57, 0x00, 0x01, 'a', 'a'}
	out, ok := lzfDecompress(stream, 100)
	require.True(t, ok)
	assert.Equal(t, bytes.Repeat([]byte("a"), 100), out)
	_, ok = lzfDecompress(stream, 101)
	assert.False(t, ok, "a stream that does not make the stated length is refused")
	_, ok = lzfDecompress([]byte{0x20, 0x05}, 10)
	assert.False(t, ok, "a reference before the start is refused")
}

func FuzzLZFDecompress(f *testing.F) {
	f.Add(lzfCompress(bytes.Repeat([]byte("abc"), 100), 300), 300)
	f.Add([]byte{0xff, 0xff}, 10)
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		out, ok := lzfDecompress(in, n)
		if ok && len(out) != n {
			t.Fatalf("ok with %d bytes, want %d", len(out), n)
		}
	})
}

func FuzzLZFRoundTrip(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcabc"))
	f.Fuzz(func(t *testing.T, in []byte) {
		c := lzfCompress(in, len(in)+len(in)/16+8)
		if len(in) == 0 {
			return
		}
		require.NotNil(t, c)
		out, ok := lzfDecompress(c, len(in))
		require.True(t, ok)
		require.Equal(t, in, out)
	})
}
