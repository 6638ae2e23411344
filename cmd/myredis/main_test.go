package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// startBinary runs the built myredis with args and waits until it answers.
func startBinary(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	port := redistest.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var logs bytes.Buffer
	cmd := exec.Command(redistest.BuildMyRedis(t), append(args, "--port", strconv.Itoa(port))...)
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := redistest.DialErr(addr); err == nil {
			c.Close()
			return cmd, &logs, addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("myredis not listening on %s:\n%s", addr, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFlagsAndConfigFile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "redis.conf")
	os.WriteFile(conf, []byte("# a comment\nrequirepass \"from file\"\nhz 20\ndatabases 4\nsave \"\"\n"), 0o644)
	_, _, addr := startBinary(t, conf, "--maxclients", "77")
	c := redistest.Dial(t, addr)
	if got := c.Do("GET", "k"); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("requirepass from the file: %q", got)
	}
	if got := c.Do("AUTH", "from file"); got != "+OK\r\n" {
		t.Fatalf("AUTH: %q", got)
	}
	for name, want := range map[string]string{"hz": "20", "databases": "4", "maxclients": "77"} {
		if got := c.Do("CONFIG", "GET", name); got != redistest.Bulks(name, want) {
			t.Errorf("CONFIG GET %s: %q, want %s", name, got, want)
		}
	}
	if got := c.Do("SELECT", "4"); got != "-ERR DB index is out of range\r\n" {
		t.Errorf("SELECT 4 with 4 databases: %q", got)
	}
}

func TestBadFlags(t *testing.T) {
	bin := redistest.BuildMyRedis(t)
	for _, args := range [][]string{
		{"--port", "notaport"},
		{"--nosuchflag", "1"},
		{"--proto-max-bulk-len", "10"},
		{"/nonexistent/redis.conf"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("myredis %s: err %v, want exit status 1 (as redis-server)\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "*** FATAL CONFIG FILE ERROR") && !strings.Contains(string(out), "Fatal error, can't open config file") {
			t.Errorf("myredis %s: message %q", strings.Join(args, " "), out)
		}
	}
}

func TestSignalShutsDownCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd, logs, addr := startBinary(t)
		c := redistest.Dial(t, addr)
		c.Do("SET", "k", "v")
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v: exit %v\n%s", sig, err, logs.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: still running after 10s", sig)
		}
		if !strings.Contains(logs.String(), "shutting down") {
			t.Errorf("%v: no shutdown log line:\n%s", sig, logs.String())
		}
	}
}

// TestHelpAndVersion: --help and --version as redis-server prints them (usage on
// stderr with status 1, the version line on stdout with status 0).
func TestHelpAndVersion(t *testing.T) {
	bin := redistest.BuildMyRedis(t)
	for _, arg := range []string{"--version", "-v"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || !regexp.MustCompile(`^MyRedis server v=7\.0\.15 sha=[0-9a-f]{8}:[01] malloc=go bits=64 build=go\S+\n$`).Match(out) {
			t.Errorf("%s: %q %v", arg, out, err)
		}
	}
	for _, arg := range []string{"--help", "-h"} {
		cmd := exec.Command(bin, arg)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || len(out) != 0 ||
			!strings.HasPrefix(stderr.String(), "Usage: ./myredis [/path/to/redis.conf] [options] [-]\n") {
			t.Errorf("%s: stdout %q stderr %q %v", arg, out, stderr.String(), err)
		}
	}
}

// TestShutdownCommandExits: SHUTDOWN ends the process with status 0, after
// writing the pidfile at start and removing it at the end; the log goes to logfile.
func TestShutdownCommandExits(t *testing.T) {
	dir := t.TempDir()
	pid, logfile := filepath.Join(dir, "myredis.pid"), filepath.Join(dir, "myredis.log")
	cmd, _, addr := startBinary(t, "--pidfile", pid, "--logfile", logfile, "--timeout", "300",
		"--tcp-keepalive", "60", "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru", "--tcp-backlog", "128",
		"--daemonize", "no")
	if b, err := os.ReadFile(pid); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("pidfile: %q %v, want %d", b, err, cmd.Process.Pid)
	}
	c := redistest.Dial(t, addr)
	for name, want := range map[string]string{"timeout": "300", "tcp-keepalive": "60", "maxmemory": "104857600",
		"maxmemory-policy": "allkeys-lru", "tcp-backlog": "128", "daemonize": "no"} {
		if got := c.Do("CONFIG", "GET", name); got != redistest.Bulks(name, want) {
			t.Errorf("CONFIG GET %s: %q, want %s", name, got, want)
		}
	}
	c.Write(redistest.Encode("SHUTDOWN"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after SHUTDOWN")
	}
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("pidfile left behind: %v", err)
	}
	logs, _ := os.ReadFile(logfile)
	for _, want := range []string{"ready to accept connections", "user requested shutdown", "option=tcp-backlog"} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("log file lacks %q:\n%s", want, logs)
		}
	}
}

// TestDaemonize: --daemonize yes returns at once and leaves the server running
// in the background, which writes its pidfile and stops on SHUTDOWN.
func TestDaemonize(t *testing.T) {
	dir := t.TempDir()
	pid := filepath.Join(dir, "d.pid")
	port := redistest.FreePort(t)
	out, err := exec.Command(redistest.BuildMyRedis(t), "--daemonize", "yes", "--port", strconv.Itoa(port),
		"--pidfile", pid, "--logfile", filepath.Join(dir, "d.log")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var c *redistest.Conn
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = redistest.DialErr(addr); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the daemon never listened")
		}
	}
	b, _ := os.ReadFile(pid)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if n <= 0 {
		t.Fatalf("pidfile: %q", b)
	}
	t.Cleanup(func() { syscall.Kill(n, syscall.SIGKILL) })
	c.Write(redistest.Encode("SHUTDOWN", "NOSAVE"))
	c.ReadAll(5 * time.Second)
	for end := time.Now().Add(10 * time.Second); syscall.Kill(n, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the daemon did not exit after SHUTDOWN")
		}
	}
}
