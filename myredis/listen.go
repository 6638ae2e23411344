package myredis

import (
	"crypto/tls"
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
	p := &portListener{conns: make(chan net.Conn), errs: make(chan error, 1), closed: make(chan struct{}),
		last: &net.TCPAddr{}} // none yet (port 0): an address all the same, redcon reads it
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

// listenMove is one set of listeners (the plain one or the TLS one) that
// CONFIG SET moves to another bind or port.
type listenMove struct {
	name             string        // "port" or "tls-port": the parameter to blame
	pl               *portListener // nil: the TLS listener not started yet
	oldPort, newPort int
	lns              []net.Listener // opened at the new address
	failed           bool
}

// relisten moves the TCP and TLS listeners to next's bind, port and tls-port
// when CONFIG SET changed any, before the new settings are installed. As
// Redis's changeListenPort and changeBindAddr it closes the old listeners
// first (so the two may trade ports) and opens the new; when one cannot be
// opened it opens the old ones again and returns the parameter to blame and
// Redis's message: the first of the command's names, in its order, whose apply
// fails (bind fails for either listener). tlsCfg is the TLS configuration to
// start a TLS listener with when there is none yet. Runs on the executor.
func (s *Server) relisten(names []string, next Config, tlsCfg *tls.Config) (param, msg string) {
	moves := s.listenMoves(next)
	if len(moves) == 0 {
		return "", ""
	}
	for _, m := range moves {
		if m.pl != nil {
			m.pl.swap(nil)
		}
	}
	failed := false
	for _, m := range moves {
		if m.newPort == 0 {
			continue
		}
		lns, err := listenAll(next.Bind, m.newPort)
		if err != nil {
			s.log.Warn("CONFIG SET: could not listen", "bind", next.Bind, "port", m.newPort, "err", err)
			m.failed, failed = true, true
			continue
		}
		m.lns = lns
	}
	if failed {
		s.restoreListeners(moves)
		return listenBlame(names, moves, next.Bind != s.cfg.Bind)
	}
	for _, m := range moves {
		if m.pl != nil {
			m.pl.swap(m.lns)
		} else if m.lns != nil {
			s.startTLSServer(tlsCfg, m.lns) // tls.go
		}
	}
	return "", ""
}

// listenMoves lists the listener sets next moves: a changed bind moves both.
func (s *Server) listenMoves(next Config) []*listenMove {
	rebind := next.Bind != s.cfg.Bind
	s.mu.Lock()
	pl, _ := s.ln.(*portListener)
	var tpl *portListener
	if s.tls != nil {
		tpl = s.tls.ln
	}
	s.mu.Unlock()
	var moves []*listenMove
	if pl != nil && (rebind || next.Port != s.cfg.Port) { // pl nil: an embedded server, settings only
		moves = append(moves, &listenMove{name: "port", pl: pl, oldPort: s.cfg.Port, newPort: next.Port})
	}
	old, nw := s.cfg.TLS.Port, next.TLS.Port
	if (rebind && (old != 0 || nw != 0)) || nw != old {
		if tpl == nil {
			old = 0 // not listening yet (tls-port was 0)
		}
		moves = append(moves, &listenMove{name: "tls-port", pl: tpl, oldPort: old, newPort: nw})
	}
	return moves
}

// restoreListeners closes what a failed move opened and listens on the old
// addresses again, as Redis's rollback re-applies the old settings.
func (s *Server) restoreListeners(moves []*listenMove) {
	for _, m := range moves {
		closeAll(m.lns)
		if m.pl == nil || m.oldPort == 0 {
			continue
		}
		old, err := listenAll(s.cfg.Bind, m.oldPort)
		if err != nil {
			s.log.Warn("CONFIG SET: could not listen on the old address again", "port", m.oldPort, "err", err)
			continue
		}
		m.pl.swap(old)
	}
}

// listenBlame is the parameter Redis names when moving failed: it applies the
// command's settings in order, and bind re-listens both sets.
func listenBlame(names []string, moves []*listenMove, rebind bool) (param, msg string) {
	for _, n := range names {
		if n == "bind" && rebind {
			return "bind", msgListenBind
		}
		for _, m := range moves {
			if m.name == n && m.failed {
				return n, msgListenPort
			}
		}
	}
	return moves[0].name, msgListenPort
}
