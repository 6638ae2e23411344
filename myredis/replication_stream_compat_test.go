// Needs redis-server 7.0 in PATH (skips without it): the replication stream of
// MyRedis, read as the suite's attach_to_replication_stream reads it (SYNC, the
// RDB, then commands), compared command by command with real Redis's.
package myredis_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// streamCases run on both servers with a SYNC stream attached; the commands
// each propagated, up to the closing marker, must be the same (in the same
// order unless unordered: keys met in hash order). An argument "$DUMP" is
// replaced by the server's DUMP of key "src"; "!sleep N" waits N ms.
var streamCases = []struct {
	name      string
	cmds      [][]string
	unordered bool
}{
	{"one write in MULTI is not wrapped", [][]string{
		{"MULTI"}, {"SET", "foo", "bar"}, {"EXEC"}, {"SET", "foo2", "bar"},
	}, false},
	{"several writes in MULTI are wrapped", [][]string{
		{"MULTI"}, {"SET", "a", "1"}, {"GET", "a"}, {"INCR", "n"}, {"EXEC"},
		{"MULTI"}, {"EXEC"}, {"MULTI"}, {"GET", "a"}, {"EXEC"},
		{"MULTI"}, {"SET", "a", "1"}, {"SELECT", "1"}, {"SET", "b", "2"}, {"EXEC"}, {"SELECT", "0"},
	}, false},
	{"scripts propagate their effects", [][]string{
		{"EVAL", "redis.call('set', KEYS[1], 'bar')", "1", "k"},
		{"EVAL", "redis.call('incr', 'n') redis.call('incr', 'n')", "0"},
		{"EVAL", "return redis.call('get', 'n')", "0"},
		{"EVAL", "redis.call('set', 'x', 1, 'EX', 100) redis.call('expire', 'n', 100)", "0"},
		{"MULTI"}, {"EVAL", "redis.call('set', 'y', 1)", "0"}, {"SET", "z", "1"}, {"EXEC"},
		{"SADD", "myset", "a"},
		{"EVAL", "return redis.call('spop', 'myset')", "0"},
		{"SCRIPT", "LOAD", "return 1"}, {"SCRIPT", "FLUSH"},
	}, false},
	{"expired keys met by a command", [][]string{
		{"DEBUG", "SET-ACTIVE-EXPIRE", "0"},
		{"SET", "c", "1", "PX", "1"}, {"SET", "d", "1", "PX", "1"}, {"SET", "e", "1", "PX", "1"},
		{"!sleep", "20"},
		{"SET", "c", "2"}, // the DEL and the SET, wrapped
		{"INCR", "d"},     // the same
		{"GET", "e"},      // the DEL alone
		{"DEBUG", "SET-ACTIVE-EXPIRE", "1"},
	}, false},
	{"expired keys met by SCAN", [][]string{
		{"DEBUG", "SET-ACTIVE-EXPIRE", "0"},
		{"SET", "f1", "1", "PX", "1"}, {"SET", "f2", "1", "PX", "1"}, {"SET", "f3", "1"},
		{"!sleep", "20"},
		{"SCAN", "0"}, // the DELs unwrapped: SCAN touches arbitrary keys
		{"DEBUG", "SET-ACTIVE-EXPIRE", "1"},
	}, true},
	{"relative deadlines travel as absolute ones", [][]string{
		{"SET", "foo1", "bar", "EX", "100"}, {"SETEX", "foo1", "100", "bar"}, {"PSETEX", "foo1", "100000", "bar"},
		{"SET", "foo2", "bar"}, {"EXPIRE", "foo2", "100"}, {"PEXPIRE", "foo2", "100000"},
		{"EXPIREAT", "foo2", "100"},
		{"SET", "foo4", "bar"}, {"GETEX", "foo4", "EX", "200"}, {"GETEX", "foo4", "PERSIST"}, {"GETEX", "foo4"},
		{"SET", "src", "bar"},
		{"RESTORE", "foo6", "100000", "$DUMP"},
		{"RESTORE", "foo7", "4102444800000", "$DUMP", "absttl"},
		{"RESTORE", "foo8", "100000", "$DUMP", "REPLACE", "IDLETIME", "10"},
	}, false},
	{"PUBLISH reaches the replicas", [][]string{
		{"PUBLISH", "ch", "hello"},
		{"MULTI"}, {"PUBLISH", "bla", "bla"}, {"EXEC"},
		{"MULTI"}, {"SET", "k", "v"}, {"PUBLISH", "ch", "x"}, {"EXEC"},
		{"EVAL", "redis.call('publish', 'ch', 'from a script')", "0"},
		{"SPUBLISH", "sch", "hi"},
	}, false},
	{"XREADGROUP claims in MULTI", [][]string{
		{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "1-2", "f", "v"}, {"XADD", "s", "1-3", "f", "v"},
		{"XGROUP", "CREATE", "s", "g", "0"},
		{"MULTI"},
		{"XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"},
		{"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"},
		{"EXEC"},
	}, false},
}

func TestReplStreamMatchesRedis(t *testing.T) {
	real := redistest.StartRealRedis(t, "--enable-debug-command", "yes")
	cfg, err := myredis.ParseArgs([]string{"--enable-debug-command", "yes"})
	require.NoError(t, err)
	cfg.Dir = t.TempDir() // SYNC writes dump.rdb there
	_, mine := redistest.StartMyRedisConfig(t, cfg)
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			want := streamOf(t, real, tc.cmds)
			got := streamOf(t, mine, tc.cmds)
			if tc.unordered {
				sort.Strings(want)
				sort.Strings(got)
			}
			require.Equal(t, want, got)
		})
	}
}

// streamOf runs cmds on addr with a SYNC stream attached and returns what the
// stream carried, one command a line, deadlines in ms replaced by <ms>.
func streamOf(t *testing.T, addr string, cmds [][]string) []string {
	c := redistest.Dial(t, addr)
	c.Do("FLUSHALL")
	c.Do("CONFIG", "SET", "repl-ping-replica-period", "3600")
	br, closeStream := attachStream(t, addr)
	defer closeStream()
	for _, args := range cmds {
		if args[0] == "!sleep" {
			ms, _ := strconv.Atoi(args[1])
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		}
		args = append([]string(nil), args...)
		for i, a := range args {
			if a == "$DUMP" {
				args[i] = bulkValue(t, c.Do("DUMP", "src"))
			}
		}
		c.Do(args...)
	}
	c.Do("SET", "__end__", "1")
	var out []string
	for {
		cmd := readStreamCommand(t, br)
		line := normalizeStreamCommand(cmd)
		if line == "set __end__ 1" {
			return out
		}
		out = append(out, line)
	}
}

// attachStream sends SYNC and reads past the RDB, as the suite's
// attach_to_replication_stream: newlines (keepalives), then $<len> and the payload.
func attachStream(t *testing.T, addr string) (*bufio.Reader, func()) {
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = nc.Write([]byte("SYNC\r\n"))
	require.NoError(t, err)
	br := bufio.NewReader(nc)
	var head string
	for head == "" {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		head = strings.TrimRight(line, "\r\n")
	}
	require.True(t, strings.HasPrefix(head, "$"), "SYNC answered %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err, head)
	_, err = io.CopyN(io.Discard, br, int64(n))
	require.NoError(t, err)
	return br, func() { nc.Close() }
}

// readStreamCommand reads one command (a RESP array of bulk strings).
func readStreamCommand(t *testing.T, br *bufio.Reader) []string {
	head, err := br.ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(head, "*"), "stream: %q", head)
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	require.NoError(t, err)
	args := make([]string, n)
	for i := range args {
		l, err := br.ReadString('\n')
		require.NoError(t, err)
		size, err := strconv.Atoi(strings.TrimSpace(l[1:]))
		require.NoError(t, err, l)
		b := make([]byte, size+2)
		_, err = io.ReadFull(br, b)
		require.NoError(t, err)
		args[i] = string(b[:size])
	}
	return args
}

// normalizeStreamCommand joins args, the command name lower case (as the
// suite reads it) and unix times in ms shown as <ms>.
func normalizeStreamCommand(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i == 0:
			a = strings.ToLower(a)
		case len(a) == 13 && strings.Trim(a, "0123456789") == "":
			a = "<ms>"
		default:
			a = fmt.Sprintf("%q", a)
			a = a[1 : len(a)-1]
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// bulkValue is the payload of a raw bulk reply.
func bulkValue(t *testing.T, reply string) string {
	head, rest, ok := strings.Cut(reply, "\r\n")
	require.True(t, ok && strings.HasPrefix(head, "$"), "not a bulk: %q", reply)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err)
	return rest[:n]
}
