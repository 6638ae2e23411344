package myredis

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// Clock tells the time; tests inject a fake one so expiry needs no sleeping.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Server is a MyRedis instance: a redcon listener in front of one executor.
type Server struct {
	cfg   Config
	clock Clock
	log   *slog.Logger
	table commandTable
	dbs   []*DB

	jobs         chan job
	order        arrivalOrder // runs client jobs in the order their bytes arrived (order.go)
	quit         chan struct{}
	executorDone chan struct{}
	rc           *connServer // accepts and reads the connections (conn.go)
	ln           net.Listener
	started      time.Time

	mu      sync.Mutex // guards clients (accept/close run on connection goroutines)
	clients map[int64]*Client

	migrate migrateCache // MIGRATE's cached connections, used off the executor (migrate_conn.go)

	// executor-owned
	dirty    int64 // count of changes, as Redis's server.dirty
	blocking map[dbKey][]*Client
	// migrating counts the MIGRATEs in flight holding each key, migratingDBs
	// those holding keys of each database (cmd_migrate.go)
	migrating    map[dbKey]int
	migratingDBs map[*DB]int
	ready        []dbKey
	loading      bool           // replaying the AOF: no expiry deletes
	pubsub       pubsubRegistry // channels and patterns to subscribers (pubsub.go)
	tracking     trackingState  // client-side caching (tracking.go)
	// runningClient is the client whose batch runs now (pushTo writes its own
	// messages into its replies)
	runningClient *Client
	stats         stats
	hooks         []func(db *DB, args [][]byte) // propagation listeners (AOF, replicas)
	unit          propUnit                      // the running command's propagated writes (propagate.go)
	replHooks     []func(db *DB, args [][]byte) // listeners of the writes for replicas only (PUBLISH)
	par           dataLock                      // --workers N > 1 only (workers.go)

	lruClock    atomic.Int64 // unix ms, renewed as each batch starts: keys' access time (atomic: --workers runs batches at once)
	overheadMem atomic.Int64 // the clients' buffers, summed ten times a second (memory.go)
	mem         memParts     // backlog, replicas' output, AOF buffer, script caches (memory_parts.go); executor-owned
	// the biggest client input and output buffers per second of the last
	// recentSlots (memory.go); executor-owned
	recentIn, recentOut [recentSlots]int64
	recentSec           int64
	qbufEpoch           atomic.Uint64                // clientsCron's ticks: query buffers check their peak once per tick (querybuf.go)
	dataUsed            int64                        // the keys' sizes: the sum of DB.used (memory.go)
	remeasure           []pendingSize                // entries to measure after the command (memory.go)
	ev                  evictState                   // eviction (evict.go)
	goMemLimit          goMemLimit                   // GOMEMLIMIT tied to maxmemory (maxmemory.go)
	trims               atomic.Int64                 // times memory was returned after traffic (memtrim.go)
	beforeSwapDB        func(db1, db2 *DB)           // during an AOF rewrite: SWAPDB is about to run
	functionsPtr        atomic.Pointer[functionLibs] // FUNCTION LOAD's libraries (functions.go)
	lua                 *luaEngine                   // created by the first script
	scriptTimeMs        int64                        // while a script runs, the time it started: the clock stands still

	// shared with connection goroutines: BUSY replies and SCRIPT KILL
	scriptGuard scriptGuard

	configHooks     []func(old, next Config) // CONFIG SET listeners
	wrapHooks       []func(begin bool)       // EXEC/script boundaries for propagation
	persistenceInfo func() [][2]string       // INFO persistence, set by the AOF
	// holdReply, when set (AOF), may keep a finished job's signal (c.done, c.wake)
	// and send it later, once the job's writes are in the file; see release.
	holdReply func(signal chan struct{}) bool
	// beforeWrite, when set (during an AOF rewrite), sees every write command just
	// before it runs.
	beforeWrite func(x *Ctx)
	closeHooks  []func()  // run by Close after the last job (the AOF flushes and fsyncs)
	aof         *aof      // the append-only file, nil when appendonly is no
	aofrw       aofStats  // the AOF rewrites' figures, on or off (aof_detached.go)
	rdb         *rdbState // RDB saves (rdb_file.go)
	bgsave      *bgsave   // a running BGSAVE (rdb_bgsave.go)

	acl    *aclState    // users, the ACL log (acl.go); executor-owned
	tls    *tlsState    // the tls-port listener (tls.go), guarded by mu
	live   liveSettings // settings read off the executor
	expire expireCycle  // active expiry's state (expire.go)
	replID string       // INFO replication's master_replid, random per run
	repl   replication  // replication, both sides (replication*.go)

	stopping atomic.Bool   // SHUTDOWN or Close: batches not yet started never run
	stopped  chan struct{} // closed when Close has finished

	estats execStats   // INFO commandstats, errorstats, rates, peak (stats.go)
	net    netCounters // total_net_input_bytes / output, from connection goroutines
	runID  string      // INFO run_id, random per run

	intro introspection  // slow log, latency monitor, MONITOR (introspect.go)
	pause pauseState     // CLIENT PAUSE (pause.go); executor-owned
	cev   clientEviction // maxmemory-clients (client_evict.go); executor-owned
	sup   *Supervisor    // upstart or systemd supervision (supervise.go); nil: none
}

// stats are INFO's counters, owned by the executor (rejectedConns excepted).
type stats struct {
	commands, expiredKeys, keyspaceHits, keyspaceMisses int64
	evictedKeys                                         int64 // evict.go
	// connsReceived and rejectedConns are counted by the accept goroutine and
	// read by INFO on the executor, hence atomic; RESETSTAT stores zero in them.
	connsReceived, rejectedConns atomic.Int64
}

// Option customises a Server.
type Option func(*Server)

// WithClock injects a clock.
func WithClock(c Clock) Option { return func(s *Server) { s.clock = c } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// New builds a server from cfg. Call Serve or ListenAndServe to run it.
func New(cfg Config, opts ...Option) *Server {
	cfg.fillDefaults()
	s := &Server{
		cfg:          cfg,
		clock:        systemClock{},
		log:          slog.Default(),
		jobs:         make(chan job, 1024),
		quit:         make(chan struct{}),
		executorDone: make(chan struct{}),
		clients:      make(map[int64]*Client),
		blocking:     make(map[dbKey][]*Client),
		stopped:      make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.mem.funcCache = functionsBaseMem() // Redis's functions structures, there from start-up
	s.mem.fixed = s.mem.funcCache
	s.table = buildCommandTable()
	s.acl = newACLState(s.table) // acl.go
	s.dbs = make([]*DB, cfg.Databases)
	for i := range s.dbs {
		s.dbs[i] = newDB(s, i)
	}
	s.started = s.clock.Now()
	s.lruClock.Store(s.started.UnixMilli())
	s.replID = randomHex(40)
	s.runID = randomHex(40)
	s.live.set(cfg)
	s.initACL() // acl_server.go: requirepass, then the default user's state
	s.scriptGuard.init(&s.live.luaLimitMs, s.quit)
	s.configHooks = append(s.configHooks, func(_, next Config) { s.live.set(next) })
	s.applyEvictionConfig(cfg) // evict.go
	s.tieGoMemoryLimit(cfg.MaxMemory)
	s.configHooks = append(s.configHooks, s.maxmemoryChanged)
	s.initIntrospection()
	if cfg.Workers > 1 { // demonstration mode, see workers.go
		s.startWorkers(cfg.Workers)
	} else {
		s.startOrder() // order.go
		go s.runExecutor()
	}
	return s
}

// nowMs is the time expiry is judged by. Inside a script it is the script's start
// time, as in Redis, so a key cannot expire halfway through a script.
func (s *Server) nowMs() int64 {
	if s.scriptTimeMs != 0 {
		return s.scriptTimeMs
	}
	return s.clock.Now().UnixMilli()
}

// ListenAndServe listens on cfg.Bind:cfg.Port and serves until Close.
func (s *Server) ListenAndServe() error {
	if err := s.ListenTLS(); err != nil { // tls.go
		return err
	}
	if s.cfg.Port == 0 && s.cfg.TLS.Port != 0 { // port 0: TLS only, as Redis
		return s.serveWithoutTCP()
	}
	lns, err := listenAll(s.cfg.Bind, s.cfg.Port) // listen.go
	if err != nil {
		return err
	}
	return s.Serve(newPortListener(lns))
}

// Serve accepts connections on ln until Close. CONFIG SET port and bind move
// the listener to a new address (listen.go).
func (s *Server) Serve(ln net.Listener) error {
	if _, ok := ln.(*portListener); !ok {
		ln = newPortListener([]net.Listener{ln})
	}
	rc := newConnServer(s)
	s.mu.Lock()
	select {
	case <-s.quit:
		s.mu.Unlock()
		ln.Close()
		return nil
	default:
	}
	s.ln, s.rc = ln, rc
	s.mu.Unlock()
	go s.activeExpireLoop()
	go s.clientsCron()
	go s.trimLoop()
	s.supervisorReady() // supervise.go: the socket listens, the data is loaded
	err := rc.Serve(guardListener{ln, &s.live, &s.net, &s.order})
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Addr is the listening address, once serving.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting, closes every connection and stops the executor.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.quit:
		s.mu.Unlock()
		return nil
	default:
	}
	close(s.quit)
	s.stopping.Store(true)
	rc, ln := s.rc, s.ln
	s.mu.Unlock()
	defer close(s.stopped)
	var err error
	if rc != nil {
		err = rc.Close()
		ln.Close() // in case redcon had not started accepting yet
	}
	s.closeTLS()           // tls.go
	s.migrate.closeAll()   // migrate_conn.go
	s.scriptGuard.abort()  // a script that never ends would hold the executor
	s.submit(s.order.stop) // let in-flight jobs finish; order.go's descriptors
	for _, h := range s.closeHooks {
		h()
	}
	s.removePidFile()
	return err
}

// Done is closed once the server has stopped (Close, or SHUTDOWN from a client)
// and its data is flushed: a program waits on it before exiting.
func (s *Server) Done() <-chan struct{} { return s.stopped }

func (s *Server) accept(conn redcon.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if int64(len(s.clients)) >= s.live.maxClients.Load() {
		conn.WriteError("ERR max number of clients reached")
		s.stats.rejectedConns.Add(1)
		return false
	}
	c := newClient(s, conn)
	conn.SetContext(c)
	s.clients[c.id] = c
	s.stats.connsReceived.Add(1) // total_connections_received: accepted, not refused
	return true
}

func (s *Server) closed(conn redcon.Conn, err error) {
	c, _ := conn.Context().(*Client)
	if c == nil || (c.replica != nil && c.replica.attached) {
		return // a replica's socket was detached: replication.go frees it
	}
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	c.closeOutbox()
	select {
	case s.jobs <- job{fn: func() { s.forgetClient(c) }}:
	case <-s.quit:
	}
}

// forgetClient drops a closed client's WATCHes and waits. Runs on the executor.
func (s *Server) forgetClient(c *Client) {
	s.unwatchAll(c)
	s.unblock(c)
	s.dropSubscriptions(c)
	s.disableTracking(c)   // tracking.go
	s.dropMonitor(c)       // monitor.go
	s.clientEvictForget(c) // client_evict.go
}

// handle runs on the connection goroutine for the first command of each pipelined
// batch: it hands the whole batch to the executor as one job and writes the replies.
func (s *Server) handle(conn redcon.Conn, cmd redcon.Command) {
	c := conn.Context().(*Client)
	c.cmds = append(c.cmds[:0], cmd)
	c.cmds = append(c.cmds, conn.ReadPipeline()...)
	wrote := false // replies were handed to redcon's buffer in this call
	oc := orderOf(c)
	defer oc.returning() // whatever happened, the bytes read are not waited for (order.go)
	ts := oc.arrival()
	for {
		c.out.Reset()
		busy := s.scriptGuard.busySignal()
		if s.scriptGuard.isBusy() {
			conn.WriteRaw(s.answerBusy(c))
			return
		}
		c.seq++
		c.claim.Store(c.seq)
		select {
		case s.jobs <- job{c: c, seq: c.seq, ts: ts}:
		case <-s.quit:
			conn.Close()
			return
		}
		oc.queued()
		ts = 0 // the rest of a blocked batch runs when it is woken, untimed
		select {
		case <-c.done:
		case <-busy:
			// A script passed lua-time-limit while this batch waited behind it:
			// take the batch back, unless the executor has started it (it may be
			// the script itself), and answer it here.
			if c.claim.CompareAndSwap(c.seq, 0) {
				conn.WriteRaw(s.answerBusy(c))
				return
			}
			<-c.done
		}
		if c.replica != nil && c.replica.attached { // SYNC or PSYNC made it a replica
			oc.detach()              // order.go
			s.detachReplica(c, conn) // replication.go
			return
		}
		if overOutputLimit(&s.live, c, c.out.Len(), s.clock.Now) { // replybuf.go
			s.log.Warn("client closed for overcoming of output buffer limits", "id", c.id, "class", "normal", "bytes", c.out.Len())
			conn.Close()
			return
		}
		if c.batchBlocked { // it waits: what came before must not wait with it
			// (nothing is in redcon's buffer: this handler call wrote only
			// straight to the socket so far, see waitBlocked)
			writeReplyNow(conn, &c.out, true)
		} else {
			if !c.closing {
				oc.returning() // the client may answer at once: read it (order.go)
			}
			writeReply(conn, &c.out, !wrote)
		}
		wrote = true
		if c.closing {
			c.drainOutbox() // QUIT's +OK may wait there
			conn.Close()
			return
		}
		if !c.batchBlocked {
			return
		}
		if !s.waitBlocked(c, conn, c.batchDeadline) {
			conn.Close()
			return
		}
		if len(c.pending) == 0 {
			return
		}
		c.cmds = append(c.cmds[:0], c.pending...)
	}
}

// Do runs one command on the executor as an internal client would (tests, tools).
func (s *Server) Do(args ...string) []byte {
	c := newClient(s, nil)
	c.authed = true
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	var w Writer
	s.submit(func() { s.call(c, argv, &w) })
	return w.Bytes()
}

// activeExpireLoop asks the executor hz times a second to reclaim expired keys.
func (s *Server) activeExpireLoop() {
	hz := s.live.hz.Load()
	t := time.NewTicker(time.Second / time.Duration(hz))
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if now := s.live.hz.Load(); now != hz { // CONFIG SET hz
				hz = now
				t.Reset(time.Second / time.Duration(hz))
			}
			select {
			case s.jobs <- job{fn: s.activeExpireSlow}:
			case <-s.quit:
				return
			}
		}
	}
}

// randomHex returns n random hex digits.
func randomHex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rand.IntN(16)]
	}
	return string(b)
}

// Open builds a server and loads its persistent state (the AOF, when enabled).
func Open(cfg Config, opts ...Option) (*Server, error) {
	s := New(cfg, opts...)
	for _, fn := range openHooks {
		if err := fn(s); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.writePidFile(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openHooks run in Open after the server is built (the AOF registers one).
var openHooks []func(*Server) error

// resetStats zeroes INFO's counters (CONFIG RESETSTAT). Runs on the executor.
func (s *Server) resetStats() {
	s.stats.commands, s.stats.expiredKeys = 0, 0
	s.stats.keyspaceHits, s.stats.keyspaceMisses = 0, 0
	s.stats.evictedKeys = 0
	s.stats.connsReceived.Store(0)
	s.stats.rejectedConns.Store(0)
	s.expire.resetStats()                                   // expire.go
	s.ev.exceededSince, s.ev.exceededTotal = time.Time{}, 0 // evict.go
	s.repl.syncFull, s.repl.syncPartialOK, s.repl.syncPartialErr = 0, 0, 0
	s.cev.evicted = 0                         // client_evict.go
	s.rdbRecord().saves = 0                   // rdb_file.go
	s.aofrw.rewrites, s.aofrw.failures = 0, 0 // aof_detached.go
	s.resetExecStats()                        // stats.go
}
