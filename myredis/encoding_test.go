package myredis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// TestEncodingSettingsFromFlagsAndFile: the encoding settings are read from the
// command line and a config file, by their listpack and ziplist names, with Redis's
// defaults for the rest.
func TestEncodingSettingsFromFlagsAndFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "redis.conf")
	require.NoError(t, os.WriteFile(file, []byte("hash-max-ziplist-entries 7\nlist-compress-depth 2\n"), 0o600))
	cfg, err := myredis.ParseArgs([]string{file, "--zset-max-listpack-entries", "5", "--hash-max-listpack-value", "1kb"})
	require.NoError(t, err)
	assert.Equal(t, myredis.EncodingLimits{HashEntries: 7, HashValue: 1024, ZSetEntries: 5, ZSetValue: 64,
		ListSize: -2, ListCompressDepth: 2, StreamNodeBytes: 4096, StreamNodeEntries: 100}, cfg.Enc)
	_, err = myredis.ParseArgs([]string{"--zset-max-ziplist-entries", "-1"})
	assert.ErrorContains(t, err, "argument must be between 0 and 9223372036854775807 inclusive")

	cfg = myredis.DefaultConfig()
	assert.Equal(t, int64(128), cfg.Enc.ZSetEntries)
}

// TestEncodingSettingsDecideScans: a sorted set or hash within the limits comes
// back whole from one ZSCAN/HSCAN (as Redis returns a listpack) and OBJECT
// ENCODING says listpack; past them the scan pages by COUNT.
func TestEncodingSettingsDecideScans(t *testing.T) {
	c := redistest.Dial(t, redistest.StartMyRedis(t))
	args := []string{"ZADD", "z"}
	for i := range 20 {
		args = append(args, "1", "m"+strings.Repeat("x", i))
	}
	c.Do(args...)
	scanCount := func(args ...string) int { // elements in the first reply
		r := c.Do(args...)
		return strings.Count(r, "\r\n$") - 1
	}
	assert.Equal(t, 40, scanCount("ZSCAN", "z", "0", "COUNT", "2"))
	assert.Equal(t, bulk("listpack"), c.Do("OBJECT", "ENCODING", "z"))
	assert.Equal(t, ok, c.Do("CONFIG", "SET", "zset-max-ziplist-entries", "10"))
	assert.Equal(t, 4, scanCount("ZSCAN", "z", "0", "COUNT", "2"))
	assert.Equal(t, bulk("skiplist"), c.Do("OBJECT", "ENCODING", "z"))
	assert.Equal(t, ok, c.Do("CONFIG", "SET", "zset-max-ziplist-entries", "128", "zset-max-ziplist-value", "5"))
	assert.Equal(t, bulk("skiplist"), c.Do("OBJECT", "ENCODING", "z"), "members longer than 5 bytes")

	assert.Equal(t, ok, c.Do("CONFIG", "SET", "hash-max-listpack-entries", "3"))
	c.Do("HSET", "h", "a", "1", "b", "2", "c", "3")
	assert.Equal(t, bulk("listpack"), c.Do("OBJECT", "ENCODING", "h"))
	assert.Equal(t, 6, scanCount("HSCAN", "h", "0", "COUNT", "1"))
	c.Do("HSET", "h", "d", "4")
	assert.Equal(t, bulk("hashtable"), c.Do("OBJECT", "ENCODING", "h"))
	assert.Equal(t, 2, scanCount("HSCAN", "h", "0", "COUNT", "1"))
}

// TestObjectIdletime: OBJECT IDLETIME counts from the key's last access; OBJECT
// itself is not an access.
func TestObjectIdletime(t *testing.T) {
	c, clk, _ := start(t)
	mustDo(t, c, ok, "SET", "k", "v")
	clk.Advance(5 * 1e9)
	mustDo(t, c, num(5), "OBJECT", "IDLETIME", "k")
	mustDo(t, c, num(5), "OBJECT", "IDLETIME", "k")
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, num(0), "OBJECT", "IDLETIME", "k")
	clk.Advance(3 * 1e9)
	mustDo(t, c, num(3), "OBJECT", "IDLETIME", "k")
	mustDo(t, c, num(1), "TOUCH", "k", "nosuch")
	mustDo(t, c, num(0), "OBJECT", "IDLETIME", "k")
	mustDo(t, c, null, "OBJECT", "IDLETIME", "nosuch")
}
