package myredis

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
)

// unixsocket and unixsocketperm, as Redis's listenToPort and anetUnixServer:
// at start-up an old file at the path is removed, the socket is created with
// tcp-backlog and chmod'ed to unixsocketperm when it is not 0; the server
// removes it when it stops. Its clients are never refused by protected-mode,
// and CLIENT LIST shows them as addr=<path>:0 laddr=<path>:0 with the U flag.

// listenUnix adds the Unix socket to pl's listeners when unixsocket is set.
// Runs before serving, on the caller's goroutine.
func (s *Server) listenUnix(pl *portListener) error {
	path := s.cfg.Ops.UnixSocket
	if path == "" {
		return nil
	}
	os.Remove(path) // Redis unlinks first and does not care if that fails
	ln, err := listenUnixBacklog(path, s.cfg.TCPBacklog)
	if err != nil {
		return errors.New("Failed opening Unix socket: " + unwrapSyscallMsg(err))
	}
	if perm := s.cfg.Ops.UnixSocketPerm; perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			ln.Close()
			os.Remove(path)
			return errors.New("Failed opening Unix socket: " + unwrapSyscallMsg(err))
		}
	}
	s.mu.Lock()
	s.unixPath = path // Close removes it
	s.mu.Unlock()
	pl.mu.Lock()
	pl.fixed = append(pl.fixed, ln)
	pl.mu.Unlock()
	go pl.acceptLoop(ln)
	s.log.Info("the server is now ready to accept connections", "unixsocket", path)
	return nil
}

// unwrapSyscallMsg is err as strerror says it ("Address already in use").
func unwrapSyscallMsg(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		return strings.ToUpper(msg[:1]) + msg[1:]
	}
	return err.Error()
}

// removeUnixSocket removes the socket file once the server stopped listening.
// Close calls it.
func (s *Server) removeUnixSocket() {
	s.mu.Lock()
	path := s.unixPath
	s.unixPath = ""
	s.mu.Unlock()
	if path != "" {
		os.Remove(path)
	}
}

// isUnixConn reports whether nc came from the Unix socket.
func isUnixConn(nc net.Conn) bool {
	if nc == nil {
		return false
	}
	a := nc.LocalAddr()
	return a != nil && a.Network() == "unix"
}

// connAddrs are CLIENT LIST's addr and laddr for nc: "ip:port", or for a Unix
// socket client the socket's path and ":0" both times, as Redis.
func connAddrs(nc net.Conn) (addr, laddr string) {
	if isUnixConn(nc) {
		a := nc.LocalAddr().String() + ":0"
		return a, a
	}
	return nc.RemoteAddr().String(), nc.LocalAddr().String()
}
