package myredis

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// Client is one connection's state. Fields below "executor-owned" are read and
// written only on the executor goroutine; the batch fields are handed back and forth
// through jobs and done.
type Client struct {
	s       *Server
	id      int64
	conn    redcon.Conn
	addr    string
	laddr   string
	created time.Time

	// hand-off between the connection goroutine and the executor
	cmds []redcon.Command
	out  Writer
	// obufSoftSince is when the replies first passed the normal class's soft
	// output-buffer limit (zero: under it). Connection goroutine only.
	obufSoftSince time.Time
	done          chan struct{}
	wake          chan struct{} // a blocked command was served or timed out
	// set by runBatch before done, read by the connection goroutine after it
	batchBlocked  bool
	batchDeadline time.Time
	// seq numbers the connection's batches; claim holds the number of the batch
	// waiting in the job queue until the executor (or, when a script is busy, the
	// connection itself) takes it
	seq   uint64
	claim atomic.Uint64
	// busyRejected: the connection answered commands BUSY (while a script ran
	// too long); if they belonged to a MULTI, its EXEC must abort
	busyRejected atomic.Bool
	// busyExecAbort: the connection answered an EXEC with EXECABORT (BUSY); the
	// executor discards the transaction before the client's next batch
	busyExecAbort atomic.Bool
	// busyMulti: the connection answered MULTI itself (allowed while busy, as in
	// Redis); the executor opens the transaction before the client's next batch.
	// inMulti mirrors multi != nil for the connection goroutine.
	busyMulti, inMulti atomic.Bool

	// executor-owned
	db      *DB
	authed  bool
	user    *aclUser // the ACL user (acl.go); the default user until AUTH
	name    string
	libName string
	libVer  string
	resp    int
	lastCmd string
	// lookedUp is the last command name this client sent, as typed, and
	// lookedUpCmd its entry: a client repeating a command (the common case)
	// skips the table's hash lookup (executor.go's call)
	lookedUp    []byte
	lookedUpCmd *command
	closing     bool // QUIT: close after this batch's replies are sent
	multi       *multiState
	spareMulti  *multiState // the last transaction's queue, kept for the next MULTI
	watched     []watchedKey
	dirtyCAS    bool
	blocked     *blockState // non-nil while a blocking command waits
	pending     []redcon.Command
	blockOut    Writer // the served reply of a blocked command
	x           Ctx    // reused per command to avoid an allocation
	execX       Ctx    // reused for each command EXEC runs

	// CLIENT REPLY OFF / SKIP (executor-owned): replies are dropped, SKIP's for
	// the next command only
	replyOff, replySkipNext, replySkip bool

	replyMem   int64        // capacity of the reply buffers after the last batch (executor-owned)
	lastActive atomic.Int64 // unix ms of the last command, for CLIENT LIST idle
	guard      *guardConn   // the socket's protocol guard, told when c authenticates
	// ps is c's subscriptions and outbox, from its first (UN)SUBSCRIBE on
	// (pubsub.go); executor-owned, read by the connection between batches
	ps *clientPubSub
	// pushing: the command's reply is a pub/sub confirmation, which CLIENT REPLY
	// OFF|SKIP do not mute (Redis's CLIENT_PUSHING); executor-owned
	pushing bool
	// tracking is c's CLIENT TRACKING mode, nil when off (tracking.go); executor-owned
	tracking *clientTracking
	// replica is set by REPLCONF, SYNC and PSYNC (replication.go); executor-owned
	replica *replica
	// qb is the connection's query buffer (querybuf.go), nil for internal clients
	qb *queryBuf
	// argvMem is the running (or blocked) command's argument bytes, CLIENT
	// LIST's argv-mem, and argc its argument count; executor-owned
	argvMem, argc int64
	// replyPeak is the most the reply buffer held after a batch since the last
	// reset (CLIENT LIST's rbp; memory.go resets it); executor-owned
	replyPeak int64
	// noEvict: CLIENT NO-EVICT ON, exempt from client eviction (client_evict.go)
	noEvict bool
	// memCounted is c's share of the clients' memory total (client_evict.go)
	memCounted int64
}

var clientIDs atomic.Int64

func newClient(s *Server, conn redcon.Conn) *Client {
	c := &Client{
		s:       s,
		id:      clientIDs.Add(1),
		conn:    conn,
		created: s.clock.Now(),
		done:    make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),
		db:      s.dbs[0],
		authed:  !s.live.hasPass.Load(),
		resp:    2,
	}
	if s.acl != nil {
		c.user = s.acl.dflt
	}
	if conn != nil {
		c.addr = conn.RemoteAddr()
		if nc := conn.NetConn(); nc != nil {
			c.laddr = nc.LocalAddr().String()
		}
		if sc, ok := conn.(*srvConn); ok {
			c.qb = &sc.qb
		}
		if gc, ok := conn.NetConn().(*guardConn); ok {
			c.guard = gc
			gc.authed.Store(c.authed)
		}
	}
	return c
}

// needsAuth reports whether c must authenticate before running commands, as
// Redis's authRequired: a password is set and c has not given it (a client that
// connected while there was none stays authenticated). Runs on the executor.
func (c *Client) needsAuth() bool { return !c.authed && c.s.acl.defaultNeedsAuth() }

// info is the client's line in CLIENT LIST and CLIENT INFO. Runs on the executor.
func (c *Client) info(now time.Time) string {
	age := int64(now.Sub(c.created) / time.Second)
	idle := (now.UnixMilli() - c.lastActive.Load()) / 1000
	if c.lastActive.Load() == 0 {
		idle = age
	}
	flags := c.flags()
	subs, _ := c.pubsubCounts()
	multi := -1
	if c.multi != nil {
		multi = len(c.multi.cmds)
	}
	fd := -1
	if c.guard != nil {
		fd = c.guard.fd
	}
	m := c.memory()
	// Replies are written to the socket by the connection right after each
	// batch: between batches nothing waits in a reply list (obl, oll and omem
	// 0), but a subscriber's outbox is its output list: oll its messages, omem
	// their bytes. While the client's own batch runs (CLIENT LIST on itself),
	// obl is what its reply buffer holds so far.
	obl := int64(0)
	if c == c.s.runningClient {
		obl = int64(c.out.Len())
	}
	return "id=" + strconv.FormatInt(c.id, 10) +
		" addr=" + c.addr + " laddr=" + c.laddr + " fd=" + strconv.Itoa(fd) + " name=" + c.name +
		" age=" + strconv.FormatInt(age, 10) + " idle=" + strconv.FormatInt(idle, 10) +
		" flags=" + flags + " db=" + strconv.Itoa(c.db.id) +
		" sub=" + strconv.Itoa(subs[subChannel]) + " psub=" + strconv.Itoa(subs[subPattern]) +
		" ssub=" + strconv.Itoa(subs[subShard]) + " multi=" + strconv.Itoa(multi) +
		" qbuf=" + itoa(m.qbuf) + " qbuf-free=" + itoa(m.qbufFree) + " argv-mem=" + itoa(c.argvMem) +
		" multi-mem=" + itoa(m.multi) + " rbs=" + itoa(c.replyMem) + " rbp=" + itoa(min(c.replyPeak, c.replyMem)) +
		" obl=" + itoa(obl) + " oll=" + itoa(m.oll) + " omem=" + itoa(m.omem) + " tot-mem=" + itoa(m.total) + " events=r" +
		" cmd=" + c.lastCmd + " user=" + c.userName() + " redir=-1 resp=" + strconv.Itoa(c.resp) +
		" lib-name=" + c.libName + " lib-ver=" + c.libVer + "\n"
}

// flags is CLIENT LIST's flags field, in the order of Redis's
// catClientInfoString. Runs on the executor.
func (c *Client) flags() string {
	var b []byte
	if c.s.isMonitor(c) { // monitor.go
		b = append(b, 'O')
	}
	if c.isSubscriber() {
		b = append(b, 'P')
	}
	if c.multi != nil {
		b = append(b, 'x')
	}
	if c.blocked != nil { // a blocking command, or postponed by CLIENT PAUSE
		b = append(b, 'b')
	}
	if c.tracking != nil {
		b = append(b, 't')
	}
	if c.dirtyCAS {
		b = append(b, 'd')
	}
	if c.closing {
		b = append(b, 'c')
	}
	if c.noEvict {
		b = append(b, 'e')
	}
	if len(b) == 0 {
		return "N"
	}
	return string(b)
}
