package myredis

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
)

// Supervision by upstart or systemd, as Redis 7.0's supervised setting
// (no, upstart, systemd, auto) works. The process asks for it once at start,
// before loading the data and instead of daemonizing:
//
//   - upstart: with UPSTART_JOB set, the process stops itself (SIGSTOP), which
//     tells upstart ("expect stop") it is ready, and UPSTART_JOB is unset;
//   - systemd: the notify socket (NOTIFY_SOCKET, a path or an abstract "@name")
//     gets "STATUS=Redis is loading...", then, once the server listens, the
//     ready status and READY=1, and STOPPING=1 when it shuts down, as sd_notify
//     sends them for Redis;
//   - auto picks upstart when UPSTART_JOB is set, else systemd when
//     NOTIFY_SOCKET is.
//
// When the requested supervisor is not there, the process is not supervised
// (INFO process_supervised:no) and a warning says why, as Redis's.

// supervisedModes are the supervised setting's values, in Redis's order.
var supervisedModes = []string{"upstart", "systemd", "auto", "no"}

// Supervisor is the process's supervision, from Supervise. The zero value
// (and nil) is an unsupervised process.
type Supervisor struct {
	// Mode is "upstart" or "systemd" when supervised, "" when not.
	Mode string
	// Notes are the log lines of the detection, for the caller's logger:
	// warnings when the requested supervisor is missing.
	Notes  []SupervisorNote
	socket string // systemd's notify socket
}

// SupervisorNote is one log line of the detection.
type SupervisorNote struct {
	Warning bool
	Msg     string
}

// Supervise sets up supervision for mode (a supervised value). Upstart's
// SIGSTOP happens here, so call it early, before loading, as Redis does.
func Supervise(mode string) *Supervisor {
	s := &Supervisor{}
	switch strings.ToLower(mode) {
	case "auto":
		switch {
		case os.Getenv("UPSTART_JOB") != "":
			s.note(false, "upstart supervision detected")
			s.upstart()
		case os.Getenv("NOTIFY_SOCKET") != "":
			s.note(false, "systemd supervision detected")
			s.systemd()
		}
	case "upstart":
		s.upstart()
	case "systemd":
		s.systemd()
	}
	return s
}

func (s *Supervisor) note(warning bool, msg string) {
	s.Notes = append(s.Notes, SupervisorNote{warning, msg})
}

func (s *Supervisor) upstart() {
	if os.Getenv("UPSTART_JOB") == "" {
		s.note(true, "upstart supervision requested, but UPSTART_JOB not found!")
		return
	}
	s.note(false, "supervised by upstart, will stop to signal readiness.")
	syscall.Kill(os.Getpid(), syscall.SIGSTOP) // upstart continues us (SIGCONT)
	os.Unsetenv("UPSTART_JOB")
	s.Mode = "upstart"
}

func (s *Supervisor) systemd() {
	s.socket = os.Getenv("NOTIFY_SOCKET")
	if err := s.notify("STATUS=Redis is loading...\n"); err != nil {
		s.note(true, "systemd supervision error: "+err.Error())
		s.socket = ""
		return
	}
	s.note(false, "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.")
	s.Mode = "systemd"
}

var errNoNotifySocket = errors.New("NOTIFY_SOCKET not found!")

// notify sends one sd_notify message to systemd's socket.
func (s *Supervisor) notify(msg string) error {
	if s.socket == "" {
		return errNoNotifySocket
	}
	name := s.socket
	if name[0] == '@' {
		name = "\x00" + name[1:] // an abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(msg))
	return err
}

// Ready tells systemd the server accepts connections (a replica: read-only,
// waiting for its master). Call it once the server listens.
func (s *Supervisor) Ready(replica bool) {
	if s == nil || s.Mode != "systemd" {
		return
	}
	if replica {
		s.notify("STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n")
	} else {
		s.notify("STATUS=Ready to accept connections\n")
	}
	s.notify("READY=1\n")
}

// status sends a systemd status line ("STATUS=...\n").
func (s *Supervisor) status(msg string) {
	if s != nil && s.Mode == "systemd" {
		s.notify(msg)
	}
}

// Stopping tells systemd the server is shutting down.
func (s *Supervisor) Stopping() {
	if s != nil && s.Mode == "systemd" {
		s.notify("STOPPING=1\n")
	}
}

// WithSupervisor tells the server how the process is supervised: INFO's
// process_supervised, systemd's ready message once it listens, and its
// stopping message at SHUTDOWN.
func WithSupervisor(sup *Supervisor) Option { return func(s *Server) { s.sup = sup } }

// processSupervised is INFO's process_supervised.
func (s *Server) processSupervised() string {
	if s.sup == nil || s.sup.Mode == "" {
		return "no"
	}
	return s.sup.Mode
}

// supervisorReady tells systemd the server is ready. Runs on the goroutine
// that starts serving, once the sockets listen.
func (s *Server) supervisorReady() {
	if s.sup == nil || s.sup.Mode == "" {
		return
	}
	var replica bool
	s.submit(func() { replica = s.isReplica() })
	s.sup.Ready(replica)
}
