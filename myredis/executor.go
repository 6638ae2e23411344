package myredis

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/redcon"
)

// The executor is the one goroutine that owns every byte of data. Connection
// goroutines parse RESP and hand over whole pipelined batches as jobs; the executor
// runs each batch start to finish, so every command, every MULTI/EXEC and every
// script is atomic.

// job is one unit of executor work: a client's batch, or a server task.
type job struct {
	c   *Client
	seq uint64 // the batch's number: the executor runs it only if c.claim still holds it
	fn  func() // a server task (active expiry, timeouts, AOF) when c is nil
	ts  int64  // when the kernel received the batch (unix ns; 0: unknown), see order.go
}

// runExecutor runs jobs until the jobs channel closes. This is the executor goroutine.
func (s *Server) runExecutor() {
	defer close(s.executorDone)
	for {
		j, ok := s.nextJob() // order.go
		if !ok {
			return
		}
		s.startTiming() // introspect.go
		if j.fn != nil {
			j.fn()
			if s.tracking.clients > 0 { // tracking.go, as Redis's serverCron and beforeSleep
				s.trackingLimit()
				s.trackingBroadcast() // keys expired by a server task
			}
			s.release(nil)
			continue
		}
		if !j.c.claim.CompareAndSwap(j.seq, 0) {
			continue // its connection answered it BUSY while it waited behind a script
		}
		if s.stopping.Load() { // shutting down: the batch is not run, the client is closed
			j.c.out.Reset()
			j.c.closing = true
			j.c.done <- struct{}{}
			continue
		}
		s.runBatch(j.c)
		if len(s.tracking.prefixes) > 0 {
			s.trackingBroadcast() // BCAST invalidations, after the batch (tracking.go)
		}
		s.release(j.c.done)
	}
}

// release sends a finished job's signal (nil for a server task). With an AOF the
// signal may be held until the job's writes are in the file (fsynced, under
// appendfsync always): the reply is not sent before its write is durable.
func (s *Server) release(signal chan struct{}) {
	if s.holdReply != nil && s.holdReply(signal) {
		return
	}
	if signal != nil {
		signal <- struct{}{}
	}
}

// submit hands a task to the executor and waits until it has run.
func (s *Server) submit(fn func()) {
	done := make(chan struct{})
	s.jobs <- job{fn: func() { fn(); close(done) }}
	<-done
}

// runBatch executes the client's pending commands, appending replies to c.out.
// It stops early when a command blocks; the rest wait in c.pending.
func (s *Server) runBatch(c *Client) {
	// the access time of every key this batch reads (OBJECT IDLETIME; introspect.go)
	s.lruClock.Store(s.batchStartMs())
	if !s.par.on { // workers run batches side by side (workers.go)
		s.runningClient = c
	}
	if c.busyExecAbort.Swap(false) { // its EXEC was answered EXECABORT (BUSY)
		s.discard(c)
		s.unwatchAll(c)
	}
	if c.busyMulti.Swap(false) && c.multi == nil { // its MULTI was answered OK while busy
		c.multi = &multiState{}
		c.inMulti.Store(true)
	}
	if c.busyRejected.Swap(false) && c.multi != nil {
		c.multi.failed = true // commands of the transaction were answered BUSY
	}
	for i, cmd := range c.cmds {
		c.argvMem, c.argc = argvBytes(cmd.Args), int64(len(cmd.Args)) // CLIENT LIST's argv-mem
		mark := c.out.Len()
		s.call(c, cmd.Args, &c.out)
		if c.replyOff || c.replySkip || c.replySkipNext {
			s.muteReply(c, mark)
		}
		if s.tracking.pending != nil { // after the reply, never muted (tracking.go)
			s.trackingFlushPending(c)
		}
		if c.blocked != nil {
			next := i + 1
			if c.blocked.postponed { // the command itself runs when the pause ends (pause.go)
				next = i
			}
			c.pending = append(c.pending[:0], c.cmds[next:]...)
			break
		}
		if c.closing {
			break
		}
	}
	batchRan(c)
	c.cmds = c.cmds[:0]
	if !s.par.on { // workers run batches side by side (workers.go)
		s.runningClient = nil
	}
	if c.ps != nil { // replies follow the messages queued before them (pubsub.go)
		s.flushToOutbox(c)
	}
	c.batchBlocked = c.blocked != nil
	if c.batchBlocked {
		c.batchDeadline = c.blocked.deadline
	}
	c.lastActive.Store(s.lruClock.Load()) // the batch's clock reading (runBatch's start)
	c.replyMem = int64(cap(c.out.Bytes()) + cap(c.blockOut.Bytes()))
	c.replyPeak = max(c.replyPeak, int64(c.out.Len()))
	if s.cfg.MaxMemoryClients != 0 {
		s.clientMemAfterBatch(c) // client_evict.go: measures replyMem, so after it
	}
	if c.guard != nil {
		c.guard.authed.Store(c.authed) // the guard limits requests until AUTH
	}
}

// muteReply applies CLIENT REPLY OFF and SKIP to the reply written from mark on.
func (s *Server) muteReply(c *Client, mark int) {
	switch {
	case c.replyOff || c.replySkip:
		if !c.pushing { // pub/sub confirmations are pushes: never muted (pubsub.go)
			c.out.Truncate(mark)
		}
		c.replySkip, c.pushing = false, false
	}
	if c.replySkipNext && !c.replyOff {
		// the SKIP command itself has no reply; the next one is dropped
		c.replySkipNext, c.replySkip = false, true
	}
}

// Ctx is what a command handler sees. It runs on the executor goroutine.
type Ctx struct {
	s        *Server
	c        *Client
	db       *DB
	cmd      *command
	args     [][]byte
	w        *Writer
	inMulti  bool // inside EXEC
	inScript bool // inside EVAL
	// noErrorStats: the error this command replies was counted in errorstats
	// already (a script's failed redis.call); it counts only as a failed call.
	noErrorStats bool
	// rewrite, when set, is what the AOF records instead of args.
	rewrite [][]byte
	changed int // workers mode only: this command's dirty count (workers.go)
	// readyKey is set when the command is a blocked one being served: the key
	// whose change woke it, the one it takes from (as Redis serves key by key).
	readyKey string
	// redacted are the arguments the slow log and MONITOR hide (introspect.go)
	redacted []int
	// migrated, set when a MIGRATE's transfer is over, is its outcome: the
	// command runs again to finish (cmd_migrate.go)
	migrated *migrateJob
}

// call runs one command for c: lookup, arity, auth, MULTI queueing, then the
// handler, then propagation of writes.
func (s *Server) call(c *Client, args [][]byte, w *Writer) {
	if len(args) == 0 {
		return
	}
	cmd := c.lookedUpCmd
	if cmd == nil || !bytes.Equal(args[0], c.lookedUp) { // the table never changes once built
		cmd = s.table.lookup(args[0])
		if cmd != nil && len(args[0]) <= 32 {
			c.lookedUp, c.lookedUpCmd = append(c.lookedUp[:0], args[0]...), cmd
		}
	}
	if cmd == nil {
		s.rejectInMulti(c)
		msg := errUnknownCommand(args)
		s.countErrorText(msg)
		w.Error(msg)
		return
	}
	if cmd.subs != nil && len(args) >= 2 {
		sub := cmd.subcommand(args[1])
		if sub == nil {
			s.rejectInMulti(c) // no command to count it against, as Redis
			msg := errUnknownSubcommand(args)
			s.countErrorText(msg)
			w.Error(msg)
			return
		}
		cmd = sub
	}
	if !cmd.arityOK(len(args)) {
		s.reject(c, cmd, w, errArity(cmd.name))
		return
	}
	if cmd.flags&(flagProtect|flagProtectModule) != 0 {
		if msg := s.protectedRefusal(c, cmd); msg != "" { // introspect_config.go
			s.reject(c, cmd, w, msg)
			return
		}
	}
	if c.needsAuth() && cmd.flags&flagNoAuth == 0 {
		s.reject(c, cmd, w, msgNoAuth)
		return
	}
	if !c.user.unrestricted && !s.aclCheckCall(c, cmd, args, w) { // acl_check.go
		return
	}
	if s.evictsCaller(c, args) { // client_evict.go: evicted by maxmemory-clients, no reply
		return
	}
	if s.cfg.MaxMemory > 0 && c != s.repl.mc && s.maxmemoryRefuses(c, cmd) { // maxmemory.go
		s.reject(c, cmd, w, msgOOM)
		return
	}
	if s.tracking.clients > 0 { // after evicting, before MULTI queues it, as Redis
		s.trackingLimit() // tracking.go
	}
	if msg := s.replicationRefusal(c, cmd); msg != "" { // replication_guard.go
		s.reject(c, cmd, w, msg)
		return
	}
	if cmd.flags&flagWrite != 0 && s.isReplica() && !s.cfg.Repl.ReadWrite && c != s.repl.mc {
		s.reject(c, cmd, w, msgReadOnlyReplica) // replication_replica.go
		return
	}
	if c.ps != nil && c.pubsubOnly() && !allowedWhileSubscribed[cmd.name] {
		s.reject(c, cmd, w, fmt.Sprintf(msgPubSubContext, cmd.name))
		return
	}
	if s.pause.kind != pauseOff && s.pausesCall(c, cmd, args) { // pause.go
		s.postpone(c)
		return
	}
	if len(s.migratingDBs) > 0 && s.migrationHolds(c, cmd, args) { // cmd_migrate.go
		s.postpone(c)
		return
	}
	if c.multi != nil && cmd.flags&(flagNoMulti|flagTx) == flagNoMulti {
		s.reject(c, cmd, w, msgNotAllowedMulti)
		return
	}
	if c.multi != nil && cmd.flags&flagTx == 0 {
		c.multi.queue(cmd, args)
		w.Simple("QUEUED")
		return
	}
	c.lastCmd = cmd.name
	x := &c.x
	*x = Ctx{s: s, c: c, db: c.db, cmd: cmd, args: args, w: w}
	s.exec(x)
	if c.tracking != nil {
		s.trackingAfterCommand(c, cmd.name)
	}
}

// exec runs a resolved command and propagates it if it changed data.
func (s *Server) exec(x *Ctx) {
	if s.par.on { // --workers N > 1: see workers.go
		s.execWorker(x)
		return
	}
	if s.beforeWrite != nil && x.cmd.flags&flagWrite != 0 {
		s.beforeWrite(x)
	}
	executing := s.tracking.executing // a command inside EXEC or a script: already set
	s.tracking.executing = true       // the running client's invalidations follow its reply (tracking.go)
	opened := s.beginUnit()           // propagate.go
	before := s.dirty
	mark := x.w.Len()
	if x.cmd.intro&introMonitorFirst != 0 && len(s.intro.monitors) > 0 {
		s.feedMonitors(x) // a script shows before the commands it runs (monitor.go)
	}
	start, timed := s.startCommand(x.cmd) // introspect.go
	if s.pause.kind != pauseOff {         // pause.go
		s.runPaused(x)
	} else {
		x.cmd.fn(x)
	}
	if len(s.remeasure) > 0 { // values changed in place (memory.go)
		s.remeasureNow()
	}
	ns := int64(-1) // not timed
	if timed {
		ns = s.endTiming(start) // one clock read per command
	}
	if s.tracking.clients > 0 && x.cmd.flags&flagReadonly != 0 {
		s.trackingRemember(x) // tracking.go
	}
	s.stats.commands++ // as Redis: executed commands only, counted after they ran
	// commandstats (stats.go); a command that blocked counts when it is served
	if x.c.blocked == nil || x.inMulti || x.inScript {
		out := x.w.Bytes()
		if len(out) > mark && out[mark] == '-' {
			s.countCall(x.cmd, ns, out[mark:], !x.noErrorStats)
		} else {
			x.cmd.stats.record(ns) // the common case
		}
	}
	if ns >= s.intro.slowNs || len(s.intro.monitors) > 0 {
		s.observe(x, ns) // slow log, latency monitor, MONITOR (introspect.go)
	}
	s.tracking.executing = executing
	if s.dirty != before && x.cmd.flags&flagWrite != 0 {
		args := x.args
		if x.rewrite != nil {
			args = x.rewrite // empty: the command propagated what it did itself
		}
		if len(args) > 0 {
			s.propagate(x.db, args)
		}
	}
	s.endUnit(opened, x.cmd)
	if len(s.ready) > 0 && !x.inScript && !x.inMulti && x.readyKey == "" {
		s.serveBlocked() // (a served command's own pushes are served by the loop there)
	}
}

// reject answers a command refused before running (arity, NOAUTH) as Redis's
// rejectCommand does: it fails an open MULTI, and a refused EXEC also discards
// the transaction and says why in an EXECABORT.
func (s *Server) reject(c *Client, cmd *command, w *Writer, msg string) {
	s.rejectInMulti(c)
	if cmd.name == "exec" {
		s.discard(c)
		s.unwatchAll(c)
		msg = msgExecAbortBecause + strings.TrimPrefix(msg, "ERR ")
	}
	s.countRejected(cmd, msg)
	w.Error(msg)
}

// rejectInMulti flags a queueing error so EXEC answers EXECABORT.
func (s *Server) rejectInMulti(c *Client) {
	if c.multi != nil {
		c.multi.failed = true
	}
}

// --- helpers for command handlers ---

func (x *Ctx) arg(i int) string { return string(x.args[i]) }
func (x *Ctx) nargs() int       { return len(x.args) }
func (x *Ctx) ok()              { x.w.OK() }
func (x *Ctx) err(msg string)   { x.w.Error(msg) }
func (x *Ctx) wrongType()       { x.w.Error(msgWrongType) }
func (x *Ctx) nowMs() int64     { return x.s.nowMs() }
func (x *Ctx) dirty(n int)      { x.changed += n; x.s.bump(&x.s.dirty, int64(n)) }
func (x *Ctx) argIs(i int, opt string) bool {
	return strings.EqualFold(string(x.args[i]), opt)
}

// argInt parses argument i as a 64-bit integer, writing Redis's error if it is not.
func (x *Ctx) argInt(i int) (int64, bool) {
	n, err := strconv.ParseInt(string(x.args[i]), 10, 64)
	if err != nil || !validIntText(x.args[i]) {
		x.err(msgNotInt)
		return 0, false
	}
	return n, true
}

// parseRedisInt parses b as Redis's string2ll: a 64-bit decimal integer with no
// '+', no leading zeros, no spaces and no "-0".
//
// Text that is not digits is turned down before strconv sees it: its error value
// is an allocation, and a write measures every stored string this way (stringMem),
// so each SET of a non-numeric value left 64 bytes of garbage among the keys.
func parseRedisInt(b []byte) (int64, bool) {
	if !validIntText(b) || !allDigits(b) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// allDigits reports whether b is an optional '-' and ASCII digits only.
func allDigits(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validIntText rejects what strconv accepts but Redis does not ("+1", "01", "-0").
func validIntText(b []byte) bool {
	if len(b) == 0 || len(b) > 20 {
		return false
	}
	if b[0] == '+' {
		return false
	}
	digits := b
	if b[0] == '-' {
		digits = b[1:]
		if len(digits) == 1 && digits[0] == '0' {
			return false
		}
	}
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	return true
}

// canBlock reports whether a blocking command may actually block here: not inside
// MULTI or a script, where Redis answers at once as if the timeout had passed.
// Workers mode never blocks (workers.go).
func (x *Ctx) canBlock() bool { return !x.inMulti && !x.inScript && x.c.conn != nil && !x.s.par.on }

// block parks the client until one of keys is touched or timeout passes (0 =
// forever). The command will be run again from the start when a key is ready.
func (x *Ctx) block(keys []string, timeout time.Duration) {
	x.s.block(x.c, x.db, keys, x.args, timeout)
}

// --- blocking commands ---

// blockState records what a blocked client waits for.
type blockState struct {
	db       *DB
	keys     []string
	args     [][]byte
	deadline time.Time // zero: forever
	// onTimeout, when set, writes the reply at the deadline (WAIT's count)
	// instead of a null array
	onTimeout func(w *Writer)
	// postponed: stopped by CLIENT PAUSE before its command ran (pause.go); no
	// keys, no deadline, and nothing is answered when it is released
	postponed bool
	// migrating: a MIGRATE waiting for its target (cmd_migrate.go); CLIENT
	// UNBLOCK cannot end it
	migrating bool
}

type dbKey struct {
	db  *DB
	key string
}

func (s *Server) block(c *Client, db *DB, keys []string, args [][]byte, timeout time.Duration) {
	bs := &blockState{db: db, keys: keys, args: args}
	if timeout > 0 {
		bs.deadline = s.clock.Now().Add(timeout)
	}
	c.blocked = bs
	for _, k := range keys {
		dk := dbKey{db, k}
		s.blocking[dk] = append(s.blocking[dk], c)
	}
}

// signalReady notes that key changed while clients block on it.
func (s *Server) signalReady(db *DB, key string) {
	dk := dbKey{db, key}
	if _, ok := s.blocking[dk]; ok {
		s.ready = append(s.ready, dk)
	}
}

// serveBlocked re-runs the commands of clients blocked on ready keys, key by key
// in the order they became ready, oldest client first. A command whose serves
// check refuses the key (a list command on an empty list or a string) is not run
// and keeps its place.
func (s *Server) serveBlocked() {
	for len(s.ready) > 0 {
		dk := s.ready[0]
		s.ready = s.ready[1:]
		for _, c := range append([]*Client(nil), s.blocking[dk]...) {
			if c.blocked == nil {
				continue
			}
			bs := c.blocked
			cmd := s.table.lookup(bs.args[0])
			if cmd.serves != nil && !cmd.serves(dk.db, dk.key) {
				continue
			}
			if cmd.servesArgs != nil && !cmd.servesArgs(dk.db, dk.key, bs.args) {
				continue
			}
			s.unblock(c)
			c.blockOut.Reset()
			x := &c.x
			*x = Ctx{s: s, c: c, db: bs.db, cmd: cmd, args: bs.args, w: &c.blockOut, readyKey: dk.key}
			s.tracking.serving = c // its own invalidations follow its reply (tracking.go)
			s.exec(x)
			s.tracking.serving = nil
			if s.tracking.served != nil {
				s.trackingFlushServed(c)
			}
			if c.blocked != nil { // still nothing to take: keep waiting, same deadline
				c.blocked.deadline = bs.deadline
				continue
			}
			c.lastActive.Store(s.clock.Now().UnixMilli()) // for timeout: it is answered now
			s.release(c.wake)
		}
	}
}

// unblock removes c from every wait list.
func (s *Server) unblock(c *Client) {
	bs := c.blocked
	if bs == nil {
		return
	}
	c.blocked = nil
	c.argvMem, c.argc = 0, 0 // the command is done: its arguments go (CLIENT LIST's argv-mem)
	if bs.postponed {
		s.dropPostponed(c) // pause.go
	}
	for _, k := range bs.keys {
		dk := dbKey{bs.db, k}
		list := s.blocking[dk]
		for i, o := range list {
			if o == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.blocking, dk)
		} else {
			s.blocking[dk] = list
		}
	}
}

// timeoutBlocked answers a still-blocked client with a null array. Runs on the executor.
func (s *Server) timeoutBlocked(c *Client) {
	if c.blocked == nil {
		return // served meanwhile; its wake is already sent
	}
	bs := c.blocked
	s.unblock(c)
	c.blockOut.Reset()
	if bs.postponed { // its command runs again instead (pause.go)
		s.release(c.wake)
		return
	}
	if cmd := s.table.lookup(bs.args[0]); cmd != nil {
		s.countCall(cmd, 0, nil, false) // as Redis: a timed-out call counts (its run time was counted as none)
	}
	if bs.onTimeout != nil {
		bs.onTimeout(&c.blockOut)
	} else {
		c.blockOut.NullArray()
	}
	c.lastActive.Store(s.clock.Now().UnixMilli())
	s.release(c.wake)
}

// dropBlocked takes a blocked client whose socket is gone off every wait list,
// so nothing is served to it. Runs on the executor.
func (s *Server) dropBlocked(c *Client) {
	if c.blocked == nil {
		return // served before the close was seen; its wake is already sent
	}
	s.unblock(c)
	c.blockOut.Reset()
	s.release(c.wake)
}

// waitBlocked runs on the connection goroutine while c is blocked: it waits for
// the wake-up, the deadline or the peer's close (blockwatch.go), then writes the
// served reply. It returns false when the connection must be closed.
func (s *Server) waitBlocked(c *Client, conn redcon.Conn, deadline time.Time) bool {
	var timer <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timer = t.C
	}
	var gone <-chan struct{}
	if c.guard != nil {
		w := c.guard.watchEOF()
		defer w.stop()
		gone = w.gone
	}
	select {
	case <-c.wake:
	case <-timer:
		if !s.toExecutor(func() { s.timeoutBlocked(c) }) {
			return false
		}
		<-c.wake
	case <-gone:
		if s.toExecutor(func() { s.dropBlocked(c) }) {
			<-c.wake
		}
		return false
	case <-s.quit:
		return false
	}
	if len(c.pending) == 0 { // the handler returns after this reply (order.go)
		orderOf(c).returning()
	}
	if !c.pushReply(c.blockOut.Bytes()) {
		writeReplyNow(conn, &c.blockOut, true) // the rest of the batch may wait again
	}
	return true
}

// toExecutor queues a server task; false if the server stopped first.
func (s *Server) toExecutor(fn func()) bool {
	select {
	case s.jobs <- job{fn: fn}:
		return true
	case <-s.quit:
		return false
	}
}

// propagateAs sets what the AOF records for this command instead of its arguments
// (absolute deadlines, the effect rather than the request). Free without an AOF.
func (x *Ctx) propagateAs(args ...string) {
	if len(x.s.hooks) == 0 {
		return
	}
	x.rewrite = bargs(args...)
}

// batchRan notes, after a batch, what CLIENT LIST shows of it: the query buffer
// no longer holds the requests that ran (Redis cuts them off; those a blocked
// command holds back stay), and the arguments are freed unless the command
// blocked, as Redis keeps a blocked client's argv. Runs on the executor.
func batchRan(c *Client) {
	blocked := c.blocked != nil
	if !blocked {
		c.argvMem, c.argc = 0, 0
	}
	if c.qb == nil {
		return
	}
	var ran int
	for _, cmd := range c.cmds {
		ran += len(cmd.Raw)
	}
	if blocked {
		for _, cmd := range c.pending {
			ran -= len(cmd.Raw)
		}
	}
	c.qb.ran.Add(int64(ran))
}

// argvBytes is the arguments' length (Redis's argv_len_sum).
func argvBytes(args [][]byte) int64 {
	var n int64
	for _, a := range args {
		n += int64(len(a))
	}
	return n
}
