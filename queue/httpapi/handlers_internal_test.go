package httpapi

import (
	"testing"
	"time"
)

func TestPollAfter(t *testing.T) {
	ttl := 5 * time.Minute
	prev := time.Duration(0)
	for _, ahead := range []int64{0, 1, 10, 100, 1000, 100000} {
		d := pollAfter(ahead, ttl)
		if d < prev {
			t.Errorf("pollAfter(%d) = %v, less than for fewer people ahead (%v)", ahead, d, prev)
		}
		prev = d
	}
	if d := pollAfter(0, ttl); d > time.Second {
		t.Errorf("the head polls every %v; want at most 1s", d)
	}
	if d := pollAfter(100000, ttl); d > 15*time.Second {
		t.Errorf("far back polls every %v; want at most 15s", d)
	}
	for _, short := range []time.Duration{time.Second, 400 * time.Millisecond} {
		if d := pollAfter(1000, short); d > short/4 {
			t.Errorf("ticket TTL %v: poll after %v would let the ticket die", short, d)
		}
	}
}
