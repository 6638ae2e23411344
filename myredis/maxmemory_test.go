package myredis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

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

// infoInt reads one INFO field as an integer.
func infoInt(t *testing.T, c *redistest.Conn, name string) int64 {
	t.Helper()
	info := c.Do("INFO", "all")
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", name, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", name)
	return 0
}

// TestEvictionHonoursTheLimit is Redis's unit maxmemory "is the memory limit
// honoured", "only allkeys-* should remove non-volatile keys" and "policy
// volatile-* should only remove volatile keys", for every policy.
func TestEvictionHonoursTheLimit(t *testing.T) {
	c, _, _ := start(t)
	fill := func(policy string, write func(i int) []string) (limit int64, numkeys int) {
		mustDo(t, c, ok, "FLUSHALL")
		mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "0")
		limit = infoInt(t, c, "used_memory") + 100*1024
		mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10), "maxmemory-policy", policy)
		for {
			if r := c.Do(write(numkeys)...); r != ok {
				t.Fatalf("%s: filling: %q", policy, r)
			}
			numkeys++
			if infoInt(t, c, "used_memory")+4096 > limit {
				break
			}
		}
		if numkeys <= 10 {
			t.Fatalf("%s: only %d keys fill 100 KB", policy, numkeys)
		}
		return limit, numkeys
	}
	setex := func(i int) []string { return []string{"SETEX", "key:" + strconv.Itoa(i), "10000", "x"} }
	set := func(i int) []string { return []string{"SET", "key:" + strconv.Itoa(i), "x"} }
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		limit, n := fill(policy, setex)
		for i := range n {
			c.Do("SETEX", "more:"+strconv.Itoa(i), "10000", "x")
		}
		if used := infoInt(t, c, "used_memory"); used >= limit+4096 {
			t.Errorf("%s: used_memory %d over the limit %d", policy, used, limit)
		}
		if infoInt(t, c, "evicted_keys") == 0 {
			t.Errorf("%s: nothing evicted", policy)
		}
	}
	for _, policy := range []string{"allkeys-random", "allkeys-lru", "volatile-lru", "volatile-random", "volatile-ttl", "noeviction"} {
		limit, n := fill(policy, set)
		refused := 0
		for i := range n {
			if r := c.Do("SET", "more:"+strconv.Itoa(i), "x"); r == oom {
				refused++
			}
		}
		if strings.HasPrefix(policy, "allkeys-") {
			if used := infoInt(t, c, "used_memory"); used >= limit+4096 || refused > 0 {
				t.Errorf("%s: used_memory %d (limit %d), %d writes refused", policy, used, limit, refused)
			}
		} else if refused == 0 {
			t.Errorf("%s: no write refused with only keys without TTL", policy)
		}
	}
	for _, policy := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		limit, n := fill(policy, func(i int) []string {
			if i%2 == 1 {
				return setex(i)
			}
			return set(i)
		})
		for i := range n {
			c.Do("SETEX", "foo:"+strconv.Itoa(i), "10000", "x")
		}
		if used := infoInt(t, c, "used_memory"); used >= limit+4096 {
			t.Errorf("%s: used_memory %d over the limit %d", policy, used, limit)
		}
		for i := 0; i < n; i += 2 {
			if r := c.Do("EXISTS", "key:"+strconv.Itoa(i)); r != num(1) {
				t.Fatalf("%s: key:%d without TTL was evicted", policy, i)
			}
		}
	}
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")
}

// TestEvictionLRUKeepsTheHotKeys: under allkeys-lru, keys read again and again
// survive a flood of new keys that evicts the old ones. The LRU is sampled, as
// Redis's: a hot key may go now and then (it is written again then), so the
// test asserts proportions.
func TestEvictionLRUKeepsTheHotKeys(t *testing.T) {
	c, clk, _ := start(t)
	value := strings.Repeat("v", 1000)
	for i := range 200 {
		mustDo(t, c, ok, "SET", "old:"+strconv.Itoa(i), value)
	}
	used := infoInt(t, c, "used_memory")
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used, 10), "maxmemory-policy", "allkeys-lru")
	hotLost := 0
	for i := range 2000 {
		if i%10 == 0 {
			clk.Advance(time.Second) // the LRU clock counts seconds
			for h := range 20 {      // the hot set: old:0..old:19
				if c.Do("GET", "old:"+strconv.Itoa(h)) != bulk(value) {
					hotLost++
					mustDo(t, c, ok, "SET", "old:"+strconv.Itoa(h), value)
				}
			}
		}
		mustDo(t, c, ok, "SET", "new:"+strconv.Itoa(i), value)
	}
	cold := 0
	for i := 20; i < 200; i++ {
		if c.Do("EXISTS", "old:"+strconv.Itoa(i)) == num(1) {
			cold++
		}
	}
	// 4000 reads of 20 hot keys: Redis's sampling (5 keys, a pool of 16) loses
	// well under 1% of them; the cold keys are all gone after 10 times their number
	if hotLost > 20 || cold > 9 {
		t.Errorf("hot keys lost %d times in 4000 reads; %d of 180 cold keys survived", hotLost, cold)
	}
	if n := infoInt(t, c, "evicted_keys"); n < 1900 {
		t.Errorf("evicted_keys %d, want about 2000", n)
	}
}

// TestObjectFreqAndIdletime: OBJECT FREQ answers under an LFU policy only,
// IDLETIME under the others, from the key's 24-bit field.
func TestObjectFreqAndIdletime(t *testing.T) {
	c, clk, _ := start(t)
	runSteps(t, c, []step{
		do("+OK\r\n", "SET", "k", "v"),
		do("-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n", "OBJECT", "FREQ", "k"),
	})
	clk.Advance(10 * time.Second)
	runSteps(t, c, []step{
		do(":10\r\n", "OBJECT", "IDLETIME", "k"),
		do(":1\r\n", "EXISTS", "k"), // no access
		do(":10\r\n", "OBJECT", "IDLETIME", "k"),
		do("$1\r\nv\r\n", "GET", "k"),
		do(":0\r\n", "OBJECT", "IDLETIME", "k"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu", "lfu-log-factor", "0"),
		do("+OK\r\n", "SET", "f", "v"),
		do(":5\r\n", "OBJECT", "FREQ", "f"),
		do("$1\r\nv\r\n", "GET", "f"),
		do("$1\r\nv\r\n", "GET", "f"),
		do("$1\r\nv\r\n", "GET", "f"),
		do(":8\r\n", "OBJECT", "FREQ", "f"),
		do("-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n", "OBJECT", "IDLETIME", "f"),
	})
	clk.Advance(3 * time.Minute) // lfu-decay-time 1: one less a minute
	runSteps(t, c, []step{
		do(":5\r\n", "OBJECT", "FREQ", "f"),
		do("+OK\r\n", "CONFIG", "SET", "lfu-decay-time", "0"),
		do(":8\r\n", "OBJECT", "FREQ", "f"),
		do("+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "noeviction"),
	})
}

// TestEvictionOnConfigSet: lowering maxmemory evicts without another write,
// counts evicted_keys, and a write with nothing left to evict is refused.
func TestEvictionOnConfigSet(t *testing.T) {
	c, _, _ := start(t)
	for i := range 50 {
		mustDo(t, c, ok, "SET", "k"+strconv.Itoa(i), "v")
	}
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-policy", "allkeys-random", "maxmemory", "1")
	mustDo(t, c, num(0), "DBSIZE")
	if n := infoInt(t, c, "evicted_keys"); n != 50 {
		t.Fatalf("evicted_keys %d, want 50", n)
	}
	mustDo(t, c, oom, "SET", "x", "y")
	mustDo(t, c, ok, "CONFIG", "RESETSTAT")
	if n := infoInt(t, c, "evicted_keys"); n != 0 {
		t.Fatalf("evicted_keys %d after RESETSTAT", n)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "0")
	mustDo(t, c, ok, "SET", "x", "y")
}

// TestEvictionNotifies: an evicted key publishes the keyspace event "evicted".
func TestEvictionNotifies(t *testing.T) {
	c, _, addr := start(t)
	sub := redistest.Dial(t, addr)
	mustDo(t, c, ok, "CONFIG", "SET", "notify-keyspace-events", "Ee")
	mustDo(t, sub, "*3\r\n$9\r\nsubscribe\r\n$22\r\n__keyevent@0__:evicted\r\n:1\r\n", "SUBSCRIBE", "__keyevent@0__:evicted")
	mustDo(t, c, ok, "SET", "k", "v")
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru", "maxmemory", "1")
	mustDo(t, c, num(0), "DBSIZE")
	want := "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$1\r\nk\r\n"
	if got, err := sub.Read(); got != want {
		t.Fatalf("evicted event: %q (%v), want %q", got, err, want)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")
}
