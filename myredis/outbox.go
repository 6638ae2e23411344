package myredis

import (
	"net"
	"sync"
	"time"
)

// An outbox carries what the executor sends to a connection outside the request
// and reply of its own batch: pub/sub messages today, and it is meant to carry
// RESP3 pushes, client-tracking invalidations and MONITOR lines as well. Those
// features need only call push with finished RESP bytes; nothing here knows what
// the bytes mean.
//
// The executor never waits on a socket: push appends to a buffer under a mutex
// held for the copy alone, and the connection's writer goroutine drains the
// buffer to the socket. What is queued and not yet written counts against the
// client's output-buffer limit (client-output-buffer-limit): over the hard limit,
// or over the soft one for longer than its seconds, the client is disconnected at
// once and its queue dropped, as Redis's checkClientOutputBufferLimits does.
//
// Once a connection has an outbox, every reply of its batches goes through it too
// (runBatch moves them there), so replies and pushes leave in the order the
// executor produced them.
type outbox struct {
	conn net.Conn // the socket (its protocol guard, which counts the bytes out)

	mu       sync.Mutex
	cond     sync.Cond // signalled when buf fills, the outbox closes or a write ends
	buf      []byte    // queued, not handed to the socket yet
	spare    []byte    // the writer's other buffer
	inflight int       // bytes being written by the writer goroutine now
	closed   bool      // disconnected (limit, error or close): pushes are dropped

	// executor-owned: when the soft limit was first exceeded, zero if it is not now
	softSince time.Time
}

// obufLimit is one client class's client-output-buffer-limit.
type obufLimit struct {
	hard, soft  uint64
	softSeconds int64
}

// outboxKeepMax bounds the buffers an idle outbox keeps for reuse.
const outboxKeepMax = 64 << 10

// newOutbox starts the writer goroutine of conn. Runs on the executor.
func newOutbox(conn net.Conn) *outbox {
	o := &outbox{conn: conn}
	o.cond.L = &o.mu
	go o.writeLoop()
	return o
}

// push queues b (copied) and enforces lim. It returns false when this push took
// the client over its limit (its socket is then closed). A push to a closed
// outbox is dropped. Runs on the executor; it never blocks on the socket.
func (o *outbox) push(b []byte, lim obufLimit, now time.Time) bool {
	if len(b) == 0 {
		return true
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return true
	}
	wasEmpty := len(o.buf) == 0 // only then may the writer be waiting
	o.buf = append(o.buf, b...)
	used := uint64(len(o.buf) + o.inflight)
	over := o.overLimit(used, lim, now)
	if over {
		o.closed, o.buf = true, nil
	}
	if wasEmpty || over {
		o.cond.Broadcast() // the writer (and drain, which only waits for it)
	}
	o.mu.Unlock()
	if over {
		o.conn.Close() // the connection's read fails and the client is freed (forgetClient)
	}
	return !over
}

// overLimit is Redis's checkClientOutputBufferLimits for used queued bytes.
// Called with o.mu held, on the executor.
func (o *outbox) overLimit(used uint64, lim obufLimit, now time.Time) bool {
	if lim.hard > 0 && used >= lim.hard {
		return true
	}
	if lim.soft == 0 || used < lim.soft {
		o.softSince = time.Time{}
		return false
	}
	if o.softSince.IsZero() {
		o.softSince = now
		return false
	}
	return now.Unix()-o.softSince.Unix() > lim.softSeconds
}

// pending is the number of bytes queued or being written.
func (o *outbox) pending() int {
	n, _ := o.usage()
	return n
}

// usage is the bytes held waiting for the socket and the buffers holding them
// (the one being written, the one queued behind it): CLIENT LIST's omem and
// oll, and the client's part of used_memory. Bytes queued while the writer is
// idle are not counted: the writer was woken for them and hands them to the
// kernel as soon as it runs, where Redis writes a client's replies before its
// next command (beforeSleep). Counting them made memory depend on when the
// scheduler ran the writers: on a loaded machine a round of tracking
// invalidations sent by an eviction was counted as client memory and evicted
// the whole database (maxmemory.tcl's "eviction feedback loop"). A writer
// stuck on a full socket has bytes in flight, and then everything counts. The
// output-buffer limits (push) count every queued byte.
func (o *outbox) usage() (bytes, bufs int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inflight == 0 {
		return 0, 0
	}
	if len(o.buf) > 0 {
		bufs++
	}
	return len(o.buf) + o.inflight, bufs + 1
}

// writeLoop runs on the outbox's own goroutine until the outbox closes: it hands
// the queued bytes to the socket, a whole buffer per write.
func (o *outbox) writeLoop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		for len(o.buf) == 0 && !o.closed {
			o.cond.Wait()
		}
		if o.closed {
			o.cond.Broadcast()
			return
		}
		out := o.buf
		o.buf, o.spare = o.spare[:0], nil
		o.inflight = len(out)
		o.mu.Unlock()
		_, err := o.conn.Write(out)
		o.mu.Lock()
		o.inflight = 0
		if cap(out) <= outboxKeepMax {
			o.spare = out[:0]
		}
		if err != nil {
			o.closed, o.buf = true, nil
		}
		o.cond.Broadcast() // drain waits for this
	}
}

// drain waits until everything queued so far is written or the outbox closed.
// Runs on the connection goroutine (QUIT: its +OK is queued here).
func (o *outbox) drain() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for !o.closed && (len(o.buf) > 0 || o.inflight > 0) {
		o.cond.Wait()
	}
}

// close stops the writer goroutine and drops what is queued. Safe on any goroutine.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed, o.buf = true, nil
	o.cond.Broadcast()
	o.mu.Unlock()
}
