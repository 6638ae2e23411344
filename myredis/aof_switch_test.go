package myredis

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// listWriters RPUSHes to one list per goroutine until stop is called, counting the
// acknowledged pushes.
type listWriters struct {
	acked atomic.Int64
	quit  chan struct{}
	wg    sync.WaitGroup
	errs  chan error
}

func startListWriters(t *testing.T, addr string, n int) *listWriters {
	w := &listWriters{quit: make(chan struct{}), errs: make(chan error, n)}
	for g := range n {
		c := mustDialAOF(t, addr)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-w.quit:
					return
				default:
				}
				if _, err := c.do("RPUSH", fmt.Sprintf("l:%d", g), i); err != nil {
					w.errs <- err
					return
				}
				w.acked.Add(1)
			}
		}()
	}
	return w
}

// waitMore polls until n more pushes were acknowledged.
func (w *listWriters) waitMore(t *testing.T, n int64) {
	t.Helper()
	target := w.acked.Load() + n
	deadline := time.Now().Add(60 * time.Second)
	for w.acked.Load() < target {
		if time.Now().After(deadline) {
			t.Fatal("the writers made no progress in 60s")
		}
		select {
		case err := <-w.errs:
			t.Fatal(err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (w *listWriters) stop(t *testing.T) {
	t.Helper()
	close(w.quit)
	w.wg.Wait()
	select {
	case err := <-w.errs:
		t.Fatal(err)
	default:
	}
}

// replayCopy loads a copy of dir's AOF, taken while the server still runs (as a
// crash would leave it), into a new server and returns its data.
func replayCopy(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(aofPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := os.WriteFile(aofPath(dir2), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, _ := openAOFServer(t, dir2, nil)
	defer s2.Close()
	return dump(s2)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestAOFConfigSetAppendonlyOnOffOnUnderWrites(t *testing.T) {
	dir := t.TempDir()
	s, addr := openAOFServer(t, dir, func(c *Config) { c.AppendOnly = false })
	defer s.Close()
	c := mustDialAOF(t, addr)
	for i := range 3000 {
		c.must(t, "SET", fmt.Sprintf("pre:%d", i), i)
	}
	c.must(t, "HSET", "h", "f", "v")
	if got := c.infoField(t, "persistence", "aof_enabled"); got != "0" {
		t.Fatalf("aof_enabled:%s before CONFIG SET", got)
	}
	w := startListWriters(t, addr, 4)
	w.waitMore(t, 200)

	// on, under writes
	if got := c.must(t, "CONFIG", "SET", "appendonly", "yes"); got != "OK" {
		t.Fatalf("CONFIG SET appendonly yes: %v", got)
	}
	if got := c.infoField(t, "persistence", "aof_enabled"); got != "1" {
		t.Fatalf("aof_enabled:%s after CONFIG SET appendonly yes", got)
	}
	if got := c.must(t, "CONFIG", "GET", "appendonly").([]any)[1]; got != "yes" {
		t.Fatalf("CONFIG GET appendonly: %v", got)
	}
	c.must(t, "SET", "after-on", "1")
	w.waitMore(t, 200)
	c.waitRewrite(t, 1)
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("temp-appendonly-wait-%d.aof", os.Getpid()))); !os.IsNotExist(err) {
		t.Fatalf("the scratch file is still there: %v", err)
	}
	w.waitMore(t, 200)
	w.stop(t)
	// appendfsync always: what was acknowledged is in the file
	if got, want := replayCopy(t, dir), dump(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after turning on, the file replays %d keys, the server has %d", len(got), len(want))
	}

	// off: later writes are not appended
	w = startListWriters(t, addr, 2)
	w.waitMore(t, 100)
	c.must(t, "CONFIG", "SET", "appendonly", "no")
	if got := c.infoField(t, "persistence", "aof_enabled"); got != "0" {
		t.Fatalf("aof_enabled:%s after CONFIG SET appendonly no", got)
	}
	size := fileSize(t, aofPath(dir))
	offData := replayCopy(t, dir)
	w.waitMore(t, 300)
	c.must(t, "SET", "while-off", "1")
	if got := fileSize(t, aofPath(dir)); got != size {
		t.Fatalf("the AOF grew from %d to %d bytes while off", size, got)
	}
	if got := replayCopy(t, dir); strings.Join(got, "\n") != strings.Join(offData, "\n") {
		t.Fatal("the AOF changed while off")
	}

	// on and at once off again, during the first rewrite, then on for good
	c.must(t, "CONFIG", "SET", "appendonly", "yes")
	c.must(t, "CONFIG", "SET", "appendonly", "no")
	if got := c.infoField(t, "persistence", "aof_rewrite_in_progress"); got != "0" {
		t.Fatalf("aof_rewrite_in_progress:%s with the AOF off", got)
	}
	w.waitMore(t, 100)
	c.must(t, "CONFIG", "SET", "appendonly", "yes")
	w.waitMore(t, 100)
	c.waitRewrite(t, 1)
	w.waitMore(t, 100)
	w.stop(t)
	got, want := replayCopy(t, dir), dump(s)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after turning on again, the file replays %d keys, the server has %d", len(got), len(want))
	}
	if !strings.Contains(strings.Join(got, "\n"), " while-off ") {
		t.Fatal("a write made while off is missing after turning on again")
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("temp-appendonly-wait-%d.aof", os.Getpid()))); !os.IsNotExist(err) {
		t.Fatalf("the scratch file is still there: %v", err)
	}
}
