package myredis

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Persistence: the append-only file (appendonly yes).
//
// Every write command is appended to the file as RESP, in executor order, after it
// runs and before its reply is released; relative deadlines are already absolute
// (propagateAs), a command that propagated several writes (EXEC, a script, a
// write that met an expired key) is wrapped in MULTI/EXEC (propagate.go), and
// SELECT is written whenever the database changes. Replaying the file (aof_load.go) rebuilds the data.
//
// Who does what:
//
//	executor   encodes each propagated write into a.buf and keeps each finished job's
//	           reply signal (c.done, or c.wake for a served blocked client); when no
//	           job is waiting it hands both to the writer (hold, flush) and goes on:
//	           the reply is held, not the executor.
//	writer     one goroutine that owns the file. Each round it takes everything handed
//	           since the last round, writes it with one write(2), under appendfsync
//	           always fdatasyncs once, and only then sends the held signals. While it
//	           writes and syncs, the executor keeps running jobs and the next group
//	           builds up: group commit, one fsync for every job finished meanwhile.
//	syncer     under appendfsync everysec, fdatasyncs the file once a second.
//	rewriter   BGREWRITEAOF (aof_rewrite.go).
//
// A job that wrote nothing is held too while earlier bytes are still on their way to
// the disk, so no client ever reads a value that a crash could still take away.
// Under everysec and no, "on its way" ends at write(2): a killed process loses no
// acknowledged write, a crashed machine up to about a second (everysec) of them.
//
// Compared with Redis 7: one file (appendfilename in dir), not a directory
// (appenddirname) of base and incremental files with a manifest; aof-load-truncated
// is always yes. Where Redis 7 left such a directory and MyRedis's file does not
// exist, start-up imports it into the file and renames the directory aside
// (aof_import.go). With aof-use-rdb-preamble yes (the default) a rewritten file
// begins with an RDB payload (aof_preamble.go).

func init() {
	openHooks = append(openHooks, openAOF)
}

const (
	fsyncNo = iota
	fsyncEverysec
	fsyncAlways
)

func fsyncPolicy(name string) int32 {
	switch name {
	case "always":
		return fsyncAlways
	case "no":
		return fsyncNo
	}
	return fsyncEverysec
}

type aof struct {
	s      *Server
	path   string
	policy atomic.Int32

	// executor-owned
	buf       []byte          // encoded writes not yet handed to the writer
	parked    []chan struct{} // signals of finished jobs, not yet handed to the writer
	selected  int             // database of the last command in the stream; -1: write SELECT next
	wrapDepth int             // inside a wrapped execution unit (propagate.go)
	wrapOpen  bool            // MULTI written for the current wrap
	handed    int64           // bytes handed to the writer so far
	rw        *rewrite        // the running rewrite's executor side, nil when none
	rewriting bool            // a rewrite runs (until its file switch is done)
	detached  bool            // BGREWRITEAOF's rewrite while appendonly is no (aof_detached.go)
	closed    bool
	waiting   bool      // turned on at run time, the first rewrite not done yet (aof_switch.go)
	waitFile  string    // while waiting: the file the writer writes, dropped after the switch
	nextAuto  time.Time // no automatic rewrite before (after a failed one)

	dirtyAtSave int64
	lastSave    time.Time

	// handed to the writer, under mu
	mu       sync.Mutex
	pending  []byte
	waiters  []chan struct{}
	sw       *fileSwitch // a finished rewrite's file, to switch to after pending[:swMark]
	swMark   int
	stopping bool
	wake     chan struct{} // capacity 1: "there is something for the writer"
	stopped  chan struct{}

	// the writer's, read by the syncer and INFO
	file      atomic.Pointer[os.File]
	completed atomic.Int64 // bytes handed that are written (and fsynced under always)
	written   atomic.Int64 // bytes written to a file, total
	synced    atomic.Int64 // bytes covered by an fsync, total
	curSize   atomic.Int64 // size of the current file
	baseSize  atomic.Int64 // its size after the last rewrite (or at start-up)
	writeErr  atomic.Pointer[string]
	fsyncs    atomic.Int64
	groups    atomic.Int64 // writer rounds that released at least one reply
	released  atomic.Int64 // replies released by the writer
}

// fileSwitch is a rewritten file ready to replace the current one.
type fileSwitch struct {
	f         *os.File
	tmp       string
	remainder []byte     // the last writes made during the rewrite, not yet in f
	result    chan error // the outcome, for the rewriter
}

// openAOF loads the file and starts appending to it. Runs in Open, before serving.
func openAOF(s *Server) error {
	if !s.cfg.AppendOnly {
		return nil
	}
	if s.cfg.Workers > 1 {
		// the AOF's order is the executor's order; several workers have none
		return errors.New("aof: appendonly yes needs --workers 1")
	}
	a := newAOF(s)
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("aof: %w", err)
	}
	var loadErr error
	start := time.Now()
	var st loadStats
	manifest, err := a.redis7Manifest() // aof_import.go
	if err != nil {
		return err
	}
	if manifest != "" {
		st, loadErr = a.importRedis7(manifest)
	} else {
		s.submit(func() {
			s.beginLoading() // rdb_file.go
			st, loadErr = a.load()
			s.loading = false
		})
	}
	if loadErr != nil {
		return loadErr
	}
	if manifest == "" && (st.commands > 0 || st.keys > 0) {
		s.log.Info("aof loaded", "path", a.path, "preamble_keys", st.keys, "commands", st.commands, "bytes", st.size,
			"seconds", time.Since(start).Seconds())
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("aof: %w", err)
	}
	if st.size == 0 { // a new file: make its directory entry durable
		syncDir(s.cfg.Dir)
	}
	a.file.Store(f)
	a.curSize.Store(st.size)
	a.baseSize.Store(st.size)
	s.submit(a.install)
	a.run()
	return nil
}

func newAOF(s *Server) *aof {
	a := &aof{
		s:        s,
		path:     filepath.Join(s.cfg.Dir, s.cfg.AppendFilename),
		selected: -1,
		wake:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
	}
	a.policy.Store(fsyncPolicy(s.cfg.AppendFsync))
	return a
}

// install makes a the server's AOF: its hooks start receiving the writes. Runs on
// the executor.
func (a *aof) install() {
	s := a.s
	a.lastSave = s.clock.Now()
	a.dirtyAtSave = s.dirty
	s.hooks = append(s.hooks, a.feed)
	s.wrapHooks = append(s.wrapHooks, a.wrap)
	s.configHooks = append(s.configHooks, a.configChanged)
	s.persistenceInfo = a.info
	s.holdReply = a.hold
	s.closeHooks = append(s.closeHooks, a.close)
	s.aof = a
}

// run starts the AOF's goroutines.
func (a *aof) run() {
	go a.writer()
	go a.syncer()
	go a.cron()
}

// --- the executor side ---

// feed encodes one propagated write. Runs on the executor.
func (a *aof) feed(db *DB, args [][]byte) {
	if a.wrapDepth > 0 && !a.wrapOpen {
		a.selectDB(db.id)
		a.buf = appendCommand(a.buf, multiArgs)
		a.wrapOpen = true
	}
	a.selectDB(db.id)
	a.buf = appendCommand(a.buf, args)
}

var (
	multiArgs = [][]byte{[]byte("MULTI")}
	execArgs  = [][]byte{[]byte("EXEC")}
)

func (a *aof) selectDB(id int) {
	if id != a.selected {
		a.buf = appendCommand(a.buf, [][]byte{[]byte("SELECT"), strconv.AppendInt(nil, int64(id), 10)})
		a.selected = id
	}
}

// wrap brackets an execution unit of several writes (propagate.go): they are
// logged as MULTI ... EXEC, so a replay applies them all or, when the file ends
// inside, none. Runs on the executor.
func (a *aof) wrap(begin bool) {
	if begin {
		a.wrapDepth++
		return
	}
	a.wrapDepth--
	if a.wrapDepth == 0 && a.wrapOpen {
		a.wrapOpen = false
		a.buf = appendCommand(a.buf, execArgs)
	}
}

// hold keeps the job's signal until the job's writes are written (and fsynced under
// always), and reports false, so that the executor sends the signal at once, when
// the job wrote nothing and nothing earlier is still on its way. signal is nil for
// server tasks. Runs on the executor.
//
// Like Redis's event loop, which writes the AOF once per round of ready clients,
// the executor hands over only when no job is waiting in the channel (or a lot has
// gathered): the jobs that arrived together share one write(2), and under always
// one fsync, even when the disk is fast enough to keep up with each job alone.
//
// While the file cannot be written (aof_last_write_status:err) a job that wrote
// nothing is answered at once, so that INFO and reads keep working; writes wait.
func (a *aof) hold(signal chan struct{}) bool {
	if len(a.buf) == 0 && len(a.parked) == 0 &&
		(a.completed.Load() == a.handed || a.writeErr.Load() != nil) {
		return false
	}
	if signal != nil {
		a.parked = append(a.parked, signal)
	}
	if len(a.s.jobs) == 0 || len(a.buf) >= flushBytes || len(a.parked) >= flushReplies {
		a.flush()
	}
	return true
}

// Bounds on what the executor gathers before handing it to the writer.
const (
	flushBytes   = 1 << 20
	flushReplies = 256
)

// flush hands the gathered writes and held signals to the writer. Runs on the
// executor.
func (a *aof) flush() {
	if len(a.buf) == 0 && len(a.parked) == 0 {
		return
	}
	a.mu.Lock()
	a.pending = append(a.pending, a.buf...)
	a.waiters = append(a.waiters, a.parked...)
	a.mu.Unlock()
	if a.rw != nil {
		a.rw.buf = append(a.rw.buf, a.buf...)
	}
	a.handed += int64(len(a.buf))
	a.buf = a.buf[:0]
	clear(a.parked)
	a.parked = a.parked[:0]
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// configChanged applies CONFIG SET appendfsync. Runs on the executor.
func (a *aof) configChanged(old, next Config) {
	a.policy.Store(fsyncPolicy(next.AppendFsync))
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args [][]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, arg := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(arg)), 10)
		b = append(b, '\r', '\n')
		b = append(b, arg...)
		b = append(b, '\r', '\n')
	}
	return b
}

// --- the writer ---

// writer owns the file: it writes what the executor handed over, fsyncs under always,
// then releases the replies that waited for it.
func (a *aof) writer() {
	var (
		buf     []byte          // taken from pending; buf[off:] is not written yet
		off     int             // (a failed write leaves a tail to retry)
		held    []chan struct{} // signals to send once buf is durable
		taken   int64           // bytes taken from pending, total
		retry   <-chan time.Time
		backoff = 100 * time.Millisecond
	)
	for {
		select {
		case <-a.wake:
		case <-retry:
		}
		retry = nil
		a.mu.Lock()
		lead := len(buf) - off // left over from a failed round
		if lead == 0 {
			buf, a.pending, off = a.pending, buf[:0], 0
		} else {
			buf = append(buf, a.pending...)
			a.pending = a.pending[:0]
		}
		taken += int64(len(buf) - off - lead)
		held = append(held, a.waiters...)
		clear(a.waiters)
		a.waiters = a.waiters[:0]
		sw, mark := a.sw, off+lead+a.swMark
		a.sw = nil
		stopping := a.stopping
		a.mu.Unlock()

		if sw != nil {
			n, err := a.switchFile(buf[off:mark], sw)
			off += n
			sw.result <- err
		}
		n, err := a.writeOut(buf[off:])
		off += n
		if err == nil && a.policy.Load() == fsyncAlways && a.synced.Load() < a.written.Load() {
			err = a.fsync()
		}
		if err != nil {
			a.failed(err)
			if stopping {
				a.s.log.Error("aof: giving up at shutdown; unwritten writes are lost", "bytes", len(buf)-off)
				a.file.Load().Close()
				close(a.stopped)
				return
			}
			retry = time.After(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if a.writeErr.Load() != nil {
			a.writeErr.Store(nil)
			a.s.log.Info("aof writes succeed again", "path", a.path)
		}
		a.completed.Store(taken)
		if len(held) > 0 {
			a.groups.Add(1)
			a.released.Add(int64(len(held)))
		}
		for i, ch := range held {
			ch <- struct{}{}
			held[i] = nil
		}
		held = held[:0]
		if stopping {
			a.mu.Lock()
			more := len(a.pending) > 0 || len(a.waiters) > 0
			a.mu.Unlock()
			if !more {
				if err := a.fsync(); err != nil {
					a.s.log.Error("aof: final fsync failed", "err", err)
				}
				a.file.Load().Close()
				close(a.stopped)
				return
			}
		}
	}
}

// writeOut writes b to the current file and returns how much of it was written.
func (a *aof) writeOut(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := a.file.Load().Write(b)
	a.written.Add(int64(n))
	a.curSize.Add(int64(n))
	return n, err
}

func (a *aof) fsync() error {
	upto := a.written.Load()
	if err := fdatasync(a.file.Load()); err != nil {
		return err
	}
	a.fsyncs.Add(1)
	a.synced.Store(upto)
	return nil
}

func (a *aof) failed(err error) {
	msg := err.Error()
	if prev := a.writeErr.Swap(&msg); prev == nil {
		a.s.log.Error("aof write failed; replies of writes are held until it succeeds", "path", a.path, "err", err)
	}
}

// switchFile makes a rewritten file the AOF: what was handed before the switch
// (before) goes to the old file, the rewrite's last writes to the new one, which is
// fsynced and renamed over the old. It returns how much of before was written. On
// failure the old file stays and nothing is lost. Runs on the writer.
func (a *aof) switchFile(before []byte, sw *fileSwitch) (int, error) {
	n, err := a.writeOut(before)
	if err != nil {
		return n, a.abandon(sw, fmt.Errorf("writing the old file: %w", err))
	}
	if _, err := sw.f.Write(sw.remainder); err != nil {
		return n, a.abandon(sw, err)
	}
	if err := fdatasync(sw.f); err != nil {
		return n, a.abandon(sw, err)
	}
	if err := os.Rename(sw.tmp, a.path); err != nil {
		return n, a.abandon(sw, err)
	}
	syncDir(filepath.Dir(a.path))
	var size int64
	if st, err := sw.f.Stat(); err == nil {
		size = st.Size()
	}
	old := a.file.Swap(sw.f)
	old.Close()
	a.synced.Store(a.written.Load()) // everything before is in the new, fsynced file
	a.curSize.Store(size)
	a.baseSize.Store(size)
	return n, nil
}

func (a *aof) abandon(sw *fileSwitch, err error) error {
	sw.f.Close()
	os.Remove(sw.tmp)
	return err
}

// syncer fsyncs once a second under appendfsync everysec, off the writer so that
// writes go on meanwhile.
func (a *aof) syncer() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.stopped:
			return
		case <-t.C:
		}
		if a.policy.Load() != fsyncEverysec {
			continue
		}
		upto := a.written.Load()
		if a.synced.Load() >= upto {
			continue
		}
		f := a.file.Load()
		if err := fdatasync(f); err != nil {
			if f == a.file.Load() { // not a file closed by a switch meanwhile
				a.failed(err)
			}
			continue
		}
		a.fsyncs.Add(1)
		if a.synced.Load() < upto {
			a.synced.Store(upto)
		}
	}
}

// cron checks ten times a second whether a rewrite is due. Runs its checks as
// executor jobs.
func (a *aof) cron() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-a.s.quit:
			return
		case <-a.stopped: // CONFIG SET appendonly no (aof_switch.go)
			return
		case <-t.C:
			select {
			case a.s.jobs <- job{fn: a.maybeRewrite}:
			case <-a.s.quit:
				return
			}
		}
	}
}

// close flushes what is left, fsyncs and closes the file. Runs from Server.Close.
func (a *aof) close() {
	a.s.submit(func() {
		a.closed = true
		a.flush()
		a.abortRewrite()
		a.s.holdReply = nil // nothing is written from here on
	})
	a.stopWriter()
}

// info is INFO persistence's fields of a running AOF, after the rewrite's
// (aofStats.info). Runs on the executor.
func (a *aof) info() [][2]string {
	return [][2]string{
		{"aof_current_size", itoa(a.curSize.Load())},
		{"aof_base_size", itoa(a.baseSize.Load())},
		{"aof_pending_rewrite", "0"},
		{"aof_buffer_length", itoa(a.handed - a.completed.Load())},
		{"aof_pending_bio_fsync", b01(a.policy.Load() == fsyncEverysec && a.synced.Load() < a.written.Load())},
		{"aof_delayed_fsync", "0"},
		// MyRedis's own: how well group commit groups
		{"aof_fsyncs", itoa(a.fsyncs.Load())},
		{"aof_group_commits", itoa(a.groups.Load())},
		{"aof_group_commit_replies", itoa(a.released.Load())},
	}
}

// --- files ---

// syncDir fsyncs a directory so that a created or renamed entry survives a crash.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

var errRewriteRunning = errors.New("background append only file rewriting already in progress")

// stopWriter tells the writer goroutine to finish and waits until it has.
func (a *aof) stopWriter() {
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	<-a.stopped
}
