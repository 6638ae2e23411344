package main

// Needs: the myredis binary (built from ./cmd/myredis by the test) and Linux's
// /proc/PID/status for the process's RSS. Each policy runs its own process, so
// VmHWM is that policy's peak.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

const (
	fillLimit = 64 << 20  // maxmemory
	fillTotal = 300 << 20 // bytes of values written into it
	fillBatch = 64        // commands per pipelined write
	// valueSizes cycle: small, middle and large strings
	oomReply = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
)

var valueSizes = []int{200, 1000, 4000}

// oneCommand is the most one SET of the fill adds to used_memory: the value,
// the key, and Redis's structures around them (robj, sds headers, dict entry,
// expires entry), rounded up generously.
var oneCommand = int64(valueSizes[len(valueSizes)-1] + 512)

// filler writes the fill's keys over one connection, a pipelined batch at a
// time, and keeps the figures the checks need.
type filler struct {
	t       *testing.T
	c       *redistest.Conn
	values  [][]byte // one per size
	written int64    // value bytes written
	n       int      // keys written
	oom     int      // writes refused with OOM
	other   []string // replies that were neither OK nor OOM
}

func newFiller(t *testing.T, addr string) *filler {
	f := &filler{t: t, c: redistest.Dial(t, addr)}
	for _, n := range valueSizes {
		f.values = append(f.values, []byte(strings.Repeat("v", n)))
	}
	return f
}

// batch writes fillBatch keys named prefix:N, with EX ttl(N) when ttl is not
// nil, and returns the names.
func (f *filler) batch(prefix string, ttl func(i int) int) []string {
	cmds := make([][]string, 0, fillBatch)
	names := make([]string, 0, fillBatch)
	for range fillBatch {
		v := f.values[f.n%len(f.values)]
		key := prefix + ":" + strconv.Itoa(f.n)
		args := []string{"SET", key, string(v)}
		if ttl != nil {
			args = append(args, "EX", strconv.Itoa(ttl(f.n)))
		}
		cmds = append(cmds, args)
		names = append(names, key)
		f.written += int64(len(v))
		f.n++
	}
	for _, r := range f.c.Pipeline(cmds...) {
		switch r {
		case redistest.OK:
		case oomReply:
			f.oom++
		default:
			f.other = append(f.other, r)
		}
	}
	return names
}

// sampler watches the server while the fill runs: used_memory from INFO
// memory on its own connection, VmRSS from /proc.
type sampler struct {
	pid      int
	mu       sync.Mutex
	maxUsed  int64 // used_memory
	maxKeys  int64 // used_memory without the clients' buffers (mem_clients_normal)
	maxRSS   int64 // bytes
	samples  int
	stop     chan struct{}
	finished chan struct{}
}

func startSampler(t *testing.T, addr string, pid int) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{}), finished: make(chan struct{})}
	c := redistest.Dial(t, addr)
	go func() {
		defer close(s.finished)
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			used, clients, err := usedMemory(c.Do("INFO", "memory"))
			rss := procStatusBytes(pid, "VmRSS")
			s.mu.Lock()
			if err == nil {
				s.maxUsed, s.maxKeys = max(s.maxUsed, used), max(s.maxKeys, used-clients)
				s.samples++
			}
			s.maxRSS = max(s.maxRSS, rss)
			s.mu.Unlock()
		}
	}()
	return s
}

// note records the figures as read by the filling connection itself.
func (s *sampler) note(t *testing.T, c *redistest.Conn) {
	used, clients, err := usedMemory(c.Do("INFO", "memory"))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.maxUsed, s.maxKeys = max(s.maxUsed, used), max(s.maxKeys, used-clients)
	s.mu.Unlock()
}

func (s *sampler) finish() (maxUsed, maxKeys, maxRSS int64, samples int) {
	close(s.stop)
	<-s.finished
	return s.maxUsed, s.maxKeys, max(s.maxRSS, procStatusBytes(s.pid, "VmRSS")), s.samples
}

// usedMemory is used_memory and mem_clients_normal of an INFO memory reply.
func usedMemory(info string) (used, clients int64, err error) {
	if used, err = infoField(info, "used_memory"); err == nil {
		clients, err = infoField(info, "mem_clients_normal")
	}
	return used, clients, err
}

// infoField reads an integer field of an INFO reply.
func infoField(info, name string) (int64, error) {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO has no %s", name)
}

func mustInfo(t *testing.T, c *redistest.Conn, section, name string) int64 {
	t.Helper()
	n, err := infoField(c.Do("INFO", section), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// procStatusBytes is a "VmXXX:   1234 kB" line of /proc/PID/status in bytes,
// 0 when it cannot be read.
func procStatusBytes(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// existing counts how many of keys exist, pipelined.
func existing(t *testing.T, c *redistest.Conn, keys []string) int {
	t.Helper()
	n := 0
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), 256)]
		keys = keys[len(chunk):]
		cmds := make([][]string, len(chunk))
		for i, k := range chunk {
			cmds[i] = []string{"EXISTS", k}
		}
		for _, r := range c.Pipeline(cmds...) {
			if r == ":1\r\n" {
				n++
			}
		}
	}
	return n
}

// TestMaxmemoryFill300MB writes 300 MB of strings into maxmemory 64mb under
// each policy, in a separate MyRedis process each: used_memory (INFO, sampled
// all along on a second connection) never passes maxmemory by more than one
// command's worth; the process's RSS stays under 1.5 times maxmemory; under
// noeviction writes are refused with Redis's OOM error once full; volatile-*
// evict only keys with a TTL, keep every key without one, and refuse writes
// once no key with a TTL is left; allkeys-lru and allkeys-lfu keep a hot set
// of keys read again and again while the cold ones go.
func TestMaxmemoryFill300MB(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/PID/status for RSS")
	}
	if testing.Short() {
		t.Skip("writes 300 MB per policy")
	}
	for _, policy := range []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
		t.Run(policy, func(t *testing.T) { fillUnderPolicy(t, policy) })
	}
}

func fillUnderPolicy(t *testing.T, policy string) {
	cmd, logs, addr := startBinary(t, "--maxmemory", "64mb", "--maxmemory-policy", policy, "--save", "")
	pid := cmd.Process.Pid
	c := redistest.Dial(t, addr)
	f := newFiller(t, addr)
	smp := startSampler(t, addr, pid)
	var check func()
	switch {
	case policy == "noeviction":
		check = fillNoEviction(t, f)
	case strings.HasPrefix(policy, "volatile-"):
		check = fillVolatile(t, f, c, policy)
	case policy == "allkeys-random":
		for f.written < fillTotal {
			f.batch("k", nil)
			smp.note(t, c)
		}
		check = func() {
			if f.oom > 0 {
				t.Errorf("%d writes refused under allkeys-random", f.oom)
			}
		}
	default: // allkeys-lru, allkeys-lfu
		check = fillHotSet(t, f, c, smp)
	}
	maxUsed, maxKeys, maxRSS, samples := smp.finish()
	hwm := procStatusBytes(pid, "VmHWM")
	evicted := mustInfo(t, c, "stats", "evicted_keys")
	t.Logf("%s: %d MB written in %d keys, %d evicted, %d refused; used_memory max %+d bytes from the limit, %+d without client buffers (%d samples, limit %d MB); VmRSS max %.1f MB, VmHWM %.1f MB (%.2fx maxmemory)",
		policy, f.written>>20, f.n, evicted, f.oom, maxUsed-fillLimit, maxKeys-fillLimit, samples, fillLimit>>20,
		float64(maxRSS)/(1<<20), float64(hwm)/(1<<20), float64(hwm)/fillLimit)
	if len(f.other) > 0 {
		t.Fatalf("%d unexpected replies, first %q", len(f.other), f.other[0])
	}
	// eviction (or the refusal) runs before each command, so the keys stay
	// within one command of the limit; the clients' buffers come on top, as in
	// Redis: at most a pipelined batch read and not yet run
	if maxKeys > fillLimit+oneCommand {
		t.Errorf("used_memory without client buffers reached %d, over maxmemory %d by more than one command (%d)", maxKeys, fillLimit, oneCommand)
	}
	if maxUsed > fillLimit+oneCommand+fillBatch*oneCommand {
		t.Errorf("used_memory reached %d, over maxmemory %d by more than one command and a pipelined batch", maxUsed, fillLimit)
	}
	if maxRSS > fillLimit*3/2 {
		t.Errorf("VmRSS reached %.1f MB, over 1.5x maxmemory (%d MB); VmHWM %.1f MB", float64(maxRSS)/(1<<20), fillLimit*3/2>>20, float64(hwm)/(1<<20))
	}
	check()
	if t.Failed() {
		t.Logf("server log:\n%s", logs.String())
	}
}

// fillNoEviction: writes until the first OOM, then the whole rest of the 300
// MB is refused, nothing is evicted and every key written stays.
func fillNoEviction(t *testing.T, f *filler) func() {
	var kept []string
	for f.written < fillTotal {
		before := f.oom
		names := f.batch("k", nil)
		if before == 0 { // only keys of batches before the first refusal are known written
			kept = append(kept, names...)
		}
	}
	return func() {
		if f.oom == 0 {
			t.Fatal("no write refused under noeviction")
		}
		if got := existing(t, f.c, kept); got < len(kept)-fillBatch {
			t.Errorf("%d of the %d keys written before the first OOM remain", got, len(kept))
		}
		if f.oom < f.n/2 {
			t.Errorf("only %d of %d writes refused once 64 MB were full", f.oom, f.n)
		}
	}
}

// fillVolatile: keys without a TTL first (8 MB), then 300 MB of keys with
// one, then keys without a TTL until the writes are refused: every key
// without a TTL remains, and the refusal comes once no key with a TTL is left.
func fillVolatile(t *testing.T, f *filler, c *redistest.Conn, policy string) func() {
	var persistent []string
	for f.written < 8<<20 {
		persistent = append(persistent, f.batch("p", nil)...)
	}
	ttl := func(i int) int { return 3600 + i%5000 } // distinct deadlines for volatile-ttl
	for f.written < 8<<20+fillTotal {
		f.batch("t", ttl)
	}
	volatileEvicted := mustInfo(t, c, "stats", "evicted_keys")
	if got := existing(t, c, persistent); got != len(persistent) {
		t.Errorf("%s evicted keys without a TTL: %d of %d remain", policy, got, len(persistent))
	}
	// now only keys without a TTL: each write evicts keys with one, until none
	// is left and the writes are refused
	refusedAt := -1
	for i := 0; refusedAt < 0 && i < 2*fillLimit/(fillBatch*valueSizes[0]); i++ {
		before := f.oom
		names := f.batch("q", nil)
		if f.oom > before {
			refusedAt = f.n
		} else {
			persistent = append(persistent, names...)
		}
	}
	return func() {
		if volatileEvicted == 0 {
			t.Errorf("%s: nothing evicted by 308 MB", policy)
		}
		if refusedAt < 0 {
			t.Fatalf("%s: writes without a TTL never refused", policy)
		}
		expires := keyspaceExpires(t, c)
		if expires != 0 {
			t.Errorf("%s: writes refused with %d keys with a TTL left to evict", policy, expires)
		}
		if got := existing(t, c, persistent); got != len(persistent) {
			t.Errorf("%s evicted keys without a TTL: %d of %d remain", policy, got, len(persistent))
		}
		// a refused write is exactly Redis's error (a few may fit first in
		// the room the batch's query buffer left), and reads still work
		r := ""
		for i := 0; i < fillBatch && r != oomReply; i++ {
			if r = c.Do("SET", "one-more:"+strconv.Itoa(i), string(f.values[len(f.values)-1])); r != redistest.OK && r != oomReply {
				t.Errorf("%s: SET with nothing to evict: %q", policy, r)
			}
		}
		if r != oomReply {
			t.Errorf("%s: %d SETs with nothing to evict were not refused", policy, fillBatch)
		}
		if r := c.Do("GET", persistent[0]); !strings.HasPrefix(r, "$200\r\n") {
			t.Errorf("%s: GET with nothing to evict: %.40q", policy, r)
		}
	}
}

// keyspaceExpires is db0's expires count from INFO keyspace.
func keyspaceExpires(t *testing.T, c *redistest.Conn) int64 {
	t.Helper()
	info := c.Do("INFO", "keyspace")
	_, rest, ok := strings.Cut(info, "db0:")
	if !ok {
		return 0
	}
	_, rest, _ = strings.Cut(rest, "expires=")
	n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
	if err != nil {
		t.Fatalf("INFO keyspace: %q", info)
	}
	return n
}

// fillHotSet: 100 hot keys are read after every batch of the fill; at the end
// they are (nearly) all there while the cold keys of the first 64 MB are gone.
// The LRU clock counts seconds, so the fill is paced to at most a third of
// maxmemory a second: the dataset then spans three ticks or more and the
// sampled LRU has older keys than the hot ones to pick (on a fast machine an
// unpaced fill puts the whole dataset in one tick, where LRU is random).
func fillHotSet(t *testing.T, f *filler, c *redistest.Conn, smp *sampler) func() {
	const hot = 100
	hotKeys := make([]string, hot)
	reads := make([][]string, hot)
	for i := range hotKeys {
		hotKeys[i] = "hot:" + strconv.Itoa(i)
		reads[i] = []string{"GET", hotKeys[i]}
		if r := c.Do("SET", hotKeys[i], "hot"); r != redistest.OK {
			t.Fatalf("SET %s: %q", hotKeys[i], r)
		}
	}
	hotValue := redistest.Bulk("hot")
	var cold []string
	misses, hotReads := 0, 0
	second, inSecond := time.Now().Unix(), int64(0)
	for f.written < fillTotal {
		if inSecond >= fillLimit/3 { // paced: wait for the clock's next second
			for time.Now().Unix() == second {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if now := time.Now().Unix(); now != second {
			second, inSecond = now, 0
		}
		before := f.written
		names := f.batch("k", nil)
		inSecond += f.written - before
		if f.written <= fillLimit {
			cold = append(cold, names...)
		}
		for i, r := range c.Pipeline(reads...) {
			hotReads++
			if r != hotValue { // evicted: counted, and written again
				misses++
				c.Do("SET", hotKeys[i], "hot")
			}
		}
		smp.note(t, c)
	}
	return func() {
		keptHot := existing(t, c, hotKeys)
		keptCold := existing(t, c, cold)
		t.Logf("hot keys: %d of %d reads missed, %d of %d there at the end; cold keys of the first 64 MB: %d of %d there",
			misses, hotReads, keptHot, hot, keptCold, len(cold))
		if f.oom > 0 {
			t.Errorf("%d writes refused", f.oom)
		}
		// sampled, as Redis's: a hot key may go now and then, so proportions
		if misses*100 > hotReads || keptHot < hot*95/100 {
			t.Errorf("hot keys: %d of %d reads missed, %d of %d there at the end", misses, hotReads, keptHot, hot)
		}
		if keptCold*20 > len(cold) {
			t.Errorf("%d of %d cold keys survived 300 MB of writes", keptCold, len(cold))
		}
	}
}
