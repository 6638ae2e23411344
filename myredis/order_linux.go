//go:build linux

package myredis

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Arrival order on Linux: kernel receive timestamps (SO_TIMESTAMPNS, read with
// recvmsg) and one level-triggered epoll set of the client sockets. See order.go.

// orderSys is the epoll set and the executor's scratch space.
type orderSys struct {
	ep      int
	stamp   int // a socket that keeps the kernel stamping packets (initSys)
	evs     []syscall.EpollEvent
	peekTs  int64
	peekFn  func(fd uintptr)
	peekOOB [64]byte
}

// orderRead is the state of one read, kept in the connection so that a read
// allocates nothing (rawConn.Read takes a callback).
type orderRead struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	p     []byte
	n     int
	err   error
	quiet bool // the blocked-client watch reads: no state changes (blockwatch.go)
	oob   [64]byte
}

func (o *arrivalOrder) initSys() bool {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	// The kernel stamps packets only while some socket asks for stamps, and
	// switching that on takes it a moment: a socket of the server's own keeps it
	// on, so that even a new connection's first bytes carry their time.
	stamp, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err == nil {
		err = syscall.SetsockoptInt(stamp, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}
	if err != nil {
		syscall.Close(ep)
		if stamp >= 0 {
			syscall.Close(stamp)
		}
		return false
	}
	o.sys.ep, o.sys.stamp = ep, stamp
	o.sys.evs = make([]syscall.EpollEvent, 64)
	o.sys.peekFn = o.peek
	return true
}

// closeSys releases the epoll set and the stamping socket (Server.Close).
func (o *arrivalOrder) closeSys() {
	syscall.Close(o.sys.ep)
	syscall.Close(o.sys.stamp)
}

// wrap makes an accepted TCP socket an orderConn; other sockets, or when the
// kernel refuses timestamps, stay as they are.
func (o *arrivalOrder) wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if o == nil || !o.on || !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	oc := &orderConn{Conn: c, o: o}
	oc.rd.rc = rc
	oc.rd.fn = oc.readOnce
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return c
	}
	var serr error = syscall.ENOTSUP
	cerr := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
		if serr == nil {
			o.addLocked(oc)
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: oc.id}
			if serr = syscall.EpollCtl(o.sys.ep, syscall.EPOLL_CTL_ADD, int(fd), &ev); serr != nil {
				o.removeLocked(oc)
			}
		}
	})
	if cerr != nil || serr != nil {
		return c
	}
	return oc
}

// Read reads as redcon asks, with the bytes' arrival time. Connection goroutine.
func (c *orderConn) Read(p []byte) (int, error) {
	c.phase.Store(phaseReady) // back to reading: the executor waits for this socket
	return c.read(p, false)
}

// readQuiet reads for the blocked-client watch: the connection stays busy.
func (c *orderConn) readQuiet(p []byte) (int, error) { return c.read(p, true) }

func (c *orderConn) read(p []byte, quiet bool) (int, error) {
	r := &c.rd
	r.p, r.n, r.err, r.quiet = p, 0, nil, quiet
	err := r.rc.Read(r.fn)
	r.p = nil
	if err == nil {
		err = r.err
	}
	if err != nil {
		return r.n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if r.n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return r.n, nil
}

// readOnce is rawConn.Read's callback: false means "wait until readable".
func (c *orderConn) readOnce(fd uintptr) bool {
	r := &c.rd
	mark := !r.quiet && !c.gone.Load()
	if mark {
		c.setSt(stReading)
	}
	for {
		n, oobn, _, _, err := syscall.Recvmsg(int(fd), r.p, r.oob[:], 0)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if mark {
				c.setSt(0)
			}
			return false
		case nil:
			r.n = n
			if n > 0 {
				c.reads.Add(1) // after the bytes left the socket: see earlierInKernel
			}
			if ts := cmsgTimestamp(r.oob[:oobn]); ts > 0 {
				c.lastTs.Store(ts)
			}
		default:
			r.err = os.NewSyscallError("recvmsg", err)
		}
		if mark {
			if ts := c.lastTs.Load(); r.n > 0 && ts > 0 {
				c.setSt(ts)
			} else {
				c.setSt(0)
			}
		}
		return true
	}
}

// earlierInKernel reports whether a socket other than own holds unread bytes that
// arrived before ts. Runs on the executor.
func (o *arrivalOrder) earlierInKernel(ts int64, own *orderConn, now *int64) bool {
	var n int
	for {
		var err error
		n, err = syscall.EpollWait(o.sys.ep, o.sys.evs, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n < len(o.sys.evs) {
			break
		}
		o.sys.evs = make([]syscall.EpollEvent, 2*len(o.sys.evs)) // all of them at once
	}
	for _, ev := range o.sys.evs[:n] {
		c := o.lookup(ev.Fd)
		if c == nil || c == own || !c.waitedFor(now) {
			continue
		}
		// A peek stays good while no read took bytes: the oldest unread byte is
		// the same. If a read took them just before it counted, the time kept
		// is older than the truth, which can only make the executor wait.
		reads := c.reads.Load()
		if c.peekTs == 0 || c.peekReads != reads {
			o.sys.peekTs = 0
			if c.rd.rc.Control(o.sys.peekFn) != nil {
				continue
			}
			c.peekTs, c.peekReads = o.sys.peekTs, reads
		}
		if t := c.peekTs; t > 0 && t < ts {
			return true
		}
	}
	return false
}

// peek reads the arrival time of a socket's oldest unread byte into peekTs.
func (o *arrivalOrder) peek(fd uintptr) {
	var b [1]byte
	n, oobn, _, _, err := syscall.Recvmsg(int(fd), b[:], o.sys.peekOOB[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if err == nil && n > 0 {
		o.sys.peekTs = cmsgTimestamp(o.sys.peekOOB[:oobn])
	}
}

// cmsgTimestamp finds SO_TIMESTAMPNS's time (unix ns) in recvmsg's control data.
func cmsgTimestamp(b []byte) int64 {
	const align = int(unsafe.Sizeof(uintptr(0)))
	for len(b) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < syscall.SizeofCmsghdr || l > len(b) {
			return 0
		}
		hdr := (syscall.SizeofCmsghdr + align - 1) &^ (align - 1)
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l >= hdr+int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&b[hdr]))
			return ts.Nano()
		}
		next := (l + align - 1) &^ (align - 1)
		if next >= len(b) {
			return 0
		}
		b = b[next:]
	}
	return 0
}
