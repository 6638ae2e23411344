package myredis

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// connServer accepts connections and serves each on its own goroutine, as
// redcon.Server did: read the requests a read brought, hand the first to the
// handler (which takes the rest with ReadPipeline), flush the replies, read
// again. It reads through a queryBuf (querybuf.go) instead of redcon's reader,
// whose buffer never shrank. Connections still speak redcon.Conn to the handler.
type connServer struct {
	handler func(conn redcon.Conn, cmd redcon.Command)
	accept  func(conn redcon.Conn) bool
	closed  func(conn redcon.Conn, err error)
	epoch   *atomic.Uint64 // the server's cron ticks (queryBuf's peak rule)

	mu    sync.Mutex
	ln    net.Listener
	conns map[*srvConn]struct{}
	done  bool
}

var errDetached = errors.New("detached")

func newConnServer(s *Server) *connServer {
	return &connServer{handler: s.handle, accept: s.accept, closed: s.closed,
		epoch: &s.qbufEpoch, conns: make(map[*srvConn]struct{})}
}

// Serve accepts on ln until Close, then closes the connections.
func (cs *connServer) Serve(ln net.Listener) error {
	cs.mu.Lock()
	if cs.done {
		cs.mu.Unlock()
		ln.Close()
		return nil
	}
	cs.ln = ln
	cs.mu.Unlock()
	defer func() {
		ln.Close()
		cs.mu.Lock()
		defer cs.mu.Unlock()
		for c := range cs.conns {
			c.nc.Close()
		}
		cs.conns = nil
	}()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			cs.mu.Lock()
			done := cs.done
			cs.mu.Unlock()
			if done || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of file descriptors and the like: wait before the next
			// try (as net/http's Serve), not spin on the error.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		c := &srvConn{nc: nc, addr: nc.RemoteAddr().String(), wr: redcon.NewWriter(nc)}
		c.qb.init(nc, cs.epoch)
		cs.mu.Lock()
		if cs.conns == nil { // closed meanwhile
			cs.mu.Unlock()
			nc.Close()
			return nil
		}
		cs.conns[c] = struct{}{}
		cs.mu.Unlock()
		if cs.accept != nil && !cs.accept(c) {
			cs.mu.Lock()
			delete(cs.conns, c)
			cs.mu.Unlock()
			c.Close()
			continue
		}
		go cs.serveConn(c)
	}
}

// Close stops accepting; Serve then closes the connections.
func (cs *connServer) Close() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.done = true
	if cs.ln == nil {
		return nil
	}
	return cs.ln.Close()
}

// serveConn runs one connection's requests. Connection goroutine.
func (cs *connServer) serveConn(c *srvConn) {
	err := c.loop(cs.handler)
	if err != errDetached {
		c.nc.Close()
	}
	cs.mu.Lock()
	if cs.conns != nil {
		delete(cs.conns, c)
	}
	cs.mu.Unlock()
	if cs.closed != nil {
		if err == io.EOF {
			err = nil
		}
		cs.closed(c, err)
	}
}

func (c *srvConn) loop(handler func(redcon.Conn, redcon.Command)) error {
	for {
		clear(c.batch)
		batch, err := c.qb.readBatch(c.batch[:0])
		c.batch = batch
		if err != nil {
			if errors.Is(err, errQueryProtocol) {
				c.wr.WriteError("ERR " + err.Error())
				c.wr.Flush()
			}
			return err
		}
		c.cmds = batch
		for len(c.cmds) > 0 {
			cmd := c.cmds[0]
			c.cmds = c.cmds[1:]
			handler(c, cmd)
		}
		if c.detached {
			return errDetached
		}
		if c.closed {
			return nil
		}
		if err := c.wr.Flush(); err != nil {
			return err
		}
	}
}

// srvConn is a client connection as the handler sees it (redcon.Conn).
type srvConn struct {
	nc       net.Conn
	addr     string
	wr       *redcon.Writer
	qb       queryBuf
	ctx      any
	batch    []redcon.Command // the requests of the last read (reused)
	cmds     []redcon.Command // those not handed to the handler yet
	closed   bool
	detached bool
}

func (c *srvConn) RemoteAddr() string { return c.addr }

// Close flushes what was written and closes the socket. Connection goroutine.
func (c *srvConn) Close() error {
	c.wr.Flush()
	c.closed = true
	return c.nc.Close()
}

func (c *srvConn) WriteError(msg string)               { c.wr.WriteError(msg) }
func (c *srvConn) WriteString(str string)              { c.wr.WriteString(str) }
func (c *srvConn) WriteBulk(bulk []byte)               { c.wr.WriteBulk(bulk) }
func (c *srvConn) WriteBulkString(bulk string)         { c.wr.WriteBulkString(bulk) }
func (c *srvConn) WriteInt(num int)                    { c.wr.WriteInt(num) }
func (c *srvConn) WriteInt64(num int64)                { c.wr.WriteInt64(num) }
func (c *srvConn) WriteUint64(num uint64)              { c.wr.WriteUint64(num) }
func (c *srvConn) WriteArray(count int)                { c.wr.WriteArray(count) }
func (c *srvConn) WriteNull()                          { c.wr.WriteNull() }
func (c *srvConn) WriteRaw(data []byte)                { c.wr.WriteRaw(data) }
func (c *srvConn) WriteAny(v any)                      { c.wr.WriteAny(v) }
func (c *srvConn) WriteBulkFrom(n int64, rb io.Reader) { c.wr.WriteBulkFrom(n, rb) }
func (c *srvConn) Context() any                        { return c.ctx }
func (c *srvConn) SetContext(v any)                    { c.ctx = v }
func (c *srvConn) SetReadBuffer(int)                   {} // the query buffer sizes itself
func (c *srvConn) NetConn() net.Conn                   { return c.nc }

// ReadPipeline takes the rest of the batch.
func (c *srvConn) ReadPipeline() []redcon.Command {
	cmds := c.cmds
	c.cmds = nil
	return cmds
}

func (c *srvConn) PeekPipeline() []redcon.Command { return c.cmds }

// Detach takes the connection out of the serving loop (a replica's socket).
func (c *srvConn) Detach() redcon.DetachedConn {
	c.detached = true
	dc := &detachedConn{srvConn: c, queued: append([]redcon.Command(nil), c.cmds...)}
	c.cmds = nil
	return dc
}

// detachedConn reads a detached connection's requests one at a time.
type detachedConn struct {
	*srvConn
	queued []redcon.Command
}

func (dc *detachedConn) Flush() error { return dc.wr.Flush() }

// ReadCommand returns the next request. Its goroutine is the socket's only reader.
func (dc *detachedConn) ReadCommand() (redcon.Command, error) {
	for len(dc.queued) == 0 {
		cmds, err := dc.qb.readBatch(nil)
		if err != nil {
			return redcon.Command{}, err
		}
		dc.queued = cmds
	}
	cmd := dc.queued[0]
	dc.queued = dc.queued[1:]
	return cmd, nil
}
