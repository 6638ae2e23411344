package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("myredis %s: err %v, want exit status 2\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.HasPrefix(string(out), "myredis: ") {
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
