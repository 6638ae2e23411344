// Needs redis-server (skips without it): INFO commandstats and errorstats after
// the same commands on MyRedis and on redis-server.
package myredis_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

func TestCompatInfoStats(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	cmds := [][]string{
		{"SET", "s", "1"}, {"GET", "s"}, {"GET", "s", "x"}, {"INCR", "s"}, {"SET", "str", "abc"}, {"INCR", "str"},
		{"ZADD", "str", "1", "a"}, {"ZADD", "z", "x", "a"}, {"ZADD", "z", "1", "a"}, {"NOSUCH", "cmd"},
		{"CONFIG", "NOSUCH"}, {"CONFIG", "GET"}, {"CONFIG", "GET", "hz"}, {"CONFIG", "SET", "timeout", "x"},
		{"MULTI"}, {"SET", "a"}, {"GET", "s"}, {"EXEC"},
		{"MULTI"}, {"INCR", "str"}, {"GET", "s"}, {"EXEC"},
		{"SHUTDOWN", "bogus"}, {"EXPIRE", "s", "x"}, {"HSET", "h", "f"}, {"HGET", "h", "f"},
		{"ZPOPMIN", "z"}, {"BZPOPMIN", "z", "0.01"}, {"PING"}, {"HGET", "str", "x"}, {"GET", "z"},
		{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"}, {"EVAL", "return redis.call('incr', 'str')", "0"},
		{"EVAL", "return redis.pcall('incr', 'str')", "0"}, {"EVAL", "return 1", "0"},
	}
	stats := func(addr string) (string, string) {
		c := redistest.Dial(t, addr)
		c.Do("CONFIG", "RESETSTAT")
		for _, args := range cmds {
			c.Do(args...)
		}
		cmdstats := c.Do("INFO", "commandstats")
		errstats := c.Do("INFO", "errorstats")
		return normaliseStats(cmdstats), normaliseStats(errstats)
	}
	wantCmd, wantErr := stats(real)
	gotCmd, gotErr := stats(mine)
	if wantCmd != gotCmd {
		t.Errorf("INFO commandstats:\n redis:   %s\n myredis: %s", wantCmd, gotCmd)
	}
	if wantErr != gotErr {
		t.Errorf("INFO errorstats:\n redis:   %s\n myredis: %s", wantErr, gotErr)
	}
}

var usecRe = regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)

// normaliseStats keeps an INFO section's lines without timings, sorted, leaving
// out the INFO and CONFIG RESETSTAT calls themselves.
func normaliseStats(reply string) string {
	var lines []string
	for _, l := range strings.Split(reply, "\r\n") {
		if strings.Contains(l, ":") && !strings.HasPrefix(l, "cmdstat_info:") && !strings.HasPrefix(l, "cmdstat_config|resetstat:") {
			lines = append(lines, usecRe.ReplaceAllString(l, ""))
		}
	}
	sort.Strings(lines) // Redis lists them in hash order
	return strings.Join(lines, " ")
}
