package myredis_test

// CONFIG SET tls-port, bind and the tls-*-file settings at run time, as Redis
// 7.0.15 does them (checked against redis-server 7.0.15 by hand: the same
// replies, the TLS listener moves with tls-port and bind, new certificates
// serve new connections). Certificates are made here (tls_test.go).

import (
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

const msgTLSUnable = "Unable to update TLS configuration. Check server logs."

func configSetFailed(param, msg string) string {
	return "-ERR CONFIG SET failed (possibly related to argument '" + param + "') - " + msg + "\r\n"
}

func localAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// tlsDial opens a TLS connection to addr trusting pool's CA (client cert given).
func tlsDial(t *testing.T, p *testPKI, addr string) *redistest.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{p.clientPair}})
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	c := redistest.Wrap(t, conn)
	t.Cleanup(func() { c.Close() })
	return c
}

// refused reports whether nothing accepts TCP connections at addr.
func refused(addr string) bool {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		nc.Close()
		return false
	}
	return true
}

func TestConfigSetTLSPortMovesListener(t *testing.T) {
	p := newTestPKI(t)
	_, addr := startTLS(t, p, "yes")
	c := tlsDial(t, p, addr)
	port := redistest.FreePort(t)
	mustDo(t, c, ok, "CONFIG", "SET", "tls-port", strconv.Itoa(port))
	mustDo(t, c, redistest.Bulks("tls-port", strconv.Itoa(port)), "CONFIG", "GET", "tls-port")
	if err := tlsPing(t, localAddr(port), p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("PING on the new tls-port: %v", err)
	}
	if !refused(addr) {
		t.Fatalf("the old TLS address %s still accepts", addr)
	}
	mustDo(t, c, "+PONG\r\n", "PING") // the asking connection stays

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	mustDo(t, c, configSetFailed("tls-port", "Unable to listen on this port. Check server logs."),
		"CONFIG", "SET", "maxmemory", "12345678", "tls-port", busyPort)
	mustDo(t, c, redistest.Bulks("maxmemory", "0"), "CONFIG", "GET", "maxmemory")
	if err := tlsPing(t, localAddr(port), p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("after a failed move the old tls-port: %v", err)
	}

	mustDo(t, c, ok, "CONFIG", "SET", "tls-port", "0") // closes the listener, not the connections
	if !refused(localAddr(port)) {
		t.Fatal("tls-port 0 still accepts")
	}
	mustDo(t, c, "+PONG\r\n", "PING")
	again := redistest.FreePort(t)
	mustDo(t, c, ok, "CONFIG", "SET", "tls-port", strconv.Itoa(again))
	if err := tlsPing(t, localAddr(again), p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("tls-port set again after 0: %v", err)
	}

	plain := redistest.FreePort(t) // started with port 0: CONFIG SET port opens a TCP listener
	mustDo(t, c, ok, "CONFIG", "SET", "port", strconv.Itoa(plain))
	mustDo(t, redistest.Dial(t, localAddr(plain)), "+PONG\r\n", "PING")
}

// Two listeners may trade ports in one CONFIG SET: Redis closes the old ones
// before it opens the new.
func TestConfigSetPortAndTLSPortTrade(t *testing.T) {
	p := newTestPKI(t)
	srv, tlsAddr := startTLS(t, p, "yes")
	c := tlsDial(t, p, tlsAddr)
	plain := redistest.FreePort(t)
	mustDo(t, c, ok, "CONFIG", "SET", "port", strconv.Itoa(plain))
	tlsPort := srv.TLSAddr().(*net.TCPAddr).Port
	mustDo(t, c, ok, "CONFIG", "SET", "port", strconv.Itoa(tlsPort), "tls-port", strconv.Itoa(plain))
	mustDo(t, redistest.Dial(t, localAddr(tlsPort)), "+PONG\r\n", "PING")
	if err := tlsPing(t, localAddr(plain), p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("TLS on the old plain port: %v", err)
	}
}

// A server started without TLS turns it on with CONFIG SET: first the
// certificate, then tls-port (without one, Redis's "Unable to update TLS").
func TestConfigSetTLSPortStartsTLS(t *testing.T) {
	p := newTestPKI(t)
	addr := redistest.StartMyRedis(t)
	c := redistest.Dial(t, addr)
	port := strconv.Itoa(redistest.FreePort(t))
	mustDo(t, c, configSetFailed("tls-port", msgTLSUnable), "CONFIG", "SET", "tls-port", port)
	mustDo(t, c, redistest.Bulks("tls-port", "0"), "CONFIG", "GET", "tls-port")
	mustDo(t, c, ok, "CONFIG", "SET", "tls-cert-file", p.certFile, "tls-key-file", p.keyFile)  // TLS off: not checked yet
	mustDo(t, c, configSetFailed("tls-port", msgTLSUnable), "CONFIG", "SET", "tls-port", port) // no CA for tls-auth-clients yes
	mustDo(t, c, ok, "CONFIG", "SET", "tls-ca-cert-file", p.caFile)
	mustDo(t, c, ok, "CONFIG", "SET", "tls-port", port)
	if err := tlsPing(t, "127.0.0.1:"+port, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("TLS after CONFIG SET tls-port: %v", err)
	}
	mustDo(t, c, "+PONG\r\n", "PING")
}

// CONFIG SET bind moves the TLS listener too; an address the machine lacks
// fails naming bind, or tls-port when that comes first, and both listeners
// stay where they were.
func TestConfigSetBindMovesTLS(t *testing.T) {
	p := newTestPKI(t)
	srv, tlsAddr := startTLS(t, p, "yes")
	c := tlsDial(t, p, tlsAddr)
	plain := redistest.FreePort(t)
	mustDo(t, c, ok, "CONFIG", "SET", "port", strconv.Itoa(plain))
	mustDo(t, c, ok, "CONFIG", "SET", "bind", "127.0.0.1")
	if got := srv.TLSAddr().String(); got != tlsAddr {
		t.Fatalf("TLS listener after bind 127.0.0.1: %s, want %s", got, tlsAddr)
	}
	if err := tlsPing(t, tlsAddr, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("TLS after CONFIG SET bind: %v", err)
	}
	mustDo(t, c, configSetFailed("bind", "Failed to bind to specified addresses."), "CONFIG", "SET", "bind", "192.0.2.123")
	other := strconv.Itoa(redistest.FreePort(t))
	mustDo(t, c, configSetFailed("tls-port", "Unable to listen on this port. Check server logs."),
		"CONFIG", "SET", "tls-port", other, "bind", "192.0.2.123")
	mustDo(t, c, configSetFailed("bind", "Failed to bind to specified addresses."),
		"CONFIG", "SET", "bind", "192.0.2.123", "tls-port", other)
	mustDo(t, c, redistest.Bulks("bind", "127.0.0.1"), "CONFIG", "GET", "bind")
	if err := tlsPing(t, tlsAddr, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("TLS after failed binds: %v", err)
	}
	mustDo(t, redistest.Dial(t, localAddr(plain)), "+PONG\r\n", "PING")
}

// New certificates set with CONFIG SET serve new connections; the connection
// already open keeps working. A CONFIG SET that fails installs none of them.
func TestConfigSetTLSCertificatesReload(t *testing.T) {
	p := newTestPKI(t)
	q := newTestPKI(t) // another CA and its server and client certificates
	_, addr := startTLS(t, p, "yes")
	c := tlsDial(t, p, addr)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	mustDo(t, c, configSetFailed("tls-port", "Unable to listen on this port. Check server logs."),
		"CONFIG", "SET", "tls-cert-file", q.certFile, "tls-key-file", q.keyFile, "tls-ca-cert-file", q.caFile,
		"tls-port", strconv.Itoa(busy.Addr().(*net.TCPAddr).Port))
	if err := tlsPing(t, addr, p.pool, []tls.Certificate{p.clientPair}); err != nil {
		t.Fatalf("a failed CONFIG SET changed the certificates: %v", err)
	}
	mustDo(t, c, configSetFailed("tls-key-file", msgTLSUnable), "CONFIG", "SET", "maxmemory", "1000000", "tls-key-file", q.certFile)

	mustDo(t, c, ok, "CONFIG", "SET", "tls-cert-file", q.certFile, "tls-key-file", q.keyFile, "tls-ca-cert-file", q.caFile)
	if err := tlsPing(t, addr, q.pool, []tls.Certificate{q.clientPair}); err != nil {
		t.Fatalf("the new certificates: %v", err)
	}
	if err := tlsPing(t, addr, p.pool, []tls.Certificate{p.clientPair}); err == nil {
		t.Fatal("the old CA still verifies the server after the reload")
	}
	mustDo(t, c, "+PONG\r\n", "PING")
}
