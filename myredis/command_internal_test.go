package myredis

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// otherType is a value of a type no string command accepts.
type otherType struct{}

func (otherType) typeName() string { return "othertype" }

// TestWrongType runs every command that reads or writes a string against a key
// of another type.
func TestWrongType(t *testing.T) {
	s := New(Config{Dir: t.TempDir()})
	defer s.Close()
	s.submit(func() { s.dbs[0].add("o", otherType{}) })
	const wrong = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	for _, args := range [][]string{
		{"GET", "o"}, {"SET", "o", "v", "GET"}, {"GETDEL", "o"}, {"GETEX", "o"}, {"GETEX", "o", "EX", "0"},
		{"GETSET", "o", "v"}, {"INCR", "o"}, {"DECR", "o"}, {"INCRBY", "o", "1"}, {"DECRBY", "o", "1"},
		{"INCRBYFLOAT", "o", "1"}, {"INCRBYFLOAT", "o", "notafloat"}, {"APPEND", "o", "x"}, {"STRLEN", "o"},
	} {
		if got := string(s.Do(args...)); got != wrong {
			t.Errorf("%s: got %q, want WRONGTYPE", strings.Join(args, " "), got)
		}
	}
	// Commands that work on any type.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"TYPE", "o"}, "+othertype\r\n"},
		{[]string{"EXISTS", "o"}, ":1\r\n"},
		{[]string{"MGET", "o"}, "*1\r\n$-1\r\n"},
		{[]string{"SETNX", "o", "v"}, ":0\r\n"},
		{[]string{"EXPIRE", "o", "100"}, ":1\r\n"},
		{[]string{"TTL", "o"}, ":100\r\n"},
		{[]string{"SCAN", "0", "TYPE", "othertype"}, "*2\r\n$1\r\n0\r\n*1\r\n$1\r\no\r\n"},
		{[]string{"SET", "o", "v"}, "+OK\r\n"}, // plain SET replaces any type
		{[]string{"GET", "o"}, "$1\r\nv\r\n"},
	} {
		if got := string(s.Do(tc.args...)); got != tc.want {
			t.Errorf("%s: got %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// fuzzWords are what FuzzCommand builds argument vectors from, besides raw
// bytes: command names are added from the table.
var fuzzWords = []string{
	"k", "k2", "o", "", "v", "0", "1", "-1", "2", "10", "100", "1.5", "-0", "+1", "01", "1e3", "0x10",
	"inf", "-inf", "nan", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"18446744073709551615", "NX", "XX", "GT", "LT", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "GET",
	"PERSIST", "MATCH", "COUNT", "TYPE", "string", "*", "?", "[a-", "\\", "ASYNC", "SYNC", "AUTH",
	"SETNAME", "default", "ON", "OFF", "SKIP", "ID", "LIST", "INFO", "DOCS", "GETKEYS", "SET",
	"save", "hz", "maxclients", "requirepass", "proto-max-bulk-len", "all", "keyspace", "everything",
	"lib-name", "lib-ver", "WITHSCORES", "LIMIT", "BYSCORE", "REV", "(1", "[a", "-", "+",
}

// fuzzClock lets a fuzz input move time ("!tick <ms>").
type fuzzClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fuzzClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// decodeFuzzCommands turns fuzz bytes into argument vectors: commands split on
// '\n', arguments on ' '; "#x" picks a word (command names included) by the byte x.
func decodeFuzzCommands(data []byte, words []string) [][][]byte {
	var cmds [][][]byte
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var args [][]byte
		for _, a := range bytes.Split(line, []byte{' '}) {
			if len(a) == 2 && a[0] == '#' {
				a = []byte(words[int(a[1])%len(words)])
			}
			args = append(args, a)
		}
		if len(cmds) == 64 {
			break
		}
		cmds = append(cmds, args)
	}
	return cmds
}

// FuzzCommand sends random argument vectors through the command layer, on one
// client so MULTI, WATCH and SELECT state carries between them. Nothing may
// panic or hang, and every command must write exactly one well-formed reply.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		"SET k v EX 10\nGET k\nTTL k\n!tick 20000\nGET k",
		"MULTI\nINCR k\nSET k2 v\nEXEC",
		"WATCH k\nSET k 1\nMULTI\nGET k\nEXEC\nDISCARD",
		"SET k 1.5\nINCRBYFLOAT k 0x1p3\nINCR k\nAPPEND k x",
		"MSET a 1 b 2\nSCAN 0 MATCH * COUNT 1 TYPE string\nKEYS *\nRENAME a c\nRANDOMKEY",
		"CLIENT REPLY SKIP\nPING\nCLIENT SETNAME x\nCLIENT LIST\nHELLO 2 SETNAME y",
		"#\x01 #\x02 #\x03\n#\x10 #\x20 #\x30 #\x40",
		"CONFIG SET hz 5 maxclients 10\nCONFIG GET *\nINFO everything\nCOMMAND INFO get\nCOMMAND GETKEYS SET k v",
		"SELECT 3\nSET k v PX 1\n!tick 5\nEXISTS k\nFLUSHALL\nDBSIZE",
		"EXPIRE k 10 GT LT\nPEXPIREAT k 1\nGETEX k PERSIST\nSET k v KEEPTTL GET",
		"RPUSH l a b c a\nLPOS l a RANK -1 COUNT 0\nLMPOP 1 l LEFT COUNT 2\nLMOVE l l LEFT RIGHT\nLTRIM l 1 -1\nBLPOP l 0\nLINSERT l BEFORE a x",
		"SCRIPT LOAD return\nEVAL return 0\nEVAL x 1 k\nEVALSHA 0 0\nSCRIPT EXISTS a\nEVAL_RO return 0\nSCRIPT FLUSH",
	} {
		f.Add([]byte(seed))
	}
	clk := &fuzzClock{now: time.Unix(1_900_000_000, 0)}
	s := New(Config{Dir: f.TempDir()}, WithClock(clk))
	f.Cleanup(func() { s.Close() })
	var words []string
	for name := range s.table {
		words = append(words, strings.ToUpper(name))
	}
	sort.Strings(words)
	words = append(words, fuzzWords...)
	base := s.cfg

	f.Fuzz(func(t *testing.T, data []byte) {
		cmds := decodeFuzzCommands(data, words)
		done := make(chan string, 1)
		go func() {
			var problem string
			s.submit(func() {
				for _, db := range s.dbs {
					db.flush()
				}
				s.applyConfig(base)
				c := newClient(s, nil)
				c.authed = true
				for _, args := range cmds {
					if len(args) == 2 && string(args[0]) == "!tick" {
						ms, _ := strconv.Atoi(string(args[1]))
						clk.mu.Lock()
						clk.now = clk.now.Add(time.Duration(ms%100000) * time.Millisecond)
						clk.mu.Unlock()
						continue
					}
					var w Writer
					s.call(c, args, &w)
					if len(args) == 0 || w.Len() == 0 && len(args) == 3 &&
						eqFold(args[0], "client") && eqFold(args[1], "reply") {
						continue // CLIENT REPLY OFF and SKIP answer nothing
					}
					if err := oneReply(w.Bytes()); err != nil {
						problem = fmt.Sprintf("%q: %v in reply %q", args, err, w.Bytes())
						return
					}
				}
				s.discard(c)
				s.unwatchAll(c)
			})
			done <- problem
		}()
		select {
		case problem := <-done:
			if problem != "" {
				t.Fatal(problem)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("commands did not finish within 10s: %q", cmds)
		}
	})
}

// oneReply checks that b holds exactly one complete RESP2 reply.
func oneReply(b []byte) error {
	rd := bufio.NewReader(bytes.NewReader(b))
	if err := skipReply(rd); err != nil {
		return err
	}
	if _, err := rd.ReadByte(); err != io.EOF {
		return fmt.Errorf("bytes after the reply")
	}
	return nil
}

func skipReply(rd *bufio.Reader) error {
	line, err := rd.ReadString('\n')
	if err != nil {
		return fmt.Errorf("truncated reply")
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return fmt.Errorf("bad line %q", line)
	}
	body := line[1 : len(line)-2]
	if strings.ContainsAny(body, "\r\n") {
		return fmt.Errorf("CR or LF inside %q", line)
	}
	switch line[0] {
	case '+', '-':
		return nil
	case ':':
		_, err := strconv.ParseInt(body, 10, 64)
		return err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return fmt.Errorf("bad bulk length %q", line)
		}
		if n == -1 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil || string(buf[n:]) != "\r\n" {
			return fmt.Errorf("bad bulk payload")
		}
		return nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return fmt.Errorf("bad array length %q", line)
		}
		for i := 0; i < n; i++ {
			if err := skipReply(rd); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown reply type %q", line)
}

// TestContainerWithoutCall runs container commands the way a caller that skips
// call's subcommand resolution would (a script): the handler checks the
// subcommand itself instead of reading past the arguments.
func TestContainerWithoutCall(t *testing.T) {
	s := New(Config{Dir: t.TempDir()})
	defer s.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"COMMAND", "GETKEYS"}, "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
		{[]string{"COMMAND", "NOSUCH"}, "-ERR unknown subcommand 'NOSUCH'. Try COMMAND HELP.\r\n"},
		{[]string{"CLIENT", "SETNAME"}, "-ERR wrong number of arguments for 'client|setname' command\r\n"},
		{[]string{"CONFIG", "SET", "hz"}, "-ERR wrong number of arguments for 'config|set' command\r\n"},
		{[]string{"COMMAND", "COUNT"}, fmt.Sprintf(":%d\r\n", len(s.table))},
	} {
		var w Writer
		s.submit(func() {
			c := newClient(s, nil)
			c.authed = true
			x := &Ctx{s: s, c: c, db: c.db, cmd: s.table.lookup([]byte(tc.args[0])), args: bargs(tc.args...), w: &w}
			s.exec(x)
		})
		if got := string(w.Bytes()); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
