package myredis

// MIGRATE against a fake target (a test listener that answers when told):
// the executor keeps serving while a transfer waits, the keys being moved are
// locked, the move is propagated as DEL, and idle cached connections close.
// Needs nothing outside the test.

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeTarget accepts one connection at a time; each request it reads is sent
// on got, and it writes whatever the test puts on answer.
type fakeTarget struct {
	ln     net.Listener
	got    chan []byte
	answer chan string
}

func startFakeTarget(t *testing.T) *fakeTarget {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ft := &fakeTarget{ln: ln, got: make(chan []byte, 16), answer: make(chan string, 16)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go ft.serve(conn)
		}
	}()
	return ft
}

func (ft *fakeTarget) serve(conn net.Conn) {
	defer conn.Close()
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			ft.got <- append([]byte(nil), buf[:n]...)
		}
	}()
	for a := range ft.answer {
		if _, err := io.WriteString(conn, a); err != nil {
			return
		}
	}
}

func (ft *fakeTarget) hostPort() (string, string) {
	h, p, _ := net.SplitHostPort(ft.ln.Addr().String())
	return h, p
}

// migrateServer serves a MyRedis on the network with its propagation logged.
func migrateServer(t *testing.T) (*Server, string, *propagationLog) {
	s := New(DefaultConfig())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	var log propagationLog
	log.attach(s)
	return s, ln.Addr().String(), &log
}

// send writes a command on a raw connection without waiting for its reply.
func sendRaw(t *testing.T, conn net.Conn, args ...string) {
	var b []byte
	b = appendRESPArrayHead(b, len(args))
	for _, a := range args {
		b = appendRESPBulk(b, []byte(a))
	}
	_, err := conn.Write(b)
	require.NoError(t, err)
}

// replyWithin reads one reply line, failing after d.
func replyWithin(t *testing.T, conn net.Conn, rd *bufio.Reader, d time.Duration) string {
	conn.SetReadDeadline(time.Now().Add(d))
	line, err := rd.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimRight(line, "\r\n")
}

// noReplyWithin checks that nothing arrives for d.
func noReplyWithin(t *testing.T, conn net.Conn, rd *bufio.Reader, d time.Duration) {
	conn.SetReadDeadline(time.Now().Add(d))
	line, err := rd.ReadString('\n')
	require.Error(t, err, "unexpected reply %q", line)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())
}

func dialMigrate(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// TestMigrateWaitsOffTheExecutor: while the target has not answered, other
// clients are served; a command on a key being moved waits and then sees it
// gone; the move is propagated as one DEL of the acknowledged keys.
func TestMigrateWaitsOffTheExecutor(t *testing.T) {
	ft := startFakeTarget(t)
	host, port := ft.hostPort()
	s, addr, log := migrateServer(t)
	a, ard := dialMigrate(t, addr)
	b, brd := dialMigrate(t, addr)
	c, crd := dialMigrate(t, addr)
	sendRaw(t, b, "MSET", "k1", "v1", "k2", "v2", "other", "x")
	require.Equal(t, "+OK", replyWithin(t, b, brd, 10*time.Second))
	log.take()

	sendRaw(t, a, "MIGRATE", host, port, "", "0", "60000", "KEYS", "k1", "k2")
	<-ft.got // the request reached the target
	noReplyWithin(t, a, ard, 200*time.Millisecond)

	sendRaw(t, b, "GET", "other") // another key: served at once
	require.Equal(t, "$1", replyWithin(t, b, brd, 10*time.Second))
	require.Equal(t, "x", replyWithin(t, b, brd, 10*time.Second))
	sendRaw(t, c, "GET", "k1") // a key being moved: held until the MIGRATE ends
	noReplyWithin(t, c, crd, 200*time.Millisecond)
	sendRaw(t, b, "CLIENT", "UNBLOCK", clientID(t, s, "migrate"))
	require.Equal(t, ":0", replyWithin(t, b, brd, 10*time.Second), "CLIENT UNBLOCK cannot end a MIGRATE")

	ft.answer <- "+OK\r\n+OK\r\n+OK\r\n" // SELECT, two RESTOREs
	require.Equal(t, "+OK", replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, "$-1", replyWithin(t, c, crd, 10*time.Second), "the held GET runs after the move")
	require.Equal(t, []string{"DEL k1 k2"}, log.take())
	sendRaw(t, b, "INFO", "stats")
	require.Equal(t, "migrate_cached_sockets:1", infoLine(t, b, brd, "migrate_cached_sockets"))
}

// TestMigrateAcknowledgedKeysOnly: a key the target refuses stays, the others
// go, and the error is the target's, after a socket error as well.
func TestMigrateAcknowledgedKeysOnly(t *testing.T) {
	ft := startFakeTarget(t)
	host, port := ft.hostPort()
	_, addr, log := migrateServer(t)
	a, ard := dialMigrate(t, addr)
	sendRaw(t, a, "MSET", "k1", "v1", "k2", "v2", "k3", "v3")
	require.Equal(t, "+OK", replyWithin(t, a, ard, 10*time.Second))
	log.take()
	sendRaw(t, a, "MIGRATE", host, port, "", "0", "60000", "KEYS", "k1", "k2", "k3")
	<-ft.got
	ft.answer <- "+OK\r\n+OK\r\n-BUSYKEY Target key name already exists.\r\n+OK\r\n"
	require.Equal(t, "-ERR Target instance replied with error: BUSYKEY Target key name already exists.",
		replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, []string{"DEL k1 k3"}, log.take())
	sendRaw(t, a, "EXISTS", "k1", "k2", "k3")
	require.Equal(t, ":1", replyWithin(t, a, ard, 10*time.Second))
}

// TestMigrateClientGoneMidTransfer: the keys the target took are deleted even
// when the client that asked has gone.
func TestMigrateClientGoneMidTransfer(t *testing.T) {
	ft := startFakeTarget(t)
	host, port := ft.hostPort()
	_, addr, log := migrateServer(t)
	a, ard := dialMigrate(t, addr)
	b, brd := dialMigrate(t, addr)
	sendRaw(t, b, "SET", "k", "v")
	require.Equal(t, "+OK", replyWithin(t, b, brd, 10*time.Second))
	log.take()
	sendRaw(t, a, "MIGRATE", host, port, "k", "0", "60000")
	<-ft.got
	noReplyWithin(t, a, ard, 100*time.Millisecond)
	a.Close()
	time.Sleep(100 * time.Millisecond) // let the server see the close first (either order is correct)
	ft.answer <- "+OK\r\n+OK\r\n"
	require.Eventually(t, func() bool {
		sendRaw(t, b, "EXISTS", "k")
		return replyWithin(t, b, brd, 10*time.Second) == ":0"
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, []string{"DEL k"}, log.take())
}

// TestMigrateInsideMulti runs the transfer on the executor (Redis's way) and
// still answers inside EXEC.
func TestMigrateInsideMulti(t *testing.T) {
	ft := startFakeTarget(t)
	host, port := ft.hostPort()
	_, addr, log := migrateServer(t)
	a, ard := dialMigrate(t, addr)
	sendRaw(t, a, "SET", "k", "v")
	require.Equal(t, "+OK", replyWithin(t, a, ard, 10*time.Second))
	log.take()
	ft.answer <- "+OK\r\n+OK\r\n"
	for _, cmd := range [][]string{{"MULTI"}, {"MIGRATE", host, port, "k", "0", "60000"}, {"EXEC"}} {
		sendRaw(t, a, cmd...)
	}
	require.Equal(t, "+OK", replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, "+QUEUED", replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, "*1", replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, "+OK", replyWithin(t, a, ard, 10*time.Second))
	require.Equal(t, []string{"DEL k"}, log.take())
}

// TestMigrateCacheClosesIdle: a connection unused for more than ten seconds
// is closed by the once-a-second check, a recent one is kept.
func TestMigrateCacheClosesIdle(t *testing.T) {
	ft := startFakeTarget(t)
	host, port := ft.hostPort()
	var mc migrateCache
	cs, err := mc.take(host, port, 5*time.Second)
	require.NoError(t, err)
	cs.mu.Unlock()
	require.EqualValues(t, 1, mc.open.Load())
	mc.closeIdle(time.Now().Add(5 * time.Second))
	require.EqualValues(t, 1, mc.open.Load(), "used 5 s ago: kept")
	mc.closeIdle(time.Now().Add(11 * time.Second))
	require.EqualValues(t, 0, mc.open.Load(), "unused for 11 s: closed")
	require.Empty(t, mc.socks)
}

// clientID finds the id of the client whose last command was cmd.
func clientID(t *testing.T, s *Server, cmd string) string {
	var id string
	s.submit(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.clients {
			if c.lastCmd == cmd {
				id = itoa(c.id)
			}
		}
	})
	require.NotEmpty(t, id)
	return id
}

// infoLine reads an INFO reply and returns its line for field.
func infoLine(t *testing.T, conn net.Conn, rd *bufio.Reader, field string) string {
	head := replyWithin(t, conn, rd, 10*time.Second)
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	require.NoError(t, err, head)
	body := make([]byte, n+2)
	_, err = io.ReadFull(rd, body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(body), "\r\n") {
		if strings.HasPrefix(line, field+":") {
			return line
		}
	}
	return ""
}

// FuzzMigrateReplies feeds arbitrary target replies to a three-key transfer:
// never a panic or a hang, acknowledged keys are keys sent, in order, and an
// answer is OK only when all three were acknowledged.
func FuzzMigrateReplies(f *testing.F) {
	f.Add([]byte("+OK\r\n+OK\r\n+OK\r\n+OK\r\n"))
	f.Add([]byte("+OK\r\n-BUSYKEY x\r\n+OK\r\n+OK\r\n"))
	f.Add([]byte("-ERR DB index is out of range\r\n-ERR x\r\n"))
	f.Add([]byte("+OK\r\n\r\n"))
	f.Add([]byte("+OK"))
	f.Fuzz(func(t *testing.T, replies []byte) {
		here, there := net.Pipe()
		defer here.Close()
		go func() {
			defer there.Close()
			go io.Copy(io.Discard, there)
			there.Write(replies)
		}()
		job := &migrateJob{a: migrateArgs{dbid: 0, timeout: time.Second}, keys: []string{"a", "b", "c"}}
		for _, k := range job.keys {
			job.restores = appendRestore(job.restores, k, 0, []byte("payload"), false)
		}
		cs := &migrateSock{conn: here, rd: bufio.NewReader(here), lastDB: -1}
		res, sockErr := (&migrateCache{}).exchange(cs, job)
		prev := -1
		for _, i := range res.acked {
			require.Greater(t, i, prev)
			require.Less(t, i, len(job.keys))
			prev = i
		}
		if sockErr == nil && res.err == "" {
			require.Len(t, res.acked, 3)
		}
	})
}
