//go:build linux

package myredis

import (
	"net"
	"syscall"
	"testing"
)

// TestKeepAlive checks tcp-keepalive on an accepted socket: Redis's idle time and
// probe interval, or off.
func TestKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, secs := range []int64{300, 0, 60} {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		setKeepAlive(conn, secs)
		raw, _ := conn.(*net.TCPConn).SyscallConn()
		var on, idle, intvl int
		raw.Control(func(fd uintptr) {
			on, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
			idle, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
			intvl, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL)
		})
		if secs == 0 && on != 0 || secs > 0 && (on == 0 || idle != int(secs) || intvl != int(secs/3)) {
			t.Errorf("tcp-keepalive %d: SO_KEEPALIVE %d, idle %d, interval %d", secs, on, idle, intvl)
		}
		conn.Close()
		client.Close()
	}
}
