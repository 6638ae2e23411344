// Needs redis-server (skips without it): transactions and scripts sent to MyRedis
// and to a real redis-server 7.0, raw replies compared byte for byte.
package myredis_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis"
)

// The cases live in testdata/compat/{scripting,transactions}*.txt in the format
// of the differential suite (testdata/compat/README): "=== name" opens a case,
// one command a line in redis-cli syntax, "@N CMD" sends on connection N, "~CMD"
// compares only the reply type, "^CMD" compares an array as a multiset.

func TestScriptingAndTransactionsMatchRedis(t *testing.T) {
	realAddr := startRealRedisServer(t)
	_, myAddr := serveMyRedis(t, myredis.Config{})
	var files []string
	for _, pattern := range []string{"scripting*.txt", "transactions*.txt"} {
		m, _ := filepath.Glob(filepath.Join("testdata", "compat", pattern))
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		cases, err := readCompatCases(f)
		require.NoError(t, err)
		for _, cc := range cases {
			t.Run(filepath.Base(f)+"/"+cc.name, func(t *testing.T) { playCompatCase(t, realAddr, myAddr, cc) })
		}
	}
}

// TestScriptMovesBetweenSortedSets: the waiting room's core move, ZPOPMIN from one
// sorted set and ZADD into another, as one script, against real Redis.
func TestScriptMovesBetweenSortedSets(t *testing.T) {
	realAddr := startRealRedisServer(t)
	_, myAddr := serveMyRedis(t, myredis.Config{})
	if r := dialRESP(t, myAddr).do("COMMAND", "INFO", "zpopmin"); r == "*1\r\n*-1\r\n" {
		t.Skip("MyRedis has no sorted sets on this branch yet")
	}
	admit := `
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[2])
local moved = {}
while free > 0 do
  local head = redis.call('ZPOPMIN', KEYS[1])
  if #head == 0 then break end
  redis.call('ZADD', KEYS[2], ARGV[2], head[1])
  moved[#moved + 1] = head[1]
  moved[#moved + 1] = head[2]
  free = free - 1
end
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), moved}`
	sha := sha1Hex(admit)
	cmds := [][]string{
		{"ZADD", "waiting", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"},
		{"SCRIPT", "LOAD", admit},
		{"EVALSHA", sha, "2", "waiting", "active", "2", "100"},
		{"EVALSHA", sha, "2", "waiting", "active", "3", "200"},
		{"EVALSHA", sha, "2", "waiting", "active", "3", "300"},
		{"ZRANGE", "active", "0", "-1", "WITHSCORES"},
		{"ZRANGE", "waiting", "0", "-1", "WITHSCORES"},
		{"EVALSHA", sha, "2", "waiting", "active", "10", "400"},
		{"ZRANGE", "active", "0", "-1", "WITHSCORES"},
		{"SET", "waiting", "x"},
		{"EVALSHA", sha, "2", "waiting", "active", "10", "400"},
		{"EVAL", "return redis.call('ZADD', KEYS[1], 'notanumber', 'm')", "1", "z"},
		{"EVAL", "return redis.pcall('ZPOPMIN', KEYS[1], 'x')", "1", "active"},
	}
	playCompatCase(t, realAddr, myAddr, compatCase{name: "zset move", cmds: cmds})
}

type compatCase struct {
	name string
	cmds [][]string
}

func playCompatCase(t *testing.T, realAddr, myAddr string, cc compatCase) {
	t.Helper()
	type side struct {
		addr  string
		conns map[int]*respConn
	}
	sides := []*side{{addr: realAddr}, {addr: myAddr}}
	for _, s := range sides {
		s.conns = map[int]*respConn{}
		require.Equal(t, "+OK\r\n", dialRESP(t, s.addr).do("FLUSHALL"))
	}
	conn := func(s *side, n int) *respConn {
		if c := s.conns[n]; c != nil {
			return c
		}
		c := dialRESP(t, s.addr)
		s.conns[n] = c
		return c
	}
	for i, args := range cc.cmds {
		n := 1
		if len(args) > 1 && len(args[0]) > 1 && args[0][0] == '@' {
			n, _ = strconv.Atoi(args[0][1:])
			args = args[1:]
		}
		mode := byte(0)
		if c := args[0][0]; c == '~' || c == '^' {
			mode = c
			args = append([]string{args[0][1:]}, args[1:]...)
		}
		want := conn(sides[0], n).do(args...)
		got := conn(sides[1], n).do(args...)
		switch mode {
		case '~':
			assert.Equal(t, want[:1], got[:1], "command %d %q: reply type (redis %q, myredis %q)", i+1, args, want, got)
		case '^':
			assert.Equal(t, sortedElements(want), sortedElements(got), "command %d %q", i+1, args)
		default:
			assert.Equal(t, want, got, "command %d %q", i+1, args)
		}
	}
}

// sortedElements splits a flat array of bulk strings into its sorted lines.
func sortedElements(reply string) []string {
	lines := strings.Split(reply, "\r\n")
	sort.Strings(lines)
	return lines
}

// readCompatCases reads a case file; see testdata/compat/README.
func readCompatCases(path string) ([]compatCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []compatCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
		case strings.HasPrefix(line, "=== "):
			cases = append(cases, compatCase{name: strings.TrimPrefix(line, "=== ")})
		default:
			if len(cases) == 0 {
				return nil, fmt.Errorf("%s:%d: command before the first case", path, ln)
			}
			args, err := splitCLIArgs(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, ln, err)
			}
			cases[len(cases)-1].cmds = append(cases[len(cases)-1].cmds, args)
		}
	}
	return cases, sc.Err()
}

// splitCLIArgs splits a line as redis-cli does: blanks separate, "..." takes
// \n \r \t \" \\ and \xHH escapes, '...' takes \'.
func splitCLIArgs(line string) ([]string, error) {
	var args []string
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		var b strings.Builder
		switch q := line[i]; q {
		case '"', '\'':
			i++
			for {
				if i >= len(line) {
					return nil, fmt.Errorf("unbalanced quotes")
				}
				c := line[i]
				if c == q {
					i++
					break
				}
				if c == '\\' && i+1 < len(line) {
					next := line[i+1]
					switch {
					case q == '\'' && next == '\'':
						b.WriteByte('\'')
						i += 2
						continue
					case q == '"' && next == 'x' && i+3 < len(line):
						v, err := strconv.ParseUint(line[i+2:i+4], 16, 8)
						if err == nil {
							b.WriteByte(byte(v))
							i += 4
							continue
						}
					case q == '"':
						esc := map[byte]byte{'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'a': '\a'}
						if e, ok := esc[next]; ok {
							b.WriteByte(e)
						} else {
							b.WriteByte(next)
						}
						i += 2
						continue
					}
				}
				b.WriteByte(c)
				i++
			}
			if i < len(line) && line[i] != ' ' && line[i] != '\t' {
				return nil, fmt.Errorf("closing quote must be followed by a space")
			}
		default:
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				b.WriteByte(line[i])
				i++
			}
		}
		args = append(args, b.String())
	}
	return args, nil
}
