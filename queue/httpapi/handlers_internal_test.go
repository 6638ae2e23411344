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

// The README's examples sign user ids the way verifyUser checks them: this
// vector is the README's Node function's output for key "k", user "alice",
// expires 2000000000.
func TestSignedUserIDVector(t *testing.T) {
	const sig = "2e2584f8e3392ae78a5d03841597ff59c3c144e7ce181386e92dfab8df980b0e"
	now := time.Unix(2000000000-3600, 0)
	if err := verifyUser([]byte("k"), "alice", 2000000000, sig, now); err != nil {
		t.Fatalf("the README's signature is refused: %v", err)
	}
	if err := verifyUser([]byte("k"), "alice", 2000000000, sig, time.Unix(2000000000, 0)); err == nil {
		t.Fatal("an expired id is accepted")
	}
	if err := verifyUser([]byte("k"), "mallory", 2000000000, sig, now); err == nil {
		t.Fatal("alice's signature works for mallory")
	}
	if err := verifyUser([]byte("k"), "alice", 2000000000, sig, time.Unix(2000000000-25*3600, 0)); err == nil {
		t.Fatal("an id valid for more than a day is accepted")
	}
}
