package myredis

import (
	"strconv"
	"time"
)

// A shutdown that waits for the replicas, as Redis 7.0's prepareForShutdown:
// unless NOW (or shutdown-timeout 0), a master whose replicas have not all
// acknowledged its replication offset pauses writes, asks them for an ACK and
// waits up to shutdown-timeout seconds; the SHUTDOWN client blocks meanwhile
// (another SHUTDOWN joins it). When every replica caught up, or the time is
// up (each lagging replica is logged), the shutdown finishes: the save its
// flags ask for, then the server stops. A save that fails without FORCE, or
// SHUTDOWN ABORT, ends the wait: writes resume and the blocked SHUTDOWNs get
// "Errors trying to SHUTDOWN". A signal's shutdown waits the same way
// (ShutdownOnSignal).

// shutdownWait is the shutdown in progress. Executor-owned.
type shutdownWait struct {
	flags    shutdownFlags
	deadline time.Time
	clients  []*Client   // blocked in SHUTDOWN
	signals  []chan bool // signals' shutdowns: told the outcome (true: stop)
	timer    *time.Timer // finishes at the deadline
}

// shutdownTimeout is shutdown-timeout in seconds.
func (c *Config) shutdownTimeout() int {
	c.initOps()
	return c.Ops.ShutdownTimeout
}

// readyToShutdown is Redis's isReadyToShutdown: every replica acknowledged
// the replication offset. Runs on the executor.
func (s *Server) readyToShutdown() bool {
	for _, r := range s.repl.replicas {
		if r.ackOff != s.repl.offset {
			return false
		}
	}
	return true
}

// startShutdownWait begins waiting for the replicas when f and the settings
// ask for it, and reports whether it did. Runs on the executor.
func (s *Server) startShutdownWait(f shutdownFlags) bool {
	secs := s.cfg.shutdownTimeout()
	if f.now || secs == 0 || s.readyToShutdown() {
		return false
	}
	timeout := time.Duration(secs) * time.Second
	sw := &shutdownWait{flags: f, deadline: time.Now().Add(timeout)}
	s.shutdown = sw
	if s.pause.kind == pauseOff {
		s.replFeedRaw("REPLCONF", "GETACK", "*")
	}
	s.pauseClients(pauseWrite, s.clock.Now().Add(timeout+time.Hour).UnixMilli())
	sw.timer = time.AfterFunc(timeout, func() { s.toExecutor(s.checkShutdown) })
	s.log.Info("waiting for replicas before shutting down")
	return true
}

// joinShutdown blocks the SHUTDOWN client x until the shutdown in progress ends.
func (x *Ctx) joinShutdown() {
	x.block(nil, 0)
	x.s.shutdown.clients = append(x.s.shutdown.clients, x.c)
}

// checkShutdown finishes the shutdown in progress once the replicas caught up
// or its time is up (replAck, dropReplica, the timer). Runs on the executor.
func (s *Server) checkShutdown() {
	sw := s.shutdown
	if sw == nil || (!s.readyToShutdown() && time.Now().Before(sw.deadline)) {
		return
	}
	for _, r := range s.repl.replicas {
		if r.ackOff != s.repl.offset {
			s.log.Warn("lagging replica", "addr", r.addrIP()+":"+strconv.Itoa(r.listenPort),
				"behind", s.repl.offset-r.ackOff, "state", r.state)
		}
	}
	s.shutdown = nil
	sw.timer.Stop()
	if !s.shutdownSaves(sw.flags) {
		s.endShutdownWait(sw, false)
		return
	}
	s.endShutdownWait(sw, true)
}

// abortShutdown is SHUTDOWN ABORT: false when no shutdown is in progress.
func (s *Server) abortShutdown() bool {
	sw := s.shutdown
	if sw == nil {
		return false
	}
	s.shutdown = nil
	sw.timer.Stop()
	s.log.Warn("shutdown aborted")
	s.endShutdownWait(sw, false)
	return true
}

// endShutdownWait stops the server (stop) or resumes it, answering the
// blocked SHUTDOWNs: nothing when stopping (their connections close with the
// server), an error otherwise.
func (s *Server) endShutdownWait(sw *shutdownWait, stop bool) {
	if !stop {
		s.unpauseClients()
	}
	for _, c := range sw.clients {
		if c.blocked == nil {
			continue // disconnected meanwhile
		}
		s.unblock(c)
		c.blockOut.Reset()
		if !stop {
			c.blockOut.Error(msgShutdownFailed)
		}
		s.release(c.wake)
	}
	for _, ch := range sw.signals {
		ch <- stop // the signal's goroutine Closes the server
	}
	if stop && len(sw.signals) == 0 {
		s.log.Warn("user requested shutdown")
		s.beginShutdown()
	}
}
