package myredis

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// propagationLog records what the server hands to its propagation listeners
// (what the AOF would write).
type propagationLog struct {
	mu    sync.Mutex
	lines []string
}

func (p *propagationLog) attach(s *Server) {
	s.submit(func() {
		s.hooks = append(s.hooks, func(db *DB, args [][]byte) {
			p.add(strings.ToUpper(string(args[0])) + " " + string(joinArgs(args[1:])))
		})
		s.wrapHooks = append(s.wrapHooks, func(begin bool) {
			if begin {
				p.add("BEGIN")
			} else {
				p.add("END")
			}
		})
	})
}

func joinArgs(args [][]byte) []byte {
	var b []byte
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a...)
	}
	return b
}

func (p *propagationLog) add(s string) {
	p.mu.Lock()
	p.lines = append(p.lines, s)
	p.mu.Unlock()
}

func (p *propagationLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lines
	p.lines = nil
	return l
}

// TestScriptPropagation: a script's writes reach the AOF one by one, several
// wrapped as one unit; the EVAL itself and its reads never do.
func TestScriptPropagation(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	var log propagationLog
	log.attach(s)

	got := s.Do("EVAL", "redis.call('set', KEYS[1], ARGV[1]) redis.call('get', KEYS[1]) return redis.call('incr', KEYS[2])", "2", "k", "n", "v")
	assert.Equal(t, ":1\r\n", string(got))
	assert.Equal(t, []string{"BEGIN", "SET k v", "INCR n", "END"}, log.take())

	s.Do("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k")
	assert.Empty(t, log.take(), "a read-only script writes nothing")

	s.Do("EVAL", "return redis.call('nosuch')", "0")
	assert.Empty(t, log.take())

	s.Do("EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
	assert.Equal(t, []string{"INCR n"}, log.take(), "one write alone is not wrapped (Redis 7.0)")

	// inside EXEC the transaction is the unit: no nested wrap
	c := newClient(s, nil)
	c.authed = true
	run := func(args ...string) string {
		var w Writer
		s.submit(func() { s.call(c, bargs(args...), &w) })
		return string(w.Bytes())
	}
	run("MULTI")
	run("EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
	run("SET", "x", "1")
	assert.Equal(t, "*2\r\n:3\r\n+OK\r\n", run("EXEC"))
	assert.Equal(t, []string{"BEGIN", "INCR n", "SET x 1", "END"}, log.take())
}

// TestLuaStateReused: every script runs in the same Lua state, compiled once.
func TestLuaStateReused(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	s.Do("EVAL", "return 1", "0")
	var first *luaEngine
	s.submit(func() { first = s.lua })
	require.NotNil(t, first)
	L := first.L
	for i := 0; i < 3; i++ {
		s.Do("EVAL", "return KEYS[1]", "1", "k")
		s.Do("EVALSHA", sha1hex([]byte("return 1")), "0")
	}
	s.submit(func() {
		assert.Same(t, first, s.lua)
		assert.Same(t, L, s.lua.L)
		assert.Len(t, s.lua.scripts, 2)
	})
	assert.Equal(t, "*0\r\n", string(s.Do("EVAL", "return KEYS", "0")), "KEYS of an earlier call do not leak")

	s.Do("SCRIPT", "FLUSH")
	s.submit(func() { assert.Nil(t, s.lua, "SCRIPT FLUSH drops the state with the cache") })
}

// steppingClock moves forward a little every time it is read.
type steppingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(10 * time.Millisecond)
	return c.now
}

// TestScriptTimeStandsStill: inside a script the expiry clock is the script's
// start time, as in Redis, so a TTL cannot change (or a key expire) mid-script.
func TestScriptTimeStandsStill(t *testing.T) {
	s := New(Config{}, WithClock(&steppingClock{now: time.Unix(1_700_000_000, 0)}))
	defer s.Close()
	got := s.Do("EVAL", `
redis.call('set', KEYS[1], 'v', 'PX', 1000)
local a = redis.call('pttl', KEYS[1])
local b = redis.call('pttl', KEYS[1])
return {a, b}`, "1", "k")
	assert.Equal(t, "*2\r\n:1000\r\n:1000\r\n", string(got))
	ttl := string(s.Do("PTTL", "k"))
	assert.NotEqual(t, ":1000\r\n", ttl, "outside a script the clock moves again")
}

// TestMathRandomIsRedis: math.random follows Redis's rand48 sequence.
func TestMathRandomIsRedis(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	// the first values of a fresh redis-server 7.0.15
	got := s.Do("EVAL", "return {tostring(math.random()), tostring(math.random()), math.random(100)}", "0")
	assert.Equal(t, "*3\r\n$16\r\n0.39646477363839\r\n$16\r\n0.84048536971234\r\n:36\r\n", string(got))
	got = s.Do("EVAL", "math.randomseed(42) return tostring(math.random())", "0")
	assert.Equal(t, "$16\r\n0.74452500033403\r\n", string(got))
}

func TestLuaSyntaxErrorText(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	tests := []struct{ body, want string }{
		{"return 1 +", "user_script:1: unexpected symbol near '<eof>'"},
		{"return (", "user_script:1: unexpected symbol near '<eof>'"},
		{"x = = 1", "user_script:1: unexpected symbol near '='"},
		{"\n\nreturn +", "user_script:3: unexpected symbol near '+'"},
		{"#notshebang\nreturn 1", "user_script:1: unexpected symbol near '#'"},
	}
	for _, tt := range tests {
		got := string(s.Do("EVAL", tt.body, "0"))
		assert.Equal(t, "-ERR Error compiling script (new function): "+tt.want+"\r\n", got, "%q", tt.body)
	}
}

func BenchmarkEvalsha(b *testing.B) {
	s := New(Config{})
	defer s.Close()
	body := "local n = redis.call('incr', KEYS[1]) if n > 1000000 then redis.call('set', KEYS[1], 0) end return n"
	s.Do("SCRIPT", "LOAD", body)
	sha := sha1hex([]byte(body))
	c := newClient(s, nil)
	c.authed = true
	args := bargs("EVALSHA", sha, "1", "counter")
	var w Writer
	b.ResetTimer()
	s.submit(func() {
		for i := 0; i < b.N; i++ {
			w.Reset()
			s.call(c, args, &w)
		}
	})
}

// TestAOFLogsScriptEffects: the AOF records what a script did, not the script:
// its writes with absolute deadlines, several as one MULTI/EXEC unit, so a replay
// gives the same data even where the script used the clock or math.random.
func TestAOFLogsScriptEffects(t *testing.T) {
	dir := t.TempDir()
	clock := &aofClock{}
	clock.ms.Store(1_700_000_000_000)
	s, addr := openAOFServer(t, dir, nil, WithClock(clock))
	c := mustDialAOF(t, addr)
	c.must(t, "EVAL", "redis.call('SET', KEYS[1], 'v', 'EX', 10) redis.call('GET', KEYS[1]) return redis.call('INCR', KEYS[2])", 2, "k", "n")
	c.must(t, "EVAL_RO", "return redis.call('GET', KEYS[1])", 1, "k") // reads only: nothing logged
	c.must(t, "EVAL", "redis.call('SET', KEYS[1], tostring(math.random(1000000)))", 1, "r")
	c.must(t, "MULTI")
	c.must(t, "EVAL", "return redis.call('INCR', KEYS[1])", 1, "n")
	c.must(t, "SET", "x", "1")
	c.must(t, "EXEC")
	c.must(t, "EVAL", "redis.call('SELECT', '3') redis.call('SET', 'in3', 'y')", 0)
	want := dump(s)
	r, err := c.do("GET", "r")
	require.NoError(t, err)
	s.Close()

	var log []byte
	for _, cmd := range [][]string{
		{"SELECT", "0"},
		{"MULTI"},
		{"SET", "k", "v", "PXAT", "1700000010000"},
		{"INCR", "n"},
		{"EXEC"},
		{"SET", "r", r.(string)}, // one write alone is atomic: no MULTI (Redis 7.0)
		{"MULTI"},
		{"INCR", "n"},
		{"SET", "x", "1"},
		{"EXEC"},
		{"SELECT", "3"},
		{"SET", "in3", "y"},
	} {
		log = appendCommand(log, bargs(cmd...))
	}
	got, err := os.ReadFile(aofPath(dir))
	require.NoError(t, err)
	assert.Equal(t, string(log), string(got))

	s2, _ := openAOFServer(t, dir, nil, WithClock(clock))
	defer s2.Close()
	assert.Equal(t, want, dump(s2), "the replay rebuilds what the scripts made")
}
