package myredis

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepClock is a clock tests move by hand.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func openRDBServer(t *testing.T, dir string, opts ...Option) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Dir = dir
	s, err := Open(cfg, append([]Option{WithLogger(quietLogger())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func fillSmallDataset(s *Server) {
	s.Do("SET", "s", "hello")
	s.Do("SET", "n", "12345")
	s.Do("SET", "long", strings.Repeat("abc", 100))
	s.Do("HSET", "h", "a", "1", "b", "2")
	s.Do("ZADD", "z", "1.5", "a", "-inf", "b")
	s.Do("RPUSH", "l", "x", "y", "7")
	s.Do("SADD", "si", "1", "2", "3")
	s.Do("SADD", "ss", "a", "b")
	s.Do("SET", "ttl", "v", "PXAT", "4102444800000")
	s.Do("SET", "in3", "v")
}

var smallDatasetReads = [][]string{
	{"GET", "s"}, {"GET", "n"}, {"GET", "long"}, {"HGETALL", "h"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
	{"LRANGE", "l", "0", "-1"}, {"SMEMBERS", "si"}, {"SCARD", "ss"}, {"PEXPIRETIME", "ttl"},
}

func TestRDBSaveAndLoad(t *testing.T) {
	dir := t.TempDir()
	clock := &stepClock{time.Unix(1_800_000_000, 0)}
	s := openRDBServer(t, dir, WithClock(clock))
	fillSmallDataset(s)
	s.Do("SET", "gone", "v", "PXAT", strconv.FormatInt(clock.t.UnixMilli()+1000, 10))
	s.Do("SET", "soon", "v", "PXAT", strconv.FormatInt(clock.t.UnixMilli()+20*60*1000, 10))
	info := string(s.Do("INFO", "persistence"))
	assert.Contains(t, info, "rdb_changes_since_last_save:19\r\n")
	assert.Contains(t, info, "rdb_saves:0\r\n")
	clock.t = clock.t.Add(10 * time.Second)
	assert.Equal(t, "+OK\r\n", string(s.Do("SAVE")))
	info = string(s.Do("INFO", "persistence"))
	assert.Contains(t, info, "rdb_changes_since_last_save:0\r\n")
	assert.Contains(t, info, "rdb_saves:1\r\n")
	assert.Contains(t, info, "rdb_last_bgsave_status:ok\r\n")
	assert.Contains(t, info, "rdb_last_save_time:1800000010\r\n")
	assert.Equal(t, ":1800000010\r\n", string(s.Do("LASTSAVE")))
	want := map[string]string{}
	for _, rd := range smallDatasetReads {
		want[strings.Join(rd, " ")] = string(s.Do(rd...))
	}
	s.Close()

	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "only dump.rdb is left (no temp file)")
	assert.Equal(t, "dump.rdb", entries[0].Name())

	s2 := openRDBServer(t, dir, WithClock(clock))
	for _, rd := range smallDatasetReads {
		assert.Equal(t, want[strings.Join(rd, " ")], string(s2.Do(rd...)), "%q after loading", rd)
	}
	assert.Equal(t, ":11\r\n", string(s2.Do("DBSIZE")), "the expired key is not written")
	assert.Equal(t, "$1\r\nv\r\n", string(s2.Do("GET", "in3")))
	// with an expired key in the file: it is not loaded
	clock.t = clock.t.Add(time.Hour)
	s2.Close()
	s3 := openRDBServer(t, dir, WithClock(clock))
	assert.Equal(t, ":10\r\n", string(s3.Do("DBSIZE")), "the key that expired while down is dropped")
}

func TestRDBAppendonlyYesLoadsTheAOF(t *testing.T) {
	dir := t.TempDir()
	s := openRDBServer(t, dir)
	s.Do("SET", "from-rdb", "1")
	s.Do("SAVE")
	s.Close()
	cfg := DefaultConfig()
	cfg.Dir, cfg.AppendOnly = dir, true
	s2, err := Open(cfg, WithLogger(quietLogger()))
	require.NoError(t, err)
	defer s2.Close()
	assert.Equal(t, ":0\r\n", string(s2.Do("DBSIZE")), "with appendonly yes the AOF wins, as in Redis")
}

func TestRDBConfig(t *testing.T) {
	s := openRDBServer(t, t.TempDir())
	for _, c := range []struct{ args, want string }{
		{"CONFIG GET dbfilename", "*2\r\n$10\r\ndbfilename\r\n$8\r\ndump.rdb\r\n"},
		{"CONFIG GET rdbcompression", "*2\r\n$14\r\nrdbcompression\r\n$3\r\nyes\r\n"},
		{"CONFIG GET rdbchecksum", "*2\r\n$11\r\nrdbchecksum\r\n$3\r\nyes\r\n"},
		{"CONFIG SET rdbcompression no", "+OK\r\n"},
		{"CONFIG GET rdbcompression", "*2\r\n$14\r\nrdbcompression\r\n$2\r\nno\r\n"},
		{"CONFIG SET rdbcompression maybe", "-ERR CONFIG SET failed (possibly related to argument 'rdbcompression') - argument must be 'yes' or 'no'\r\n"},
		{"CONFIG SET rdbchecksum no", "-ERR CONFIG SET failed (possibly related to argument 'rdbchecksum') - can't set immutable config\r\n"},
		{"CONFIG SET dbfilename x.rdb", "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n"},
		{"CONFIG SET dir /tmp", "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n"},
	} {
		assert.Equal(t, c.want, string(s.Do(strings.Fields(c.args)...)), c.args)
	}
	cfg, err := parseArgs([]string{"--dbfilename", "a.rdb", "--rdbchecksum", "no", "--rdbcompression", "no"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "a.rdb", cfg.dbFilename())
	assert.False(t, cfg.rdbChecksum())
	assert.False(t, cfg.rdbCompression())
	assert.NotContains(t, cfg.Unsupported, "dbfilename")
	_, err = parseArgs([]string{"--dbfilename", "d/a.rdb"}, nil)
	assert.ErrorContains(t, err, "dbfilename can't be a path, just a filename")
}

// savedFile is a small dataset's RDB file, written by SAVE.
func savedFile(t testing.TB) []byte {
	dir := t.(interface{ TempDir() string }).TempDir()
	cfg := DefaultConfig()
	cfg.Dir = dir
	s, err := Open(cfg, WithLogger(quietLogger()))
	require.NoError(t, err)
	fillSmallDataset(s)
	s.Do("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return 1 end)")
	require.Equal(t, "+OK\r\n", string(s.Do("SAVE")))
	s.Close()
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	require.NoError(t, err)
	return b
}

func TestRDBLoadErrorsStopStartup(t *testing.T) {
	good := savedFile(t)
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		return b
	}
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"not an rdb", []byte("hello world"), "at offset 0: not an RDB file"},
		{"future version", append([]byte("REDIS0011"), good[9:]...), "RDB version \"0011\""},
		{"truncated", good[:len(good)/2], "at offset"},
		{"bad checksum", flip(len(good) - 1), "wrong RDB checksum"},
		{"module aux", append(bytes.Clone(good[:9]), rdbOpModuleAux, 1, 2), "at offset 9: the file holds module data"},
		{"module value", append(bytes.Clone(good[:9]), rdbTypeModule2, 1, 'k'), "module type value"},
		{"stream", append(bytes.Clone(good[:9]), rdbTypeStreamLP2, 1, 'k'), "bad value of type 19"},
		{"no eof", good[:9], "unexpected end of file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "dump.rdb"), c.file, 0o644))
			cfg := DefaultConfig()
			cfg.Dir = dir
			s, err := Open(cfg, WithLogger(quietLogger()))
			if err == nil {
				s.Close()
				t.Fatal("a bad file loaded")
			}
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "dump.rdb")
		})
	}
}

// FuzzRDBFile: the file loader on any bytes never panics or loops.
func FuzzRDBFile(f *testing.F) {
	good := savedFile(f)
	f.Add(good)
	f.Add(good[:len(good)-8])
	f.Add([]byte("REDIS0010\xfe\x00\xfb\x01\x00\x00\x01k\x01v\xff"))
	s := New(DefaultConfig(), WithLogger(quietLogger()))
	defer s.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		s.submit(func() { s.loadRDB(data, "fuzz.rdb") })
		s.Do("FLUSHALL")
		s.Do("FUNCTION", "FLUSH")
	})
}
