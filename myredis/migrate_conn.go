package myredis

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MIGRATE's connections to its targets, cached by host:port as Redis's
// migrateGetSocket caches them: at most migrateSocketMax, each closed once
// unused for more than migrateSocketTTL seconds, each remembering the database
// it last SELECTed. The transfer runs on its own goroutine (cmd_migrate.go),
// never on the executor, except for a MIGRATE inside MULTI or a script.

// migrateSocketMax is how many connections the cache keeps (Redis's
// MIGRATE_SOCKET_CACHE_ITEMS).
const migrateSocketMax = 64

// migrateChunk is how much is written at a time, each write with its own
// timeout (Redis writes 64 KB at a time).
const migrateChunk = 64 * 1024

// migrateCache holds the cached connections; its methods are safe from any
// goroutine.
type migrateCache struct {
	mu    sync.Mutex
	socks map[string]*migrateSock // by "host:port"
	open  atomic.Int64            // connected sockets (INFO's migrate_cached_sockets)
}

// migrateSock is one cached connection. mu is held by the MIGRATE using it,
// so two MIGRATEs to one target take turns, as they do in Redis.
type migrateSock struct {
	mu      sync.Mutex
	conn    net.Conn // nil once closed
	rd      *bufio.Reader
	lastDB  int64 // -1: SELECT before the next RESTORE
	lastUse atomic.Int64
}

// take returns name's connection, locked, connecting when there is none; the
// caller unlocks it. A failed connection returns the error of the dial.
func (mc *migrateCache) take(host, port string, timeout time.Duration) (*migrateSock, error) {
	name := host + ":" + port
	for {
		mc.mu.Lock()
		if mc.socks == nil {
			mc.socks = make(map[string]*migrateSock)
		}
		cs := mc.socks[name]
		if cs == nil {
			cs = &migrateSock{lastDB: -1}
			cs.mu.Lock() // held while connecting: others wait for it
			mc.makeRoom()
			mc.socks[name] = cs
			mc.mu.Unlock()
			return mc.connect(name, cs, host, port, timeout)
		}
		mc.mu.Unlock()
		cs.mu.Lock()
		if cs.conn != nil {
			cs.lastUse.Store(time.Now().Unix())
			return cs, nil
		}
		cs.mu.Unlock() // closed meanwhile: look again
	}
}

// makeRoom drops a random unused connection when the cache is full. mc.mu is held.
func (mc *migrateCache) makeRoom() {
	if len(mc.socks) < migrateSocketMax {
		return
	}
	for name, cs := range mc.socks { // map order: random enough
		if cs.mu.TryLock() {
			mc.closeLocked(name, cs)
			cs.mu.Unlock()
			return
		}
	}
}

// connect dials the target for cs (locked, already in the cache).
func (mc *migrateCache) connect(name string, cs *migrateSock, host, port string, timeout time.Duration) (*migrateSock, error) {
	p, _ := strconv.Atoi(port) // as Redis's atoi: a bad port fails to connect
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(p)), timeout)
	if err != nil {
		mc.mu.Lock()
		if mc.socks[name] == cs {
			delete(mc.socks, name)
		}
		mc.mu.Unlock()
		cs.mu.Unlock()
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	cs.conn, cs.rd = conn, bufio.NewReader(conn)
	cs.lastUse.Store(time.Now().Unix())
	mc.open.Add(1)
	return cs, nil
}

// discard closes name's connection (after a socket error: the next MIGRATE
// connects again and SELECTs). cs is locked by the caller.
func (mc *migrateCache) discard(name string, cs *migrateSock) {
	mc.mu.Lock()
	mc.closeLocked(name, cs)
	mc.mu.Unlock()
}

// closeLocked closes cs and takes it out of the cache; mc.mu and cs.mu are held.
func (mc *migrateCache) closeLocked(name string, cs *migrateSock) {
	if mc.socks[name] == cs {
		delete(mc.socks, name)
	}
	if cs.conn != nil {
		cs.conn.Close()
		cs.conn = nil
		mc.open.Add(-1)
	}
}

// closeIdle closes the connections unused for more than migrateSocketTTL
// seconds (Redis's migrateCloseTimedoutSockets, once a second).
func (mc *migrateCache) closeIdle(now time.Time) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for name, cs := range mc.socks {
		if now.Unix()-cs.lastUse.Load() > migrateSocketTTL && cs.mu.TryLock() {
			mc.closeLocked(name, cs)
			cs.mu.Unlock()
		}
	}
}

// closeAll closes every cached connection (the server stops).
func (mc *migrateCache) closeAll() {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for name, cs := range mc.socks {
		if cs.mu.TryLock() {
			mc.closeLocked(name, cs)
			cs.mu.Unlock()
		}
	}
}

// transfer sends job's RESTOREs and reads the replies, retrying once on a
// fresh connection after a socket error that is not a timeout and left
// nothing acknowledged, as Redis's migrateCommand. Runs on the transfer
// goroutine (or the executor inside MULTI or a script); touches no data.
func (mc *migrateCache) transfer(job *migrateJob) migrateResult {
	a := &job.a
	name := a.host + ":" + a.port
	mayRetry := true
	for {
		var res migrateResult
		var sockErr *migrateSockErr
		cs, err := mc.take(a.host, a.port, a.timeout)
		switch {
		case err != nil && isResolveError(err):
			return migrateResult{err: msgMigrateConnect}
		case err != nil:
			sockErr = dialFailure(err)
		default:
			res, sockErr = mc.exchange(cs, job)
			if sockErr == nil {
				cs.mu.Unlock()
				return res
			}
			mc.discard(name, cs)
			cs.mu.Unlock()
		}
		if mayRetry && sockErr.retry && !sockErr.timeout {
			mayRetry = false
			continue
		}
		if res.err == "" {
			res.err = sockErr.msg()
		}
		return res
	}
}

// migrateSockErr is a failure on the connection: while writing or reading,
// by a timeout or not, and whether nothing was acknowledged yet (retry).
type migrateSockErr struct {
	writing, timeout, retry bool
}

func (e *migrateSockErr) msg() string {
	if e.writing {
		return msgMigrateIOWrite
	}
	return msgMigrateIORead
}

// exchange writes AUTH, SELECT (when the connection has another database) and
// the RESTOREs in one go, then reads a reply line for each. cs is locked.
func (mc *migrateCache) exchange(cs *migrateSock, job *migrateJob) (migrateResult, *migrateSockErr) {
	a := &job.a
	var req []byte
	if a.auth {
		if a.user != "" {
			req = appendRESPArrayHead(req, 3)
			req = appendRESPBulk(req, []byte("AUTH"))
			req = appendRESPBulk(req, []byte(a.user))
		} else {
			req = appendRESPArrayHead(req, 2)
			req = appendRESPBulk(req, []byte("AUTH"))
		}
		req = appendRESPBulk(req, []byte(a.password))
	}
	selecting := cs.lastDB != a.dbid
	if selecting {
		req = appendRESPArrayHead(req, 2)
		req = appendRESPBulk(req, []byte("SELECT"))
		req = appendRESPBulk(req, strconv.AppendInt(nil, a.dbid, 10))
	}
	req = append(req, job.restores...)
	if err := cs.write(req, a.timeout); err != nil {
		return migrateResult{}, &migrateSockErr{writing: true, timeout: isTimeout(err), retry: true}
	}
	var authReply, selectReply string
	var err error
	if a.auth {
		if authReply, err = cs.readLine(a.timeout); err != nil {
			return migrateResult{}, &migrateSockErr{timeout: isTimeout(err), retry: true}
		}
	}
	if selecting {
		if selectReply, err = cs.readLine(a.timeout); err != nil {
			return migrateResult{}, &migrateSockErr{timeout: isTimeout(err), retry: true}
		}
	}
	return mc.readRestores(cs, job, authReply, selectReply)
}

// readRestores reads one reply per RESTORE: an error (or an AUTH or SELECT
// error) is answered as the first "Target instance replied with error", the
// others are acknowledged keys.
func (mc *migrateCache) readRestores(cs *migrateSock, job *migrateJob, authReply, selectReply string) (migrateResult, *migrateSockErr) {
	var res migrateResult
	for j := range job.keys {
		line, err := cs.readLine(job.a.timeout)
		if err != nil {
			if res.err == "" {
				return res, &migrateSockErr{timeout: isTimeout(err), retry: j == 0}
			}
			return res, &migrateSockErr{} // the target's error is answered
		}
		failed := ""
		switch {
		case len(authReply) > 0 && authReply[0] == '-':
			failed = authReply
		case len(selectReply) > 0 && selectReply[0] == '-':
			failed = selectReply
		case len(line) > 0 && line[0] == '-':
			failed = line
		}
		if failed == "" {
			res.acked = append(res.acked, j)
			continue
		}
		if res.err == "" {
			cs.lastDB = -1
			res.err = msgMigrateTargetError + failed[1:]
		}
	}
	if res.err == "" {
		cs.lastDB = job.a.dbid
	}
	return res, nil
}

// write sends b in migrateChunk pieces, each within timeout.
func (cs *migrateSock) write(b []byte, timeout time.Duration) error {
	for len(b) > 0 {
		n := min(len(b), migrateChunk)
		cs.conn.SetWriteDeadline(time.Now().Add(timeout))
		if _, err := cs.conn.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readLine reads one reply line within timeout, without its CRLF (Redis's
// connSyncReadLine; a line longer than its 1024-byte buffer is cut there).
func (cs *migrateSock) readLine(timeout time.Duration) (string, error) {
	cs.conn.SetReadDeadline(time.Now().Add(timeout))
	line, err := cs.rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > 1023 {
		line = line[:1023]
	}
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// isResolveError: the target's address could not be resolved, the one
// failure Redis 7.0.15 reports as "connecting" (its connect waits for the
// socket without checking the outcome, so the rest show when it writes).
func isResolveError(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

// dialFailure is a failed connect as Redis reports it: an error writing,
// retried unless it was a timeout.
func dialFailure(err error) *migrateSockErr {
	return &migrateSockErr{writing: true, timeout: isTimeout(err), retry: true}
}
