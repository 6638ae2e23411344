package myredis

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The TCP listeners as Redis keeps them: one per address of bind, all on port,
// and CONFIG SET port/bind opens the new ones before it closes the old, so a
// port already in use fails the command and changes nothing (Redis's
// changeListenPort and changeBindAddr).

const (
	msgListenPort = "Unable to listen on this port. Check server logs."
	msgListenBind = "Failed to bind to specified addresses."
)

// bindAddr is one address of the bind setting.
type bindAddr struct {
	host     string
	optional bool // "-addr": skipped when the machine has no such address
}

// parseBind splits Redis's bind list: "*" is every IPv4 address, "::*" every
// IPv6 one, a leading "-" marks an optional address.
func parseBind(bind string) []bindAddr {
	var out []bindAddr
	for _, w := range strings.Fields(bind) {
		a := bindAddr{host: w}
		if strings.HasPrefix(w, "-") {
			a = bindAddr{host: w[1:], optional: true}
		}
		switch a.host {
		case "*":
			a.host = "0.0.0.0"
		case "::*":
			a.host = "::"
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		out = []bindAddr{{host: ""}} // bind "": every address
	}
	return out
}

// listenAll opens a listener on every address of bind at port. An optional
// address the machine does not have is skipped; any other failure closes what
// was opened and returns the error.
func listenAll(bind string, port int) ([]net.Listener, error) {
	var lns []net.Listener
	for _, a := range parseBind(bind) {
		network := "tcp"
		if a.host == "::" {
			network = "tcp6" // "::*" is IPv6 only, as Redis's IPV6_V6ONLY
		}
		ln, err := net.Listen(network, net.JoinHostPort(a.host, strconv.Itoa(port)))
		if err != nil {
			if a.optional && (errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT)) {
				continue
			}
			closeAll(lns)
			return nil, err
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, errors.New("no address of bind could be listened on")
	}
	return lns, nil
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// portListener is the net.Listener redcon serves: it accepts from a set of
// listeners that CONFIG SET can replace while redcon keeps accepting.
type portListener struct {
	conns  chan net.Conn
	errs   chan error
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	lns  []net.Listener // the current set
	last net.Addr       // the first listener's address when the set was last replaced
}

func newPortListener(lns []net.Listener) *portListener {
	p := &portListener{conns: make(chan net.Conn), errs: make(chan error, 1), closed: make(chan struct{})}
	p.swap(lns)
	return p
}

// swap starts accepting on lns and closes the listeners they replace.
func (p *portListener) swap(lns []net.Listener) {
	p.mu.Lock()
	old := p.lns
	p.lns = lns
	if len(lns) > 0 {
		p.last = lns[0].Addr()
	}
	p.mu.Unlock()
	for _, ln := range lns {
		go p.acceptLoop(ln)
	}
	closeAll(old)
}

// current reports whether ln is still one of the listeners served.
func (p *portListener) current(ln net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lns {
		if l == ln {
			return true
		}
	}
	return false
}

// acceptLoop hands ln's connections to Accept. Runs on its own goroutine
// until ln is closed (by swap or Close).
func (p *portListener) acceptLoop(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if p.current(ln) { // a failure of a served listener ends Serve, as before
				select {
				case p.errs <- err:
				default:
				}
			}
			return
		}
		select {
		case p.conns <- c:
		case <-p.closed:
			c.Close()
			return
		}
	}
}

func (p *portListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case err := <-p.errs:
		return nil, err
	case <-p.closed:
		return nil, net.ErrClosed
	}
}

func (p *portListener) Close() error {
	p.once.Do(func() {
		close(p.closed)
		p.mu.Lock()
		lns := p.lns
		p.lns = nil
		p.mu.Unlock()
		closeAll(lns)
	})
	return nil
}

// Addr is the first listener's address; once closed, the last one it had
// (never nil: redcon's Serve reads it, and Close can come first).
func (p *portListener) Addr() net.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lns) == 0 {
		return p.last
	}
	return p.lns[0].Addr()
}

// relisten moves the TCP listeners to next's bind and port when CONFIG SET
// changed either, before the new settings are installed: on failure it
// returns the parameter to blame and Redis's message, and nothing changed.
// Runs on the executor.
func (s *Server) relisten(names []string, next Config) (param, msg string) {
	if next.Port == s.cfg.Port && next.Bind == s.cfg.Bind {
		return "", ""
	}
	s.mu.Lock()
	pl, _ := s.ln.(*portListener)
	s.mu.Unlock()
	if pl == nil {
		return "", "" // not serving (an embedded server): the settings only
	}
	blame, why := "port", msgListenPort
	for _, n := range names {
		if n == "bind" && next.Bind != s.cfg.Bind {
			blame, why = "bind", msgListenBind
			break
		}
		if n == "port" && next.Port != s.cfg.Port {
			break
		}
	}
	if next.Port == 0 { // port 0: no TCP listener, as Redis
		pl.swap(nil)
		return "", ""
	}
	rebind := next.Bind != s.cfg.Bind
	if rebind { // the new addresses may share the port with the old: close first
		pl.swap(nil)
	}
	lns, err := listenAll(next.Bind, next.Port)
	if err != nil {
		s.log.Warn("CONFIG SET: could not listen", "bind", next.Bind, "port", next.Port, "err", err)
		if rebind && s.cfg.Port != 0 { // back to the old addresses, as Redis's changeBindAddr
			if old, err := listenAll(s.cfg.Bind, s.cfg.Port); err == nil {
				pl.swap(old)
			} else {
				s.log.Warn("CONFIG SET: could not listen on the old addresses again", "err", err)
			}
		}
		return blame, why
	}
	pl.swap(lns)
	return "", ""
}
