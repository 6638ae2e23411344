package myredis

import (
	"math"
	"strings"
	"time"
)

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: a master hands its role
// to one of its replicas, as Redis 6.2+'s failoverCommand:
//
//  1. writes are paused (as CLIENT PAUSE WRITE, for as long as it takes), so
//     the replication stream stops growing;
//  2. every 100 ms the master looks for a replica (the one named by TO, or
//     any) that has acknowledged the whole stream (or, with FORCE, the target
//     once TIMEOUT has passed; without FORCE the timeout aborts);
//  3. it becomes a replica of that one, whose PSYNC it sends with FAILOVER:
//     the replica, finding its own replication ID, turns master and answers
//     +CONTINUE; the pause ends and the postponed writes run, on a replica now;
//  4. a refused PSYNC makes it a master again (a new replication ID).
//
// INFO's master_failover_state shows the state; FAILOVER ABORT ends it. Every
// function here runs on the executor goroutine.

const (
	failoverNone     = iota
	failoverWaitSync // waiting-for-sync
	failoverInProgress
)

// failoverState is the running FAILOVER.
type failoverState struct {
	state int
	host  string // the target: TO's, or the first replica found caught up
	port  int
	endMs int64 // TIMEOUT's end (unix ms), 0: none
	force bool
}

const (
	msgFailoverCluster       = "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead."
	msgFailoverNone          = "ERR No failover in progress."
	msgFailoverTimeout       = "ERR FAILOVER timeout must be greater than 0"
	msgFailoverRunning       = "ERR FAILOVER already in progress."
	msgFailoverReplica       = "ERR FAILOVER is not valid when server is a replica."
	msgFailoverNoReplicas    = "ERR FAILOVER requires connected replicas."
	msgFailoverForce         = "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	msgFailoverNotReplica    = "ERR FAILOVER target HOST and PORT is not a replica."
	msgFailoverNotOnline     = "ERR FAILOVER target replica is not online."
	msgReplicaofFailover     = "ERR REPLICAOF not allowed while failing over."
	msgSyncFailingOver       = "NOMASTERLINK Can't SYNC while failing over"
	msgPsyncFailoverToMaster = "ERR PSYNC FAILOVER can't be sent to a master."
	msgPsyncFailoverReplID   = "ERR PSYNC FAILOVER replid must match my replid."
)

// failoverPauseEnd is the failover's pause end: until it is over.
const failoverPauseEnd = math.MaxInt64 / 2

func cmdFailover(x *Ctx) {
	s := x.s
	fo := &s.repl.failover
	if x.nargs() == 2 && x.argIs(1, "abort") {
		if fo.state == failoverNone {
			x.err(msgFailoverNone)
			return
		}
		s.abortFailover("Failover manually aborted")
		x.ok()
		return
	}
	var timeout int64
	var port int64
	var host string
	force := false
	for j := 1; j < x.nargs(); j++ {
		switch {
		case x.argIs(j, "timeout") && j+1 < x.nargs() && timeout == 0:
			n, ok := parseRedisInt(x.args[j+1])
			if !ok {
				x.err(msgNotInt)
				return
			}
			if n <= 0 {
				x.err(msgFailoverTimeout)
				return
			}
			timeout = n
			j++
		case x.argIs(j, "to") && j+2 < x.nargs() && host == "":
			n, ok := parseRedisInt(x.args[j+2])
			if !ok {
				x.err(msgNotInt)
				return
			}
			host, port = x.arg(j+1), n
			j += 2
		case x.argIs(j, "force") && !force:
			force = true
		default:
			x.err(msgSyntax)
			return
		}
	}
	switch {
	case fo.state != failoverNone:
		x.err(msgFailoverRunning)
		return
	case s.isReplica():
		x.err(msgFailoverReplica)
		return
	case len(s.repl.replicas) == 0:
		x.err(msgFailoverNoReplicas)
		return
	case force && (timeout == 0 || host == ""):
		x.err(msgFailoverForce)
		return
	}
	if host != "" {
		r := s.findReplica(host, int(port))
		if r == nil {
			x.err(msgFailoverNotReplica)
			return
		}
		if r.state != replStateOnline {
			x.err(msgFailoverNotOnline)
			return
		}
		s.log.Info("FAILOVER requested", "host", host, "port", port)
	} else {
		s.log.Info("FAILOVER requested to any replica")
	}
	*fo = failoverState{state: failoverWaitSync, host: host, port: int(port), force: force}
	if timeout > 0 {
		fo.endMs = s.clock.Now().UnixMilli() + min(timeout, failoverPauseEnd/2) // no overflow
	}
	s.pauseClients(pauseWrite, failoverPauseEnd)
	s.startFailoverCron()
	x.ok()
}

// findReplica is the replica whose address and listening port are these.
func (s *Server) findReplica(host string, port int) *replica {
	for _, r := range s.repl.replicas {
		if r.listenPort == port && strings.EqualFold(r.addrIP(), host) {
			return r
		}
	}
	return nil
}

// startFailoverCron checks the failover every 100 ms while it waits for a
// replica (Redis checks it before each event loop sleep).
func (s *Server) startFailoverCron() {
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
			waiting := make(chan bool, 1)
			if !s.toExecutor(func() {
				s.updateFailover()
				waiting <- s.repl.failover.state == failoverWaitSync
			}) {
				return
			}
			select {
			case w := <-waiting:
				if !w {
					return
				}
			case <-s.quit:
				return
			}
		}
	}()
}

// updateFailover is Redis's updateFailoverStatus: time out, or fail over to a
// replica that has the whole stream.
func (s *Server) updateFailover() {
	fo := &s.repl.failover
	if fo.state != failoverWaitSync {
		return
	}
	if fo.endMs != 0 && fo.endMs <= s.clock.Now().UnixMilli() {
		if fo.force {
			s.log.Info("FAILOVER time out exceeded, failing over", "host", fo.host, "port", fo.port)
			fo.state = failoverInProgress
			s.replicationSetMaster(fo.host, fo.port)
			return
		}
		s.abortFailover("Replica never caught up before timeout")
		return
	}
	var target *replica
	if fo.host != "" {
		target = s.findReplica(fo.host, fo.port)
	} else {
		for _, r := range s.repl.replicas {
			if r.ackOff == s.repl.offset {
				target = r
				fo.host, fo.port = r.addrIP(), r.listenPort
				break
			}
		}
	}
	if target != nil && target.ackOff == s.repl.offset {
		fo.state = failoverInProgress
		s.log.Info("failover target is synced, failing over", "host", fo.host, "port", fo.port)
		s.replicationSetMaster(fo.host, fo.port)
	}
}

// clearFailover ends the failover and its pause (Redis's clearFailoverState).
func (s *Server) clearFailover() {
	s.repl.failover = failoverState{}
	s.unpauseClients() // pause.go
}

// abortFailover gives up: a master again if it had turned replica.
func (s *Server) abortFailover(why string) {
	fo := &s.repl.failover
	if fo.state == failoverNone {
		return
	}
	if fo.host != "" {
		s.log.Info("FAILOVER aborted", "host", fo.host, "port", fo.port, "err", why)
	} else {
		s.log.Info("FAILOVER to any replica aborted", "err", why)
	}
	if fo.state == failoverInProgress {
		s.replicationUnsetMaster()
	}
	s.clearFailover()
}

// failoverStateName is INFO's master_failover_state.
func (s *Server) failoverStateName() string {
	switch s.repl.failover.state {
	case failoverWaitSync:
		return "waiting-for-sync"
	case failoverInProgress:
		return "failover-in-progress"
	}
	return "no-failover"
}

// psyncFailover handles PSYNC replid offset FAILOVER on a replica: the master
// hands over, and this replica becomes the master when the ID is its own.
// It reports false once it has written the error.
func (x *Ctx) psyncFailover() bool {
	s := x.s
	s.log.Warn("failover request received", "replid", x.arg(1))
	if !s.isReplica() {
		x.err(msgPsyncFailoverToMaster)
		return false
	}
	if !strings.EqualFold(x.arg(1), s.replID) {
		x.err(msgPsyncFailoverReplID)
		return false
	}
	s.replicationUnsetMaster()
	s.log.Info("master mode enabled (failover request)", "client", x.c.addr)
	return true
}

// failoverLinkFailed aborts the failover when its PSYNC could not be sent.
// Runs on the link's goroutine.
func (s *Server) failoverLinkFailed(l *masterLink, failover bool, why string) {
	if failover {
		s.submit(func() {
			if s.repl.link == l {
				s.abortFailover(why)
			}
		})
	}
}

// failoverAnswered reads the target's reply to PSYNC FAILOVER: +CONTINUE (or
// +FULLRESYNC) ends the failover, anything else aborts it, this server a
// master again. False when the link is to stop. Runs on the link's goroutine.
func (s *Server) failoverAnswered(l *masterLink, reply string) bool {
	ok := strings.HasPrefix(reply, "+CONTINUE") || strings.HasPrefix(reply, "+FULLRESYNC")
	current := true
	s.submit(func() {
		if s.repl.link != l || s.repl.failover.state != failoverInProgress {
			current = s.repl.link == l
			return
		}
		if ok {
			s.clearFailover()
			return
		}
		s.abortFailover("Failover target rejected psync request")
		current = false
	})
	return current
}
