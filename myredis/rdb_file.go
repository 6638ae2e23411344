package myredis

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// The RDB file as Redis 7.0 writes it (version 10):
//
//	"REDIS0010"
//	AUX redis-ver, redis-bits, ctime, used-mem, aof-base
//	FUNCTION2 <library code>          one per library
//	SELECTDB n, RESIZEDB size expires  per non-empty database, then per key:
//	[EXPIRETIME_MS ms] type key value
//	EOF, CRC64 of everything before it (8 zero bytes with rdbchecksum no)
//
// SAVE writes it while the executor waits (as Redis's SAVE blocks the
// server): to temp-<pid>.rdb in dir, fsynced, renamed over dbfilename, the
// directory fsynced. At start-up with appendonly no the file is loaded
// (expired keys skipped, as a master does); with appendonly yes the AOF wins.
//
// BGSAVE is not an RDB snapshot yet: it rewrites the AOF (cmd_persistence.go).

func init() {
	openHooks = append(openHooks, openRDB)
	runtimeSettable["rdbcompression"] = true
}

// rdbState is the record of RDB saves. Runs on the executor.
type rdbState struct {
	lastSave      time.Time // the last successful save (or start-up)
	dirtyAtSave   int64     // s.dirty then
	lastOK        bool      // the last save succeeded
	saves         int64     // successful saves since start-up
	nextTry       time.Time // a failed save-point save is retried after this
	lastBgsaveDur time.Duration
	// the last load's keys (an RDB file, an AOF's preamble, DEBUG RELOAD, a
	// master's RDB): stored, and left out because they had expired
	// (rdb_last_load_keys_loaded / _expired; CONFIG RESETSTAT keeps them, as Redis)
	loadLoaded, loadExpired int64
}

// beginLoading marks the start of a load of data (Redis's startLoading): the
// last load's key counts start again. Runs on the executor.
func (s *Server) beginLoading() {
	s.loading = true
	st := s.rdbRecord()
	st.loadLoaded, st.loadExpired = 0, 0
}

// ---- writing ----

// rdbFileWriter streams an RDB file, keeping its CRC64.
type rdbFileWriter struct {
	w        rdbWriter
	out      *bufio.Writer
	crc      uint64
	checksum bool
	replAux  [][2]string // repl-stream-db, repl-id, repl-offset (replication.go)
	aofBase  bool        // the AOF's RDB preamble (aof_preamble.go): aux aof-base is 1
}

// flush moves the encoded bytes to the file once they pass limit bytes.
func (f *rdbFileWriter) flush(limit int) error {
	if len(f.w.b) < limit {
		return nil
	}
	if f.checksum {
		f.crc = crc64(f.crc, f.w.b)
	}
	_, err := f.out.Write(f.w.b)
	f.w.b = f.w.b[:0]
	return err
}

func (f *rdbFileWriter) aux(key, val string) {
	f.w.byte1(rdbOpAux)
	f.w.str([]byte(key))
	f.w.str([]byte(val))
}

// appendRDBKeyValue writes one key: its expiry, type, name and value.
func appendRDBKeyValue(w *rdbWriter, key string, v any, expireAt int64) bool {
	if expireAt != 0 {
		w.byte1(rdbOpExpireTimeMs)
		w.millis(expireAt)
	}
	switch v := v.(type) {
	case []byte:
		w.byte1(rdbTypeString)
		w.str([]byte(key))
		w.str(v)
	case rdbEncoder:
		at := len(w.b)
		w.byte1(0) // the type, known once written
		w.str([]byte(key))
		w.b[at] = v.appendRDB(w)
	default:
		return false
	}
	return true
}

// writeRDB writes the whole dataset to out. Runs on the executor.
func (s *Server) writeRDB(out *bufio.Writer) error {
	f := &rdbFileWriter{w: rdbWriter{compress: s.cfg.rdbCompression()}, out: out, checksum: s.cfg.rdbChecksum()}
	var functions []string
	if libs := s.functionsPtr.Load(); libs != nil {
		for _, lib := range libs.sorted() {
			functions = append(functions, lib.code)
		}
	}
	f.replAux = s.replAuxFields()
	s.writeRDBHeader(f, functions)
	now := s.nowMs()
	for _, db := range s.dbs {
		if db.Size() == 0 {
			continue
		}
		f.w.byte1(rdbOpSelectDB)
		f.w.length(uint64(db.id))
		f.w.byte1(rdbOpResizeDB)
		f.w.length(uint64(db.Size()))
		f.w.length(uint64(db.Volatile()))
		var err error
		db.each(func(key string, e *entry) {
			if err != nil || e.hasTTL() && db.when(e) <= now {
				return // expired: a loading master would drop it anyway
			}
			if !appendRDBKeyValue(&f.w, key, e.value(), db.when(e)) {
				err = fmt.Errorf("rdb: no RDB encoding for a value of type %T (key %q)", e.value(), key)
				return
			}
			err = f.flush(64 << 10)
			debugDelay(s.cfg.RDBKeySaveDelay) // rdb-key-save-delay (SAVE holds the executor, as Redis's)
		})
		if err != nil {
			return err
		}
	}
	return s.writeRDBTrailer(f)
}

func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// rdbPath is dir/dbfilename.
func (s *Server) rdbPath() string { return filepath.Join(s.cfg.Dir, s.cfg.dbFilename()) }

// saveRDB writes the RDB file while the executor waits (SAVE, SHUTDOWN).
// Runs on the executor.
func (s *Server) saveRDB() error {
	if s.bgsave != nil {
		return errBgsaveRunning
	}
	start := time.Now()
	tmp := filepath.Join(s.cfg.Dir, fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	err := writeFileAtomically(tmp, s.rdbPath(), func(bw *bufio.Writer) error { return s.writeRDB(bw) })
	st := s.rdbRecord()
	st.lastOK = err == nil
	if err != nil {
		s.log.Error("rdb save failed", "path", s.rdbPath(), "err", err)
		return err
	}
	st.lastSave, st.dirtyAtSave = s.clock.Now(), s.dirty
	st.saves++
	s.log.Info("db saved on disk", "path", s.rdbPath(), "seconds", time.Since(start).Seconds())
	return nil
}

// writeFileAtomically writes tmp with fill, fsyncs it, renames it over path
// and fsyncs the directory: a crash leaves the old file or the new one.
func writeFileAtomically(tmp, path string, fill func(*bufio.Writer) error) error {
	if err := writeTempFile(tmp, fill); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeTempFile writes tmp with fill and fsyncs it; on error tmp is removed.
func writeTempFile(tmp string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fill(bw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// rdbRecord returns the save record, creating it (start-up counts as a save).
func (s *Server) rdbRecord() *rdbState {
	if s.rdb == nil {
		s.rdb = &rdbState{lastSave: s.started, lastOK: true}
	}
	return s.rdb
}

// lastSaveTime is LASTSAVE: the later of the last RDB save and the last AOF
// rewrite (BGSAVE rewrites the AOF).
func (s *Server) lastSaveTime() (time.Time, int64) {
	st := s.rdbRecord()
	t, dirty := st.lastSave, st.dirtyAtSave
	if a := s.aof; a != nil && a.lastSave.After(t) {
		t, dirty = a.lastSave, a.dirtyAtSave
	}
	return t, dirty
}

// rdbInfo are INFO persistence's rdb_* fields. Runs on the executor.
func (s *Server) rdbInfo() [][2]string {
	st := s.rdbRecord()
	t, dirty := s.lastSaveTime()
	lastDur, cur := int64(-1), int64(-1)
	if st.lastBgsaveDur > 0 {
		lastDur = int64(st.lastBgsaveDur / time.Second)
	}
	if s.bgsave != nil {
		cur = int64(time.Since(s.bgsave.started) / time.Second)
	}
	status := "ok"
	if !st.lastOK {
		status = "err"
	}
	return [][2]string{
		{"rdb_changes_since_last_save", itoa(s.dirty - dirty)},
		{"rdb_bgsave_in_progress", b01(s.bgsave != nil)},
		{"rdb_last_save_time", itoa(t.Unix())},
		{"rdb_last_bgsave_status", status},
		{"rdb_last_bgsave_time_sec", itoa(lastDur)},
		{"rdb_current_bgsave_time_sec", itoa(cur)},
		{"rdb_saves", itoa(st.saves)},
		{"rdb_last_cow_size", "0"}, // no fork: nothing is copied on write by the kernel (rdb_bgsave.go copies keys instead)
		{"rdb_last_load_keys_expired", itoa(st.loadExpired)},
		{"rdb_last_load_keys_loaded", itoa(st.loadLoaded)},
	}
}

// ---- loading ----

// rdbLoadError is a file MyRedis cannot load; it stops start-up.
type rdbLoadError struct {
	path   string
	offset int
	what   string
}

func (e *rdbLoadError) Error() string {
	return fmt.Sprintf("rdb: bad file format reading %s at offset %d: %s; "+
		"check it with redis-check-rdb, or move it away to start empty", e.path, e.offset, e.what)
}

// openRDB starts the save points' cron and loads dir/dbfilename at
// start-up when appendonly is no.
func openRDB(s *Server) error {
	s.submit(func() { s.closeHooks = append(s.closeHooks, func() { s.submit(s.abortBgsave) }) })
	go s.saveCron()
	if s.cfg.AppendOnly {
		return nil
	}
	path := s.rdbPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rdb: %w", err)
	}
	start := time.Now()
	var keys int
	s.submit(func() {
		s.beginLoading()
		keys, err = s.loadRDB(data, path)
		s.loading = false
		st := s.rdbRecord()
		st.lastSave, st.dirtyAtSave = s.clock.Now(), s.dirty
	})
	if err != nil {
		return err
	}
	s.log.Info("db loaded from disk", "path", path, "keys", keys, "seconds", time.Since(start).Seconds())
	return nil
}

// loadRDB loads a whole file into the (empty) server. Runs on the executor.
func (s *Server) loadRDB(data []byte, path string) (int, error) {
	return s.loadRDBMerge(data, path, false)
}

// loadRDBMerge is loadRDB, with merge: keys and libraries already there are
// replaced rather than an error (DEBUG RELOAD MERGE, cmd_debug.go).
func (s *Server) loadRDBMerge(data []byte, path string, merge bool) (int, error) {
	keys, _, err := s.loadRDBPrefix(data, path, merge)
	return keys, err
}

// loadRDBPrefix is loadRDBMerge that also returns where the RDB payload ends
// in data (an AOF's RDB preamble is followed by commands, aof_preamble.go).
func (s *Server) loadRDBPrefix(data []byte, path string, merge bool) (keys, end int, err error) {
	r := &rdbReader{p: data}
	fail := func(what string) (int, int, error) { return 0, 0, &rdbLoadError{path, r.off, what} }
	if len(data) < 9 || string(data[:5]) != "REDIS" {
		return fail("not an RDB file (no REDIS signature)")
	}
	ver, err := strconv.Atoi(string(data[5:9]))
	if err != nil || ver < 1 || ver > rdbVersion {
		return fail(fmt.Sprintf("RDB version %q is not one MyRedis reads (1 to %d)", data[5:9], rdbVersion))
	}
	r.off = 9
	l := rdbLoader{s: s, r: r, db: s.dbs[0], now: s.nowMs(), merge: merge}
	for {
		at := r.off
		op, err := r.byte1()
		if err != nil {
			return fail("unexpected end of file")
		}
		if op == rdbOpEOF {
			break
		}
		if what := l.item(op); what != "" {
			r.off = at
			return fail(what)
		}
	}
	if ver >= 5 { // the checksum
		end := r.off
		sum, err := r.take(8)
		if err != nil {
			return fail("the file ends inside the checksum")
		}
		if want := binary.LittleEndian.Uint64(sum); want != 0 && want != crc64(0, data[:end]) {
			return fail("wrong RDB checksum")
		}
	}
	return l.keys, r.off, nil
}

// rdbLoader is the state of one file load. Runs on the executor.
type rdbLoader struct {
	s        *Server
	r        *rdbReader
	db       *DB
	now      int64
	expireAt int64 // the next key's expiry, 0 = none
	keys     int
	merge    bool // DEBUG RELOAD MERGE: a key or library already there is replaced
}

// item reads the opcode op's operands, or a key whose type is op; it returns
// what is wrong, or "".
func (l *rdbLoader) item(op byte) string {
	r := l.r
	switch op {
	case rdbOpSelectDB:
		n, enc, err := r.length()
		if err != nil || enc || n >= uint64(len(l.s.dbs)) {
			return fmt.Sprintf("SELECTDB of a database this server does not have (databases is %d)", len(l.s.dbs))
		}
		l.db = l.s.dbs[n]
	case rdbOpResizeDB:
		for range 2 {
			if _, enc, err := r.length(); err != nil || enc {
				return "bad RESIZEDB sizes"
			}
		}
	case rdbOpExpireTimeMs:
		ms, err := r.millis()
		if err != nil {
			return "unexpected end of file in an expire time"
		}
		l.expireAt = ms
	case rdbOpExpireTime: // seconds, 4 bytes (old files)
		b, err := r.take(4)
		if err != nil {
			return "unexpected end of file in an expire time"
		}
		l.expireAt = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
	case rdbOpIdle:
		if _, enc, err := r.length(); err != nil || enc {
			return "bad IDLE value"
		}
	case rdbOpFreq:
		if _, err := r.byte1(); err != nil {
			return "unexpected end of file in a FREQ value"
		}
	case rdbOpAux:
		key, err1 := r.str()
		val, err2 := r.str()
		if err1 != nil || err2 != nil {
			return "bad AUX field"
		}
		l.s.replAuxLoaded(string(key), string(val)) // replication.go
	case rdbOpModuleAux:
		return "the file holds module data (MODULE_AUX), and MyRedis has no modules"
	case rdbOpFunction2:
		return l.function()
	case rdbOpFunction:
		return "the file holds a pre-7.0 FUNCTION record, which MyRedis does not read"
	default:
		if msg := l.keyValue(op); msg != "" {
			return msg
		}
		debugDelay(l.s.cfg.KeyLoadDelay) // key-load-delay
	}
	return ""
}

// debugDelay pauses for Redis's key-load-delay and rdb-key-save-delay: usec
// microseconds, or for a negative -n a 1 us pause with probability 1/n.
func debugDelay(usec int) {
	if usec < 0 {
		if rand.IntN(-usec) != 0 {
			return
		}
		usec = 1
	}
	if usec > 0 {
		time.Sleep(time.Duration(usec) * time.Microsecond)
	}
}

// function installs one library.
func (l *rdbLoader) function() string {
	code, err := l.r.str()
	if err != nil {
		return "bad FUNCTION2 record"
	}
	f := l.s.functionLibs()
	lib, msg := f.compileLibrary(string(code), time.Duration(max(l.s.cfg.luaTimeLimit(), 0))*time.Millisecond)
	if msg == "" {
		msg = f.add(lib, l.merge)
	}
	if msg != "" {
		return "cannot load a function library: " + msg
	}
	return ""
}

// keyValue reads one key of type typ and stores it unless it has expired.
func (l *rdbLoader) keyValue(typ byte) string {
	if typ == rdbTypeModule2 || typ == 6 {
		return "the file holds a module type value, and MyRedis has no modules"
	}
	key, err := l.r.str()
	if err != nil {
		return "bad key name"
	}
	val, err := readRDBValue(l.r, typ, l.s)
	if err != nil {
		return fmt.Sprintf("bad value of type %d for key %q", typ, key)
	}
	at := l.expireAt
	l.expireAt = 0
	st := l.s.rdbRecord()
	if at != 0 && at <= l.now {
		st.loadExpired++
		return "" // expired: a master drops it while loading
	}
	k := string(key)
	if l.db.entry(k) != nil {
		if !l.merge {
			return fmt.Sprintf("duplicate key %q", key)
		}
		l.db.remove(k)
	}
	l.db.insert(k, val)
	if at != 0 {
		l.db.setExpire(k, at)
	}
	l.keys++
	st.loadLoaded++
	return ""
}

func b01(v bool) string {
	if v {
		return "1"
	}
	return "0"
}
