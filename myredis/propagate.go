package myredis

// Propagation: how the writes a command made reach the AOF and the replicas,
// as Redis 7.0's call() and propagatePendingCommands().
//
// A command run by a client (or served from a wait list) is one execution
// unit. Everything it propagates (its own arguments or their rewrite, what it
// adds with alsoPropagate, the DEL of a key found expired on the way, and for
// EXEC and scripts every write of the commands they run) is collected in
// s.unit and handed to the listeners (s.hooks: aof.feed, replFeed) when the
// unit ends:
//
//   - one write alone, as it is (Redis: "the single command is atomic"):
//     MULTI; SET k v; EXEC reaches the replicas as SET k v;
//   - several, wrapped in MULTI ... EXEC (the listeners' wrap hooks), so that a
//     replica or an AOF replay applies all of them or none; except after a
//     command that touches arbitrary keys (SCAN, RANDOMKEY: the DELs of the
//     expired keys it met are independent);
//   - nothing, when the server stopped meanwhile (a script cut short by
//     SHUTDOWN NOSAVE: none of its writes are kept, as in Redis).
//
// Writes made outside a command (active expiry, evictions from the cron) are
// handed over at once, one by one. In --workers mode (workers.go) commands run
// on several goroutines and propagate at once, under the lock, unwrapped.

// propUnit is the running execution unit's propagated writes. Executor-owned.
type propUnit struct {
	depth int      // nested exec calls; 0: no unit is open
	ops   []propOp // collected writes, in order
}

// propOp is one collected write.
type propOp struct {
	db       *DB
	args     [][]byte
	replOnly bool // for the replicas only, not the AOF (PUBLISH)
}

// propagate hands a write to the listeners, or collects it while a unit is
// open. Runs on the executor.
func (s *Server) propagate(db *DB, args [][]byte) {
	if len(s.hooks) > 0 {
		s.collect(propOp{db: db, args: args})
	}
}

// propagateToReplicas is propagate for the replicas only: PUBLISH reaches the
// replicas' subscribers, as Redis's forceCommandPropagation(PROPAGATE_REPL),
// and never the AOF. Runs on the executor.
func (s *Server) propagateToReplicas(db *DB, args [][]byte) {
	if len(s.replHooks) > 0 {
		s.collect(propOp{db: db, args: args, replOnly: true})
	}
}

// propagateToReplicas sends the running command as it is to the replicas only
// (PUBLISH, SPUBLISH: the replicas' subscribers get the message; the AOF
// does not keep it). Free without replicas.
func (x *Ctx) propagateToReplicas() {
	if len(x.s.replHooks) == 0 {
		return
	}
	if x.s.par.on { // --workers mode: propagation under the lock (workers.go)
		x.s.par.mu.Lock()
		defer x.s.par.mu.Unlock()
	}
	x.s.propagateToReplicas(x.db, x.args)
}

func (s *Server) collect(op propOp) {
	if s.unit.depth > 0 {
		// the outer slice may be reused by the caller (a script's argument
		// vector); the arguments themselves are not changed after a command ran
		op.args = append([][]byte(nil), op.args...)
		s.unit.ops = append(s.unit.ops, op)
		return
	}
	s.propagateNow(op)
}

// propagateNow hands one write to its listeners.
func (s *Server) propagateNow(op propOp) {
	hooks := s.hooks
	if op.replOnly {
		hooks = s.replHooks
	}
	for _, h := range hooks {
		h(op.db, op.args)
	}
}

// propagateExpired records the deletion of an expired key as a DEL.
func (s *Server) propagateExpired(db *DB, key string) {
	if len(s.hooks) > 0 {
		s.propagate(db, [][]byte{[]byte("DEL"), []byte(key)})
	}
}

// beginUnit opens an execution unit, or nests in the open one; it reports
// whether this call opened it (and must end it). Runs on the executor.
func (s *Server) beginUnit() bool {
	s.unit.depth++
	return s.unit.depth == 1
}

// endUnit leaves the unit; the call that opened it hands its writes over.
// Runs on the executor.
func (s *Server) endUnit(opened bool, cmd *command) {
	s.unit.depth--
	if !opened {
		return
	}
	ops := s.unit.ops
	if len(ops) == 0 {
		return
	}
	s.unit.ops = s.unit.ops[:0]
	defer clear(ops)
	if s.stopping.Load() {
		return
	}
	wrap := len(ops) > 1 && cmd.flags&flagTouchesArbitraryKeys == 0
	if wrap {
		s.wrapPropagation(true)
	}
	for _, op := range ops {
		s.propagateNow(op)
	}
	if wrap {
		s.wrapPropagation(false)
	}
}

// wrapPropagation tells the listeners that what follows (until false) is one
// atomic unit: they write it as MULTI ... EXEC.
func (s *Server) wrapPropagation(begin bool) {
	for _, h := range s.wrapHooks {
		h(begin)
	}
}
