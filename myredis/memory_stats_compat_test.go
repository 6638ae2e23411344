// Needs redis-server for TestCompatMemoryStatsFields (skips without it):
// MEMORY STATS field names and order against redis-server's.
package myredis_test

import (
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// respNode is a parsed RESP2 reply: text for a scalar, items for an array.
type respNode struct {
	text  string
	items []respNode
}

// parseRESP parses one RESP2 reply at the start of s and returns the rest.
func parseRESP(t *testing.T, s string) (respNode, string) {
	t.Helper()
	line, rest, ok := strings.Cut(s, "\r\n")
	if !ok || line == "" {
		t.Fatalf("bad RESP %.80q", s)
	}
	switch line[0] {
	case '*':
		n, _ := strconv.Atoi(line[1:])
		node := respNode{items: []respNode{}}
		for range n {
			var item respNode
			item, rest = parseRESP(t, rest)
			node.items = append(node.items, item)
		}
		return node, rest
	case '$':
		n, _ := strconv.Atoi(line[1:])
		return respNode{text: rest[:n]}, rest[n+2:]
	}
	return respNode{text: line[1:]}, rest
}

// memoryStats runs MEMORY STATS: its field names in order (a database's
// fields as db.N/name) and values.
func memoryStats(t *testing.T, c *redistest.Conn) ([]string, map[string]string) {
	t.Helper()
	root, _ := parseRESP(t, c.Do("MEMORY", "STATS"))
	var names []string
	values := map[string]string{}
	for i := 0; i+1 < len(root.items); i += 2 {
		k, v := root.items[i].text, root.items[i+1]
		if v.items == nil {
			names = append(names, k)
			values[k] = v.text
			continue
		}
		for j := 0; j+1 < len(v.items); j += 2 {
			names = append(names, k+"/"+v.items[j].text)
			values[k+"/"+v.items[j].text] = v.items[j+1].text
		}
	}
	return names, values
}

// TestCompatMemoryStatsFields: MEMORY STATS names Redis 7.0.15's fields in
// Redis's order, a database with keys included.
func TestCompatMemoryStatsFields(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	fields := func(addr string) []string {
		c := redistest.Dial(t, addr)
		mustDo(t, c, "+OK\r\n", "SET", "k", "v", "EX", "100")
		names, _ := memoryStats(t, c)
		return names
	}
	want, got := fields(real), fields(mine)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("MEMORY STATS fields\n got  %v\n want %v", got, want)
	}
}

// TestMemoryStatsAllocatorFields: the allocator figures (the Go runtime's,
// memory.go) are there, agree with their ratios and differences, and match
// INFO memory's allocator_* of the same moment's kind; fields MyRedis has no
// such thing for are 0, as Redis reports them outside cluster mode.
func TestMemoryStatsAllocatorFields(t *testing.T) {
	c, _, _ := start(t)
	mustDo(t, c, "+OK\r\n", "SET", "k", "v")
	_, v := memoryStats(t, c)
	num := func(k string) float64 {
		f, err := strconv.ParseFloat(v[k], 64)
		if err != nil {
			t.Fatalf("%s = %q", k, v[k])
		}
		return f
	}
	alloc, active, resident := num("allocator.allocated"), num("allocator.active"), num("allocator.resident")
	if alloc <= 0 || active <= 0 || resident < active {
		t.Fatalf("allocated %v active %v resident %v", alloc, active, resident)
	}
	for _, r := range []struct{ ratio, bytes, a, b string }{
		{"allocator-fragmentation.ratio", "allocator-fragmentation.bytes", "allocator.active", "allocator.allocated"},
		{"allocator-rss.ratio", "allocator-rss.bytes", "allocator.resident", "allocator.active"},
	} {
		if got, want := num(r.bytes), num(r.a)-num(r.b); got != want {
			t.Errorf("%s = %v, want %v", r.bytes, got, want)
		}
		if got, want := num(r.ratio), num(r.a)/num(r.b); got < want*0.999 || got > want*1.001 {
			t.Errorf("%s = %v, want %v", r.ratio, got, want)
		}
	}
	// the process's RSS, read once for both: fragmentation.bytes is rss - total.allocated.
	// It may be below the resident heap (spans in use whose pages were never touched,
	// as in a test process that once held a big heap), so only the arithmetic is checked.
	rss := num("fragmentation.bytes") + num("total.allocated")
	if rss <= 0 {
		t.Fatalf("process RSS %v", rss)
	}
	if got, want := num("rss-overhead.bytes"), rss-resident; got != want {
		t.Errorf("rss-overhead.bytes = %v, want rss %v - resident %v = %v", got, rss, resident, want)
	}
	if got, want := num("rss-overhead.ratio"), rss/resident; got < want*0.999 || got > want*1.001 {
		t.Errorf("rss-overhead.ratio = %v, want %v", got, want)
	}
	for _, k := range []string{"cluster.links", "db.0/overhead.hashtable.slot-to-keys"} {
		if v[k] != "0" {
			t.Errorf("%s = %q, want 0 (no cluster mode)", k, v[k])
		}
	}
}

// TestCompatInfoMemoryFields: INFO memory names Redis 7.0.15's fields in
// Redis's order.
func TestCompatInfoMemoryFields(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	fields := func(addr string) []string {
		var names []string
		for _, line := range strings.Split(redistest.Dial(t, addr).Do("INFO", "memory"), "\r\n") {
			if k, _, ok := strings.Cut(line, ":"); ok {
				names = append(names, k)
			}
		}
		return names
	}
	want, got := fields(real), fields(mine)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("INFO memory fields\n got  %v\n want %v", got, want)
	}
}

// TestCompatScriptCacheMemory: the EVAL script cache's and the functions'
// figures (used_memory_scripts_eval, used_memory_functions and MEMORY STATS'
// lua.caches, functions.caches) are redis-server's for the same scripts and
// libraries, loaded, replaced, deleted and flushed. (At most four scripts and
// four functions: beyond, Redis's dicts rehash into bigger tables and count
// both tables' buckets until lookups, as many as its random hash seed makes
// them, finish the move.)
func TestCompatScriptCacheMemory(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	steps := [][]string{
		{"SCRIPT", "LOAD", "return 1"},
		{"SCRIPT", "LOAD", "return '" + strings.Repeat("x", 100) + "'"},
		{"EVAL", "return redis.call('ping')", "0"},
		{"SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn '" + strings.Repeat("z", 5000) + "'"},
		{"FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"},
		{"FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f2', callback=function() return 2 end, description='a description'}\nredis.register_function('f3', function() return 3 end)"},
		{"FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\nredis.register_function('f1', function() return 11 end)\nredis.register_function('f4', function() return 4 end)"},
		{"FUNCTION", "DELETE", "lib2"},
		{"FUNCTION", "DELETE", "lib1"},
		{"FUNCTION", "LOAD", "#!lua name=lib3\nredis.register_function('f6', function() return 6 end)"},
		{"SCRIPT", "FLUSH"},
		{"FUNCTION", "FLUSH"},
	}
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	for _, step := range steps {
		if want, got := rc.Do(step...), mc.Do(step...); want != got {
			t.Fatalf("%.60q: redis %q, myredis %q", step, want, got)
		}
		ri, mi := infoFields(t, rc.Do("INFO", "memory")), infoFields(t, mc.Do("INFO", "memory"))
		for _, f := range []string{"used_memory_scripts_eval", "number_of_cached_scripts", "used_memory_functions", "used_memory_scripts"} {
			if ri[f] != mi[f] {
				t.Errorf("after %.60q: %s redis %s, myredis %s", step, f, ri[f], mi[f])
			}
		}
		_, rs := memoryStats(t, rc)
		_, ms := memoryStats(t, mc)
		for _, f := range []string{"lua.caches", "functions.caches"} {
			if rs[f] != ms[f] {
				t.Errorf("after %.60q: MEMORY STATS %s redis %s, myredis %s", step, f, rs[f], ms[f])
			}
		}
	}
}
