package myredis

import (
	"testing"
	"time"
)

// TestOverOutputLimitSoft: over the soft limit the client is closed only once
// it stayed over it for longer than the seconds; a batch under it starts again.
func TestOverOutputLimitSoft(t *testing.T) {
	var l liveSettings
	l.obufSoft.Store(1000)
	l.obufSoftSecs.Store(2)
	c := &Client{}
	t0 := time.Unix(100, 0)
	for _, step := range []struct {
		n     int
		after time.Duration
		want  bool
	}{
		{500, 0, false},
		{1500, 0, false},               // first batch over: the clock starts
		{1500, time.Second, false},     // 1 s over
		{1500, 3 * time.Second, true},  // 3 s over: closed
		{200, 3 * time.Second, false},  // under: starts again
		{1500, 4 * time.Second, false}, // over again from here
	} {
		at := t0.Add(step.after)
		if got := overOutputLimit(&l, c, step.n, func() time.Time { return at }); got != step.want {
			t.Fatalf("%d bytes at +%v: %v, want %v", step.n, step.after, got, step.want)
		}
	}
	l.obufHard.Store(1 << 20)
	if !overOutputLimit(&l, &Client{}, 2<<20, func() time.Time { return t0 }) {
		t.Fatal("past the hard limit must close at once")
	}
}
