package myredis_test

import (
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

const oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

// TestMaxmemoryRefusesWrites: over maxmemory, denyoom commands are refused,
// reads and DEL run, a MULTI refuses what it would queue and its EXEC aborts;
// below it everything runs again.
func TestMaxmemoryRefusesWrites(t *testing.T) {
	c, _, addr := start(t)
	runSteps(t, c, []step{
		do("+OK\r\n", "SET", "k", "v"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory", "1"),
		do(oom, "SET", "k2", "v"),
		do(oom, "LPUSH", "l", "x"),
		do(oom, "HSET", "h", "f", "v"),
		do("$1\r\nv\r\n", "GET", "k"),
		do(":1\r\n", "DEL", "k"),
		do("+OK\r\n", "MULTI"),
		do(oom, "GET", "k"),
		do("+OK\r\n", "DISCARD"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory", "0"),
		do("+OK\r\n", "SET", "k2", "v"),
	})
	// in MULTI: another client sets the limit, the queueing is refused, EXEC aborts
	other := redistest.Dial(t, addr)
	runSteps(t, c, []step{
		do("+OK\r\n", "MULTI"),
		do("+QUEUED\r\n", "SET", "a", "1"),
	})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "1")})
	runSteps(t, c, []step{do(oom, "LPUSH", "l", "x")})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")})
	runSteps(t, c, []step{
		do("+QUEUED\r\n", "SET", "b", "2"),
		do("-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC"),
		do(":0\r\n", "EXISTS", "a", "b"),
	})
	// EXEC of reads runs over the limit; EXEC holding a write is refused
	runSteps(t, c, []step{
		do("+OK\r\n", "SET", "x", "value"),
		do("+OK\r\n", "MULTI"),
		do("+QUEUED\r\n", "GET", "x"),
	})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "1")})
	runSteps(t, c, []step{do("*1\r\n$5\r\nvalue\r\n", "EXEC")})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")})
	runSteps(t, c, []step{
		do("+OK\r\n", "MULTI"),
		do("+QUEUED\r\n", "SET", "x", "1"),
	})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "1")})
	runSteps(t, c, []step{do("-EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'.\r\n", "EXEC")})
	runSteps(t, other, []step{do("+OK\r\n", "CONFIG", "SET", "maxmemory", "0")})
	runSteps(t, c, []step{do("$5\r\nvalue\r\n", "GET", "x")})
}

// TestMaxmemoryScripts: over maxmemory a script without flags fails at its
// first denyoom command and can still read; a script with flags that may write
// is refused whole; allow-oom and no-writes scripts and functions run.
func TestMaxmemoryScripts(t *testing.T) {
	c, _, _ := start(t)
	runSteps(t, c, []step{
		do("+OK\r\n", "SET", "x", "123"),
		do("$4\r\ntest\r\n", "FUNCTION", "LOAD", "#!lua name=test\n"+
			"redis.register_function('w', function() return redis.call('set', 'x', '1') end)\n"+
			"redis.register_function{function_name='r', callback=function() return 'hello' end, flags={'no-writes'}}\n"+
			"redis.register_function{function_name='oomok', callback=function() return redis.call('set', 'x', '2') end, flags={'allow-oom'}}"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory", "1"),
	})
	oomScript := "-OOM command not allowed when used memory > 'maxmemory'. script: "
	got := c.Do("EVAL", "redis.call('set','x',1) return 1", "1", "x")
	if !strings.HasPrefix(got, oomScript) {
		t.Fatalf("EVAL writing over maxmemory: %q", got)
	}
	runSteps(t, c, []step{
		do("$3\r\n123\r\n", "EVAL", "return redis.call('get','x')", "1", "x"),
		do(oom, "EVAL", "#!lua flags=\nreturn 1", "0"),
		do(":1\r\n", "EVAL", "#!lua flags=allow-oom\nredis.call('set','x',1)\nreturn 1", "1", "x"),
		do(":1\r\n", "EVAL", "#!lua flags=no-writes\nredis.call('get','x')\nreturn 1", "0"),
		do(oom, "FCALL", "w", "0"),
		do("$5\r\nhello\r\n", "FCALL", "r", "0"),
		do("$5\r\nhello\r\n", "FCALL_RO", "r", "0"),
		do("+OK\r\n", "FCALL", "oomok", "0"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory", "0"),
		do("+OK\r\n", "FCALL", "w", "0"),
	})
}
