package myredis_test

// MIGRATE between MyRedis and real Redis both ways: needs redis-server 7.0 in
// PATH (the tests skip without it). The same steps run on three pairs, MyRedis
// to Redis, Redis to Redis and Redis to MyRedis, and every reply, on the
// source and on the target, must be the same as with Redis to Redis.

import (
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"waitroom/myredis/redistest"
)

// migrateStep is one command on the source ("src") or the target ("dst").
// In args, HOST and PORT stand for the target's address. norm, when set,
// turns the raw reply into what is compared (a TTL into a range, a set's
// members sorted).
type migrateStep struct {
	on   string
	args []string
	norm func(string) string
}

func onSrc(args ...string) migrateStep { return migrateStep{on: "src", args: args} }
func onDst(args ...string) migrateStep { return migrateStep{on: "dst", args: args} }

// sortedArrayItems sorts the lines of an array reply's elements, so that sets and
// KEYS compare whatever their order.
func sortedArrayItems(r string) string {
	lines := strings.Split(r, "\r\n")
	if len(lines) < 2 {
		return r
	}
	body := lines[1:]
	var items []string
	for i := 0; i+1 < len(body); i += 2 {
		items = append(items, body[i]+"\r\n"+body[i+1])
	}
	sort.Strings(items)
	return lines[0] + "\r\n" + strings.Join(items, "\r\n")
}

// ttlWithin turns a TTL reply into whether it is between 1 and max.
func ttlWithin(max int) func(string) string {
	return func(r string) string {
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(r, ":")))
		return strconv.FormatBool(err == nil && n >= 1 && n <= max)
	}
}

// infoField keeps one field of an INFO reply.
func infoFieldOf(field string) func(string) string {
	return func(r string) string {
		for _, line := range strings.Split(r, "\r\n") {
			if strings.HasPrefix(line, field+":") {
				return line
			}
		}
		return "(no " + field + ")"
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

func migrateSteps(badPort string) []migrateStep {
	bigList, bigHash := onSrc("RPUSH", "biglist"), onSrc("HSET", "bighash")
	for i := 0; i < 10000; i++ {
		bigList.args = append(bigList.args, strings.Repeat("x", i%100)+strconv.Itoa(i))
	}
	for i := 0; i < 1000; i++ {
		bigHash.args = append(bigHash.args, "field-"+strconv.Itoa(i), strings.Repeat("v", i%300))
	}
	steps := []migrateStep{
		// as the suite's unit/dump: move, copy, REPLACE, TTL, large values, hashes
		onSrc("SET", "key", "Some Value"),
		onSrc("MIGRATE", "HOST", "PORT", "key", "9", "5000"),
		onSrc("EXISTS", "key"),
		onDst("SELECT", "9"),
		onDst("GET", "key"),
		onDst("TTL", "key"),
		onSrc("RPUSH", "list", "a", "b", "c", "d"),
		onSrc("MIGRATE", "HOST", "PORT", "list", "9", "5000", "copy"),
		onSrc("EXISTS", "list"),
		onDst("LRANGE", "list", "0", "-1"),
		onSrc("MIGRATE", "HOST", "PORT", "list", "9", "5000", "copy"),
		onSrc("MIGRATE", "HOST", "PORT", "list", "9", "5000", "copy", "replace"),
		onSrc("SET", "ttlkey", "value"),
		onSrc("EXPIRE", "ttlkey", "10"),
		onSrc("MIGRATE", "HOST", "PORT", "ttlkey", "9", "5000"),
		{on: "dst", args: []string{"TTL", "ttlkey"}, norm: ttlWithin(10)},
		bigList, bigHash,
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "10000", "KEYS", "biglist", "bighash"),
		onDst("LLEN", "biglist"),
		onDst("LINDEX", "biglist", "7777"),
		onDst("HLEN", "bighash"),
		onDst("HGET", "bighash", "field-999"),
		onSrc("SADD", "set", "a", "b", "c"),
		onSrc("SADD", "intset", "1", "2", "3"),
		onSrc("ZADD", "zset", "1.5", "a", "2", "b"),
		onSrc("XADD", "stream", "1-1", "f", "v"),
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "5000", "KEYS", "set", "intset", "zset", "stream"),
		{on: "dst", args: []string{"SMEMBERS", "set"}, norm: sortedArrayItems},
		{on: "dst", args: []string{"SMEMBERS", "intset"}, norm: sortedArrayItems},
		onDst("ZRANGE", "zset", "0", "-1", "WITHSCORES"),
		onDst("XRANGE", "stream", "-", "+"),
		// several keys, the empty key argument, only the existing ones
		onSrc("MSET", "key1", "v1", "key2", "v2", "key3", "v3"),
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "5000", "KEYS", "key1", "key2", "key3"),
		onDst("MGET", "key1", "key2", "key3"),
		onSrc("MIGRATE", "127.0.0.1", "6379", "NotEmpty", "9", "5000", "KEYS", "a", "b", "c"),
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "5000", "KEYS", "nokey-1", "nokey-2", "nokey-2"),
		onSrc("MSET", "key1", "v1", "key2", "v2", "key3", "v3"),
		onDst("DEL", "key1", "key2", "key3"),
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "5000", "KEYS", "nokey-1", "key1", "nokey-2", "key2", "nokey-3", "key3"),
		onDst("MGET", "key1", "key2", "key3"),
		// only the acknowledged keys are deleted
		onSrc("MSET", "a", "1", "b", "2", "c", "3", "d", "4"),
		onDst("MSET", "b", "x", "d", "y"),
		onSrc("MIGRATE", "HOST", "PORT", "", "9", "5000", "KEYS", "a", "b", "c", "d"),
		{on: "src", args: []string{"KEYS", "*"}, norm: sortedArrayItems},
		// AUTH, AUTH2 and wrong passwords
		onDst("CONFIG", "SET", "requirepass", "foobar"),
		onSrc("SET", "p", "1"),
		onSrc("MIGRATE", "HOST", "PORT", "p", "9", "5000", "AUTH", "nopass"),
		onSrc("MIGRATE", "HOST", "PORT", "p", "9", "5000", "AUTH", "foobar"),
		onSrc("SET", "p", "2"),
		onSrc("MIGRATE", "HOST", "PORT", "p", "9", "5000", "AUTH2", "default", "foobar", "REPLACE"),
		onDst("AUTH", "foobar"),
		onDst("GET", "p"),
		onDst("CONFIG", "SET", "requirepass", ""),
		// inside MULTI, a database the target lacks, parse errors
		onSrc("SET", "m", "1"),
		onSrc("MULTI"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0", "5000"),
		onSrc("EXEC"),
		onDst("SELECT", "0"),
		onDst("GET", "m"),
		onSrc("SET", "m", "2"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "99", "5000"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "x", "5000"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0", "1.5"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0", "5000", "AUTH"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0", "5000", "AUTH2", "u"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0", "5000", "BOGUS"),
		onSrc("MIGRATE", "HOST", "PORT", "m", "0"),
		onSrc("MIGRATE", "127.0.0.1", badPort, "m", "0", "1000"),
		onSrc("MIGRATE", "no-such-host.invalid", "6379", "m", "0", "1000"),
		onSrc("EXISTS", "m"),
		onSrc("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "x", "y"),
		onSrc("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5", "COPY"),
		onSrc("COMMAND", "INFO", "migrate", "restore-asking"),
		{on: "src", args: []string{"INFO", "stats"}, norm: infoFieldOf("migrate_cached_sockets")},
		onDst("RESTORE-ASKING", "ra", "0", "bad"),
	}
	return steps
}

type migratePair struct {
	name     string
	src, dst *redistest.Conn
	dstAddr  string
}

func (p migratePair) run(t *testing.T, s migrateStep) string {
	host, port, _ := net.SplitHostPort(p.dstAddr)
	args := make([]string, len(s.args))
	for i, a := range s.args {
		switch a {
		case "HOST":
			a = host
		case "PORT":
			a = port
		}
		args[i] = a
	}
	c := p.src
	if s.on == "dst" {
		c = p.dst
	}
	r := c.Do(args...)
	if s.norm != nil {
		r = s.norm(r)
	}
	return r
}

// TestMigrateMatchesRedis plays migrateSteps on MyRedis->Redis and
// Redis->MyRedis and compares each reply with Redis->Redis.
func TestMigrateMatchesRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	pair := func(name, src, dst string) migratePair {
		return migratePair{name: name, src: redistest.Dial(t, src), dst: redistest.Dial(t, dst), dstAddr: dst}
	}
	ref := pair("redis->redis", redistest.StartRealRedis(t), redistest.StartRealRedis(t))
	pairs := []migratePair{
		pair("myredis->redis", redistest.StartMyRedis(t), redistest.StartRealRedis(t)),
		pair("redis->myredis", redistest.StartRealRedis(t), redistest.StartMyRedis(t)),
	}
	for i, s := range migrateSteps(closedPort(t)) {
		want := ref.run(t, s)
		for _, p := range pairs {
			got := p.run(t, s)
			require.Equal(t, want, got, "step %d (%s %s) on %s", i, s.on, strings.Join(s.args, " "), p.name)
		}
	}
}

// TestMigrateTimeoutMatchesRedis: a target that does not answer within the
// timeout gives Redis's IOERR, and the key stays.
func TestMigrateTimeoutMatchesRedis(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	for _, src := range []string{"myredis", "redis"} {
		t.Run(src, func(t *testing.T) {
			srcAddr := redistest.StartRealRedis(t)
			if src == "myredis" {
				srcAddr = redistest.StartMyRedis(t)
			}
			dstAddr := redistest.StartRealRedis(t, "--enable-debug-command", "yes")
			host, port, _ := net.SplitHostPort(dstAddr)
			c, d := redistest.Dial(t, srcAddr), redistest.Dial(t, dstAddr)
			require.Equal(t, "+OK\r\n", c.Do("SET", "key", "v"))
			require.NoError(t, d.Write(redistest.Encode("DEBUG", "SLEEP", "2")))
			time.Sleep(200 * time.Millisecond) // the sleep has begun (it lasts 2 s)
			require.Equal(t, "-IOERR error or timeout reading to target instance\r\n",
				c.Do("MIGRATE", host, port, "key", "9", "500"))
			require.Equal(t, ":1\r\n", c.Do("EXISTS", "key"))
		})
	}
}
