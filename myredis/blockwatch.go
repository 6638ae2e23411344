package myredis

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// A blocked client must still notice that its peer went away. Redis keeps reading
// the socket of a blocked client (the bytes pile up in its query buffer, unparsed)
// and frees the client on EOF, which takes it off every wait list before a key it
// waited for is served. The connection reads its socket only between handler calls, and
// our handler waits inside the call while the client is blocked, so nobody reads the
// socket then. The guard below the query buffer does it instead: while the client is blocked,
// a goroutine reads the raw socket into the guard's held input (which the query buffer gets
// first once the client is unblocked, in order) and reports EOF or an error. When
// the client is woken, the read is interrupted with a past read deadline and the
// goroutine is joined before the connection reads again, so the two never read at once.

// eofWatch reads a blocked client's socket. Its goroutine is the only reader of
// the guard while it runs.
type eofWatch struct {
	gc       *guardConn
	gone     chan struct{} // closed when the socket hit EOF, an error or the limit
	done     chan struct{} // closed when the goroutine returned
	stopping atomic.Bool
}

// watchEOF starts reading the socket. Runs on the connection goroutine, which must
// call stop before it reads again.
func (c *guardConn) watchEOF() *eofWatch {
	w := &eofWatch{gc: c, gone: make(chan struct{}), done: make(chan struct{})}
	go w.read()
	return w
}

// read runs on its own goroutine while the client is blocked.
func (w *eofWatch) read() {
	defer close(w.done)
	var buf [4096]byte
	for {
		n, err := w.gc.readRaw(buf[:])
		if n > 0 || err != nil && !(w.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded)) {
			w.gc.bytes.read(n)
		}
		if n > 0 {
			w.gc.held = append(w.gc.held, buf[:n]...)
			w.gc.qbuf.Store(int64(len(w.gc.held) + len(w.gc.out)))
			if l := w.gc.g.limits; l != nil && l.overQueryLimit(int64(len(w.gc.held))) { // client-query-buffer-limit
				w.gc.readErr = errQueryBufLimit
				close(w.gone)
				return
			}
		}
		if err == nil {
			continue
		}
		if w.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
			return // interrupted by stop: the socket is fine
		}
		w.gc.readErr = err
		close(w.gone)
		return
	}
}

// stop interrupts the read and waits for the goroutine. Runs on the connection
// goroutine.
func (w *eofWatch) stop() {
	w.stopping.Store(true)
	w.gc.Conn.SetReadDeadline(time.Now())
	<-w.done
	w.gc.Conn.SetReadDeadline(time.Time{})
}

// readRaw reads the socket without telling the arrival order that the connection
// is back to reading (order.go): it is not, it is blocked.
func (c *guardConn) readRaw(p []byte) (int, error) {
	if oc, ok := c.Conn.(*orderConn); ok {
		return oc.readQuiet(p)
	}
	return c.Conn.Read(p)
}
