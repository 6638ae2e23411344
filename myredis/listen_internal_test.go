package myredis

import (
	"net"
	"testing"
)

// TestPortListenerAddrAfterClose: a closed portListener still has an address.
// redcon's Serve reads Addr().Network(); a test server closed between Serve's
// quit check and redcon's Serve panicked on a nil address (seen in a CI run).
func TestPortListenerAddrAfterClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	want := ln.Addr().String()
	p := newPortListener([]net.Listener{ln})
	p.Close()
	a := p.Addr()
	if a == nil || a.String() != want {
		t.Fatalf("Addr after Close: %v, want %s", a, want)
	}
}
