package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// oom-score-adj writes the process's /proc/<pid>/oom_score_adj as Redis's
// setOOMScoreAdj: the master value, the replica value after REPLICAOF, the
// earlier score added for "relative", that score restored by "no". Run in a
// subprocess, whose score the test reads.
func TestOOMScoreAdj(t *testing.T) {
	self, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip("no /proc/self/oom_score_adj on this system")
	}
	base, _ := strconv.Atoi(strings.TrimSpace(string(self)))
	cmd, logs, addr := startBinary(t, "--oom-score-adj", "absolute", "--oom-score-adj-values", "100 200 800")
	score := func() int {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/oom_score_adj")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		return n
	}
	if got := score(); got != 100 {
		if strings.Contains(logs.String(), "unable to write oom_score_adj") {
			t.Skipf("this process may not set its oom_score_adj: %s", logs)
		}
		t.Fatalf("oom_score_adj at start-up: %d, want 100\n%s", got, logs)
	}
	c := redistest.Dial(t, addr)
	step := func(want int, args ...string) {
		t.Helper()
		if got := c.Do(args...); got != "+OK\r\n" {
			t.Fatalf("%v: %q", args, got)
		}
		if got := score(); got != want {
			t.Fatalf("after %v: oom_score_adj %d, want %d", args, got, want)
		}
	}
	step(300, "CONFIG", "SET", "oom-score-adj-values", "300 400 800")
	step(400, "REPLICAOF", "127.0.0.1", strconv.Itoa(redistest.FreePort(t))) // a replica (of nobody there)
	step(300, "REPLICAOF", "NO", "ONE")
	step(min(base+300, 1000), "CONFIG", "SET", "oom-score-adj", "relative")
	step(1000, "CONFIG", "SET", "oom-score-adj-values", "2000 0 0") // clamped
	step(base, "CONFIG", "SET", "oom-score-adj", "no")
	if got := c.Do("CONFIG", "GET", "oom-score-adj*"); got != redistest.Bulks("oom-score-adj", "no", "oom-score-adj-values", "2000 0 0") {
		t.Fatalf("CONFIG GET: %q", got)
	}
}
