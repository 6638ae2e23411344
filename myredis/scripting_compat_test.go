package myredis_test

// Differential cases for scripts written in Go; TestCompat (compat_test.go) runs
// them against a real redis-server with the cases of testdata/compat/scripting.txt
// and transactions_more.txt.

func init() {
	diffCases = append(diffCases, diffCase{"script moves members between sorted sets", scriptMoveCmds()})
}

// scriptMoveCmds is the waiting room's core move as one script: pop from the
// waiting set, add to the active set with a new score, up to the free places.
func scriptMoveCmds() [][]string {
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
	return [][]string{
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
}
