package myredis

import (
	"net"
	"os"
	"syscall"
)

// Listening with tcp-backlog as listen(2)'s backlog, as Redis's anetListen:
// net.Listen always passes the kernel's somaxconn, so the socket is built
// here and handed to net.FileListener. The kernel still caps the backlog at
// net.core.somaxconn, as for Redis.

// backlogListens says tcp-backlog reaches listen(2) on this system (CONFIG GET
// shows it either way; README says so).
const backlogListens = true

// listenTCPBacklog listens on address ("host:port") with backlog. An empty
// host listens on every address of both families when the machine has IPv6
// (as net.Listen); an IPv6 address listens on IPv6 only (Redis's
// IPV6_V6ONLY); network "tcp6" forces IPv6.
func listenTCPBacklog(network, address string, backlog int) (net.Listener, error) {
	ta, err := net.ResolveTCPAddr(network, address)
	if err != nil {
		return nil, err
	}
	opErr := func(err error) error {
		return &net.OpError{Op: "listen", Net: network, Addr: ta, Err: err}
	}
	family, v6only := syscall.AF_INET6, true
	var sa syscall.Sockaddr
	switch ip4 := ta.IP.To4(); {
	case ta.IP == nil:
		v6only = false
		sa = &syscall.SockaddrInet6{Port: ta.Port}
	case ip4 != nil && network != "tcp6":
		family = syscall.AF_INET
		a := &syscall.SockaddrInet4{Port: ta.Port}
		copy(a.Addr[:], ip4)
		sa = a
	default:
		a := &syscall.SockaddrInet6{Port: ta.Port}
		copy(a.Addr[:], ta.IP.To16())
		if ta.Zone != "" {
			if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
				a.ZoneId = uint32(ifi.Index)
			}
		}
		sa = a
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil && ta.IP == nil { // no IPv6 on this machine: every IPv4 address
		family, sa = syscall.AF_INET, &syscall.SockaddrInet4{Port: ta.Port}
		fd, err = syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	}
	if err != nil {
		return nil, opErr(os.NewSyscallError("socket", err))
	}
	err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err == nil && family == syscall.AF_INET6 {
		err = syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, b2i(v6only))
	}
	if err != nil {
		syscall.Close(fd)
		return nil, opErr(os.NewSyscallError("setsockopt", err))
	}
	return fdListener(fd, sa, backlog, opErr)
}

// listenUnixBacklog listens on a Unix socket at path with backlog. The file
// is not removed on Close: the caller removes it (removeUnixSocket).
func listenUnixBacklog(path string, backlog int) (net.Listener, error) {
	opErr := func(err error) error {
		return &net.OpError{Op: "listen", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: err}
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, opErr(os.NewSyscallError("socket", err))
	}
	return fdListener(fd, &syscall.SockaddrUnix{Name: path}, backlog, opErr)
}

// fdListener binds fd to sa, listens with backlog and wraps it; fd is closed
// in every case (net.FileListener keeps a copy).
func fdListener(fd int, sa syscall.Sockaddr, backlog int, opErr func(error) error) (net.Listener, error) {
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, opErr(os.NewSyscallError("bind", err))
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		return nil, opErr(os.NewSyscallError("listen", err))
	}
	f := os.NewFile(uintptr(fd), "listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, opErr(err)
	}
	return ln, nil
}
