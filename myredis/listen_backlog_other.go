//go:build !linux

package myredis

import "net"

// On systems other than Linux, net.Listen's own backlog (the kernel's
// maximum) is used: tcp-backlog is shown by CONFIG GET but does not reach
// listen(2) (README says so).
const backlogListens = false

func listenTCPBacklog(network, address string, _ int) (net.Listener, error) {
	return net.Listen(network, address)
}

func listenUnixBacklog(path string, _ int) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err == nil {
		ln.(*net.UnixListener).SetUnlinkOnClose(false) // removeUnixSocket does it, as on Linux
	}
	return ln, err
}
