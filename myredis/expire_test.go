package myredis

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// cpuClock is a CPU clock for the cycle's budget that moves step per reading.
func cpuClock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(step); return t }
}

func newExpireServer(t *testing.T, cfg Config, keys int) (*Server, *manualClock) {
	clk := &manualClock{now: time.Unix(1893553445, 0)}
	s := New(cfg, WithClock(clk))
	t.Cleanup(func() { s.Close() })
	s.submit(func() {
		c := s.rewriteTestClient()
		for i := range keys {
			s.call(c, bargs("SET", "tmp:"+strconv.Itoa(i), "v", "PX", "100"), &Writer{})
		}
		for i := range 10 {
			s.call(c, bargs("SET", fmt.Sprintf("keep:%d", i), "v"), &Writer{})
			s.call(c, bargs("SET", fmt.Sprintf("later:%d", i), "v", "EX", "1000"), &Writer{})
		}
	})
	return s, clk
}

// TestActiveExpireReclaimsWithoutAccess: with the data's clock past every
// deadline and a CPU clock that never runs out, slow cycles alone reclaim every
// expired key and leave the others.
func TestActiveExpireReclaimsWithoutAccess(t *testing.T) {
	s, clk := newExpireServer(t, Config{}, 5000)
	clk.Advance(time.Second)
	cycles := 0
	s.submit(func() {
		s.expire.now = func() time.Time { return time.Unix(0, 0) }
		for s.dbs[0].Size() > 20 && cycles < 1000 {
			s.activeExpireSlow()
			cycles++
		}
	})
	if got := string(s.Do("DBSIZE")); got != ":20\r\n" {
		t.Fatalf("DBSIZE after %d slow cycles = %q, want 20", cycles, got)
	}
	if s.stats.expiredKeys != 5000 || s.stats.keyspaceHits+s.stats.keyspaceMisses != 0 {
		t.Fatalf("expired_keys %d, hits+misses %d", s.stats.expiredKeys, s.stats.keyspaceHits+s.stats.keyspaceMisses)
	}
	if got := string(s.Do("TTL", "later:3")); got != ":999\r\n" {
		t.Fatalf("TTL later:3 = %q", got)
	}
}

// TestActiveExpireKeepsToItsBudget: a slow cycle stops once its share of the tick
// (25% of 100 ms at hz 10) is spent, then the fast cycle takes over, for 1 ms and
// not again within 2 ms; effort 10 raises the slow share to 43%.
func TestActiveExpireKeepsToItsBudget(t *testing.T) {
	for _, tc := range []struct {
		effort  int
		slowPct int
	}{{1, 25}, {10, 43}} {
		s, clk := newExpireServer(t, Config{ActiveExpireEffort: tc.effort}, 100000)
		clk.Advance(time.Second)
		s.submit(func() {
			tun := expireTunablesFor(tc.effort)
			// every reading of the CPU clock advances it 1 ms: the time is checked
			// every 16 samples, so a budget of B ms allows at most 16*(B+1) samples
			s.expire.now = cpuClock(time.Millisecond)
			before := s.stats.expiredKeys
			s.activeExpireSlow()
			maxSamples := int64(16 * (tc.slowPct + 1))
			if got := s.stats.expiredKeys - before; got == 0 || got > maxSamples*int64(tun.keysPerLoop) {
				t.Errorf("effort %d: slow cycle reclaimed %d keys, want 1..%d", tc.effort, got, maxSamples*int64(tun.keysPerLoop))
			}
			if !s.expire.timelimitExit {
				t.Errorf("effort %d: slow cycle did not stop for time", tc.effort)
			}
			// the fast cycle: its 1 ms (3.25 ms at effort 10) allows 16*(ms+2) samples
			before = s.stats.expiredKeys
			s.activeExpireFast()
			fastSamples := int64(16 * (int(tun.fastDuration/time.Millisecond) + 2))
			if got := s.stats.expiredKeys - before; got == 0 || got > fastSamples*int64(tun.keysPerLoop) {
				t.Errorf("effort %d: fast cycle reclaimed %d keys", tc.effort, got)
			}
			// the clock has moved only 2 readings since: too soon for another
			before = s.stats.expiredKeys
			s.expire.now = func() time.Time { return s.expire.lastFast.Add(tun.fastDuration) }
			s.activeExpireFast()
			if s.stats.expiredKeys != before {
				t.Errorf("effort %d: a fast cycle ran within 2 x its duration of the last", tc.effort)
			}
		})
	}
}

// TestActiveExpireEffortConfig: active-expire-effort is 1..10, as Redis.
func TestActiveExpireEffortConfig(t *testing.T) {
	s := New(Config{})
	t.Cleanup(func() { s.Close() })
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"CONFIG", "GET", "active-expire-effort"}, "*2\r\n$20\r\nactive-expire-effort\r\n$1\r\n1\r\n"},
		{[]string{"CONFIG", "SET", "active-expire-effort", "10"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "active-expire-effort"}, "*2\r\n$20\r\nactive-expire-effort\r\n$2\r\n10\r\n"},
		{[]string{"CONFIG", "SET", "active-expire-effort", "11"}, "-ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "active-expire-effort", "0"}, "-ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive\r\n"},
	} {
		if got := string(s.Do(c.args...)); got != c.want {
			t.Errorf("%v = %q, want %q", c.args, got, c.want)
		}
	}
	if _, err := ParseArgs([]string{"--active-expire-effort", "4"}); err != nil {
		t.Errorf("--active-expire-effort 4: %v", err)
	}
	if _, err := ParseArgs([]string{"--active-expire-effort", "0"}); err == nil {
		t.Error("--active-expire-effort 0 accepted")
	}
}
