package myredis

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// BGSAVE: an RDB file of the data as it was at the moment BGSAVE ran (t0),
// written without stopping the executor and without fork(), by the AOF
// rewrite's mechanism (aof_rewrite.go):
//
//   - The saver goroutine asks the executor for the keys in steps of at most
//     rewriteStep keys (db.scan). A step encodes each key's RDB record (a
//     string is taken by reference and encoded by the saver: strings are never
//     changed in place while a snapshot runs, see writableString).
//   - From t0 on, the executor calls beforeWrite before each write command: the
//     first time a key is about to change, its t0 state is captured then (copy
//     on write, per key). Every captured key, by the scan or by a write, is
//     marked, so no key is written twice (Redis refuses a file with a
//     duplicate key) and keys created after t0 are never written.
//   - FLUSHDB/FLUSHALL capture every key not yet captured of the databases they
//     empty (one long job, where fork() would cost nothing); SWAPDB captures the
//     two databases it exchanges, as the AOF rewrite does.
//   - The library code is taken at t0.
//
// The file is written to temp-bg-<pid>.rdb, fsynced and renamed over
// dbfilename as SAVE's.
//
// A large sorted set, hash, set or list (more than zsetSlice members, slots
// or elements) or stream (more than streamRDBSlice nodes) is encoded a slice
// per job, so that a value of millions of members never holds the executor
// for long: the first job writes its type, key and count, each later job
// rdbSliceStep more positions (a stream's groups come with its last), and the
// scan waits meanwhile. Its record must stay whole in the file, so what other
// jobs capture meanwhile (keys about to be written) waits in bg.later until
// the last slice. A write to the value being sliced first encodes the rest of
// it at once (the value must not change between slices).

// bgsave is a running background save. Runs on the executor.
type bgsave struct {
	touched   map[dbKey]struct{} // keys captured, or created since t0
	dbIdx     int                // databases below dbIdx have been scanned
	cursor    uint64             // SCAN cursor in s.dbs[dbIdx]
	rdbSlicer                    // captured, not yet taken by the saver (rdb_slicer.go)
	err       error              // a value without an RDB encoding
	dirty     int64              // s.dirty at t0
	functions []string           // library code at t0
	started   time.Time
	scanning  bool // the write hooks are on
	aborted   bool
	// the settings at t0, read by the saver (s.cfg is the executor's)
	compress, checksum bool
	dir, path          string
	keySaveDelay       int // rdb-key-save-delay
	// stream, when set, takes the snapshot instead of the file: a diskless
	// sync writes it to replicas (replication.go)
	stream func(fill func(*bufio.Writer) error) error
	// replAux are the repl-id and repl-offset aux fields at t0 (replication.go)
	replAux  [][2]string
	progress saveProgress // INFO current_save_keys_*
}

// saveProgress is a snapshot's progress (BGSAVE, or an AOF rewrite): the keys
// there were at t0, and the keys written so far (by the saving goroutine),
// as Redis's current_save_keys_total and _processed of a fork child.
type saveProgress struct {
	total   int64
	written atomic.Int64
}

// countWritten counts the keys among records handed to the file: a large
// value's later slices carry no key, or are marked cont. Runs on the saver.
func (p *saveProgress) countWritten(n int) { p.written.Add(int64(n)) }

// keysNow is the number of keys of every database. Runs on the executor.
func (s *Server) keysNow() int64 {
	var n int64
	for _, db := range s.dbs {
		n += int64(db.Size())
	}
	return n
}

// saveProgressInfo are INFO persistence's current_fork_perc and
// current_save_keys_* of the running snapshot, zeros without one.
func (s *Server) saveProgressInfo() [][2]string {
	var p *saveProgress
	if s.bgsave != nil {
		p = &s.bgsave.progress
	} else if a := s.rewritingAOF(); a != nil && a.rw != nil { // aof_detached.go
		p = &a.rw.progress
	}
	var done, total int64
	if p != nil {
		done, total = p.written.Load(), p.total
	}
	perc := 0.0
	if total > 0 {
		perc = float64(done) / float64(total) * 100
	}
	return [][2]string{
		{"current_fork_perc", fmt.Sprintf("%.2f", perc)},
		{"current_save_keys_processed", itoa(done)},
		{"current_save_keys_total", itoa(total)},
	}
}

// rdbCapture is a large sorted set or hash being encoded a slice per step.
type rdbCapture struct {
	db       *DB
	key      string
	v        rdbSliceable // the value at t0, unchanged while it is being encoded
	next     int          // positions [0, next) are written
	started  bool         // its head (type, key, count) is written
	expireAt int64
}

// rdbItem is one key's record at t0 (or the next slice of a large value's).
type rdbItem struct {
	db       int
	key      string
	str      []byte // a string value, shared; encoded by the saver
	isString bool
	rec      []byte // other types: the encoded record (type, key, value)
	expireAt int64
}

// setWriteHooks installs the executor's write hooks for whichever snapshots
// run (an AOF rewrite, a BGSAVE, or both). Runs on the executor.
func (s *Server) setWriteHooks() {
	a := s.rewritingAOF() // aof_detached.go
	rw := a != nil
	bg := s.bgsave != nil && s.bgsave.scanning
	switch {
	case !rw && !bg:
		s.beforeWrite, s.beforeSwapDB = nil, nil
	case rw && !bg:
		s.beforeWrite, s.beforeSwapDB = a.beforeWrite, a.captureBeforeSwap
	case bg && !rw:
		s.beforeWrite, s.beforeSwapDB = s.bgsaveBeforeWrite, s.bgsaveBeforeSwap
	default:
		s.beforeWrite = func(x *Ctx) { a.beforeWrite(x); s.bgsaveBeforeWrite(x) }
		s.beforeSwapDB = func(d1, d2 *DB) { a.captureBeforeSwap(d1, d2); s.bgsaveBeforeSwap(d1, d2) }
	}
}

var errBgsaveRunning = errors.New("Background save already in progress")

// startBgsave begins a background save. Runs on the executor.
func (s *Server) startBgsave() error { return s.startSnapshot(nil) }

// startSnapshot begins a background snapshot to the file (stream nil) or to
// stream. Runs on the executor.
func (s *Server) startSnapshot(stream func(fill func(*bufio.Writer) error) error) error {
	if s.bgsave != nil {
		return errBgsaveRunning
	}
	bg := &bgsave{touched: make(map[dbKey]struct{}), dirty: s.dirty, started: time.Now(), scanning: true,
		compress: s.cfg.rdbCompression(), checksum: s.cfg.rdbChecksum(), dir: s.cfg.Dir, path: s.rdbPath(),
		keySaveDelay: s.cfg.RDBKeySaveDelay, stream: stream, replAux: s.replAuxFields()}
	bg.progress.total = s.keysNow()
	if libs := s.functionsPtr.Load(); libs != nil {
		for _, lib := range libs.sorted() {
			bg.functions = append(bg.functions, lib.code)
		}
	}
	s.bgsave = bg
	s.setWriteHooks()
	if stream == nil {
		s.log.Info("background saving started")
	}
	go func() {
		err := s.bgsaveInBackground(bg)
		s.submit(func() { s.bgsaveDone(bg, err) })
	}()
	return nil
}

// bgsaveBeforeWrite captures the t0 state of the keys a write is about to change.
func (s *Server) bgsaveBeforeWrite(x *Ctx) {
	bg := s.bgsave
	switch x.cmd.name {
	case "flushall":
		for _, db := range s.dbs {
			s.bgsaveCaptureDB(bg, db)
		}
		return
	case "flushdb":
		s.bgsaveCaptureDB(bg, x.db)
		return
	}
	for _, k := range x.cmd.keys(x.args) {
		s.bgsaveCapture(bg, dbKey{x.db, string(k)})
	}
	for _, dk := range crossDBKeys(x) {
		s.bgsaveCapture(bg, dk)
	}
}

// bgsaveCaptureDB captures every key of db not captured yet.
func (s *Server) bgsaveCaptureDB(bg *bgsave, db *DB) {
	db.each(func(key string, _ *entry) { s.bgsaveCapture(bg, dbKey{db, key}) })
}

// bgsaveBeforeSwap captures both databases SWAPDB is about to exchange; after
// the swap their keys count as captured in the other database.
func (s *Server) bgsaveBeforeSwap(db1, db2 *DB) {
	bg := s.bgsave
	s.bgsaveCaptureDB(bg, db1)
	s.bgsaveCaptureDB(bg, db2)
	for _, pair := range [][2]*DB{{db1, db2}, {db2, db1}} {
		pair[0].each(func(key string, _ *entry) { bg.touched[dbKey{pair[1], key}] = struct{}{} })
	}
}

// bgsaveCapture captures dk's t0 state the first time it is seen. A key not
// yet captured in a database already scanned did not exist at t0.
func (s *Server) bgsaveCapture(bg *bgsave, dk dbKey) {
	if bg.finish(dk, bg.compress) {
		return
	}
	if _, ok := bg.touched[dk]; ok {
		return
	}
	bg.touched[dk] = struct{}{}
	if dk.db.id >= bg.dbIdx {
		s.bgsaveEncode(bg, dk.db, dk.key, true)
	}
}

// bgsaveEncode appends key's record to bg.items and returns its cost in scan
// budget. A large sorted set or hash is queued to be encoded a slice per step
// unless whole is set (it is about to change).
func (s *Server) bgsaveEncode(bg *bgsave, db *DB, key string, whole bool) int {
	e := db.entry(key)
	if e == nil {
		return 1
	}
	at := db.when(e)
	if e.hasTTL() && at <= s.nowMs() {
		return 1
	}
	cost, err := bg.capture(db, key, e, at, whole, bg.compress)
	if err != nil {
		bg.err = fmt.Errorf("rdb: %w", err)
	}
	return cost
}

// rdbSliceOf returns v when a BGSAVE encodes it a slice per step.
func rdbSliceOf(v any) rdbSliceable {
	switch v := v.(type) {
	case *zset:
		if v.sliceLen() > zsetSlice {
			return v
		}
	case *hashValue:
		if v.table() != nil && v.sliceLen() > zsetSlice {
			return v
		}
	case *setValue:
		if v.hash && v.Len() > zsetSlice {
			return v
		}
	case *list:
		if v.Len() > zsetSlice {
			return v
		}
	case *stream:
		if v.nodes.Len() > streamRDBSlice {
			return v
		}
	}
	return nil
}

// slice encodes c's next slice (to its end if all is set): the first one
// begins the record (type, key, count) and carries the key and its expiry,
// the others continue it. finished reports the value's end.
func (c *rdbCapture) slice(compress, all bool) (it rdbItem, finished bool) {
	w := rdbWriter{compress: compress}
	it.db = c.db.id
	if !c.started {
		c.started = true
		it.key, it.expireAt = c.key, c.expireAt
		at := len(w.b)
		w.byte1(0) // the type, known once written
		w.str([]byte(c.key))
		w.b[at] = c.v.appendRDBHead(&w)
	}
	end := c.v.rdbSliceLen()
	if !all {
		end = min(c.next+c.v.rdbSliceStep(), end)
	}
	c.v.appendRDBSlice(&w, c.next, end)
	c.next = end
	it.rec = w.b
	return it, end == c.v.rdbSliceLen()
}

// bgsaveStep captures up to rewriteStep keys and hands over what was captured.
// Runs on the executor.
func (s *Server) bgsaveStep(bg *bgsave) (items []rdbItem, done bool, err error) {
	budget := rewriteStep
	if len(bg.slicing) > 0 {
		bg.step(bg.compress, false)
		budget = 0
	}
	for budget > 0 && bg.dbIdx < len(s.dbs) {
		db := s.dbs[bg.dbIdx]
		bg.cursor = db.scan(bg.cursor, budget, func(key string) {
			dk := dbKey{db, key}
			if _, ok := bg.touched[dk]; ok {
				budget--
				return
			}
			bg.touched[dk] = struct{}{}
			budget -= s.bgsaveEncode(bg, db, key, false)
		})
		if bg.cursor == 0 {
			bg.dbIdx++
		}
	}
	items, bg.items = bg.items, nil
	return items, bg.dbIdx >= len(s.dbs) && len(bg.slicing) == 0, bg.err
}

// bgsaveScanned removes the write hooks once the saver has every key.
func (s *Server) bgsaveScanned(bg *bgsave) {
	if bg.scanning {
		bg.touched, bg.scanning = nil, false
		s.setWriteHooks()
	}
}

var errBgsaveAborted = errors.New("background save aborted: the server is shutting down")

// bgsaveInBackground writes the file. Runs on its own goroutine; each access
// to the data is an executor job.
func (s *Server) bgsaveInBackground(bg *bgsave) error {
	if bg.stream != nil {
		return bg.stream(func(out *bufio.Writer) error { return s.bgsaveWrite(bg, out) })
	}
	tmp := filepath.Join(bg.dir, fmt.Sprintf("temp-bg-%d.rdb", os.Getpid()))
	err := writeTempFile(tmp, func(out *bufio.Writer) error { return s.bgsaveWrite(bg, out) })
	if err != nil {
		return err
	}
	// the rename is an executor job, so that a SAVE or SHUTDOWN that stopped
	// this BGSAVE cannot be overwritten by it
	s.submit(func() {
		if bg.aborted {
			err = errBgsaveAborted
			return
		}
		err = os.Rename(tmp, bg.path)
	})
	if err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(bg.dir)
	return nil
}

// writeKey writes one captured key: a SELECTDB when its database differs from
// *selected, its expiry, then its record (a string is encoded here, other types
// come encoded in rec), flushing every 64 KB. Runs on the saving goroutine.
func (f *rdbFileWriter) writeKey(selected *int, db int, key string, isString bool, str, rec []byte, expireAt int64) error {
	if db != *selected {
		f.w.byte1(rdbOpSelectDB)
		f.w.length(uint64(db))
		*selected = db
	}
	if expireAt != 0 {
		f.w.byte1(rdbOpExpireTimeMs)
		f.w.millis(expireAt)
	}
	if isString {
		appendRDBKeyValue(&f.w, key, str, 0)
	} else {
		f.w.b = append(f.w.b, rec...)
	}
	return f.flush(64 << 10)
}

// bgsaveWrite writes the snapshot, asking the executor for the keys in steps.
func (s *Server) bgsaveWrite(bg *bgsave, out *bufio.Writer) error {
	f := &rdbFileWriter{w: rdbWriter{compress: bg.compress}, out: out, checksum: bg.checksum}
	f.replAux = bg.replAux
	s.writeRDBHeader(f, bg.functions)
	selected := -1
	for {
		var items []rdbItem
		var done bool
		var err error
		if s.stopping.Load() {
			return errBgsaveAborted
		}
		s.submit(func() {
			if bg.aborted {
				err = errBgsaveAborted
				return
			}
			items, done, err = s.bgsaveStep(bg)
		})
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := f.writeKey(&selected, it.db, it.key, it.isString, it.str, it.rec, it.expireAt); err != nil {
				return err
			}
			if it.key != "" { // not a large value's later slice
				bg.progress.countWritten(1)
			}
			debugDelay(bg.keySaveDelay) // rdb-key-save-delay, off the executor
		}
		if done {
			// every captured string is encoded: writes may change strings in
			// place again (writableString)
			s.submit(func() { s.bgsaveScanned(bg) })
			return s.writeRDBTrailer(f)
		}
	}
}

// writeRDBHeader writes the signature, the aux fields and the libraries.
func (s *Server) writeRDBHeader(f *rdbFileWriter, functions []string) {
	f.w.b = append(f.w.b, fmt.Sprintf("REDIS%04d", rdbVersion)...)
	f.aux("redis-ver", redisVersion)
	f.aux("redis-bits", "64")
	f.aux("ctime", itoa(time.Now().Unix()))
	f.aux("used-mem", itoa(int64(heapAlloc())))
	f.aux("aof-base", b01(f.aofBase))
	for _, kv := range f.replAux {
		f.aux(kv[0], kv[1])
	}
	for _, code := range functions {
		f.w.byte1(rdbOpFunction2)
		f.w.str([]byte(code))
	}
}

// writeRDBTrailer writes EOF and the checksum, and flushes.
func (s *Server) writeRDBTrailer(f *rdbFileWriter) error {
	f.w.byte1(rdbOpEOF)
	if err := f.flush(0); err != nil {
		return err
	}
	var sum [8]byte
	if f.checksum {
		binary.LittleEndian.PutUint64(sum[:], f.crc)
	}
	f.out.Write(sum[:])
	return f.out.Flush()
}

// bgsaveDone records the outcome. Runs on the executor.
func (s *Server) bgsaveDone(bg *bgsave, err error) {
	if s.bgsave == bg {
		bg.scanning = false
		s.bgsave = nil
		s.setWriteHooks()
	}
	if bg.stream != nil { // a diskless sync: no file, no save record
		s.replSnapshotDone(false, err)
		return
	}
	defer s.replSnapshotDone(true, err) // a disk sync sends the file (replication.go)
	st := s.rdbRecord()
	st.lastOK = err == nil
	st.lastBgsaveDur = time.Since(bg.started)
	switch {
	case errors.Is(err, errBgsaveAborted):
		s.log.Info("background saving stopped by the shutdown")
	case err != nil:
		s.log.Error("background saving failed", "path", s.rdbPath(), "err", err)
		st.nextTry = time.Now().Add(5 * time.Second) // Redis's CONFIG_BGSAVE_RETRY_DELAY
	default:
		st.lastSave, st.dirtyAtSave = s.clock.Now(), bg.dirty
		st.saves++
		s.log.Info("background saving terminated with success", "path", s.rdbPath(),
			"seconds", st.lastBgsaveDur.Seconds())
	}
}

// abortBgsave stops a running background save at shutdown. Runs on the executor.
func (s *Server) abortBgsave() {
	if bg := s.bgsave; bg != nil {
		bg.aborted, bg.scanning = true, false
		s.bgsave = nil
		s.setWriteHooks()
	}
}

// maybeBgsave starts a BGSAVE when a save point is due: at least changes
// writes and seconds seconds since the last save. Runs on the executor.
func (s *Server) maybeBgsave() {
	st := s.rdbRecord()
	if s.bgsave != nil || s.stopping.Load() || time.Now().Before(st.nextTry) {
		return
	}
	last, dirtyAt := s.lastSaveTime()
	changes := s.dirty - dirtyAt
	for _, p := range s.cfg.Save {
		if changes >= p[1] && s.clock.Now().Sub(last) >= time.Duration(p[0])*time.Second {
			s.log.Info("save point reached, saving", "changes", changes, "seconds", p[0])
			s.startBgsave()
			return
		}
	}
}

// saveCron checks the save points once a second until the server stops.
func (s *Server) saveCron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if s.stopping.Load() {
				return
			}
			s.submit(s.maybeBgsave)
		}
	}
}
