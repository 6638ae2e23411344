package myredis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Replication, the replica side (REPLICAOF host port, or replicaof in the
// config): one goroutine per master link connects, does the handshake (PING,
// AUTH with masteruser/masterauth, REPLCONF listening-port and capa eof
// psync2), asks PSYNC <our replid> <our offset+1> so that a replica that was
// the master, or was cut off within the backlog, continues instead of
// loading everything again, then reads the master's RDB (either form) and its
// command stream.
//
// The stream is applied by the executor in batches, each as one job, by the
// master client: its writes skip replica-read-only, see keys that have
// expired (the master sends their DELs; a replica never expires keys
// itself), and reach the AOF as any write. The bytes are passed on as they
// came to this server's own backlog and replicas (chained replication), so
// offsets stay the master's: after a failover every replica can PSYNC from
// the promoted one and continue.
//
// The link goroutine writes REPLCONF ACK <offset> every second and after a
// REPLCONF GETACK; the executor never touches the master's socket.

// Link states, as ROLE names them.
const (
	linkConnect int32 = iota
	linkConnecting
	linkHandshake
	linkSync
	linkConnected
)

var linkStateNames = [...]string{"connect", "connecting", "handshake", "sync", "connected"}

// masterLink is the connection to the master. Its fields are shared with the
// link goroutine, hence atomics and the mutex.
type masterLink struct {
	host      string
	port      int
	stop      chan struct{}
	stopOnce  sync.Once
	state     atomic.Int32
	lastIO    atomic.Int64 // unix seconds of the last read from the master
	downSince atomic.Int64 // unix seconds; 0: never up
	ackWanted atomic.Bool  // the master sent REPLCONF GETACK
	syncSize  atomic.Int64 // the RDB being read: its size (-1: EOF form) and
	syncRead  atomic.Int64 // what was read of it

	mu   sync.Mutex // guards conn and writes to it
	conn net.Conn
}

func (l *masterLink) roleState() string {
	if l == nil {
		return "none"
	}
	return linkStateNames[l.state.Load()]
}

// shutdown ends the link: its goroutine stops, its socket closes.
func (l *masterLink) shutdown() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.dropConn()
}

// dropConn closes the socket (CLIENT KILL TYPE master): the link reconnects.
func (l *masterLink) dropConn() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return false
	}
	l.conn.Close()
	return true
}

func (l *masterLink) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// send writes one command to the master.
func (l *masterLink) send(args ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return net.ErrClosed
	}
	_, err := l.conn.Write(appendCommand(nil, bargs(args...)))
	return err
}

// masterLinkUp reports whether the link streams. Runs on the executor.
func (s *Server) masterLinkUp() bool {
	l := s.repl.link
	return l != nil && l.state.Load() == linkConnected
}

// cmdReplicaof is REPLICAOF (SLAVEOF) host port | NO ONE.
func cmdReplicaof(x *Ctx) {
	s := x.s
	if s.repl.failover.state != failoverNone { // failover.go
		x.err(msgReplicaofFailover)
		return
	}
	if x.argIs(1, "no") && x.argIs(2, "one") {
		if s.isReplica() {
			s.replicationUnsetMaster()
			s.log.Info("master mode enabled", "client", x.c.addr)
		}
		x.ok()
		return
	}
	if x.c.replica != nil && x.c.replica.attached {
		x.err(msgReplicaofByReplica)
		return
	}
	port, ok := parseRedisInt(x.args[2])
	if !ok || port < 0 || port > 65535 {
		x.err(msgInvalidMasterPort)
		return
	}
	if s.isReplica() && strings.EqualFold(s.cfg.Repl.MasterHost, x.arg(1)) && s.cfg.Repl.MasterPort == int(port) {
		x.w.Simple("OK Already connected to specified master")
		return
	}
	s.replicationSetMaster(x.arg(1), int(port))
	s.log.Info("replica of", "host", x.arg(1), "port", port, "client", x.c.addr)
	x.ok()
}

// replicationSetMaster starts replicating host:port. Runs on the executor.
func (s *Server) replicationSetMaster(host string, port int) {
	rs := &s.repl
	if rs.link != nil {
		rs.link.shutdown()
	}
	s.discardMasterClient()
	s.cfg.Repl.MasterHost, s.cfg.Repl.MasterPort = host, port
	l := &masterLink{host: host, port: port, stop: make(chan struct{})}
	l.downSince.Store(time.Now().Unix())
	rs.link = l
	mc := newClient(s, nil)
	mc.authed = true
	mc.user = superuser // the master's stream is applied whatever the ACL rules (acl_server.go)
	rs.mc = mc
	rs.ackOff.Store(rs.offset)
	s.startReplCron()
	go s.runMasterLink(l)
}

// replicationUnsetMaster makes this replica a master: a new replication ID,
// the old one kept as the second so that the other replicas continue from us.
func (s *Server) replicationUnsetMaster() {
	rs := &s.repl
	if rs.link != nil {
		rs.link.shutdown()
		rs.link = nil
	}
	s.discardMasterClient()
	s.cfg.Repl.MasterHost, s.cfg.Repl.MasterPort = "", 0
	rs.replID2, rs.secondOff = s.replID, rs.offset+1
	s.replID = randomHex(40)
	for _, r := range append([]*replica(nil), rs.replicas...) {
		s.dropReplica(r) // they reconnect and continue with the new ID
	}
}

// discardMasterClient drops the master client's open transaction.
func (s *Server) discardMasterClient() {
	if mc := s.repl.mc; mc != nil {
		s.discard(mc)
		s.unwatchAll(mc)
		s.repl.mc = nil
	}
}

// runMasterLink connects and syncs until the link is shut down, retrying
// every second. Runs on the link's goroutine.
func (s *Server) runMasterLink(l *masterLink) {
	for !l.stopped() {
		err := s.syncWithMaster(l)
		l.state.Store(linkConnect)
		l.downSince.Store(time.Now().Unix())
		l.mu.Lock()
		if l.conn != nil {
			l.conn.Close()
			l.conn = nil
		}
		l.mu.Unlock()
		if l.stopped() {
			return
		}
		s.log.Warn("connection with master lost", "master", net.JoinHostPort(l.host, strconv.Itoa(l.port)), "err", err)
		s.toExecutor(func() {
			if s.repl.link == l && s.repl.mc != nil {
				s.discard(s.repl.mc) // a half-received transaction is dropped, as Redis frees the master client
			}
		})
		select {
		case <-l.stop:
			return
		case <-s.quit:
			return
		case <-time.After(time.Second):
		}
	}
}

// linkConn is the socket to the master, counted as Redis counts it: what
// follows the reply to PSYNC (the RDB, then the stream) is replication input
// (total_net_repl_input_bytes); once the stream runs, each read counts in
// total_reads_processed and the ACKs written in total_writes_processed and
// total_net_output_bytes, as Redis reads and writes its master client. The
// handshake, synchronous in Redis, is not counted. Read by the link
// goroutine, written by it and the ACK ticker.
type linkConn struct {
	net.Conn
	n         *netCounters
	counting  atomic.Bool // past the PSYNC reply
	streaming atomic.Bool
}

func (c *linkConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.counting.Load() {
		c.n.replIn.Add(int64(n))
	}
	if c.streaming.Load() && (n > 0 || !errors.Is(err, os.ErrDeadlineExceeded)) {
		c.n.reads.Add(1)
	}
	return n, err
}

// startCounting counts the replication input from here: the buffered bytes
// read past the PSYNC reply, then every read. Runs on the link goroutine.
func (c *linkConn) startCounting(buffered int) {
	c.n.replIn.Add(int64(buffered))
	c.counting.Store(true)
}

func (c *linkConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.streaming.Load() {
		c.n.wrote(n, false)
	}
	return n, err
}

// errLinkStopped ends a link goroutine whose link was replaced.
var errLinkStopped = errors.New("replication link stopped")

// syncWithMaster runs one connection to the master, to its end.
func (s *Server) syncWithMaster(l *masterLink) error {
	l.state.Store(linkConnecting)
	timeout := time.Duration(s.liveReplTimeout()) * time.Second
	raw, err := net.DialTimeout("tcp", net.JoinHostPort(l.host, strconv.Itoa(l.port)), timeout)
	if err != nil {
		return err
	}
	conn := &linkConn{Conn: raw, n: &s.net}
	l.mu.Lock()
	if l.stopped() {
		l.mu.Unlock()
		conn.Close()
		return errLinkStopped
	}
	l.conn = conn
	l.mu.Unlock()
	l.state.Store(linkHandshake)
	br := bufio.NewReaderSize(conn, 64<<10)
	var replID string
	var offset int64
	var auth []string
	var port int
	var failover bool
	s.submit(func() {
		failover = s.repl.failover.state == failoverInProgress && s.repl.link == l // failover.go
		replID, offset = s.replID, s.repl.offset+1
		if pass := s.cfg.Repl.MasterAuth; pass != "" {
			auth = []string{"AUTH", pass}
			if user := s.cfg.Repl.MasterUser; user != "" {
				auth = []string{"AUTH", user, pass}
			}
		}
		port = s.cfg.Port
		if a, ok := s.Addr().(*net.TCPAddr); ok && s.ln != nil {
			port = a.Port
		}
	})
	if err := s.handshake(l, br, auth, port, timeout); err != nil {
		return err
	}
	conn.SetDeadline(time.Now().Add(timeout))
	psync := []string{"PSYNC", replID, strconv.FormatInt(offset, 10)}
	if failover { // the target becomes the master
		psync = append(psync, "FAILOVER")
	}
	if err := l.send(psync...); err != nil {
		s.failoverLinkFailed(l, failover, "Write error to failover target")
		return err
	}
	reply, err := readLine(br)
	if err != nil {
		return err
	}
	conn.startCounting(br.Buffered())
	if failover && !s.failoverAnswered(l, reply) {
		return errLinkStopped
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		if err := s.fullSync(l, br, reply, timeout); err != nil {
			return err
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		s.continueSync(l, reply)
	default:
		return fmt.Errorf("unexpected reply to PSYNC: %q", reply)
	}
	return s.streamFromMaster(l, br, timeout)
}

// liveReplTimeout is repl-timeout, read from the link goroutine.
func (s *Server) liveReplTimeout() int {
	var t int
	s.submit(func() { t = s.cfg.Repl.timeout() })
	return t
}

// handshake sends PING, AUTH and REPLCONF and checks their replies.
func (s *Server) handshake(l *masterLink, br *bufio.Reader, auth []string, port int, timeout time.Duration) error {
	steps := [][]string{{"PING"}}
	if auth != nil {
		steps = append(steps, auth)
	}
	steps = append(steps, []string{"REPLCONF", "listening-port", strconv.Itoa(port)},
		[]string{"REPLCONF", "capa", "eof", "capa", "psync2"})
	for i, args := range steps {
		l.conn.SetDeadline(time.Now().Add(timeout))
		if err := l.send(args...); err != nil {
			return err
		}
		reply, err := readLine(br)
		if err != nil {
			return err
		}
		l.lastIO.Store(time.Now().Unix())
		switch {
		case i == 0 && reply[0] == '-' && !strings.HasPrefix(reply, "-NOAUTH") &&
			!strings.HasPrefix(reply, "-NOPERM") && !strings.HasPrefix(reply, "-ERR operation not permitted"):
			return fmt.Errorf("error reply to PING from master: %q", reply)
		case args[0] == "AUTH" && reply[0] == '-':
			return fmt.Errorf("unable to AUTH to MASTER: %q", reply)
		}
		// REPLCONF errors are not fatal: an old master does not know them
	}
	return nil
}

// readLine reads one reply line without its CRLF; blank lines (the
// master's keep-alive newlines) are skipped.
func readLine(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			return line, nil
		}
	}
}

// fullSync reads the RDB and loads it in place of the data.
func (s *Server) fullSync(l *masterLink, br *bufio.Reader, reply string, timeout time.Duration) error {
	f := strings.Fields(reply)
	if len(f) != 3 || len(f[1]) != 40 {
		return fmt.Errorf("bad FULLRESYNC reply: %q", reply)
	}
	replID := f[1]
	offset, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return fmt.Errorf("bad FULLRESYNC reply: %q", reply)
	}
	l.state.Store(linkSync)
	data, err := readRDBPayload(l, br, timeout)
	if err != nil {
		return err
	}
	var loadErr error
	s.submit(func() {
		if s.repl.link != l {
			loadErr = errLinkStopped
			return
		}
		loadErr = s.loadFromMaster(data, replID, offset)
	})
	return loadErr
}

// readRDBPayload reads "$<len>" and that many bytes, or "$EOF:<mark>" and the
// bytes up to the mark.
func readRDBPayload(l *masterLink, br *bufio.Reader, timeout time.Duration) ([]byte, error) {
	l.conn.SetDeadline(time.Now().Add(timeout))
	head, err := readLine(br)
	if err != nil {
		return nil, err
	}
	if head[0] == '-' {
		return nil, fmt.Errorf("master aborted the sync: %q", head)
	}
	if head[0] != '$' {
		return nil, fmt.Errorf("bad protocol from master: %q", head)
	}
	if mark, ok := strings.CutPrefix(head, "$EOF:"); ok {
		if len(mark) != 40 {
			return nil, fmt.Errorf("bad EOF mark from master: %q", head)
		}
		l.syncSize.Store(-1)
		return readUntilMark(l, br, []byte(mark), timeout)
	}
	n, err := strconv.ParseInt(head[1:], 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad bulk length from master: %q", head)
	}
	l.syncSize.Store(n)
	data := make([]byte, 0, min(n, 64<<20))
	buf := make([]byte, 64<<10)
	for int64(len(data)) < n {
		l.conn.SetDeadline(time.Now().Add(timeout))
		k, err := br.Read(buf[:min(int64(len(buf)), n-int64(len(data)))])
		data = append(data, buf[:k]...)
		l.syncRead.Store(int64(len(data)))
		l.lastIO.Store(time.Now().Unix())
		if err != nil && int64(len(data)) < n {
			return nil, err
		}
	}
	return data, nil
}

func readUntilMark(l *masterLink, br *bufio.Reader, mark []byte, timeout time.Duration) ([]byte, error) {
	// The stream may follow the mark in the same read: only the bytes up to
	// the mark are taken from br, the rest stays there for streamFromMaster.
	var data []byte
	for {
		l.conn.SetDeadline(time.Now().Add(timeout))
		if _, err := br.Peek(1); err != nil {
			return nil, err
		}
		chunk, _ := br.Peek(br.Buffered())
		from := max(len(data)-len(mark)+1, 0) // the mark may straddle two chunks
		data = append(data, chunk...)
		if i := bytes.Index(data[from:], mark); i >= 0 {
			end := from + i + len(mark)
			br.Discard(len(chunk) - (len(data) - end))
			l.syncRead.Store(int64(end))
			return data[:from+i], nil
		}
		br.Discard(len(chunk))
		l.syncRead.Store(int64(len(data)))
		l.lastIO.Store(time.Now().Unix())
	}
}

// loadFromMaster replaces the data by the master's RDB. Runs on the executor.
func (s *Server) loadFromMaster(data []byte, replID string, offset int64) error {
	rs := &s.repl
	for _, db := range s.dbs {
		db.flush()
	}
	s.functionLibs().flush()
	s.beginLoading() // rdb_file.go
	keys, err := s.loadRDB(data, "the master's RDB")
	s.loading = false
	if err != nil {
		return err
	}
	s.dirty++
	for _, r := range append([]*replica(nil), rs.replicas...) {
		s.dropReplica(r) // their data is not ours any more: they sync again
	}
	s.replID, rs.replID2, rs.secondOff = replID, "", 0
	rs.offset = offset
	rs.ackOff.Store(offset)
	rs.backlog = nil
	s.setBacklogMem(nil)
	s.ensureBacklog()
	if s.aof != nil {
		if err := s.aof.startRewrite(); err != nil {
			s.log.Warn("aof rewrite after the sync did not start", "err", err)
		}
	}
	s.log.Info("master <-> replica sync: finished with success", "keys", keys, "bytes", len(data))
	s.sup.status("STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.\n") // supervise.go
	return nil
}

// continueSync takes the master's new ID, if it changed, after +CONTINUE.
func (s *Server) continueSync(l *masterLink, reply string) {
	f := strings.Fields(reply)
	s.submit(func() {
		if s.repl.link != l {
			return
		}
		rs := &s.repl
		if len(f) == 2 && f[1] != s.replID {
			rs.replID2, rs.secondOff = s.replID, rs.offset+1
			s.replID = f[1]
			for _, r := range append([]*replica(nil), rs.replicas...) {
				s.dropReplica(r) // told of the new ID when they reconnect
			}
		}
		s.ensureBacklog()
		s.log.Info("successful partial resynchronization with master", "offset", rs.offset)
		s.sup.status("STATUS=MASTER <-> REPLICA sync: Partial Resynchronization accepted. Ready to accept connections in read-write mode.\n")
	})
}

// streamFromMaster applies the master's commands until the link breaks.
func (s *Server) streamFromMaster(l *masterLink, br *bufio.Reader, timeout time.Duration) error {
	l.state.Store(linkConnected)
	if lc, ok := l.conn.(*linkConn); ok {
		lc.streaming.Store(true)
	}
	l.conn.SetDeadline(time.Time{})
	done := make(chan struct{})
	defer close(done)
	go s.sendAcks(l, done)
	l.send("REPLCONF", "ACK", strconv.FormatInt(s.repl.ackOff.Load(), 10))
	maxBulk := s.live.maxBulk.Load()
	for {
		l.conn.SetReadDeadline(time.Now().Add(timeout))
		raw, cmds, err := readReplBatch(br, maxBulk)
		if len(cmds) > 0 {
			l.lastIO.Store(time.Now().Unix())
			applied := true
			s.submit(func() { applied = s.applyFromMaster(l, raw, cmds) })
			if !applied {
				return errLinkStopped
			}
			if l.ackWanted.Swap(false) {
				l.send("REPLCONF", "ACK", strconv.FormatInt(s.repl.ackOff.Load(), 10))
			}
		}
		if err != nil {
			return err
		}
	}
}

// sendAcks writes REPLCONF ACK once a second until done closes.
func (s *Server) sendAcks(l *masterLink, done chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			l.send("REPLCONF", "ACK", strconv.FormatInt(s.repl.ackOff.Load(), 10))
		}
	}
}

// applyFromMaster runs a batch of the master's commands and passes their
// bytes on. Runs on the executor.
func (s *Server) applyFromMaster(l *masterLink, raw []byte, cmds []replCmd) bool {
	rs := &s.repl
	if rs.link != l || rs.mc == nil {
		return false
	}
	rs.applying = true
	var w Writer
	for _, cmd := range cmds {
		args := make([][]byte, len(cmd.args))
		for i, sp := range cmd.args {
			args[i] = raw[sp[0]:sp[1]]
		}
		if len(args) > 0 {
			s.callInternal(rs.mc, args, &w, "the master") // stats.go
		}
	}
	rs.applying = false
	s.replAppend(raw) // our backlog and replicas get the master's bytes as they came
	if rs.backlog == nil {
		rs.offset += int64(len(raw))
		rs.ackOff.Store(rs.offset)
	}
	return true
}

// replicaInfo are INFO replication's lines of a replica. Runs on the executor.
func (s *Server) replicaInfo() [][2]string {
	l := s.repl.link
	c := &s.cfg.Repl
	now := time.Now().Unix()
	up := s.masterLinkUp()
	status, lastIO := "down", int64(-1)
	if up {
		status, lastIO = "up", now-l.lastIO.Load()
	}
	state := l.state.Load()
	f := [][2]string{
		{"master_host", c.MasterHost},
		{"master_port", strconv.Itoa(c.MasterPort)},
		{"master_link_status", status},
		{"master_last_io_seconds_ago", strconv.FormatInt(lastIO, 10)},
		{"master_sync_in_progress", b01(state == linkSync)},
		{"slave_read_repl_offset", strconv.FormatInt(s.repl.offset, 10)},
		{"slave_repl_offset", strconv.FormatInt(s.repl.offset, 10)},
	}
	if state == linkSync {
		size, read := l.syncSize.Load(), l.syncRead.Load()
		perc := 0.0
		if size > 0 {
			perc = float64(read) / float64(size) * 100
		}
		f = append(f, [][2]string{
			{"master_sync_total_bytes", strconv.FormatInt(size, 10)},
			{"master_sync_read_bytes", strconv.FormatInt(read, 10)},
			{"master_sync_left_bytes", strconv.FormatInt(size-read, 10)},
			{"master_sync_perc", fmt.Sprintf("%.2f", perc)},
			{"master_sync_last_io_seconds_ago", strconv.FormatInt(now-l.lastIO.Load(), 10)},
		}...)
	}
	if !up {
		since := int64(-1)
		if d := l.downSince.Load(); d != 0 {
			since = now - d
		}
		f = append(f, [2]string{"master_link_down_since_seconds", strconv.FormatInt(since, 10)})
	}
	return append(f, [][2]string{
		{"slave_priority", strconv.Itoa(c.priority())},
		{"slave_read_only", b01(!c.ReadWrite)},
		{"replica_announced", "1"},
	}...)
}

// masterClientToKill closes the link to the master for CLIENT KILL TYPE
// master; it reconnects. Runs on the executor.
func (s *Server) masterClientToKill(f clientKillFilter) bool {
	l := s.repl.link
	if l == nil || f.typ != "master" || f.id != 0 || f.addr != "" || f.laddr != "" {
		return false
	}
	return l.dropConn()
}

// --- the stream's parser ---

// replCmd is one command of a batch read from the master: its arguments as
// [start, end) spans of the batch's bytes.
type replCmd struct {
	args [][2]int
}

// Limits of the stream parser (Redis's for a client's query).
const (
	replMaxArgs  = 1024 * 1024
	replMaxBatch = 1 << 20 // bytes gathered before a batch goes to the executor
	replMaxLine  = 64 << 10
)

var errReplProtocol = errors.New("protocol error in the master's stream")

// readReplBatch reads at least one command, and more while they are already
// buffered, up to replMaxBatch bytes. It returns what it read completely
// before an error.
func readReplBatch(br *bufio.Reader, maxBulk int64) (raw []byte, cmds []replCmd, err error) {
	for {
		var cmd replCmd
		var ok bool
		raw, cmd, ok, err = readReplCommand(br, raw, maxBulk)
		if err != nil {
			return raw[:len(raw)-0], cmds, err
		}
		if ok {
			cmds = append(cmds, cmd)
		}
		if br.Buffered() == 0 || len(raw) >= replMaxBatch {
			return raw, cmds, nil
		}
	}
}

// readReplCommand appends one command's bytes to raw. ok is false for an
// empty line. On error raw holds only the commands read before.
func readReplCommand(br *bufio.Reader, raw []byte, maxBulk int64) (out []byte, cmd replCmd, ok bool, err error) {
	mark := len(raw)
	fail := func(e error) ([]byte, replCmd, bool, error) { return raw[:mark], replCmd{}, false, e }
	line, err := readReplLine(br)
	if err != nil {
		return fail(err)
	}
	raw = append(raw, line...)
	if line[0] != '*' { // inline: words separated by blanks
		start := mark
		for _, w := range bytes.Fields(line) {
			i := bytes.Index(raw[start:], w) + start
			cmd.args = append(cmd.args, [2]int{i, i + len(w)})
			start = i + len(w)
		}
		return raw, cmd, len(cmd.args) > 0, nil
	}
	n, perr := strconv.ParseInt(string(bytes.TrimRight(line[1:], "\r\n")), 10, 64)
	if perr != nil || n > replMaxArgs {
		return fail(errReplProtocol)
	}
	for i := int64(0); i < n; i++ {
		line, err := readReplLine(br)
		if err != nil {
			return fail(err)
		}
		if line[0] != '$' {
			return fail(errReplProtocol)
		}
		raw = append(raw, line...)
		size, perr := strconv.ParseInt(string(bytes.TrimRight(line[1:], "\r\n")), 10, 64)
		if perr != nil || size < 0 || size > maxBulk {
			return fail(errReplProtocol)
		}
		start := len(raw)
		raw = append(raw, make([]byte, size+2)...)
		if _, err := io.ReadFull(br, raw[start:]); err != nil {
			return fail(err)
		}
		if raw[start+int(size)] != '\r' || raw[start+int(size)+1] != '\n' {
			return fail(errReplProtocol)
		}
		cmd.args = append(cmd.args, [2]int{start, start + int(size)})
	}
	return raw, cmd, n > 0, nil
}

// readReplLine reads a line with its LF, at most replMaxLine bytes.
func readReplLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > replMaxLine {
			return nil, errReplProtocol
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return line, nil
	}
}

// openReplication starts replicating the master named by replicaof in the
// config. Runs in Open.
func openReplication(s *Server) error {
	if h := s.cfg.Repl.MasterHost; h != "" {
		s.submit(func() {
			if rs := &s.repl; rs.loadedID != "" { // a restarted replica continues where its RDB was
				s.replID, rs.offset = rs.loadedID, rs.loadedOff
			}
			s.replicationSetMaster(h, s.cfg.Repl.MasterPort)
		})
	}
	return nil
}

func init() { openHooks = append(openHooks, openReplication) }
