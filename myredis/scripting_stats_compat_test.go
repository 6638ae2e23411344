package myredis_test

// Needs redis-server: the errorstats and commandstats a script's failures leave,
// compared with a real Redis 7.0.15 (each failure counted once, where Redis does).

import (
	"sort"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

func TestCompatScriptErrorStats(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	scenarios := [][][]string{
		{{"CONFIG", "SET", "maxmemory", "1"}, {"EVAL", "return redis.call('set','x','y')", "1", "x"}},
		{{"CONFIG", "SET", "maxmemory", "1"}, {"EVAL", "local t = redis.pcall('set','x','y') return 1", "1", "x"}},
		{{"CONFIG", "SET", "maxmemory", "1"}, {"EVAL", "return redis.pcall('set','x','y')", "1", "x"}},
		{{"EVAL", "return redis.call('select',99)", "0"}},
		{{"EVAL", "local t = redis.pcall('select',99) return 1", "0"}},
		{{"EVAL", "local t = redis.pcall('select',99) return t", "0"}},
		{{"EVAL", "local t = redis.pcall('select',99) error(t)", "0"}},
		{{"EVAL", "return redis.pcall('select',99).ignore_error_stats_update", "0"}},
		{{"EVAL_RO", "return redis.call('set','x','y')", "1", "x"}},
		{{"EVAL_RO", "local t = redis.pcall('set','x','y') return 1", "1", "x"}},
		{{"SET", "Sicily", "1"}, {"EVAL", "return redis.call('GEOADD', 'Sicily', '13.361389', '38.115556', 'Palermo')", "1", "x"}},
		{{"EVAL", "return redis.call('nosuch')", "0"}},
		{{"EVAL", "return redis.call('get')", "0"}},
		{{"EVAL", "return redis.call('cluster', 'reset')", "0"}},
		{{"EVAL", "return redis.call()", "0"}},
		{{"EVAL", "error('x')", "0"}},
		{{"EVAL", "return redis.error_reply('MY custom')", "0"}},
		{{"FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return redis.call('select', 99) end)"},
			{"FCALL", "f", "0"}, {"FUNCTION", "FLUSH"}},
	}
	for _, sc := range scenarios {
		var got [2]string
		for i, addr := range []string{real, mine} {
			c := redistest.Dial(t, addr)
			c.Do("CONFIG", "SET", "maxmemory", "0")
			c.Do("FLUSHALL")
			c.Do("CONFIG", "RESETSTAT")
			for _, args := range sc {
				c.Do(args...)
			}
			c.Do("CONFIG", "SET", "maxmemory", "0")
			got[i] = scriptStatsLines(t, c)
		}
		if got[0] != got[1] {
			t.Errorf("after %q:\n redis:   %s\n myredis: %s", sc, got[0], got[1])
		}
	}
}

// scriptStatsLines is INFO errorstats, total_error_replies and the call counts
// of commandstats (not CONFIG's, nor times), sorted.
func scriptStatsLines(t *testing.T, c *redistest.Conn) string {
	var lines []string
	for _, sec := range []string{"errorstats", "stats", "commandstats"} {
		for k, v := range infoFields(t, c.Do("INFO", sec)) {
			switch {
			case strings.HasPrefix(k, "errorstat_"), k == "total_error_replies":
				lines = append(lines, k+":"+v)
			case strings.HasPrefix(k, "cmdstat_") && !strings.HasPrefix(k, "cmdstat_config"):
				calls, _, _ := strings.Cut(v, ",usec")
				_, tail, _ := strings.Cut(v, ",rejected_calls")
				lines = append(lines, k+":"+calls+",rejected_calls"+tail)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, " ")
}
