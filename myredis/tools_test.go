// Needs redis-cli and redis-benchmark (skips without them): builds cmd/myredis,
// runs it, and drives it with Redis's own command-line tools.
package myredis_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"waitroom/myredis/redistest"
)

// tool finds a Redis tool or skips the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found in PATH: install redis-tools (apt-get install redis-tools); .ci/run does", name)
	}
	return p
}

// run executes a tool with a timeout and returns stdout and stderr.
func run(t *testing.T, stdin string, name string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "REDISCLI_HISTFILE=/dev/null")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, out.String(), errOut.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("%s %s: timed out", name, strings.Join(args, " "))
	}
	return out.String(), errOut.String()
}

func hostPort(t *testing.T, addr string) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

func TestRedisCLI(t *testing.T) {
	cli := tool(t, "redis-cli")
	addr := redistest.StartMyRedisBinary(t, redistest.BuildMyRedis(t))
	h, p := hostPort(t, addr)
	cliRun := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut := run(t, stdin, cli, append([]string{"-h", h, "-p", p}, args...)...)
		if errOut != "" {
			t.Errorf("redis-cli %s wrote to stderr: %q", strings.Join(args, " "), errOut)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "PONG\n"},
		{[]string{"SET", "greeting", "hello world"}, "OK\n"},
		{[]string{"GET", "greeting"}, "hello world\n"},
		{[]string{"--no-raw", "GET", "greeting"}, "\"hello world\"\n"},
		{[]string{"--no-raw", "GET", "missing"}, "(nil)\n"},
		{[]string{"--no-raw", "INCR", "greeting"}, "(error) ERR value is not an integer or out of range\n"},
		{[]string{"--no-raw", "EXPIRE", "greeting", "100"}, "(integer) 1\n"},
		{[]string{"--no-raw", "NOSUCH", "x"}, "(error) ERR unknown command 'NOSUCH', with args beginning with: 'x' \n"},
		{[]string{"DBSIZE"}, "1\n"},
	} {
		if got := cliRun("", tc.args...); got != tc.want {
			t.Errorf("redis-cli %s: got %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	// Commands from stdin, as in scripts.
	if got := cliRun("SET a 1\nINCRBY a 41\nMGET a nosuch\n"); got != "OK\n42\n42\n\n" {
		t.Errorf("redis-cli from stdin: %q", got)
	}
	// --scan drives SCAN to the end.
	cliRun("MSET k1 1 k2 2 k3 3 other 4\n")
	keys := strings.Fields(cliRun("", "--scan", "--pattern", "k*"))
	if len(keys) != 3 {
		t.Errorf("redis-cli --scan --pattern k*: %q", keys)
	}
	if info := cliRun("", "INFO", "keyspace"); !strings.Contains(info, "db0:keys=6") {
		t.Errorf("redis-cli INFO keyspace: %q", info)
	}
}

func TestRedisBenchmark(t *testing.T) {
	bench := tool(t, "redis-benchmark")
	addr := redistest.StartMyRedisBinary(t, redistest.BuildMyRedis(t))
	h, p := hostPort(t, addr)
	out, errOut := run(t, "", bench, "-h", h, "-p", p, "-t", "set,get,incr", "-n", "10000", "-q")
	all := out + errOut
	for _, bad := range []string{"WARN", "ERR", "rror", "Could not"} {
		if strings.Contains(all, bad) {
			t.Errorf("redis-benchmark reported %q:\n%s", bad, all)
		}
	}
	for _, cmd := range []string{"SET: ", "GET: ", "INCR: "} {
		if !strings.Contains(out, cmd) || !strings.Contains(out, "requests per second") {
			t.Errorf("redis-benchmark output lacks %q:\n%s", cmd, all)
		}
	}
}
