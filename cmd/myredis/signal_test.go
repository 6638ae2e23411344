package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// exited waits up to 10 s for the process to end and returns its exit code
// (-1: still running after wait).
func exited(t *testing.T, done <-chan int, wait time.Duration) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(wait):
		return -1
	}
}

// shutdown-on-sigterm and shutdown-on-sigint give a signal SHUTDOWN's flags:
// default saves when save points are set, nosave does not, save saves without
// save points, and a save that fails keeps the server running unless force.
func TestShutdownOnSignalFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		sig   syscall.Signal
		saved bool
	}{
		{"sigterm default with save points", []string{"--save", "3600 1"}, syscall.SIGTERM, true},
		{"sigterm nosave", []string{"--save", "3600 1", "--shutdown-on-sigterm", "nosave"}, syscall.SIGTERM, false},
		{"sigint default without save points", []string{"--save", ""}, syscall.SIGINT, false},
		{"sigint save without save points", []string{"--save", "", "--shutdown-on-sigint", "save", "now"}, syscall.SIGINT, true},
		{"sigterm's flags are not sigint's", []string{"--save", "", "--shutdown-on-sigint", "save"}, syscall.SIGTERM, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd, logs, addr := startBinary(t, append([]string{"--dir", dir}, tc.args...)...)
			done := make(chan int, 1)
			go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
			c := redistest.Dial(t, addr)
			if got := c.Do("SET", "k", "v"); got != "+OK\r\n" {
				t.Fatalf("SET: %q", got)
			}
			cmd.Process.Signal(tc.sig)
			if code := exited(t, done, 10*time.Second); code != 0 {
				t.Fatalf("exit code %d after %v\n%s", code, tc.sig, logs)
			}
			_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
			if saved := err == nil; saved != tc.saved {
				t.Fatalf("dump.rdb written: %v, want %v\n%s", saved, tc.saved, logs)
			}
		})
	}
}

// A save that fails on SIGTERM (its directory removed) leaves the server
// running, as Redis; with force the next SIGTERM stops it all the same.
func TestShutdownOnSignalFailedSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.Mkdir(dir, 0o755)
	cmd, logs, addr := startBinary(t, "--dir", dir, "--save", "3600 1")
	done := make(chan int, 1)
	go func() { cmd.Wait(); done <- cmd.ProcessState.ExitCode() }()
	c := redistest.Dial(t, addr)
	os.RemoveAll(dir)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, done, time.Second); code != -1 {
		t.Fatalf("exited (%d) though the save failed\n%s", code, logs)
	}
	if got := c.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after the failed shutdown: %q", got)
	}
	if got := c.Do("CONFIG", "SET", "shutdown-on-sigterm", "force"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exited(t, done, 10*time.Second); code != 0 {
		t.Fatalf("exit code %d with force\n%s", code, logs)
	}
}
