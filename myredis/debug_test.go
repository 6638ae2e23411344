package myredis_test

import (
	"regexp"
	"testing"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// debugObjectVolatile are the parts of DEBUG OBJECT that differ between two
// servers: the address and the LRU clock readings.
var debugObjectVolatile = regexp.MustCompile(`Value at:0x[0-9a-f]+|lru:\d+|lru_seconds_idle:\d+`)

// TestDebugObjectCompat compares DEBUG OBJECT with a real redis-server for
// each type and encoding, the address and LRU readings left out.
func TestDebugObjectCompat(t *testing.T) {
	realAddr, myAddr := startPair(t, "--enable-debug-command", "yes")
	rc, mc := redistest.Dial(t, realAddr), redistest.Dial(t, myAddr)
	setup := [][]string{
		{"SET", "int", "12345"}, {"SET", "small", "1"}, {"SET", "emb", "abcd"},
		{"SET", "raw", "a-string-longer-than-forty-four-bytes-so-it-is-raw-encoded!"},
		{"RPUSH", "list", "a", "b", "c", "dd"}, {"SADD", "iset", "1", "2", "3"}, {"SADD", "set", "a", "b"},
		{"ZADD", "z", "1", "a", "2.5", "b"},
	}
	for _, cmd := range setup {
		rc.Do(cmd...)
		mc.Do(cmd...)
	}
	for _, key := range []string{"int", "small", "emb", "raw", "list", "iset", "set", "z", "nokey"} {
		want := debugObjectVolatile.ReplaceAllString(rc.Do("DEBUG", "OBJECT", key), "")
		got := debugObjectVolatile.ReplaceAllString(mc.Do("DEBUG", "OBJECT", key), "")
		if got != want {
			t.Errorf("DEBUG OBJECT %s:\n got  %q\n want %q", key, got, want)
		}
	}
	for _, args := range [][]string{{"DEBUG", "OBJECT"}, {"DEBUG", "RELOAD", "nope"}, {"DEBUG", "NOSUCH"}} {
		if got, want := mc.Do(args...), rc.Do(args...); got != want {
			t.Errorf("%v:\n got  %q\n want %q", args, got, want)
		}
	}
}

// TestDebugReload: DEBUG RELOAD saves the RDB file, empties the dataset and
// loads the file back (keys, TTLs, functions); NOSAVE reloads the file as it
// is; NOFLUSH refuses duplicates unless MERGE.
func TestDebugReload(t *testing.T) {
	cfg := myredis.DefaultConfig()
	for name, val := range map[string]string{"enable-debug-command": "yes", "dir": t.TempDir()} {
		if err := cfg.Set(name, val); err != nil {
			t.Fatal(err)
		}
	}
	_, addr := redistest.StartMyRedisConfig(t, cfg, myredis.WithClock(newFakeClock()))
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "SET", "k", "v", "EX", "100")
	mustDo(t, c, num(2), "RPUSH", "l", "a", "b")
	mustDo(t, c, bulk("lib"), "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)")
	mustDo(t, c, ok, "DEBUG", "RELOAD")
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, num(100), "TTL", "k")
	mustDo(t, c, bulks("a", "b"), "LRANGE", "l", "0", "-1")
	mustDo(t, c, num(1), "FCALL", "f", "0")

	mustDo(t, c, ok, "SET", "k", "changed")
	mustDo(t, c, ok, "SET", "new", "1")
	mustDo(t, c, ok, "DEBUG", "RELOAD", "NOSAVE") // back to the file
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, null, "GET", "new")
	mustDo(t, c, errRe("ERR Error trying to load the RDB dump"), "DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
	mustDo(t, c, ok, "SET", "k", "changed")
	mustDo(t, c, ok, "DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
	mustDo(t, c, bulk("v"), "GET", "k")
	mustDo(t, c, num(1), "FCALL", "f", "0")
}
