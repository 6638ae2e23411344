package myredis_test

import (
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// memInfo is INFO memory's fields as numbers (the _human and string fields
// are left out).
func memInfo(t *testing.T, c *redistest.Conn) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for k, v := range infoFields(t, c.Do("INFO", "memory")) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// usedBesideClients is used_memory without the clients' buffers, which the
// commands of a test change too (arguments, replies).
func usedBesideClients(m map[string]int64) int64 {
	return m["used_memory"] - m["mem_clients_normal"] - m["mem_clients_slaves"]
}

// TestInfoMemoryScriptCache: SCRIPT LOAD raises used_memory_scripts_eval and
// used_memory by the same amount and makes the EVAL Lua state; SCRIPT FLUSH
// takes both back down and drops the state.
func TestInfoMemoryScriptCache(t *testing.T) {
	c, _, _ := start(t)
	before := memInfo(t, c)
	if before["used_memory_scripts_eval"] != 0 || before["number_of_cached_scripts"] != 0 {
		t.Fatalf("empty cache: %v", before)
	}
	c.Do("SCRIPT", "LOAD", "return 1")
	c.Do("SCRIPT", "LOAD", "return '"+strings.Repeat("x", 200)+"'")
	after := memInfo(t, c)
	grew := after["used_memory_scripts_eval"]
	if grew < 2*40 || after["number_of_cached_scripts"] != 2 {
		t.Fatalf("two scripts: used_memory_scripts_eval %d, cached %d", grew, after["number_of_cached_scripts"])
	}
	if d := usedBesideClients(after) - usedBesideClients(before); d != grew {
		t.Errorf("used_memory grew %d, the script cache %d", d, grew)
	}
	if after["used_memory_scripts"] != grew+after["used_memory_functions"] {
		t.Errorf("used_memory_scripts %d != eval %d + functions %d", after["used_memory_scripts"], grew, after["used_memory_functions"])
	}
	if vm := after["used_memory_vm_eval"]; vm <= 0 || after["used_memory_lua"] != vm || after["used_memory_vm_total"] != vm+after["used_memory_vm_functions"] {
		t.Errorf("Lua state: vm_eval %d lua %d vm_total %d", vm, after["used_memory_lua"], after["used_memory_vm_total"])
	}
	stats := memStats(t, c)
	if stats["lua.caches"] != strconv.FormatInt(grew, 10) {
		t.Errorf("MEMORY STATS lua.caches %s, INFO %d", stats["lua.caches"], grew)
	}

	// a third, longer script costs more than a short one
	c.Do("SCRIPT", "LOAD", "return '"+strings.Repeat("y", 5000)+"'")
	third := memInfo(t, c)
	if d := third["used_memory_scripts_eval"] - grew; d < 5000 {
		t.Errorf("a 5 KB script added %d bytes", d)
	}
	if third["used_memory_vm_eval"] <= after["used_memory_vm_eval"] {
		t.Errorf("its compiled code did not grow the Lua state: %d -> %d", after["used_memory_vm_eval"], third["used_memory_vm_eval"])
	}

	mustDo(t, c, ok, "SCRIPT", "FLUSH")
	flushed := memInfo(t, c)
	if flushed["used_memory_scripts_eval"] != 0 || flushed["used_memory_vm_eval"] != 0 {
		t.Errorf("after SCRIPT FLUSH: scripts_eval %d vm_eval %d", flushed["used_memory_scripts_eval"], flushed["used_memory_vm_eval"])
	}
	if usedBesideClients(flushed) != usedBesideClients(before) {
		t.Errorf("used_memory %d after SCRIPT FLUSH, %d before any script (the clients' buffers aside)", usedBesideClients(flushed), usedBesideClients(before))
	}
}

// TestInfoMemoryFunctions: FUNCTION LOAD raises used_memory_functions (and
// used_memory), FUNCTION DELETE and FLUSH lower it; the functions' Lua state
// grows with the library's code.
func TestInfoMemoryFunctions(t *testing.T) {
	c, _, _ := start(t)
	before := memInfo(t, c)
	base := before["used_memory_functions"]
	if base <= 0 {
		t.Fatalf("used_memory_functions %d with no library (Redis: its engine's structures)", base)
	}
	c.Do("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)")
	one := memInfo(t, c)
	if one["used_memory_functions"] <= base || one["number_of_functions"] != 1 {
		t.Fatalf("one library: used_memory_functions %d (base %d)", one["used_memory_functions"], base)
	}
	if d, want := usedBesideClients(one)-usedBesideClients(before), one["used_memory_functions"]-base; d != want {
		t.Errorf("used_memory grew %d, the functions %d", d, want)
	}
	c.Do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f2', callback=function() return 2 end, description='two'}\nredis.register_function('f3', function() return 3 end)")
	two := memInfo(t, c)
	if two["used_memory_functions"] <= one["used_memory_functions"] || two["used_memory_vm_functions"] <= one["used_memory_vm_functions"] {
		t.Errorf("second library: functions %d -> %d, vm %d -> %d", one["used_memory_functions"], two["used_memory_functions"],
			one["used_memory_vm_functions"], two["used_memory_vm_functions"])
	}
	if memStats(t, c)["functions.caches"] != strconv.FormatInt(two["used_memory_functions"], 10) {
		t.Errorf("MEMORY STATS functions.caches differs from INFO's %d", two["used_memory_functions"])
	}
	mustDo(t, c, ok, "FUNCTION", "DELETE", "lib2")
	if got := memInfo(t, c); got["used_memory_functions"] != one["used_memory_functions"] || got["used_memory_vm_functions"] != one["used_memory_vm_functions"] {
		t.Errorf("after deleting lib2: functions %d vm %d, with lib1 alone %d %d", got["used_memory_functions"], got["used_memory_vm_functions"],
			one["used_memory_functions"], one["used_memory_vm_functions"])
	}
	mustDo(t, c, ok, "FUNCTION", "FLUSH")
	if got := memInfo(t, c); got["used_memory_functions"] != base || usedBesideClients(got) != usedBesideClients(before) {
		t.Errorf("after FUNCTION FLUSH: functions %d (base %d), used_memory %d (before %d; the clients' buffers aside)", got["used_memory_functions"], base,
			usedBesideClients(got), usedBesideClients(before))
	}
}

// memStats is MEMORY STATS's top-level scalar fields.
func memStats(t *testing.T, c *redistest.Conn) map[string]string {
	t.Helper()
	_, v := memoryStats(t, c)
	return v
}

// fakeReplica attaches a replica that sends SYNC and then reads nothing, so
// the stream piles up in its outbox.
func fakeReplica(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write([]byte("SYNC\r\n")); err != nil {
		t.Fatal(err)
	}
	return nc
}

// waitMem polls INFO memory until ok holds (the clients' and replicas'
// buffers are summed ten times a second, and INFO sums them afresh).
func waitMem(t *testing.T, c *redistest.Conn, what string, ok func(m map[string]int64) bool) map[string]int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := memInfo(t, c)
		if ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: INFO memory %v", what, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestInfoMemoryReplicationBacklog: a replica attaching creates the backlog,
// whose ring (repl-backlog-size bytes) counts in used_memory and in
// mem_replication_backlog; resizing it moves the figures by the difference.
func TestInfoMemoryReplicationBacklog(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{})
	c := redistest.Dial(t, addr)
	before := memInfo(t, c)
	if before["mem_replication_backlog"] != 0 || before["mem_total_replication_buffers"] != 0 {
		t.Fatalf("no replica yet: %v", before)
	}
	size := int64(1 << 20)
	mustDo(t, c, ok, "CONFIG", "SET", "repl-backlog-size", strconv.FormatInt(size, 10))
	fakeReplica(t, addr)
	m := waitMem(t, c, "backlog after SYNC", func(m map[string]int64) bool { return m["mem_replication_backlog"] > 0 })
	backlog := m["mem_replication_backlog"]
	if backlog < size || backlog > size+256 {
		t.Errorf("mem_replication_backlog %d for repl-backlog-size %d", backlog, size)
	}
	if m["used_memory"]-before["used_memory"] < size {
		t.Errorf("used_memory grew %d with a backlog of %d", m["used_memory"]-before["used_memory"], backlog)
	}
	if m["mem_clients_slaves"] <= 0 || m["mem_total_replication_buffers"] < backlog {
		t.Errorf("replica attached: mem_clients_slaves %d, mem_total_replication_buffers %d", m["mem_clients_slaves"], m["mem_total_replication_buffers"])
	}
	st := memStats(t, c)
	if st["replication.backlog"] != strconv.FormatInt(backlog, 10) {
		t.Errorf("MEMORY STATS replication.backlog %s, INFO %d", st["replication.backlog"], backlog)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "repl-backlog-size", strconv.FormatInt(3*size, 10))
	if got := memInfo(t, c)["mem_replication_backlog"]; got != backlog+2*size {
		t.Errorf("resized to %d: mem_replication_backlog %d, was %d", 3*size, got, backlog)
	}
}

// TestReplicaOutputDoesNotEvict: with maxmemory set, a replica that reads
// nothing holds megabytes of stream in its outbox; that memory is in
// used_memory and in mem_not_counted_for_evict, and evicts no key (Redis's
// "replica buffer don't induce eviction").
func TestReplicaOutputDoesNotEvict(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{})
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	// A disk sync of 16 MB that LZF cannot shrink: the replica never reads it,
	// so sending it stalls once the sockets' buffers are full, and the stream
	// after the snapshot waits in the replica's outbox.
	mustDo(t, c, ok, "CONFIG", "SET", "repl-diskless-sync", "no")
	rnd := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 100<<10)
	for i := range 160 {
		for j := range val {
			val[j] = byte(rnd.Uint32())
		}
		mustDo(t, c, ok, "SET", "k"+strconv.Itoa(i), string(val))
	}
	fakeReplica(t, addr)
	m := waitMem(t, c, "replica attached", func(m map[string]int64) bool { return m["mem_replication_backlog"] > 0 })
	limit := m["used_memory"] + 1<<20
	mustDo(t, c, ok, "CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
	big := strings.Repeat("b", 100<<10)
	for range 60 { // 6 MB of stream, one key's worth of data
		mustDo(t, c, ok, "SET", "big", big)
	}
	m = waitMem(t, c, "replica's output counted", func(m map[string]int64) bool { return m["mem_not_counted_for_evict"] >= 60*int64(len(big)) }) // the whole stream waits
	if m["used_memory"] <= limit {
		t.Fatalf("used_memory %d is not over maxmemory %d: the test proves nothing", m["used_memory"], limit)
	}
	if m["mem_clients_slaves"] < m["mem_not_counted_for_evict"] || m["mem_total_replication_buffers"] < m["mem_replication_backlog"]+m["mem_not_counted_for_evict"] {
		t.Errorf("replica's output: clients_slaves %d, not counted %d, total replication buffers %d, backlog %d",
			m["mem_clients_slaves"], m["mem_not_counted_for_evict"], m["mem_total_replication_buffers"], m["mem_replication_backlog"])
	}
	mustDo(t, c, ok, "SET", "one-more", "x") // a command: eviction runs before it
	mustDo(t, c, redistest.Int(162), "DBSIZE")
	if ev := infoFields(t, c.Do("INFO", "stats"))["evicted_keys"]; ev != "0" {
		t.Errorf("evicted_keys %s: the replica's output buffer caused eviction", ev)
	}
}

// TestInfoMemoryAOFBuffer: with appendonly yes the AOF's buffer shows in
// mem_aof_buffer, MEMORY STATS aof.buffer and mem_not_counted_for_evict, and
// is gone with appendonly no.
func TestInfoMemoryAOFBuffer(t *testing.T) {
	_, addr := redistest.StartMyRedisConfig(t, myredis.Config{AppendOnly: true, AppendFsync: "everysec"})
	c := redistest.Dial(t, addr)
	mustDo(t, c, ok, "SET", "k", strings.Repeat("a", 20000))
	m := memInfo(t, c)
	if m["mem_aof_buffer"] < 20000 {
		t.Errorf("after a 20 KB write: mem_aof_buffer %d", m["mem_aof_buffer"])
	}
	if m["mem_not_counted_for_evict"] != m["mem_aof_buffer"] {
		t.Errorf("mem_not_counted_for_evict %d, mem_aof_buffer %d (no replica)", m["mem_not_counted_for_evict"], m["mem_aof_buffer"])
	}
	if n, _ := strconv.ParseInt(memStats(t, c)["aof.buffer"], 10, 64); n < 20000 {
		t.Errorf("MEMORY STATS aof.buffer %d after a 20 KB write", n)
	}
	mustDo(t, c, ok, "CONFIG", "SET", "appendonly", "no")
	if got := memInfo(t, c); got["mem_aof_buffer"] != 0 || got["used_memory"] >= m["used_memory"] {
		t.Errorf("appendonly no: mem_aof_buffer %d, used_memory %d (was %d)", got["mem_aof_buffer"], got["used_memory"], m["used_memory"])
	}
}

// TestMemoryOverheadAddsUp: MEMORY STATS overhead.total is the sum of its
// parts, and used_memory is the overhead plus the dataset.
func TestMemoryOverheadAddsUp(t *testing.T) {
	c, _, _ := start(t)
	c.Do("SET", "k", "v", "EX", "100")
	c.Do("SCRIPT", "LOAD", "return 1")
	c.Do("FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('f', function() return 1 end)")
	names, v := memoryStats(t, c)
	num := func(k string) int64 {
		n, err := strconv.ParseInt(v[k], 10, 64)
		if err != nil {
			t.Fatalf("%s = %q", k, v[k])
		}
		return n
	}
	var sum int64
	for _, k := range []string{"startup.allocated", "replication.backlog", "clients.slaves", "clients.normal",
		"cluster.links", "aof.buffer", "lua.caches", "functions.caches"} {
		sum += num(k)
	}
	for _, k := range names {
		if strings.HasPrefix(k, "db.") {
			sum += num(k)
		}
	}
	if sum != num("overhead.total") {
		t.Errorf("overhead.total %d, its parts sum to %d", num("overhead.total"), sum)
	}
	if num("total.allocated") != num("overhead.total")+num("dataset.bytes") {
		t.Errorf("total.allocated %d != overhead %d + dataset %d", num("total.allocated"), num("overhead.total"), num("dataset.bytes"))
	}
}
