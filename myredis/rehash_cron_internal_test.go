package myredis

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// activerehashing yes: a table left half rehashed is finished by the cron
// with no command touching it; no: it stays as it is.
func TestActiveRehashing(t *testing.T) {
	for _, on := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.Dir = t.TempDir()
		if err := cfg.Set("activerehashing", map[bool]string{true: "yes", false: "no"}[on]); err != nil {
			t.Fatal(err)
		}
		s := New(cfg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		// 65537 keys: the last one starts doubling the table to 131072 buckets
		const n = 1<<16 + 1
		for i := 0; i < n; i += 1000 {
			args := []string{"MSET"}
			for k := i; k < min(i+1000, n); k++ {
				args = append(args, "k"+strconv.Itoa(k), "v")
			}
			s.Do(args...)
		}
		rehashing := func() (r bool) {
			s.submit(func() { r = s.dbs[0].dict.rehashing() })
			return r
		}
		if !rehashing() {
			t.Fatal("the table is not being rehashed after growing")
		}
		deadline := time.Now().Add(3 * time.Second)
		for rehashing() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if still := rehashing(); still == on {
			t.Errorf("activerehashing %v: still rehashing after 3 s: %v", on, still)
		}
		s.Close()
	}
}
