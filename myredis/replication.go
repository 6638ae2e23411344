package myredis

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// Replication, the master side, as Redis 7.0's protocol:
//
//	replica                                  master
//	PING, [AUTH], REPLCONF listening-port,   +PONG, +OK ...
//	REPLCONF capa eof capa psync2
//	PSYNC <replid> <offset>                  +CONTINUE <replid>, then the backlog from offset
//	                                         or +FULLRESYNC <replid> <offset>, an RDB, then the stream
//	SYNC                                     an RDB ($<len>), then the stream (the suite's
//	                                         attach_to_replication_stream)
//	REPLCONF ACK <offset> every second       (no reply)
//
// The stream is one for every replica: each write the AOF records (the one
// propagation point, Server.propagate, with the same rewrites: absolute
// deadlines, effects of scripts, a command's several writes wrapped in
// MULTI/EXEC, SELECT when the database changes; and PUBLISH, which the AOF
// does not keep) is encoded once and appended to the
// backlog (repl-backlog-size bytes of history, for PSYNC continuations) and to
// every replica's outbox. The offset counts the stream's bytes since the
// replication ID was made.
//
// Who does what:
//
//	executor      encodes the stream, handles SYNC/PSYNC/REPLCONF/WAIT/ROLE, ACKs
//	replica outbox one goroutine per replica (outbox.go) writes its stream; while
//	              the replica gets its RDB the outbox's writes wait at a gate, so
//	              the stream since the snapshot piles up there (its size counted
//	              against client-output-buffer-limit replica)
//	snapshot      the BGSAVE machinery (rdb_bgsave.go): a diskless sync streams
//	              the RDB to the replicas' sockets ($EOF:<mark> form), a disk sync
//	              writes dbfilename and sends the file ($<len> form)
//	ACK reader    one goroutine per replica reads its REPLCONF ACKs
//
// The executor never writes to a replica's socket.

// replication is the server's replication state. Executor-owned.
type replication struct {
	offset    int64  // master_repl_offset: the stream's length
	replID2   string // the previous replication ID, "" for none
	secondOff int64  // second_repl_offset: replID2 is valid up to this offset
	backlog   *backlog
	enc       streamEncoder
	hooked    bool       // replFeed and replWrap are propagation hooks
	replicas  []*replica // attached: getting their RDB or online
	waiting   []*replica // diskless full syncs not started yet
	diskWait  []*replica // disk full syncs not started yet
	diskGroup []*replica // replicas served by the running disk BGSAVE
	syncSoon  bool       // a diskless sync starts after repl-diskless-sync-delay
	waiters   []waitState
	lastPing  time.Time
	cronOn    bool

	syncFull, syncPartialOK, syncPartialErr int64

	failover failoverState // a running FAILOVER (failover.go)

	// the replica side (replication_replica.go)
	link     *masterLink
	mc       *Client // runs the master's stream
	applying bool    // the master's commands run now: their stream is proxied as is
	ackOff   atomic.Int64
	// repl-id and repl-offset of the RDB loaded at start-up
	loadedID  string
	loadedOff int64
}

// replica is one connected replica, seen from its master.
type replica struct {
	c          *Client
	nc         net.Conn
	out        *outbox
	gate       *replGate
	attached   bool // SYNC or PSYNC made c a replica (handle then detaches it)
	state      string
	listenPort int
	ip         string
	capaEOF    bool
	capaPSYNC2 bool
	oldSync    bool   // SYNC: no +FULLRESYNC line, no ACKs
	prefix     []byte // what is written before the RDB
	ackOff     int64
	ackTime    time.Time
	dropped    bool
}

const (
	replStateWaitBgsave = "wait_bgsave"
	replStateSendBulk   = "send_bulk"
	replStateOnline     = "online"
)

// replGate holds an outbox's writes until the RDB has been sent.
type replGate struct {
	net.Conn
	open, dead chan struct{}
	openOnce   sync.Once
	deadOnce   sync.Once
}

func (g *replGate) Write(b []byte) (int, error) {
	select {
	case <-g.open:
	case <-g.dead:
		return 0, net.ErrClosed
	}
	return g.Conn.Write(b)
}

func (g *replGate) release() { g.openOnce.Do(func() { close(g.open) }) }
func (g *replGate) kill()    { g.deadOnce.Do(func() { close(g.dead) }) }

// streamEncoder turns propagated writes into the replication stream, as the
// AOF encodes them (aof.go's feed and wrap).
type streamEncoder struct {
	buf       []byte
	selected  int // -1: SELECT before the next command
	wrapDepth int
	wrapOpen  bool
}

func (e *streamEncoder) selectDB(id int) {
	if id != e.selected {
		e.buf = appendCommand(e.buf, [][]byte{[]byte("SELECT"), strconv.AppendInt(nil, int64(id), 10)})
		e.selected = id
	}
}

// commandsReplication registers the replication commands.
func commandsReplication() []*command {
	return []*command{
		{name: "sync", arity: 1, flags: flagAdmin | flagNoScript | flagNoMulti, fn: cmdSync},
		{name: "psync", arity: -3, flags: flagAdmin | flagNoScript | flagNoMulti, fn: cmdSync},
		{name: "replconf", arity: -1, flags: flagAdmin | flagNoScript, fn: cmdReplconf},
		{name: "replicaof", arity: 3, flags: flagAdmin | flagNoScript, fn: cmdReplicaof},
		{name: "slaveof", arity: 3, flags: flagAdmin | flagNoScript, fn: cmdReplicaof},
		{name: "role", arity: 1, flags: flagNoScript, fn: cmdRole},
		{name: "wait", arity: 3, flags: flagNoScript, fn: cmdWait},
		{name: "failover", arity: -1, flags: flagAdmin | flagNoScript, fn: cmdFailover}, // failover.go
	}
}

func init() { commandGroups = append(commandGroups, commandsReplication) }

// isReplica reports whether the server replicates a master. Runs on the executor.
func (s *Server) isReplica() bool { return s.cfg.Repl.MasterHost != "" }

// --- the stream ---

// replFeed appends one propagated write to the stream. Runs on the executor.
func (s *Server) replFeed(db *DB, args [][]byte) {
	rs := &s.repl
	if rs.applying || rs.backlog == nil || s.isReplica() {
		// a replica passes its master's stream on as it came (replProxy), and
		// nothing else: not the writes of its own clients (replica-read-only no)
		return
	}
	e := &rs.enc
	if e.wrapDepth > 0 && !e.wrapOpen {
		e.selectDB(db.id)
		e.buf = appendCommand(e.buf, multiArgs)
		e.wrapOpen = true
	}
	e.selectDB(db.id)
	e.buf = appendCommand(e.buf, args)
	if e.wrapDepth == 0 {
		s.replCommit()
	}
}

// replWrap brackets a unit of several writes with MULTI/EXEC in the stream.
func (s *Server) replWrap(begin bool) {
	e := &s.repl.enc
	if begin {
		e.wrapDepth++
		return
	}
	e.wrapDepth--
	if e.wrapDepth == 0 && e.wrapOpen {
		e.wrapOpen = false
		if s.repl.applying || s.repl.backlog == nil {
			e.buf = e.buf[:0]
			return
		}
		e.buf = appendCommand(e.buf, execArgs)
		s.replCommit()
	}
}

// replFeedRaw appends a command outside any database (PING, REPLCONF GETACK).
func (s *Server) replFeedRaw(args ...string) {
	if s.repl.backlog == nil || s.repl.enc.wrapDepth > 0 {
		return
	}
	s.repl.enc.buf = appendCommand(s.repl.enc.buf, bargs(args...))
	s.replCommit()
}

// replCommit moves the encoded bytes to the backlog and the replicas.
func (s *Server) replCommit() {
	rs := &s.repl
	s.replAppend(rs.enc.buf)
	rs.enc.buf = rs.enc.buf[:0]
}

// replAppend adds b to the stream. Runs on the executor.
func (s *Server) replAppend(b []byte) {
	rs := &s.repl
	if len(b) == 0 || rs.backlog == nil {
		return
	}
	rs.backlog.append(b)
	rs.offset += int64(len(b))
	rs.ackOff.Store(rs.offset)
	lim, now := s.cfg.ObufLimits[obufReplica], s.clock.Now()
	for _, r := range rs.replicas {
		if !r.out.push(b, lim, now) {
			s.log.Warn("client closed for overcoming of output buffer limits", "id", r.c.id, "class", "replica")
		}
	}
}

// ensureBacklog creates the backlog with the first replica, and installs the
// propagation hooks. Runs on the executor.
func (s *Server) ensureBacklog() {
	rs := &s.repl
	if rs.backlog == nil {
		if !s.isReplica() {
			// a new history: a new ID, no previous one
			s.replID, rs.replID2, rs.secondOff = randomHex(40), "", 0
		}
		rs.backlog = newBacklog(s.cfg.Repl.backlogSize(), rs.offset+1)
		s.setBacklogMem(rs.backlog) // memory_parts.go
		rs.enc.selected = -1
		s.log.Info("replication backlog created", "replid", s.replID)
	}
	if !rs.hooked {
		rs.hooked = true
		s.hooks = append(s.hooks, s.replFeed)
		s.replHooks = append(s.replHooks, s.replFeed)
		s.wrapHooks = append(s.wrapHooks, s.replWrap)
		s.configHooks = append(s.configHooks, s.replConfigChanged)
	}
	s.startReplCron()
}

// replConfigChanged resizes the backlog on CONFIG SET repl-backlog-size.
func (s *Server) replConfigChanged(old, next Config) {
	if b := s.repl.backlog; b != nil && next.Repl.backlogSize() != old.Repl.backlogSize() {
		s.repl.backlog = b.resized(next.Repl.backlogSize())
		s.setBacklogMem(s.repl.backlog)
	}
}

// --- SYNC, PSYNC, REPLCONF ---

// replicaOf returns c's replica record, made by its first REPLCONF.
// plainOutput counts the n bytes of replies written to r before SYNC as client
// output (Redis wrote them while the client was not a replica yet).
func (r *replica) plainOutput(n int) {
	if gc, ok := r.nc.(*guardConn); ok {
		gc.plainOut.Add(int64(n))
	}
}

// syncLineOutput leaves the n bytes of the +FULLRESYNC or +CONTINUE line out of
// the byte counts: Redis writes it straight to the socket, past its counters.
func (r *replica) syncLineOutput(n int) {
	if gc, ok := r.nc.(*guardConn); ok {
		gc.skipOut.Add(int64(n))
	}
}

func (c *Client) replicaOf() *replica {
	if c.replica == nil {
		c.replica = &replica{c: c}
	}
	return c.replica
}

func cmdReplconf(x *Ctx) {
	if x.nargs()%2 == 0 {
		x.err(msgSyntax)
		return
	}
	for i := 1; i < x.nargs(); i += 2 {
		val := x.args[i+1]
		switch strings.ToLower(x.arg(i)) {
		case "listening-port":
			n, ok := x.argInt(i + 1)
			if !ok {
				return
			}
			x.c.replicaOf().listenPort = int(n)
		case "ip-address":
			x.c.replicaOf().ip = string(val)
		case "capa":
			switch {
			case eqFold(val, "eof"):
				x.c.replicaOf().capaEOF = true
			case eqFold(val, "psync2"):
				x.c.replicaOf().capaPSYNC2 = true
			}
		case "ack":
			return // read by the replica's ACK reader, never answered
		case "getack":
			if x.c == x.s.repl.mc {
				x.s.repl.link.ackWanted.Store(true) // replication_replica.go answers it
			}
			return
		case "rdb-only", "rdb-filter-only":
		default:
			x.w.Errorf("ERR Unrecognized REPLCONF option: %s", x.arg(i))
			return
		}
	}
	x.ok()
}

// cmdSync is SYNC and PSYNC replid offset.
func cmdSync(x *Ctx) {
	s, c := x.s, x.c
	if c.replica != nil && c.replica.attached {
		return
	}
	if x.cmd.name == "psync" && x.nargs() > 3 && x.argIs(3, "failover") && !x.psyncFailover() { // failover.go
		return
	}
	if s.repl.failover.state != failoverNone {
		x.err(msgSyncFailingOver)
		return
	}
	if s.isReplica() && !s.masterLinkUp() {
		x.err(msgSyncNoMasterLink)
		return
	}
	if c.conn == nil || c.conn.NetConn() == nil {
		x.err("ERR SYNC needs a connection")
		return
	}
	psync := x.cmd.name == "psync"
	var off int64
	if psync {
		var ok bool
		if off, ok = x.argInt(2); !ok {
			return
		}
	}
	r := c.replicaOf()
	r.attached, r.oldSync = true, !psync
	r.nc = c.conn.NetConn()
	if gc, ok := r.nc.(*guardConn); ok {
		gc.repl.Store(true) // from now on its socket carries replication (total_net_repl_output_bytes)
	}
	r.gate = &replGate{Conn: r.nc, open: make(chan struct{}), dead: make(chan struct{})}
	r.out = newOutbox(r.gate)
	r.prefix = append(r.prefix, x.w.Bytes()...) // replies before it in the batch
	r.plainOutput(len(r.prefix))
	x.w.Reset()
	s.log.Info("replica asks for synchronization", "addr", c.addr)
	s.ensureBacklog()
	if psync {
		if s.tryPartialSync(r, x.arg(1), off) {
			s.repl.syncPartialOK++
			return
		}
		if x.arg(1) != "?" {
			s.repl.syncPartialErr++
		}
	}
	s.repl.syncFull++
	s.queueFullSync(r)
}

// tryPartialSync answers +CONTINUE and sends the backlog from off when the
// history the replica asks for is here. Runs on the executor.
func (s *Server) tryPartialSync(r *replica, replID string, off int64) bool {
	rs := &s.repl
	if !strings.EqualFold(replID, s.replID) &&
		(rs.replID2 == "" || !strings.EqualFold(replID, rs.replID2) || off > rs.secondOff) {
		return false
	}
	b := rs.backlog
	if b == nil || off < b.start || off > b.start+b.histlen {
		s.log.Info("unable to partial resync for lack of backlog", "offset", off)
		return false
	}
	msg := "+CONTINUE\r\n"
	if r.capaPSYNC2 {
		msg = "+CONTINUE " + s.replID + "\r\n"
	}
	r.syncLineOutput(len(msg))
	out := append(append(r.prefix, msg...), b.since(off)...)
	r.prefix = nil
	r.state, r.ackTime = replStateOnline, s.clock.Now()
	r.gate.release()
	r.out.push(out, obufLimit{}, s.clock.Now())
	rs.replicas = append(rs.replicas, r)
	s.log.Info("partial resynchronization accepted", "offset", off, "bytes", len(out))
	return true
}

// queueFullSync lines r up for the next snapshot. Runs on the executor.
func (s *Server) queueFullSync(r *replica) {
	rs := &s.repl
	r.state = replStateWaitBgsave
	if r.capaEOF && !s.cfg.Repl.NoDisklessSync {
		rs.waiting = append(rs.waiting, r)
		if !rs.syncSoon {
			rs.syncSoon = true
			if d := s.cfg.Repl.disklessDelay(); d > 0 {
				time.AfterFunc(time.Duration(d)*time.Second, func() { s.toExecutor(s.startDisklessSync) })
			} else {
				s.startDisklessSync()
			}
		}
		return
	}
	rs.diskWait = append(rs.diskWait, r)
	if s.bgsave == nil {
		s.startDiskSync()
	}
}

// fullResyncLine is what a PSYNC replica reads before its RDB.
func (s *Server) fullResyncLine(r *replica) []byte {
	if r.oldSync {
		return nil
	}
	return []byte("+FULLRESYNC " + s.replID + " " + strconv.FormatInt(s.repl.offset, 10) + "\r\n")
}

// attachForFullSync starts r's stream at the snapshot's moment: what follows
// waits in its outbox until the RDB is sent.
func (s *Server) attachForFullSync(group []*replica) []*replica {
	rs := &s.repl
	live := group[:0]
	for _, r := range group {
		if r.dropped {
			continue
		}
		line := s.fullResyncLine(r)
		r.syncLineOutput(len(line))
		r.prefix = append(r.prefix, line...)
		rs.replicas = append(rs.replicas, r)
		live = append(live, r)
	}
	rs.enc.selected = -1 // the stream after a snapshot starts with SELECT
	return live
}

// startDisklessSync sends one snapshot to every replica waiting for one.
// Runs on the executor.
func (s *Server) startDisklessSync() {
	rs := &s.repl
	rs.syncSoon = false
	if s.bgsave != nil || len(rs.waiting) == 0 {
		return // replNextSync starts it when the running snapshot ends
	}
	group := s.attachForFullSync(rs.waiting)
	rs.waiting = nil
	if len(group) == 0 {
		return
	}
	mark := randomHex(40)
	for _, r := range group {
		r.prefix = append(r.prefix, "$EOF:"+mark+"\r\n"...)
	}
	s.log.Info("starting diskless sync", "replicas", len(group))
	timeout := time.Duration(s.cfg.Repl.timeout()) * time.Second
	s.startSnapshot(func(fill func(*bufio.Writer) error) error {
		return s.streamRDB(group, mark, timeout, fill)
	})
}

// streamRDB writes the snapshot to the replicas' sockets. Runs on the
// snapshot's goroutine.
func (s *Server) streamRDB(group []*replica, mark string, timeout time.Duration, fill func(*bufio.Writer) error) error {
	fw := &fanout{timeout: timeout}
	for _, r := range group {
		fw.add(r, r.prefix)
	}
	bw := bufio.NewWriterSize(fw, 64<<10)
	err := fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = fw.Write([]byte(mark))
	}
	s.syncSent(fw, err)
	return err
}

// syncSent opens the stream of each replica that got its whole RDB.
func (s *Server) syncSent(fw *fanout, err error) {
	for i, r := range fw.rs {
		if fw.failed[i] || err != nil {
			r.nc.Close() // its ACK reader drops it
			continue
		}
		r.nc.SetWriteDeadline(time.Time{})
		r.gate.release()
	}
	s.toExecutor(func() {
		for i, r := range fw.rs {
			if !fw.failed[i] && err == nil && !r.dropped {
				r.state, r.ackTime = replStateOnline, s.clock.Now()
				s.log.Info("synchronization with replica succeeded", "addr", r.c.addr)
			}
		}
	})
}

// fanout writes the same bytes to several replicas; one that fails is left
// out, and the write fails only when none is left.
type fanout struct {
	rs      []*replica
	failed  []bool
	timeout time.Duration
}

func (f *fanout) add(r *replica, first []byte) {
	f.rs = append(f.rs, r)
	f.failed = append(f.failed, false)
	f.writeTo(len(f.rs)-1, first)
}

func (f *fanout) writeTo(i int, b []byte) {
	if f.failed[i] || len(b) == 0 {
		return
	}
	nc := f.rs[i].nc
	nc.SetWriteDeadline(time.Now().Add(f.timeout))
	if _, err := nc.Write(b); err != nil {
		f.failed[i] = true
	}
}

var errNoReplicaLeft = errors.New("every replica of the sync disconnected")

func (f *fanout) Write(b []byte) (int, error) {
	alive := 0
	for i := range f.rs {
		f.writeTo(i, b)
		if !f.failed[i] {
			alive++
		}
	}
	if alive == 0 {
		return 0, errNoReplicaLeft
	}
	return len(b), nil
}

// startDiskSync runs a BGSAVE whose file is sent to the replicas waiting for
// a disk sync. Runs on the executor.
func (s *Server) startDiskSync() {
	rs := &s.repl
	group := s.attachForFullSync(rs.diskWait)
	rs.diskWait = nil
	if len(group) == 0 {
		return
	}
	rs.diskGroup = group
	s.log.Info("starting BGSAVE for sync", "replicas", len(group))
	if err := s.startBgsave(); err != nil {
		s.log.Error("BGSAVE for replication failed", "err", err)
		for _, r := range group {
			s.dropReplica(r)
		}
		rs.diskGroup = nil
	}
}

// replSnapshotDone is told when a snapshot ends: the disk sync's file is sent,
// and the next sync starts. Runs on the executor.
func (s *Server) replSnapshotDone(disk bool, err error) {
	rs := &s.repl
	if disk && len(rs.diskGroup) > 0 {
		group := rs.diskGroup
		rs.diskGroup = nil
		var f *os.File
		if err == nil {
			f, err = os.Open(s.rdbPath())
		}
		for _, r := range group {
			if err != nil {
				s.dropReplica(r)
				continue
			}
			r.state = replStateSendBulk
			g, gerr := os.Open(f.Name()) // each sender reads its own descriptor
			if gerr != nil {
				s.dropReplica(r)
				continue
			}
			go s.sendRDBFile(r, g)
		}
		if f != nil {
			f.Close()
		}
	}
	if len(rs.diskWait) > 0 {
		s.startDiskSync()
	} else if len(rs.waiting) > 0 && !rs.syncSoon {
		s.startDisklessSync()
	}
}

// sendRDBFile sends a disk sync's file, then opens the stream. Runs on its
// own goroutine.
func (s *Server) sendRDBFile(r *replica, f *os.File) {
	defer f.Close()
	fw := &fanout{timeout: time.Duration(s.cfg.Repl.timeout()) * time.Second}
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	fw.add(r, append(r.prefix, "$"+strconv.FormatInt(size, 10)+"\r\n"...))
	_, err := io.Copy(fw, f)
	s.syncSent(fw, err)
}

// --- the replica's connection ---

// detachReplica hands the socket of a client that became a replica to its
// outbox (writes) and ACK reader (reads). Runs on the connection goroutine,
// after the batch with SYNC or PSYNC.
func (s *Server) detachReplica(c *Client, conn redcon.Conn) {
	dc := conn.Detach()
	go s.readReplicaAcks(c.replica, dc)
}

// readReplicaAcks reads a replica's REPLCONF ACKs until its socket closes.
func (s *Server) readReplicaAcks(r *replica, dc redcon.DetachedConn) {
	for {
		cmd, err := dc.ReadCommand()
		if err != nil {
			s.toExecutor(func() { s.dropReplica(r) })
			return
		}
		if len(cmd.Args) >= 3 && eqFold(cmd.Args[0], "replconf") && eqFold(cmd.Args[1], "ack") {
			if off, ok := parseRedisInt(cmd.Args[2]); ok {
				s.toExecutor(func() { s.replAck(r, off) })
			}
		}
	}
}

// replAck records a replica's offset and serves WAITs. Runs on the executor.
func (s *Server) replAck(r *replica, off int64) {
	if r.dropped {
		return
	}
	if off > r.ackOff {
		r.ackOff = off
	}
	r.ackTime = s.clock.Now()
	s.serveWaiters()
}

// dropReplica forgets a disconnected replica. Runs on the executor.
func (s *Server) dropReplica(r *replica) {
	if r.dropped {
		return
	}
	r.dropped = true
	rs := &s.repl
	rs.replicas = removeReplica(rs.replicas, r)
	rs.waiting = removeReplica(rs.waiting, r)
	rs.diskWait = removeReplica(rs.diskWait, r)
	r.out.close()
	r.gate.kill()
	r.nc.Close()
	s.mu.Lock()
	delete(s.clients, r.c.id)
	s.mu.Unlock()
	s.forgetClient(r.c)
	s.log.Info("connection with replica lost", "addr", r.c.addr)
}

func removeReplica(list []*replica, r *replica) []*replica {
	for i, o := range list {
		if o == r {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// --- WAIT ---

// waitState is a client blocked in WAIT.
type waitState struct {
	c      *Client
	bs     *blockState
	offset int64
	n      int64
}

// cmdWait is WAIT numreplicas timeout: the client waits (blocked as a
// blocking command is), never the executor.
func cmdWait(x *Ctx) {
	s := x.s
	if s.isReplica() {
		x.err(msgWaitOnReplica)
		return
	}
	n, ok := x.argInt(1)
	if !ok {
		return
	}
	ms, ok := parseRedisInt(x.args[2])
	if !ok {
		x.err(msgTimeoutNotInt)
		return
	}
	if ms < 0 {
		x.err(msgTimeoutNegative)
		return
	}
	target := s.repl.offset
	acked := s.countAcks(target)
	if acked >= n || !x.canBlock() {
		x.w.Int(acked)
		return
	}
	x.block(nil, time.Duration(ms)*time.Millisecond)
	bs := x.c.blocked
	bs.onTimeout = func(w *Writer) { w.Int(s.countAcks(target)) }
	s.repl.waiters = append(s.repl.waiters, waitState{c: x.c, bs: bs, offset: target, n: n})
	s.replFeedRaw("REPLCONF", "GETACK", "*")
}

// countAcks is how many replicas acknowledged offset.
func (s *Server) countAcks(offset int64) int64 {
	var n int64
	for _, r := range s.repl.replicas {
		if r.state == replStateOnline && r.ackOff >= offset {
			n++
		}
	}
	return n
}

// serveWaiters answers the WAITs that enough replicas acknowledged.
func (s *Server) serveWaiters() {
	rs := &s.repl
	keep := rs.waiters[:0]
	for _, w := range rs.waiters {
		if w.c.blocked != w.bs {
			continue // timed out or disconnected
		}
		acked := s.countAcks(w.offset)
		if acked < w.n {
			keep = append(keep, w)
			continue
		}
		s.unblock(w.c)
		w.c.blockOut.Reset()
		w.c.blockOut.Int(acked)
		w.c.lastActive.Store(s.clock.Now().UnixMilli())
		s.release(w.c.wake)
	}
	clear(rs.waiters[len(keep):])
	rs.waiters = keep
}

// --- ROLE and INFO ---

func cmdRole(x *Ctx) {
	s := x.s
	if s.isReplica() {
		x.w.Array(5)
		x.w.BulkString("slave")
		x.w.BulkString(s.cfg.Repl.MasterHost)
		x.w.Int(int64(s.cfg.Repl.MasterPort))
		x.w.BulkString(s.repl.link.roleState())
		off := int64(-1)
		if s.masterLinkUp() {
			off = s.repl.offset
		}
		x.w.Int(off)
		return
	}
	x.w.Array(3)
	x.w.BulkString("master")
	x.w.Int(s.repl.offset)
	var online []*replica
	for _, r := range s.repl.replicas {
		if r.state == replStateOnline {
			online = append(online, r)
		}
	}
	x.w.Array(len(online))
	for _, r := range online {
		x.w.Array(3)
		x.w.BulkString(r.addrIP())
		x.w.BulkString(strconv.Itoa(r.listenPort))
		x.w.BulkString(strconv.FormatInt(r.ackOff, 10))
	}
}

// addrIP is the replica's address as its master shows it.
func (r *replica) addrIP() string {
	if r.ip != "" {
		return r.ip
	}
	host, _, err := net.SplitHostPort(r.c.addr)
	if err != nil {
		return r.c.addr
	}
	return host
}

func infoReplication(s *Server) [][2]string {
	rs := &s.repl
	f := [][2]string{{"role", "master"}}
	if s.isReplica() {
		f[0][1] = "slave"
		f = append(f, s.replicaInfo()...) // replication_replica.go
	}
	f = append(f, [2]string{"connected_slaves", strconv.Itoa(len(rs.replicas))})
	f = append(f, s.infoGoodReplicas()...) // replication_guard.go
	now := s.clock.Now()
	for i, r := range rs.replicas {
		lag := int64(0)
		if r.state == replStateOnline {
			lag = int64(now.Sub(r.ackTime) / time.Second)
		}
		f = append(f, [2]string{"slave" + strconv.Itoa(i), "ip=" + r.addrIP() + ",port=" + strconv.Itoa(r.listenPort) +
			",state=" + r.state + ",offset=" + strconv.FormatInt(r.ackOff, 10) + ",lag=" + strconv.FormatInt(lag, 10)})
	}
	id2, second := rs.replID2, int64(-1)
	if id2 == "" {
		id2 = strings.Repeat("0", 40)
	} else {
		second = rs.secondOff
	}
	var first, hist int64
	if b := rs.backlog; b != nil {
		first, hist = b.start, b.histlen
	}
	return append(f, [][2]string{
		{"master_failover_state", s.failoverStateName()}, // failover.go
		{"master_replid", s.replID},
		{"master_replid2", id2},
		{"master_repl_offset", strconv.FormatInt(rs.offset, 10)},
		{"second_repl_offset", strconv.FormatInt(second, 10)},
		{"repl_backlog_active", b01(rs.backlog != nil)},
		{"repl_backlog_size", strconv.FormatInt(s.cfg.Repl.backlogSize(), 10)},
		{"repl_backlog_first_byte_offset", strconv.FormatInt(first, 10)},
		{"repl_backlog_histlen", strconv.FormatInt(hist, 10)},
	}...)
}

// --- the cron ---

// startReplCron starts the once-a-second replication cron. Runs on the executor.
func (s *Server) startReplCron() {
	if s.repl.cronOn {
		return
	}
	s.repl.cronOn = true
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				if !s.toExecutor(s.replCron) {
					return
				}
			}
		}
	}()
}

// replCron pings the replicas every repl-ping-replica-period seconds and drops
// those silent for repl-timeout. Runs on the executor.
func (s *Server) replCron() {
	rs := &s.repl
	now := s.clock.Now()
	period := time.Duration(s.cfg.Repl.pingPeriod()) * time.Second
	if rs.lastPing.IsZero() {
		// The period counts from the first cron tick (Redis counts cron loops
		// from start-up), not from the zero time: a replica that attaches
		// gets its first PING a period later, not at once.
		rs.lastPing = now
	}
	// no PING during a FAILOVER: the replicas must catch up with a still stream
	if len(rs.replicas) > 0 && !s.isReplica() && rs.failover.state == failoverNone && now.Sub(rs.lastPing) >= period {
		rs.lastPing = now
		s.replFeedRaw("PING")
	}
	timeout := time.Duration(s.cfg.Repl.timeout()) * time.Second
	for _, r := range append([]*replica(nil), rs.replicas...) {
		if r.state == replStateOnline && !r.oldSync && now.Sub(r.ackTime) > timeout {
			s.log.Warn("disconnecting timedout replica", "addr", r.c.addr)
			s.dropReplica(r)
		}
	}
}

// --- the backlog ---

// backlog is the last size bytes of the stream, a ring.
type backlog struct {
	buf     []byte
	pos     int   // where the next byte goes
	start   int64 // offset of the first byte held
	histlen int64
}

func newBacklog(size, start int64) *backlog {
	return &backlog{buf: make([]byte, size), start: start}
}

func (b *backlog) append(p []byte) {
	size := len(b.buf)
	if len(p) >= size {
		b.start += b.histlen + int64(len(p)-size)
		copy(b.buf, p[len(p)-size:])
		b.pos, b.histlen = 0, int64(size)
		return
	}
	n := copy(b.buf[b.pos:], p)
	copy(b.buf, p[n:])
	b.pos = (b.pos + len(p)) % size
	b.histlen += int64(len(p))
	if over := b.histlen - int64(size); over > 0 {
		b.start += over
		b.histlen = int64(size)
	}
}

// since returns the bytes from offset off (start <= off <= start+histlen).
func (b *backlog) since(off int64) []byte {
	n := int(b.start + b.histlen - off)
	out := make([]byte, 0, n)
	size := len(b.buf)
	from := (b.pos - n + size) % size
	if n == 0 {
		return out
	}
	if from+n <= size {
		return append(out, b.buf[from:from+n]...)
	}
	out = append(out, b.buf[from:]...)
	return append(out, b.buf[:n-(size-from)]...)
}

// resized is the backlog with room for size bytes, keeping its newest history.
func (b *backlog) resized(size int64) *backlog {
	keep := min(b.histlen, size)
	nb := newBacklog(size, b.start+b.histlen-keep)
	nb.append(b.since(b.start + b.histlen - keep))
	nb.start = b.start + b.histlen - keep
	return nb
}

// --- the replication fields of RDB files ---

// replAuxFields are the aux fields a snapshot records when the server has a
// replication history, so that a restarted replica can PSYNC where it was.
// Runs on the executor.
func (s *Server) replAuxFields() [][2]string {
	if s.repl.backlog == nil && !s.isReplica() {
		return nil
	}
	db := 0
	if s.repl.enc.selected > 0 {
		db = s.repl.enc.selected
	}
	return [][2]string{{"repl-stream-db", strconv.Itoa(db)}, {"repl-id", s.replID},
		{"repl-offset", strconv.FormatInt(s.repl.offset, 10)}}
}

// replAuxLoaded notes repl-id and repl-offset read from an RDB file. Runs on
// the executor.
func (s *Server) replAuxLoaded(key, val string) {
	switch key {
	case "repl-id":
		if len(val) == 40 {
			s.repl.loadedID = val
		}
	case "repl-offset":
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			s.repl.loadedOff = n
		}
	}
}
