package myredis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// TLS as Redis's tls-port: a second listener whose connections speak TLS (Go's
// crypto/tls) and are otherwise served exactly as plain ones, by a second connServer
// (conn.go) with the same handlers. It takes any net.Listener, so the TLS
// listener is a wrapper around a TCP one; the handshake runs on the connection's
// own goroutine at its first read, never on the executor.

// TLSConfig is the tls-* settings, by their redis.conf names.
type TLSConfig struct {
	Port        int    // tls-port; 0: no TLS listener
	CertFile    string // tls-cert-file
	KeyFile     string // tls-key-file
	CAFile      string // tls-ca-cert-file
	CADir       string // tls-ca-cert-dir
	AuthClients string // tls-auth-clients: yes (default), no, optional
	Replication bool   // tls-replication: kept for replication's use (CONFIG GET shows it)
	Protocols   string // tls-protocols, e.g. "TLSv1.2 TLSv1.3"; "": TLSv1.2 and up
}

// authClients is tls-auth-clients with its default.
func (t TLSConfig) authClients() string {
	if t.AuthClients == "" {
		return "yes"
	}
	return t.AuthClients
}

// tlsNames are the settings of this file.
var tlsNames = map[string]bool{"tls-port": true, "tls-cert-file": true, "tls-key-file": true,
	"tls-ca-cert-file": true, "tls-ca-cert-dir": true, "tls-auth-clients": true,
	"tls-replication": true, "tls-protocols": true}

// setTLS sets one tls-* setting; false if name is not one of this file's.
func (c *Config) setTLS(name, val string) (bool, error) {
	if !tlsNames[name] {
		return false, nil
	}
	t := &c.TLS
	var err error
	switch name {
	case "tls-port":
		t.Port, err = intConfig(val, 0, 65535)
	case "tls-cert-file":
		t.CertFile = val
	case "tls-key-file":
		t.KeyFile = val
	case "tls-ca-cert-file":
		t.CAFile = val
	case "tls-ca-cert-dir":
		t.CADir = val
	case "tls-auth-clients":
		switch v := strings.ToLower(val); v {
		case "yes", "no", "optional":
			t.AuthClients = v
		default:
			err = errors.New("argument(s) must be one of the following: no, yes, optional")
		}
	case "tls-replication":
		t.Replication, err = parseYesNo(val)
	case "tls-protocols":
		if _, _, perr := tlsVersions(val); perr != nil {
			return true, perr
		}
		t.Protocols = val
	}
	return true, err
}

// tlsConfigParams are CONFIG GET's TLS settings.
func (s *Server) tlsConfigParams(params map[string]func() string) {
	t := &s.cfg.TLS
	params["tls-port"] = func() string { return strconv.Itoa(t.Port) }
	params["tls-cert-file"] = func() string { return t.CertFile }
	params["tls-key-file"] = func() string { return t.KeyFile }
	params["tls-ca-cert-file"] = func() string { return t.CAFile }
	params["tls-ca-cert-dir"] = func() string { return t.CADir }
	params["tls-auth-clients"] = func() string { return t.authClients() }
	params["tls-replication"] = func() string {
		if t.Replication {
			return "yes"
		}
		return "no"
	}
	params["tls-protocols"] = func() string { return t.Protocols }
}

// tlsVersions reads tls-protocols ("TLSv1.2 TLSv1.3") into a version range.
func tlsVersions(list string) (lo, hi uint16, err error) {
	if strings.TrimSpace(list) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, p := range strings.Fields(list) {
		var v uint16
		switch strings.ToLower(p) {
		case "tlsv1":
			v = tls.VersionTLS10
		case "tlsv1.1":
			v = tls.VersionTLS11
		case "tlsv1.2":
			v = tls.VersionTLS12
		case "tlsv1.3":
			v = tls.VersionTLS13
		default:
			return 0, 0, fmt.Errorf("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// buildTLS is Redis's tlsConfigure: the certificate and key, the CAs that sign
// client certificates, and whether clients must show one.
func buildTLS(t TLSConfig) (*tls.Config, error) {
	if t.CertFile == "" {
		return nil, errors.New("No tls-cert-file configured!")
	}
	if t.KeyFile == "" {
		return nil, errors.New("No tls-key-file configured!")
	}
	if (t.authClients() != "no" || t.Replication) && t.CAFile == "" && t.CADir == "" {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("Failed to load certificate: %s: %v", t.CertFile, err)
	}
	lo, hi, err := tlsVersions(t.Protocols)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: lo, MaxVersion: hi}
	if t.CAFile != "" || t.CADir != "" {
		pool, err := loadCAs(t.CAFile, t.CADir)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
	}
	switch t.authClients() {
	case "yes":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// loadCAs reads tls-ca-cert-file and every certificate file of tls-ca-cert-dir.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		pem, err := os.ReadFile(file)
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s", file)
		}
	}
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s", dir)
		}
		for _, e := range entries {
			if pem, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(pem)
			}
		}
	}
	return pool, nil
}

// tlsState is the running TLS listener. The tls.Config is swapped whole when a
// tls-* setting changes (CONFIG SET); handshakes read the current one, so new
// connections get new certificates and the ones already open keep theirs, as
// Redis. CONFIG SET tls-port and bind move ln (listen.go).
type tlsState struct {
	cfg atomic.Pointer[tls.Config]
	rc  *connServer // accepts and reads the TLS connections (conn.go)
	ln  *portListener
}

// tlsNamesApplied are the tls-* settings whose change makes Redis configure
// TLS again (its applyTlsCfg and applyTLSPort): the one named when that fails.
func tlsBlame(names []string) string {
	for _, n := range names {
		if tlsNames[n] && n != "tls-auth-clients" {
			return n
		}
	}
	return names[0]
}

// checkTLSConfig builds the TLS configuration of next before CONFIG SET
// applies it (Redis's applyTlsCfg); it returns nil when TLS is off or
// unchanged, or Redis's error text and the parameter to blame. The caller
// installs the configuration (installTLS) once every setting applied.
func (s *Server) checkTLSConfig(names []string, next Config) (cfg *tls.Config, param, msg string) {
	if next.TLS == s.cfg.TLS || (next.TLS.Port == 0 && !next.TLS.Replication) {
		return nil, "", ""
	}
	cfg, err := buildTLS(next.TLS)
	if err != nil {
		s.log.Warn("tls configuration failed", "err", err)
		return nil, tlsBlame(names), "Unable to update TLS configuration. Check server logs."
	}
	return cfg, "", ""
}

// installTLS makes cfg the configuration of new TLS connections. Runs on the
// executor, after CONFIG SET applied every setting.
func (s *Server) installTLS(cfg *tls.Config) {
	s.mu.Lock()
	st := s.tls
	s.mu.Unlock()
	if cfg != nil && st != nil {
		st.cfg.Store(cfg)
	}
}

// ListenTLS opens the tls-port listener (when tls-port is set) and serves it in
// the background until Close. Call it before Serve or ListenAndServe.
func (s *Server) ListenTLS() error {
	if s.cfg.TLS.Port == 0 {
		return nil
	}
	cfg, err := buildTLS(s.cfg.TLS)
	if err != nil {
		return fmt.Errorf("Failed to configure TLS: %v", err)
	}
	lns, err := listenAll(s.cfg.Bind, s.cfg.TLS.Port) // listen.go
	if err != nil {
		return err
	}
	s.startTLSServer(cfg, lns)
	return nil
}

// startTLSServer serves TLS connections accepted on lns with cfg, in the
// background until Close (which closes lns if it came first).
func (s *Server) startTLSServer(cfg *tls.Config, lns []net.Listener) {
	ln := newPortListener(lns)
	st := &tlsState{ln: ln}
	st.cfg.Store(cfg)
	st.rc = newConnServer(s)
	s.mu.Lock()
	select {
	case <-s.quit:
		s.mu.Unlock()
		ln.Close()
		return
	default:
	}
	s.tls = st
	s.mu.Unlock()
	tl := &tlsListener{Listener: ln, st: st, limits: &s.live}
	go st.rc.Serve(guardListener{tl, &s.live, &s.net, nil})
}

// TLSAddr is the TLS listener's address, nil without one.
func (s *Server) TLSAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tls == nil {
		return nil
	}
	return s.tls.ln.Addr()
}

// closeTLS stops the TLS listener and its connections (Close).
func (s *Server) closeTLS() {
	s.mu.Lock()
	st := s.tls
	s.mu.Unlock()
	if st != nil {
		st.rc.Close()
		st.ln.Close()
	}
}

// tlsListener accepts TCP connections and wraps them in TLS. The TCP socket
// gets tcp-keepalive first; the handshake happens at the first read.
type tlsListener struct {
	net.Listener
	st     *tlsState
	limits *liveSettings
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	setKeepAlive(c, l.limits.keepAlive.Load())
	st := l.st
	return tls.Server(c, &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		return st.cfg.Load(), nil
	}}), nil
}

// serveWithoutTCP serves with no TCP listener when only the TLS one is open
// (port 0), until Close; CONFIG SET port can open one later.
func (s *Server) serveWithoutTCP() error {
	return s.Serve(newPortListener(nil))
}
