package myredis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

const (
	busyEval     = "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	busyFunction = "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
)

// waitForReply sends args on c until the reply is want (the server turned busy).
func waitForReply(t *testing.T, c *redistest.Conn, want string, args ...string) {
	t.Helper()
	for i := 0; ; i++ {
		r := c.Do(args...)
		if r == want {
			return
		}
		if i > 500 {
			t.Fatalf("%v never answered %q; last reply %q", args, want, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFunctionKill: a function that runs too long makes others get the function
// BUSY error; only FUNCTION KILL stops it, only SCRIPT KILL stops an EVAL, and
// FUNCTION STATS answers meanwhile.
func TestFunctionKill(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	runner, other := redistest.Dial(t, addr), redistest.Dial(t, addr)
	require.Equal(t, ok, other.Do("CONFIG", "SET", "busy-reply-threshold", "20"))
	require.Equal(t, bulk("lib"), other.Do("FUNCTION", "LOAD",
		"#!lua name=lib\nredis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)"))

	send(t, runner, "FCALL", "spin", "0")
	waitForReply(t, other, busyFunction, "PING")
	stats := other.Do("FUNCTION", "STATS")
	assert.True(t, strings.HasPrefix(stats, "*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nspin\r\n"+
		"$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n$11\r\nduration_ms\r\n:"), stats)
	assert.True(t, strings.HasSuffix(stats, "$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n"+
		"$15\r\nfunctions_count\r\n:1\r\n"), stats)
	assert.Equal(t, busyFunction, other.Do("SCRIPT", "KILL"))
	assert.Equal(t, ok, other.Do("FUNCTION", "KILL"))
	assert.Regexp(t, `^-ERR Script killed by user with SCRIPT KILL\.\.\. script: spin, on @user_function:2\.\r\n$`, receive(t, runner))
	assert.Equal(t, "+PONG\r\n", other.Do("PING"))

	send(t, runner, "EVAL", "while true do end", "0")
	waitForReply(t, other, busyEval, "PING")
	assert.Equal(t, busyEval, other.Do("FUNCTION", "KILL"))
	assert.Equal(t, ok, other.Do("SCRIPT", "KILL"))
	assert.Contains(t, receive(t, runner), "Script killed by user")
	assert.Equal(t, "-NOTBUSY No scripts in execution right now.\r\n", other.Do("FUNCTION", "KILL"))
}

// TestExecWhileBusy: as Redis 7.0, an EXEC that arrives while a script is busy is
// answered EXECABORT with the BUSY reason, nothing of the transaction runs, and
// the client is out of MULTI afterwards.
func TestExecWhileBusy(t *testing.T) {
	addr := redistest.StartMyRedis(t)
	runner, other, tx := redistest.Dial(t, addr), redistest.Dial(t, addr), redistest.Dial(t, addr)
	require.Equal(t, ok, other.Do("CONFIG", "SET", "lua-time-limit", "20"))
	require.Equal(t, ok, other.Do("SET", "xx", "1"))
	require.Equal(t, ok, tx.Do("MULTI"))
	require.Equal(t, queued, tx.Do("INCR", "xx"))

	send(t, runner, "EVAL", "while true do end", "0")
	waitForReply(t, other, busyEval, "PING")
	assert.Equal(t, "-EXECABORT Transaction discarded because of: "+strings.TrimPrefix(busyEval, "-"), tx.Do("EXEC"))
	assert.Equal(t, ok, other.Do("SCRIPT", "KILL"))
	receive(t, runner)
	assert.Equal(t, bulk("1"), other.Do("GET", "xx"), "nothing of the transaction ran")
	assert.Equal(t, bulk("asdf"), tx.Do("PING", "asdf"), "the client left MULTI")
	assert.Equal(t, "-ERR EXEC without MULTI\r\n", tx.Do("EXEC"))

	// MULTI itself is allowed while busy; a command refused BUSY dooms the EXEC
	send(t, runner, "EVAL", "while true do end", "0")
	waitForReply(t, other, busyEval, "PING")
	assert.Equal(t, ok, tx.Do("MULTI"))
	assert.Equal(t, "-ERR MULTI calls can not be nested\r\n", tx.Do("MULTI"))
	assert.Equal(t, busyEval, tx.Do("INCR", "xx"))
	assert.Equal(t, ok, other.Do("SCRIPT", "KILL"))
	receive(t, runner)
	assert.Equal(t, queued, tx.Do("INCR", "xx"))
	assert.Equal(t, "-EXECABORT Transaction discarded because of previous errors.\r\n", tx.Do("EXEC"))
	assert.Equal(t, bulk("1"), other.Do("GET", "xx"))
	assert.Equal(t, bulk("asdf"), tx.Do("PING", "asdf"))
}

// TestFunctionDumpRestore: a dump restores under each policy, all or nothing.
func TestFunctionDumpRestore(t *testing.T) {
	c, _, _ := start(t)
	lib := func(name, fn, ret string) string {
		return "#!lua name=" + name + "\nredis.register_function('" + fn + "', function() return " + ret + " end)"
	}
	mustDo(t, c, bulk("a"), "FUNCTION", "LOAD", lib("a", "fa", "1"))
	mustDo(t, c, bulk("b"), "FUNCTION", "LOAD", lib("b", "fb", "2"))
	payload := c.Do("FUNCTION", "DUMP")
	require.True(t, strings.HasPrefix(payload, "$"), payload)
	dump := payload[strings.Index(payload, "\r\n")+2 : len(payload)-2]

	mustDo(t, c, errRe("ERR Library a already exists"), "FUNCTION", "RESTORE", dump)
	mustDo(t, c, errRe("ERR Library a already exists"), "FUNCTION", "RESTORE", dump, "APPEND")
	mustDo(t, c, ok, "FUNCTION", "RESTORE", dump, "REPLACE")
	mustDo(t, c, ok, "FUNCTION", "DELETE", "b")
	mustDo(t, c, bulk("c"), "FUNCTION", "LOAD", lib("c", "fb", "3"))
	// fb belongs to c now: restoring b would collide, and nothing changes
	mustDo(t, c, errRe("ERR Function fb already exists"), "FUNCTION", "RESTORE", dump, "REPLACE")
	mustDo(t, c, num(3), "FCALL", "fb", "0")
	mustDo(t, c, ok, "FUNCTION", "RESTORE", dump, "FLUSH")
	mustDo(t, c, num(2), "FCALL", "fb", "0")
	mustDo(t, c, errRe("ERR Function not found"), "FCALL", "nosuch", "0")
	broken := dump[:len(dump)-1] + string(dump[len(dump)-1]^1)
	mustDo(t, c, errRe("ERR DUMP payload version or checksum are wrong"), "FUNCTION", "RESTORE", broken)
}

// TestInfoCountsScriptsAndFunctions: INFO memory counts cached scripts, functions
// and libraries, and SCRIPT FLUSH / FUNCTION FLUSH empty them.
func TestInfoCountsScriptsAndFunctions(t *testing.T) {
	c, _, _ := start(t)
	c.Do("SCRIPT", "LOAD", "return 1")
	c.Do("SCRIPT", "LOAD", "return 2")
	c.Do("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('a', function() end)\nredis.register_function('b', function() end)")
	info := c.Do("INFO", "memory")
	for _, want := range []string{"number_of_cached_scripts:2\r\n", "number_of_functions:2\r\n", "number_of_libraries:1\r\n"} {
		assert.Contains(t, info, want)
	}
	c.Do("SCRIPT", "FLUSH", "ASYNC")
	c.Do("FUNCTION", "FLUSH")
	info = c.Do("INFO", "memory")
	for _, want := range []string{"number_of_cached_scripts:0\r\n", "number_of_functions:0\r\n", "number_of_libraries:0\r\n"} {
		assert.Contains(t, info, want)
	}
}
