package myredis_test

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitroom/myredis"
)

// Helpers for the transaction and scripting tests: a MyRedis on a free port, a real
// redis-server for differential tests, and a raw RESP connection whose replies are
// the exact bytes a client reads.

// serveMyRedis starts a MyRedis built from cfg on a free loopback port.
func serveMyRedis(t testing.TB, cfg myredis.Config, opts ...myredis.Option) (*myredis.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bind = "127.0.0.1"
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	s := myredis.New(cfg, opts...)
	done := make(chan struct{})
	go func() { s.Serve(ln); close(done) }()
	t.Cleanup(func() {
		s.Close()
		<-done
	})
	return s, ln.Addr().String()
}

// startRealRedisServer starts redis-server on a free port without persistence,
// skipping the test when it is not installed.
func startRealRedisServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found in PATH: install redis-server (apt-get install redis-server) " +
			"to compare MyRedis with real Redis; .ci/run does")
	}
	for attempt := 0; attempt < 5; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c, err := net.Dial("tcp", addr); err == nil {
				rc := &respConn{nc: c, rd: bufio.NewReader(c)}
				reply, err := rc.try("PING")
				c.Close()
				if err == nil && reply == "+PONG\r\n" {
					return addr
				}
			}
		}
		cmd.Process.Kill()
	}
	t.Fatal("cannot start redis-server")
	return ""
}

// respConn sends commands as RESP arrays and returns each reply's raw bytes.
type respConn struct {
	t  testing.TB
	nc net.Conn
	rd *bufio.Reader
}

func dialRESP(t testing.TB, addr string) *respConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &respConn{t: t, nc: nc, rd: bufio.NewReader(nc)}
}

// do sends one command and returns its raw reply; the test fails on I/O errors.
func (c *respConn) do(args ...string) string {
	c.t.Helper()
	reply, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	return reply
}

// send writes a command without reading its reply.
func (c *respConn) send(args ...string) {
	c.t.Helper()
	if _, err := c.nc.Write(encodeRESP(args)); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one raw reply.
func (c *respConn) read() string {
	c.t.Helper()
	var sb strings.Builder
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := readRESP(c.rd, &sb); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return sb.String()
}

func (c *respConn) try(args ...string) (string, error) {
	if _, err := c.nc.Write(encodeRESP(args)); err != nil {
		return "", err
	}
	var sb strings.Builder
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	err := readRESP(c.rd, &sb)
	return sb.String(), err
}

func encodeRESP(args []string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

func readRESP(r *bufio.Reader, sb *strings.Builder) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	sb.WriteString(line)
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$':
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return err
			}
			sb.Write(buf)
		}
	case '*':
		for i := 0; i < n; i++ {
			if err := readRESP(r, sb); err != nil {
				return err
			}
		}
	}
	return nil
}

// scriptError is the reply Redis 7.0 gives for an error raised at line of body.
func scriptError(body, msg string, line int) string {
	return "-" + msg + " script: " + sha1Hex(body) + ", on @user_script:" + strconv.Itoa(line) + ".\r\n"
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
