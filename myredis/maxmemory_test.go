package myredis_test

import (
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
