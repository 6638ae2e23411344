package myredis

import "strconv"

// Two refusals that depend on the replication state, as Redis 7.0's
// processCommand and script.c:
//
//	NOREPLICAS  a master with min-replicas-to-write N (and min-replicas-max-lag
//	            M > 0) refuses writes while fewer than N online replicas
//	            acknowledged within the last M seconds: write commands, an EXEC
//	            with a queued write, a script with flags that may write (one
//	            without flags: its first write command fails inside it)
//	MASTERDOWN  a replica with replica-serve-stale-data no whose link to its
//	            master is down refuses every command not flagged stale (INFO,
//	            PING is not) and an EXEC with such a command queued; a script
//	            is refused whole unless its flags say allow-stale

// markStale sets flagStale on the commands whose COMMAND INFO flags in Redis
// 7.0.15 include stale.
func markStale(t commandTable) {
	for name, c := range t {
		if hasInfoFlag(name, "stale") {
			c.flags |= flagStale
		}
		for _, sub := range c.subs {
			if hasInfoFlag(sub.name, "stale") {
				sub.flags |= flagStale
			}
		}
	}
}

// goodReplicas counts the online replicas that acknowledged within
// min-replicas-max-lag seconds (Redis's repl_good_slaves_count). Runs on the
// executor.
func (s *Server) goodReplicas() int {
	lag := int64(s.cfg.Repl.minReplicasMaxLag())
	now := s.clock.Now().Unix()
	n := 0
	for _, r := range s.repl.replicas {
		if r.state == replStateOnline && now-r.ackTime.Unix() <= lag {
			n++
		}
	}
	return n
}

// enoughReplicas is Redis's checkGoodReplicasStatus: false when writes must be
// refused NOREPLICAS. Runs on the executor.
func (s *Server) enoughReplicas() bool {
	rc := &s.cfg.Repl
	return s.isReplica() || rc.MinReplicasToWrite == 0 || rc.minReplicasMaxLag() == 0 ||
		s.goodReplicas() >= rc.MinReplicasToWrite
}

// runningStale reports a replica that may not serve its (stale) data.
func (s *Server) runningStale() bool {
	return s.isReplica() && s.cfg.Repl.NoServeStale && !s.masterLinkUp()
}

// replicationRefusal is the error call answers cmd with, "" to run it. Runs on
// the executor.
func (s *Server) replicationRefusal(c *Client, cmd *command) string {
	if s.isReplica() && c == s.repl.mc {
		return "" // the master's stream
	}
	if writes(c, cmd, flagWrite) && !s.enoughReplicas() {
		return msgNoReplicas
	}
	if s.runningStale() && (cmd.flags&flagStale == 0 || cmd.name == "exec" && queuedWithout(c, flagStale)) {
		return msgMasterDown
	}
	return ""
}

// writes reports whether cmd, or for EXEC a command it would run, has flag.
func writes(c *Client, cmd *command, flag int) bool {
	if cmd.flags&flag != 0 {
		return true
	}
	if cmd.name != "exec" || c.multi == nil {
		return false
	}
	for _, q := range c.multi.cmds {
		if q.cmd.flags&flag != 0 {
			return true
		}
	}
	return false
}

// queuedWithout reports whether c's transaction holds a command without flag.
func queuedWithout(c *Client, flag int) bool {
	if c.multi == nil {
		return false
	}
	for _, q := range c.multi.cmds {
		if q.cmd.flags&flag == 0 {
			return true
		}
	}
	return false
}

// scriptRefusal is the error a script is refused with before it runs, in the
// order of Redis's processCommand, for which a script with a shebang is a
// write command unless flags=no-writes, and a stale one only with allow-stale:
// flagged says it has a shebang, noWrites and allowStale its flags. Runs on
// the executor.
func (s *Server) scriptRefusal(c *Client, flagged, noWrites, allowStale bool) string {
	mayWrite := flagged && !noWrites
	switch {
	case mayWrite && !s.enoughReplicas():
		return msgNoReplicas
	case mayWrite && s.isReplica() && !s.cfg.Repl.ReadWrite && c != s.repl.mc:
		return msgReadOnlyReplica
	case (!flagged || !allowStale) && s.runningStale():
		return msgMasterDown
	}
	return ""
}

// scriptCallRefusal is the error redis.call answers a command with inside a
// script that has written nothing yet ("" to run it), as Redis's
// scriptVerifyWriteCommandAllow and scriptVerifyAllowStale.
func (s *Server) scriptCallRefusal(cmd *command, wrote bool) string {
	if s.runningStale() && cmd.flags&flagStale == 0 {
		return msgLuaStale
	}
	if cmd.flags&flagWrite != 0 && !wrote && !s.enoughReplicas() {
		return "-" + msgNoReplicas
	}
	return ""
}

// infoGoodReplicas is INFO replication's min_slaves_good_slaves line, shown
// when min-replicas-to-write is in force.
func (s *Server) infoGoodReplicas() [][2]string {
	if s.cfg.Repl.MinReplicasToWrite == 0 || s.cfg.Repl.minReplicasMaxLag() == 0 {
		return nil
	}
	return [][2]string{{"min_slaves_good_slaves", strconv.Itoa(s.goodReplicas())}}
}
