package myredis

import (
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Operating the server: the pidfile, TCP keepalive and the idle client timeout.

// writePidFile writes the process id to cfg.PidFile, if set, as Redis does at
// start-up; Close removes it.
func (s *Server) writePidFile() error {
	if s.cfg.PidFile == "" {
		return nil
	}
	return os.WriteFile(s.cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func (s *Server) removePidFile() {
	if s.cfg.PidFile != "" {
		os.Remove(s.cfg.PidFile)
	}
}

// setKeepAlive applies tcp-keepalive to an accepted connection as Redis's
// anetKeepAlive: probes after secs idle, then every secs/3, 3 of them. 0 turns
// keepalive off (Go turns it on by default).
func setKeepAlive(c net.Conn, secs int64) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	if secs <= 0 {
		tc.SetKeepAlive(false)
		return
	}
	idle := time.Duration(secs) * time.Second
	tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: idle, Interval: max(idle/3, time.Second), Count: 3})
}

// clientsCron samples INFO's rates every 100 ms (stats.go), as Redis's
// serverCron, and closes idle clients once a second while timeout is set.
func (s *Server) clientsCron() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.queryBufCron(time.Now()) // querybuf.go
		if !s.toExecutor(s.clientsCronTask) {
			return
		}
		if tick%50 == 0 && !s.toExecutor(s.resetReplyPeaks) {
			return
		}
		if tick%10 == 0 {
			s.migrate.closeIdle(time.Now()) // as Redis's serverCron, once a second (migrate_conn.go)
		}
		if tick%10 == 0 && s.live.timeout.Load() > 0 && !s.toExecutor(s.closeIdleClients) {
			return
		}
	}
}

// resetReplyPeaks starts CLIENT LIST's rbp again, every five seconds as Redis's
// reply-buffer-peak-reset-time. Runs on the executor.
func (s *Server) resetReplyPeaks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		c.replyPeak = 0
	}
}

// clientsCronTask is the executor's share of each tick: the stats, then client
// eviction (client_evict.go), which reads the memory the stats just summed.
func (s *Server) clientsCronTask() {
	s.statsCron()
	s.clientEvictCron()
}

// closeIdleClients closes the connections idle for longer than timeout seconds,
// as Redis's clientsCronHandleTimeout: a blocked client is not idle (it waits for
// its command), nor is a subscriber. Runs on the executor.
func (s *Server) closeIdleClients() {
	limit := s.live.timeout.Load()
	if limit <= 0 {
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.blocked != nil || c.conn == nil || c.isSubscriber() || s.isMonitor(c) {
			continue
		}
		last := c.lastActive.Load()
		if last == 0 {
			last = c.created.UnixMilli()
		}
		if (now.UnixMilli()-last)/1000 > limit {
			s.log.Debug("closing idle client", "id", c.id, "addr", c.addr)
			c.conn.NetConn().Close() // the connection's read fails and closes the client
		}
	}
}

// socketFD is the descriptor of an accepted TCP socket (CLIENT LIST fd), -1 if
// there is none.
func socketFD(c net.Conn) int {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok { // a TLS connection (tls.go)
		c = u.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}
