package demosite

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrowdForwardedFor: with ForwardedFor every visit names one TEST-NET-3
// address in X-Forwarded-For on all its requests; without it, none.
func TestCrowdForwardedFor(t *testing.T) {
	for _, on := range []bool{true, false} {
		var mu sync.Mutex
		var seen []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("X-Forwarded-For"))
			mu.Unlock()
			w.WriteHeader(http.StatusTooManyRequests) // the visit ends after its join
		}))
		c := &Crowd{QueueURLs: []string{srv.URL}, Queue: "demo", Users: 1, Hold: time.Millisecond, ForwardedFor: on}
		c.Client = srv.Client()
		c.visit(context.Background(), "u")
		srv.Close()
		if len(seen) != 1 {
			t.Fatalf("forwarded=%v: %d requests, want the join only", on, len(seen))
		}
		ip := net.ParseIP(seen[0])
		switch {
		case on && (ip == nil || !strings.HasPrefix(seen[0], "203.0.113.")):
			t.Errorf("X-Forwarded-For %q, want an address in 203.0.113.0/24", seen[0])
		case !on && seen[0] != "":
			t.Errorf("X-Forwarded-For %q without ForwardedFor", seen[0])
		}
	}
}
