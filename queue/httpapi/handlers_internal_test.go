package httpapi

import (
	"errors"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
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

// FuzzClientIP: any X-Forwarded-For from any peer gives the peer or an
// address written in the header, and from an untrusted peer always the peer.
func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.1:5000", "1.1.1.1, 10.0.0.2")
	f.Add("[::1]:80", "::ffff:1.2.3.4,garbage")
	f.Add("8.8.8.8:1", "")
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := s.clientIP(r)
		host, _, err := net.SplitHostPort(remote)
		if err != nil {
			host = remote
		}
		peer, perr := netip.ParseAddr(host)
		if perr == nil && !s.trusted(peer.Unmap()) && got != peer.Unmap() {
			t.Fatalf("untrusted peer %v: client %v from the header", peer, got)
		}
		inHeader := false
		for _, h := range strings.Split(xff, ",") {
			if a, err := netip.ParseAddr(strings.TrimSpace(h)); err == nil && a.Unmap() == got {
				inHeader = true
			}
		}
		if got.IsValid() && got != peer.Unmap() && !inHeader {
			t.Fatalf("client %v is neither the peer nor in %q", got, xff)
		}
	})
}

// FuzzVerifyUser never panics and accepts only what signUser-style code made.
func FuzzVerifyUser(f *testing.F) {
	f.Add("alice", int64(2000000000), "2e2584f8e3392ae78a5d03841597ff59c3c144e7ce181386e92dfab8df980b0e")
	f.Add("", int64(0), "")
	now := time.Unix(2000000000-3600, 0)
	f.Fuzz(func(t *testing.T, user string, expires int64, sig string) {
		err := verifyUser([]byte("k"), user, expires, sig, now)
		if err == nil && !(user == "alice" && expires == 2000000000) {
			t.Fatalf("accepted %q %d %q", user, expires, sig)
		}
	})
}

// redisErr is an error reply from the store, as go-redis returns one.
type redisErr string

func (e redisErr) Error() string { return string(e) }
func (redisErr) RedisError()     {}

// TestStoreStatus: an error the store means is 502 (documented in
// openapi.yaml as StoreError); a transient one, or no answer, is 503.
func TestStoreStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{redisErr("ERR unknown command 'EVALSHA'"), 502},
		{redisErr("NOSCRIPT No matching script"), 502},
		{redisErr("LOADING Redis is loading the dataset in memory"), 503},
		{redisErr("BUSY Redis is busy running a script"), 503},
		{redisErr("READONLY You can't write against a read only replica."), 503},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, 503},
	} {
		if got := storeStatus(c.err); got != c.want {
			t.Errorf("storeStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
