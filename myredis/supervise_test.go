package myredis_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"waitroom/myredis"
	"waitroom/myredis/redistest"
)

// notifySocket is a stand-in for systemd's notify socket: it returns the
// socket's path and a function reading the next message.
func notifySocket(t *testing.T) (string, func() string) {
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return path, func() string {
		buf := make([]byte, 512)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no message on the notify socket: %v", err)
		}
		return string(buf[:n])
	}
}

// TestSupervisedSystemd: with supervised systemd (or auto and NOTIFY_SOCKET
// set) the server tells systemd it is loading, then ready once it serves, then
// stopping at SHUTDOWN, and INFO says process_supervised:systemd.
func TestSupervisedSystemd(t *testing.T) {
	for _, mode := range []string{"systemd", "auto"} {
		t.Run(mode, func(t *testing.T) {
			path, next := notifySocket(t)
			t.Setenv("NOTIFY_SOCKET", path)
			t.Setenv("UPSTART_JOB", "")
			sup := myredis.Supervise(mode)
			if sup.Mode != "systemd" {
				t.Fatalf("Supervise(%q) with NOTIFY_SOCKET: mode %q, notes %v", mode, sup.Mode, sup.Notes)
			}
			if got := next(); got != "STATUS=Redis is loading...\n" {
				t.Fatalf("first message %q", got)
			}
			cfg := myredis.DefaultConfig()
			if err := cfg.Set("supervised", mode); err != nil {
				t.Fatal(err)
			}
			_, addr := redistest.StartMyRedisConfig(t, cfg, myredis.WithSupervisor(sup))
			for _, want := range []string{"STATUS=Ready to accept connections\n", "READY=1\n"} {
				if got := next(); got != want {
					t.Fatalf("got %q, want %q", got, want)
				}
			}
			c := redistest.Dial(t, addr)
			if f := infoFields(t, c.Do("INFO", "server")); f["process_supervised"] != "systemd" {
				t.Errorf("process_supervised = %q", f["process_supervised"])
			}
			mustDo(t, c, bulks("supervised", mode), "CONFIG", "GET", "supervised")
			c.DoErr("SHUTDOWN", "NOSAVE") // no reply: the connection closes
			if got := next(); got != "STOPPING=1\n" {
				t.Errorf("at SHUTDOWN: %q", got)
			}
		})
	}
}

// TestSupervisedMissing: a supervisor that is not there leaves the process
// unsupervised, with Redis's warning; no supervision at all is INFO's "no".
func TestSupervisedMissing(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("UPSTART_JOB", "")
	for mode, warning := range map[string]string{
		"systemd": "systemd supervision error: NOTIFY_SOCKET not found!",
		"upstart": "upstart supervision requested, but UPSTART_JOB not found!",
		"auto":    "", "no": "",
	} {
		sup := myredis.Supervise(mode)
		if sup.Mode != "" {
			t.Errorf("Supervise(%q) without a supervisor: mode %q", mode, sup.Mode)
		}
		var warned []string
		for _, n := range sup.Notes {
			if n.Warning {
				warned = append(warned, n.Msg)
			}
		}
		if strings.Join(warned, "|") != warning {
			t.Errorf("Supervise(%q) warnings %q, want %q", mode, warned, warning)
		}
	}
	c, _, _ := start(t)
	if f := infoFields(t, c.Do("INFO", "server")); f["process_supervised"] != "no" {
		t.Errorf("process_supervised = %q", f["process_supervised"])
	}
	cfg := myredis.DefaultConfig()
	if err := cfg.Set("supervised", "bogus"); err == nil || err.Error() != "argument(s) must be one of the following: upstart, systemd, auto, no" {
		t.Errorf("supervised bogus: %v", err)
	}
}

// TestSupervisedSystemdBinary: the myredis program started by systemd (with
// NOTIFY_SOCKET and supervised systemd) notifies it through loading, ready and
// stopping at SIGTERM, and does not daemonize though daemonize is yes.
func TestSupervisedSystemdBinary(t *testing.T) {
	bin := redistest.BuildMyRedis(t)
	path, next := notifySocket(t)
	port := redistest.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--supervised", "systemd", "--daemonize", "yes",
		"--dir", t.TempDir(), "--logfile", filepath.Join(t.TempDir(), "log"))
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	for _, want := range []string{"STATUS=Redis is loading...\n", "STATUS=Ready to accept connections\n", "READY=1\n"} {
		if got := next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	c := redistest.Dial(t, "127.0.0.1:"+strconv.Itoa(port))
	if f := infoFields(t, c.Do("INFO", "server")); f["process_supervised"] != "systemd" || f["process_id"] != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("process_supervised %q, process_id %q (started %d: not daemonized)", f["process_supervised"], f["process_id"], cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if got := next(); got != "STOPPING=1\n" {
		t.Errorf("at SIGTERM: %q", got)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("myredis did not exit after SIGTERM")
	}
}
