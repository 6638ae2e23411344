package myredis

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// noPreamble is aof-use-rdb-preamble no, for the tests of the command encoding.
func noPreamble(c *Config) { c.AOFNoRDBPreamble = true }

// preambleDataset writes every type, with expiries, in two databases, and a library.
func preambleDataset(t *testing.T, c *aofClient) {
	streamWorkload(t, c)
	c.must(t, "SET", "str", "hello")
	c.must(t, "SET", "int", 12345)
	c.must(t, "SET", "long", strings.Repeat("abc", 1000)) // LZF-compressed
	c.must(t, "SET", "ttl", "v", "EX", 100000)
	c.must(t, "RPUSH", "list", "a", "", "\x00\r\n", 7)
	c.must(t, "SADD", "intset", 1, -2, 3)
	c.must(t, "SADD", "set", "a", "b", "c")
	c.must(t, "HSET", "hash", "f", "v", "g", "")
	c.must(t, "ZADD", "zset", "1.5", "a", "-inf", "b", "inf", "c")
	args := []any{"ZADD", "bigz"}
	for i := range 300 { // a skiplist, not a listpack
		args = append(args, i, fmt.Sprintf("m%d", i))
	}
	c.must(t, args...)
	c.must(t, "PEXPIRE", "bigz", 5000000)
	c.must(t, "SELECT", 1)
	c.must(t, "SET", "db1", "x")
	c.must(t, "SELECT", 0)
	c.must(t, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
}

// TestAOFRewriteRDBPreambleLoadsEveryType: with aof-use-rdb-preamble yes (the
// default) BGREWRITEAOF writes an RDB payload (aux aof-base 1), then the writes
// made after it; a restart loads both, and every type comes back the same.
func TestAOFRewriteRDBPreambleLoadsEveryType(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	preambleDataset(t, c)
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	c.must(t, "SET", "after", "rewrite") // appended after the preamble
	c.must(t, "INCR", "int")
	want, wantStreams := dumpNoStreams(s), streamState(s)
	s.Close()

	b, _ := os.ReadFile(aofPath(dir))
	if !bytes.HasPrefix(b, []byte("REDIS0010")) || !bytes.Contains(b, []byte("\x08aof-base\xc0\x01")) {
		t.Fatalf("the rewritten file does not begin with an RDB preamble: %q", b[:min(len(b), 120)])
	}
	if !bytes.HasSuffix(b, appendCommand(nil, bargs("INCR", "int"))) {
		t.Fatalf("the writes after the rewrite are not appended as commands: %q", b[max(0, len(b)-80):])
	}
	s2, addr2 := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dumpNoStreams(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart: %s", firstDiff(got, want))
	}
	if got := streamState(s2); got != wantStreams {
		t.Fatalf("streams after restart:\n%s\nwant:\n%s", got, wantStreams)
	}
	c2 := mustDialAOF(t, addr2)
	if v := c2.must(t, "FCALL", "f", 0); v != int64(1) {
		t.Fatalf("FCALL f after restart = %v", v)
	}
}

// TestAOFRewriteWithoutPreambleWritesCommands: aof-use-rdb-preamble no keeps
// the command encoding, and CONFIG SET switches it at run time.
func TestAOFRewriteWithoutPreambleWritesCommands(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	preambleDataset(t, c)
	if v := c.must(t, "CONFIG", "GET", "aof-use-rdb-preamble"); fmt.Sprint(v) != "[aof-use-rdb-preamble yes]" {
		t.Fatalf("default: %v", v)
	}
	c.must(t, "CONFIG", "SET", "aof-use-rdb-preamble", "no")
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	want, wantStreams := dumpNoStreams(s), streamState(s)
	s.Close()
	b, _ := os.ReadFile(aofPath(dir))
	if bytes.HasPrefix(b, []byte("REDIS")) || !bytes.HasPrefix(b, []byte("*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n")) ||
		!bytes.Contains(b, appendCommand(nil, bargs("SET", "str", "hello"))) {
		t.Fatalf("aof-use-rdb-preamble no: the file is not commands: %q", b[:min(len(b), 120)])
	}
	s2, _ := openAOFServer(t, dir, nil)
	defer s2.Close()
	if got := dumpNoStreams(s2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after restart: %s", firstDiff(got, want))
	}
	if got := streamState(s2); got != wantStreams {
		t.Fatalf("streams after restart:\n%s\nwant:\n%s", got, wantStreams)
	}
}

// dumpNoStreams is dump without the streams, which dump prints as pointers
// (streamState compares them).
func dumpNoStreams(s *Server) []string {
	var out []string
	for _, line := range dump(s) {
		if !strings.Contains(line, "streamNode") {
			out = append(out, line)
		}
	}
	return out
}

// TestAOFDamagedPreambleStopsStartUp: a preamble cut short or with a wrong
// checksum stops start-up with an error naming the file, and the file stays.
func TestAOFDamagedPreambleStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, nil)
	c := mustDialAOF(t, addr)
	preambleDataset(t, c)
	c.must(t, "BGREWRITEAOF")
	c.waitRewrite(t, 1)
	s.Close()
	good, _ := os.ReadFile(aofPath(dir))
	end := len(good) - 9 // EOF, then the checksum; no command was appended
	if end < 0 || good[end] != rdbOpEOF {
		t.Fatalf("the file does not end with the RDB trailer: %q", good[max(0, end):])
	}
	flipped := bytes.Clone(good)
	flipped[end-1] ^= 0xff
	for name, file := range map[string][]byte{
		"cut in the payload":  good[:end/2],
		"cut in the checksum": good[:end+4],
		"wrong checksum":      flipped,
	} {
		os.WriteFile(aofPath(dir), file, 0o644)
		_, err := tryOpenAOF(dir, nil)
		if err == nil || !strings.Contains(err.Error(), "RDB preamble of "+aofPath(dir)) {
			t.Errorf("%s: start-up error %v", name, err)
		}
		if after, _ := os.ReadFile(aofPath(dir)); !bytes.Equal(after, file) {
			t.Errorf("%s: the file was changed", name)
		}
	}
}

// TestConfigAOFUseRDBPreamble: CONFIG SET/GET as Redis answers them, the
// command-line/config file directive.
func TestConfigAOFUseRDBPreamble(t *testing.T) {
	s := openRDBServer(t, t.TempDir())
	for _, tc := range []struct{ cmd, want string }{
		{"CONFIG GET aof-use-rdb-preamble", "*2\r\n$20\r\naof-use-rdb-preamble\r\n$3\r\nyes\r\n"},
		{"CONFIG SET aof-use-rdb-preamble maybe", "-ERR CONFIG SET failed (possibly related to argument 'aof-use-rdb-preamble') - argument must be 'yes' or 'no'\r\n"},
		{"CONFIG GET aof-use-rdb-preamble", "*2\r\n$20\r\naof-use-rdb-preamble\r\n$3\r\nyes\r\n"},
		{"CONFIG SET aof-use-rdb-preamble NO", "+OK\r\n"},
		{"CONFIG GET aof-use-rdb-preamble", "*2\r\n$20\r\naof-use-rdb-preamble\r\n$2\r\nno\r\n"},
	} {
		if got := string(s.Do(strings.Fields(tc.cmd)...)); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.cmd, got, tc.want)
		}
	}
	cfg, err := parseArgs([]string{"--aof-use-rdb-preamble", "no"}, nil)
	if err != nil || cfg.aofRDBPreamble() {
		t.Fatalf("--aof-use-rdb-preamble no: %v %v", cfg.aofRDBPreamble(), err)
	}
}

// preambleSeed is an RDB payload of a few keys, as a rewrite writes it at the
// head of the AOF (FuzzAOFLoad's seed).
func preambleSeed(f *testing.F) []byte {
	s, err := tryOpenAOF(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	s.Do("SET", "a", "1")
	s.Do("RPUSH", "l", "x", "y")
	s.Do("ZADD", "z", "1", "m")
	s.Do("HSET", "h", "f", "v")
	s.Do("PEXPIRE", "a", "99999999")
	var buf bytes.Buffer
	s.submit(func() { err = s.writeRDB(bufio.NewWriter(&buf)) })
	if err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
