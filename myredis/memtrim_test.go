package myredis

import "testing"

// TestTrimmerTrimsOnceAfterTraffic: two quiet seconds after traffic trim when the
// slack is worth it, and only once; one quiet second (a pause) or quiet seconds
// without traffic never do.
func TestTrimmerTrimsOnceAfterTraffic(t *testing.T) {
	const mb = 1 << 20
	big := func() (uint64, uint64) { return 200 * mb, 100 * mb }  // slack beyond live/4 and the minimum
	small := func() (uint64, uint64) { return 20 * mb, 100 * mb } // under live/4
	tiny := func() (uint64, uint64) { return 10 * mb, 1 * mb }    // under the minimum
	calls := 0
	count := func(f func() (uint64, uint64)) func() (uint64, uint64) {
		return func() (uint64, uint64) { calls++; return f() }
	}
	tr := trimmer{}
	steps := []struct {
		in    int64
		slack func() (uint64, uint64)
		want  bool
	}{
		{0, big, false},           // quiet, no traffic yet
		{0, big, false},           // quiet, no traffic yet
		{10 * mb, big, false},     // busy
		{10 * mb, big, false},     // a pause
		{20 * mb, big, false},     // busy again
		{20*mb + 100, big, false}, // quiet 1
		{20*mb + 200, big, true},  // quiet 2 after traffic: trim
		{20*mb + 300, big, false}, // quiet again: already decided
		{30 * mb, big, false},     // busy
		{30 * mb, small, false},   // quiet 1
		{30 * mb, small, false},   // quiet 2, but the slack is small
		{40 * mb, big, false},     // busy
		{40 * mb, tiny, false},    // quiet 1
		{40 * mb, tiny, false},    // quiet 2, slack under the minimum
	}
	for i, st := range steps {
		if got := tr.tick(st.in, count(st.slack)); got != st.want {
			t.Fatalf("step %d (in=%d): trim %v, want %v", i, st.in, got, st.want)
		}
	}
	if calls != 3 { // the heap is read only in a first quiet second after traffic
		t.Fatalf("slack read %d times, want 3", calls)
	}
}
