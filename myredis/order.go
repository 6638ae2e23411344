package myredis

import (
	"net"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Arrival order. Redis runs requests from different connections in the order their
// bytes reached the server: its one thread asks epoll which sockets are readable and
// the kernel lists them in the order they became so. MyRedis reads every connection
// on its own goroutine, and when two sockets become readable in the same netpoll
// round Go wakes their goroutines newest first: a client that sends "BLPOP k 0" on
// one connection and at once "LPUSH k x" on another could see the LPUSH run first
// and the BLPOP wait for ever (Redis's own suite did, in type/list, stream-cgroups,
// tracking).
//
// On Linux each accepted TCP socket has SO_TIMESTAMPNS on: every read (recvmsg)
// carries the time the kernel received the bytes, and a batch's job carries that
// time (job.ts). Before the executor runs a timed job it makes sure no other
// connection holds bytes that arrived earlier and are not yet queued:
//
//   - bytes still in a kernel socket buffer: one epoll set (level-triggered) holds
//     every connection; epoll_wait with no timeout lists the readable ones and a
//     one-byte MSG_PEEK reads the arrival time of their oldest bytes;
//   - bytes a connection goroutine has read but not yet queued: each orderConn
//     publishes its state (reading now, or holding bytes of time t) in st.
//
// The executor checks the kernel first and the readers second: bytes taken out of a
// socket after the epoll_wait were taken by a reader whose state already said
// "reading", and a reader clears its state only after its job is in the channel,
// which the executor drains once more after the check. If an earlier arrival is
// pending, the executor waits for its job and runs the gathered jobs oldest first.
// So a job never runs before a job whose bytes the kernel received earlier, as long
// as that connection's goroutine was ready to read (not inside a batch of its own:
// Redis too runs one connection's batch to its end). A connection flushing its
// replies is waited for at most returnWait. Not covered: bytes a new connection
// sent before it was accepted, and requests the protocol guard holds back.
//
// Cost: one epoll_wait per timed job while more than one connection is open, a peek
// per readable connection whose oldest byte is not known yet, and a scan of the
// connections while some reader holds bytes: about 10-15% more CPU per request
// (docs/performance.md). Elsewhere (not Linux, TLS, --workers) jobs carry no time
// and run as they come, as before.

// stReading is orderConn.st while a read is in progress.
const stReading = -1

// The phases of a connection goroutine, as the executor sees them.
const (
	// phaseReady: reading, or about to: the executor waits for its bytes
	phaseReady = iota
	// phaseBusy: its batch is queued, running or blocked; not waited for
	phaseBusy
	// phaseReturning: its replies are written, redcon flushes them and reads
	// again. Waited for, but only for returnWait: a client that does not read its
	// replies can hold the flush for ever.
	phaseReturning
)

// returnWait bounds the wait for a returning connection (phaseReturning).
const returnWait = 50 * time.Millisecond

// arrivalOrder is the server's side of the mechanism.
type arrivalOrder struct {
	on     bool
	sys    orderSys // the epoll set (order_linux.go)
	mu     sync.Mutex
	conns  map[int32]*orderConn
	nextID int32
	list   atomic.Pointer[[]*orderConn] // copy of conns for the executor's scan
	marked atomic.Int64                 // connections whose st is not 0

	// executor-owned
	stopped bool  // stop ran: descriptors closed (written by the executor under mu)
	pending []job // timed client jobs gathered, oldest first
	tasks   []job // untimed jobs gathered meanwhile, in channel order
	closed  bool  // the jobs channel closed
	timer   *time.Timer
}

// orderConn is an accepted TCP socket read with arrival times (order_linux.go).
type orderConn struct {
	net.Conn
	o  *arrivalOrder
	id int32
	// phase: is the connection goroutine ready to read (see the phase constants);
	// since: when it began returning (phaseReturning), unix ns
	phase atomic.Int32
	since atomic.Int64
	// st: 0 nothing pending, stReading, or the arrival time (unix ns) of bytes
	// read and not yet queued. Written by the connection goroutine (and Close).
	st     atomic.Int64
	lastTs atomic.Int64 // arrival time of the last read (written by the connection goroutine)
	gone   atomic.Bool
	rd     orderRead // the read in progress (order_linux.go)
	// reads counts the reads that took bytes; the executor's last peek holds
	// while it has not moved (the oldest unread byte is the same)
	reads     atomic.Uint64
	peekReads uint64 // executor-owned: reads when peekTs was read
	peekTs    int64  // executor-owned: 0 none
}

// setSt changes st and keeps marked the count of connections with st != 0. The
// count rises before the caller reads the socket, so the executor, which reads
// marked after its epoll_wait, sees every read that took bytes epoll did not list.
func (c *orderConn) setSt(v int64) {
	old := c.st.Swap(v)
	switch {
	case old == 0 && v != 0:
		c.o.marked.Add(1)
	case old != 0 && v == 0:
		c.o.marked.Add(-1)
	}
}

// arrival is the time of the bytes the next job is made of. Connection goroutine.
func (c *orderConn) arrival() int64 {
	if c == nil {
		return 0
	}
	return c.lastTs.Load()
}

// queued notes that the connection's job is in the channel: until its goroutine
// reads again the executor does not wait for it. Connection goroutine.
func (c *orderConn) queued() {
	if c == nil {
		return
	}
	c.phase.Store(phaseBusy)
	c.setSt(0)
}

// returning notes that the handler returns: redcon flushes the replies, then reads.
// Connection goroutine.
func (c *orderConn) returning() {
	if c == nil {
		return
	}
	c.since.Store(time.Now().UnixNano())
	c.setSt(0)
	c.phase.Store(phaseReturning)
}

// waitedFor reports whether the executor waits for this connection's earlier
// bytes at time now (unix ns). Runs on the executor.
func (c *orderConn) waitedFor(now *int64) bool {
	switch c.phase.Load() {
	case phaseReady:
		return true
	case phaseReturning:
		if *now == 0 {
			*now = time.Now().UnixNano()
		}
		return *now-c.since.Load() < int64(returnWait)
	}
	return false
}

// Close takes the connection out of the executor's view, then closes it.
func (c *orderConn) Close() error {
	if !c.gone.Swap(true) {
		c.o.remove(c)
		c.phase.Store(phaseBusy)
		c.setSt(0)
	}
	return c.Conn.Close()
}

// detach is for a socket that stops being a client (a replica): the executor
// forgets it. Connection goroutine.
func (c *orderConn) detach() {
	if c != nil && !c.gone.Swap(true) {
		c.o.remove(c)
		c.phase.Store(phaseBusy)
		c.setSt(0)
	}
}

// addLocked registers c under a fresh id. Caller holds mu.
func (o *arrivalOrder) addLocked(c *orderConn) {
	for {
		o.nextID++
		if o.nextID <= 0 {
			o.nextID = 1
		}
		if _, used := o.conns[o.nextID]; !used {
			break
		}
	}
	c.id = o.nextID
	o.conns[c.id] = c
	o.publish()
}

func (o *arrivalOrder) remove(c *orderConn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(c)
}

// removeLocked forgets c. Caller holds mu.
func (o *arrivalOrder) removeLocked(c *orderConn) {
	if o.conns[c.id] == c {
		delete(o.conns, c.id)
		o.publish()
	}
}

// publish refreshes the executor's copy. Caller holds mu.
func (o *arrivalOrder) publish() {
	l := make([]*orderConn, 0, len(o.conns))
	for _, c := range o.conns {
		l = append(l, c)
	}
	o.list.Store(&l)
}

func (o *arrivalOrder) lookup(id int32) *orderConn {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.conns[id]
}

// startOrder turns the mechanism on where the platform has it.
func (s *Server) startOrder() {
	o := &s.order
	o.conns = make(map[int32]*orderConn)
	o.publish()
	o.on = o.initSys()
}

// stop releases the mechanism's descriptors (Close). Later connections are not
// wrapped and what still comes runs in channel order. Runs on the executor.
func (o *arrivalOrder) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.on && !o.stopped {
		o.stopped = true
		o.closeSys()
	}
}

// orderOf is the arrival-order view of a client's socket, nil when it has none.
func orderOf(c *Client) *orderConn {
	if c.guard == nil {
		return nil
	}
	oc, _ := c.guard.Conn.(*orderConn)
	return oc
}

// nextJob returns the job the executor runs next: server tasks and untimed jobs
// as they come, timed client jobs in arrival order (see above). ok is false when
// the channel closed. Runs on the executor.
func (s *Server) nextJob() (job, bool) {
	o := &s.order
	if !o.on {
		return s.receiveJob()
	}
	for spins := 0; ; spins++ {
		if len(o.tasks) > 0 {
			j := o.tasks[0]
			o.tasks[0] = job{}
			o.tasks = o.tasks[1:]
			return j, true
		}
		if o.stopped { // Close: what was gathered, then channel order
			if len(o.pending) == 0 {
				return s.receiveJob()
			}
			j := o.pending[0]
			o.pending = o.pending[1:]
			return j, true
		}
		if len(o.pending) == 0 {
			if o.closed {
				return job{}, false
			}
			j, ok := s.receiveJob()
			if !ok || j.c == nil || j.ts == 0 {
				return j, ok
			}
			o.pending = append(o.pending, j)
		}
		s.gatherJobs()
		if len(o.tasks) > 0 {
			continue
		}
		cand := o.pending[0]
		if o.earlierPending(cand) {
			s.waitJob(spins)
			continue
		}
		// a job queued between the last drain and the check
		if s.gatherJobs(); len(o.tasks) > 0 || o.pending[0].ts < cand.ts {
			continue
		}
		o.pending[0] = job{}
		o.pending = o.pending[1:]
		return cand, true
	}
}

// receiveJob waits for the next job from the channel. Runs on the executor.
func (s *Server) receiveJob() (job, bool) {
	select {
	case j, ok := <-s.jobs:
		return j, ok
	default: // nothing to do: Redis's beforeSleep
		s.activeExpireFast()
		j, ok := <-s.jobs
		return j, ok
	}
}

// gatherJobs moves what the channel holds into pending and tasks. Runs on the executor.
func (s *Server) gatherJobs() {
	for {
		select {
		case j, ok := <-s.jobs:
			if !ok {
				s.order.closed = true
				return
			}
			s.order.keep(j)
		default:
			return
		}
	}
}

// keep files a job received from the channel. Runs on the executor.
func (o *arrivalOrder) keep(j job) {
	if j.c == nil || j.ts == 0 {
		o.tasks = append(o.tasks, j)
		return
	}
	i := sort.Search(len(o.pending), func(i int) bool { return o.pending[i].ts > j.ts })
	o.pending = append(o.pending, job{})
	copy(o.pending[i+1:], o.pending[i:])
	o.pending[i] = j
}

// waitJob waits a moment for the job of an earlier arrival: first by yielding (its
// goroutine is usually runnable already), then on the channel with a short timer.
// Runs on the executor.
func (s *Server) waitJob(spins int) {
	if spins < 4 {
		runtime.Gosched()
		return
	}
	o := &s.order
	if o.timer == nil {
		o.timer = time.NewTimer(time.Hour)
	}
	o.timer.Reset(50 * time.Microsecond)
	select {
	case j, ok := <-s.jobs:
		if !ok {
			o.closed = true
		} else {
			o.keep(j)
		}
	case <-o.timer.C:
	}
	o.timer.Stop()
}

// earlierPending reports whether another connection has bytes that arrived before
// cand's and are not queued yet. Kernel first, then the readers (see above). Runs
// on the executor.
func (o *arrivalOrder) earlierPending(cand job) bool {
	own := orderOf(cand.c)
	list := *o.list.Load()
	if len(list) <= 1 && (len(list) == 0 || list[0] == own) {
		return false
	}
	var now int64 // read once, when needed
	if o.earlierInKernel(cand.ts, own, &now) {
		return true
	}
	if o.marked.Load() == 0 {
		return false
	}
	for _, c := range list {
		if c == own || !c.waitedFor(&now) {
			continue
		}
		if st := c.st.Load(); st == stReading || (st > 0 && st < cand.ts) {
			return true
		}
	}
	return false
}
