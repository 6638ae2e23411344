package myredis

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
)

// AOF rewrite (BGREWRITEAOF, the automatic rewrite, BGSAVE).
//
// The new file holds one command per live key (SET key value [PXAT ms], ZADD, SADD
// and HMSET in batches) as the data was at the moment the rewrite started, t0, followed by every
// write made since t0 (the rewrite buffer), then takes the old file's place.
// With aof-use-rdb-preamble yes the keys are an RDB payload instead of commands
// (aof_preamble.go).
//
// Reading the data "as at t0" without stopping the executor for the whole dataset
// and without fork():
//
//   - The rewriter goroutine asks the executor for the keys in steps: one job scans
//     at most rewriteStep keys with the SCAN cursor (db.scan). A job captures a string
//     by reference (no string is changed in place while a rewrite runs: writes store
//     a new slice, APPEND only writes past the end of the old one, and the commands
//     that change bytes in place, SETBIT, SETRANGE, BITFIELD and the PF commands,
//     copy the value first: writableString) and encodes a sorted set, a set or a
//     hash, a large one zsetSlice members (or slots) per job. Encoding strings and all
//     file I/O happen on the rewriter.
//   - A key written after t0 would be seen by a later step in its new state, and its
//     writes replayed again from the buffer on top (INCR twice). So from t0 on, the
//     executor calls beforeWrite before each write command: the first time a key is
//     about to change, its t0 state is captured then (copy on write, per key) and the
//     key is marked touched; the scan skips touched keys. Keys created after t0 are
//     touched too, so they come only from the buffer.
//   - A key may be captured twice (SCAN may return a key again after a deletion moved
//     it): both captures are its t0 state, and writing the same SET or ZADD twice
//     gives the same result.
//
// Expiry needs nothing special: an expired key is not captured, and the DEL of a key
// that expires during the rewrite is in the buffer. FLUSHDB/FLUSHALL need nothing
// either: they are in the buffer, after every captured key.
//
// The switch (aof.switchFile, on the writer goroutine): the rewriter writes the
// captured keys and most of the buffer to temp-rewriteaof-bg-<pid>.aof and fsyncs
// it; a last executor job stops buffering and queues the file with the buffer's last
// bytes for the writer, which appends them, fsyncs, renames the file over the AOF and
// fsyncs the directory. Until the rename the old file is complete, so a crash at any
// point loses nothing acknowledged.

// rewriteStep bounds the keys one executor job scans.
const rewriteStep = 1024

// zaddBatch is the number of members per ZADD in a rewritten file (Redis: 64).
const zaddBatch = 64

// rewrite is the executor side of a running rewrite. Runs on the executor.
type rewrite struct {
	buf     []byte             // the rewrite buffer: writes handed to the writer since t0
	touched map[dbKey]struct{} // keys written since t0
	dbIdx   int                // databases below dbIdx have been scanned
	cursor  uint64             // SCAN cursor in s.dbs[dbIdx]
	items   []snapItem         // captured, not yet taken by the rewriter
	slicing []*zsetCapture     // large sorted sets and hashes being captured a slice per step
	err     error              // a value the rewrite cannot write
	aborted bool
	dirty   int64 // s.dirty at t0
	// functions are FUNCTION LOAD commands for the libraries at t0, written first
	functions []byte
	// pre is set when the snapshot part is an RDB payload (aof_preamble.go)
	pre *preamble
	// rdb captures the RDB payload's records, slicing large values (rdb_slicer.go)
	rdb rdbSlicer
	// keySaveDelay is rdb-key-save-delay at t0: the rewriter pauses after each key, as Redis's
	keySaveDelay int
	progress     saveProgress // INFO current_save_keys_* (rdb_bgsave.go)
}

// snapItem is one key's state at t0.
type snapItem struct {
	db       int
	key      string
	isString bool
	str      []byte // the string value, shared (see above)
	cmds     []byte // other types: the commands that rebuild the value, encoded
	rec      []byte // other types, with the RDB preamble: the RDB record (type, key, value)
	expireAt int64  // unix ms, 0 = none
	cont     bool   // a large value's later slice (its key was counted with the first)
}

// startRewrite begins a background rewrite. Runs on the executor.
func (a *aof) startRewrite() error {
	if a.rewriting {
		return errRewriteRunning
	}
	a.flush() // the writes so far belong to the old data, not to the buffer
	rw := a.s.newRewrite()
	rw.progress.total = a.s.keysNow() // rdb_bgsave.go
	a.rw, a.rewriting = rw, true
	st := &a.s.aofrw
	st.rewrites++ // as Redis, counted when it starts
	st.started, st.scheduled = time.Now(), false
	a.selected = -1 // the buffer starts with a SELECT
	a.s.setWriteHooks()
	a.s.log.Info("aof rewrite started", "keys", a.keyCount())
	go func() {
		err := a.rewriteInBackground(rw)
		a.s.submit(func() { a.rewriteDone(rw, err) })
	}()
	return nil
}

// newRewrite captures what a rewrite needs of the moment it starts, t0. Runs on
// the executor.
func (s *Server) newRewrite() *rewrite {
	rw := &rewrite{touched: make(map[dbKey]struct{}), dirty: s.dirty, keySaveDelay: s.cfg.RDBKeySaveDelay}
	if s.cfg.aofRDBPreamble() {
		rw.pre = s.newPreamble()
	} else {
		rw.functions = s.functionsRewrite()
	}
	return rw
}

func (a *aof) keyCount() int {
	n := 0
	for _, db := range a.s.dbs {
		n += db.Size()
	}
	return n
}

// beforeWrite captures the t0 state of the keys a write command is about to change.
// Runs on the executor, during a rewrite.
func (a *aof) beforeWrite(x *Ctx) {
	for _, k := range x.cmd.keys(x.args) {
		a.captureBeforeWrite(dbKey{x.db, string(k)})
	}
	for _, dk := range crossDBKeys(x) {
		a.captureBeforeWrite(dk)
	}
}

// captureBeforeSwap captures every key of two databases SWAPDB is about to exchange.
func (a *aof) captureBeforeSwap(db1, db2 *DB) {
	pairs := [][2]*DB{{db1, db2}, {db2, db1}}
	for _, pair := range pairs {
		pair[0].each(func(key string, _ *entry) { a.captureBeforeWrite(dbKey{pair[0], key}) })
	}
	// after the swap each key is in the other database: its t0 state is the one
	// just captured, so the scan must not take it again there
	for _, pair := range pairs {
		pair[0].each(func(key string, _ *entry) { a.rw.touched[dbKey{pair[1], key}] = struct{}{} })
	}
}

// captureBeforeWrite captures dk's t0 state the first time it is about to change.
func (a *aof) captureBeforeWrite(dk dbKey) {
	rw := a.rw
	if rw.pre != nil && rw.rdb.finish(dk, rw.pre.compress) { // (before touched: the scan marked it)
		return
	}
	if _, ok := rw.touched[dk]; ok {
		return
	}
	rw.touched[dk] = struct{}{}
	switch {
	case a.finishSlicing(rw, dk):
	case dk.db.id >= rw.dbIdx: // not scanned yet, or being scanned
		a.capture(rw, dk.db, dk.key, true)
	}
}

// capture appends key's current state to rw.items and returns its cost in scan
// budget. A large sorted set is captured whole only if whole is set (it is about to
// change); otherwise slice by slice, one per scan step. Runs on the executor.
func (a *aof) capture(rw *rewrite, db *DB, key string, whole bool) int {
	e := db.entry(key)
	if e == nil {
		return 1
	}
	at := db.when(e)
	if e.hasTTL() && at <= a.s.nowMs() {
		return 1 // expired: its DEL, if any, is in the buffer
	}
	if rw.pre != nil {
		return rw.captureRDB(db, key, e, at, whole) // aof_preamble.go
	}
	it := snapItem{db: db.id, key: key, expireAt: at}
	switch v := e.value().(type) {
	case []byte:
		it.isString, it.str = true, v
	case *hashValue:
		if !whole && v.sliceLen() > zsetSlice {
			rw.slicing = append(rw.slicing, &zsetCapture{db: db, key: key, z: v, expireAt: at})
			return 1
		}
		it.cmds = appendHashRewrite(nil, key, v) // HMSET, 64 fields each
	case sliceable: // sorted sets, sets and lists
		if !whole && v.sliceLen() > zsetSlice {
			rw.slicing = append(rw.slicing, &zsetCapture{db: db, key: key, z: v, expireAt: at})
			return 1
		}
		it.cmds = v.appendRewrite(nil, key, 0, v.sliceLen())
	default:
		rw.err = fmt.Errorf("aof rewrite: no rewrite for a value of type %T (key %q)", v, key)
		return 1
	}
	rw.items = append(rw.items, it)
	return 1 + len(it.cmds)/4096
}

// Sorted sets, sets, lists and hashes are changed in place, so capturing one means encoding
// it. A large one (more than zsetSlice members, or hash slots) is encoded
// zsetSlice at a time, one executor job each; until it is done no write has
// touched it (a write would first finish it: finishSlicing), so its members keep
// their positions between jobs.
const zsetSlice = 8192

// sliceable is a value that can be encoded a slice of positions at a time.
type sliceable interface {
	// sliceLen is the number of positions (members; hash slots, holes included).
	sliceLen() int
	// appendRewrite encodes the positions [from, to) as commands.
	appendRewrite(b []byte, key string, from, to int) []byte
}

func (z *zset) sliceLen() int { return z.Len() }
func (z *zset) appendRewrite(b []byte, key string, from, to int) []byte {
	return appendZSetRewrite(b, key, z, from, to)
}

// zsetCapture is a large sorted set, set, list or hash being captured.
type zsetCapture struct {
	db       *DB
	key      string
	z        sliceable // the value at t0, unchanged while it is being captured
	next     int       // members [0, next) are captured
	expireAt int64
}

// slice captures the next zsetSlice members of the first set being sliced. Runs on
// the executor.
func (a *aof) slice(rw *rewrite) {
	c := rw.slicing[0]
	end := min(c.next+zsetSlice, c.z.sliceLen())
	a.captureSlice(rw, c, end)
	if end == c.z.sliceLen() {
		rw.slicing = rw.slicing[1:]
	}
}

func (a *aof) captureSlice(rw *rewrite, c *zsetCapture, end int) {
	it := snapItem{db: c.db.id, key: c.key, cmds: c.z.appendRewrite(nil, c.key, c.next, end), cont: c.next > 0}
	if end == c.z.sliceLen() {
		it.expireAt = c.expireAt // after the last ZADD
	}
	c.next = end
	rw.items = append(rw.items, it)
}

// finishSlicing captures the rest of dk's sorted set if it is being sliced, and
// reports whether it was. Runs on the executor.
func (a *aof) finishSlicing(rw *rewrite, dk dbKey) bool {
	found := false
	rest := rw.slicing[:0]
	for _, c := range rw.slicing { // (SCAN may have returned the key twice)
		if c.db == dk.db && c.key == dk.key {
			a.captureSlice(rw, c, c.z.sliceLen())
			found = true
			continue
		}
		rest = append(rest, c)
	}
	clear(rw.slicing[len(rest):])
	rw.slicing = rest
	return found
}

// appendZSetRewrite encodes the members [from, to) of z as ZADD commands of zaddBatch
// members each, scores as Redis prints them (%.17g, inf, -inf), which parse back to
// the same float64.
func appendZSetRewrite(b []byte, key string, z *zset, from, to int) []byte {
	var num [32]byte
	i := from
	z.Range(from, to, false, func(it zItem) bool {
		if (i-from)%zaddBatch == 0 {
			b = redcon.AppendArray(b, 2+2*min(zaddBatch, to-i))
			b = redcon.AppendBulkString(b, "ZADD")
			b = redcon.AppendBulkString(b, key)
		}
		b = redcon.AppendBulk(b, appendScore(num[:0], it.score))
		b = redcon.AppendBulkString(b, it.member)
		i++
		return true
	})
	return b
}

// scanStep captures up to rewriteStep keys, or one slice of a large sorted set, and
// hands over everything captured since the last step. done reports that every
// database has been scanned and every set captured. Runs on the executor.
func (a *aof) scanStep(rw *rewrite) (items []snapItem, done bool, err error) {
	budget := rewriteStep
	switch {
	case len(rw.slicing) > 0:
		a.slice(rw)
		budget = 0
	case len(rw.rdb.slicing) > 0:
		rw.rdb.step(rw.pre.compress, false)
		budget = 0
	}
	for budget > 0 && rw.dbIdx < len(a.s.dbs) {
		db := a.s.dbs[rw.dbIdx]
		rw.cursor = db.scan(rw.cursor, budget, func(key string) {
			if _, ok := rw.touched[dbKey{db, key}]; ok {
				budget--
				return
			}
			if rw.pre != nil { // an RDB file must not hold a key twice
				rw.touched[dbKey{db, key}] = struct{}{}
			}
			budget -= a.capture(rw, db, key, false)
		})
		if rw.cursor == 0 {
			rw.dbIdx++
		}
	}
	rw.takeRDB() // aof_preamble.go
	items, rw.items = rw.items, nil
	return items, rw.dbIdx >= len(a.s.dbs) && len(rw.slicing) == 0 && len(rw.rdb.slicing) == 0, rw.err
}

var errRewriteAborted = errors.New("aof rewrite aborted: the server is shutting down or the AOF was turned off")

// rewriteSeq numbers the rewrites' temp files: a rewrite aborted by CONFIG SET
// appendonly no may still be writing its file when the next one starts.
var rewriteSeq atomic.Int64

// rewriteTempName is Redis's temp-rewriteaof-bg-<pid>.aof, with a sequence number
// after the first.
func rewriteTempName() string {
	if n := rewriteSeq.Add(1); n > 1 {
		return fmt.Sprintf("temp-rewriteaof-bg-%d-%d.aof", os.Getpid(), n)
	}
	return fmt.Sprintf("temp-rewriteaof-bg-%d.aof", os.Getpid())
}

// rewriteInBackground writes the new file and has the writer switch to it. Runs on
// its own goroutine; each access to the data is an executor job.
func (a *aof) rewriteInBackground(rw *rewrite) error {
	tmp := filepath.Join(filepath.Dir(a.path), rewriteTempName())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := a.writeSnapshot(rw, bw); err != nil {
		return fail(err)
	}
	// The buffer, while it is large; the last bytes go with the switch.
	for range 16 {
		var chunk []byte
		a.s.submit(func() { chunk, rw.buf = rw.buf, nil })
		bw.Write(chunk)
		if len(chunk) < 64<<10 {
			break
		}
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := fdatasync(f); err != nil {
		return fail(err)
	}
	if a.detached { // appendonly no: the file as it is replaces the AOF file
		return a.finishDetached(rw, f, tmp) // aof_detached.go
	}
	sw := &fileSwitch{f: f, tmp: tmp, result: make(chan error, 1)}
	a.s.submit(func() {
		if rw.aborted {
			err = errRewriteAborted
			return
		}
		a.queueSwitch(sw)
	})
	if err != nil {
		return fail(err)
	}
	return <-sw.result
}

// writeSnapshot writes the keys as at t0 (commands, or the RDB preamble) to bw,
// asking the executor for them a step at a time. Runs on the rewriter (or on the
// start-up goroutine: aof_import.go).
func (a *aof) writeSnapshot(rw *rewrite, bw *bufio.Writer) error {
	out := a.snapshotWriter(rw, bw)
	for {
		var (
			items []snapItem
			done  bool
			err   error
		)
		a.s.submit(func() {
			if rw.aborted {
				err = errRewriteAborted
				return
			}
			items, done, err = a.scanStep(rw)
		})
		if err != nil {
			return err
		}
		if err := out.items(items); err != nil {
			return err
		}
		keys := 0
		for _, it := range items {
			if it.key != "" && !it.cont { // RDB records' later slices have no key
				keys++
			}
		}
		rw.progress.countWritten(keys)
		if rw.keySaveDelay != 0 {
			for range items {
				debugDelay(rw.keySaveDelay) // rdb_file.go
			}
		}
		if done {
			return out.end()
		}
	}
}

// queueSwitch stops the rewrite buffer and queues the new file for the writer: what
// is handed from now on goes to the new file. Runs on the executor.
func (a *aof) queueSwitch(sw *fileSwitch) {
	a.flush()
	if a.rw != nil {
		sw.remainder = append(sw.remainder, a.rw.buf...)
		a.rw.buf = nil
	}
	a.rw = nil
	a.s.setWriteHooks()
	a.mu.Lock()
	a.sw, a.swMark = sw, len(a.pending)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// rewriteDone records the outcome. Runs on the executor.
func (a *aof) rewriteDone(rw *rewrite, err error) {
	if a.rw == rw {
		a.rw = nil
		a.s.setWriteHooks()
	}
	a.rewriting = false
	st := &a.s.aofrw
	if a.detached && st.detached == a {
		st.detached = nil
	}
	if errors.Is(err, errRewriteAborted) { // as Redis's killed child: no failure
		a.s.log.Info("aof rewrite stopped")
		return
	}
	st.finished, st.lastDur = true, time.Since(st.started)
	st.lastErr = err != nil
	if err != nil {
		st.failures++
	} else {
		st.failures = 0
	}
	switch {
	case err != nil && a.detached:
		a.s.log.Error("aof rewrite failed", "err", err)
		return
	case err != nil && a.waiting:
		a.s.log.Error("aof rewrite failed; the AOF is not on yet, retrying", "err", err)
		a.nextAuto = time.Now().Add(5 * time.Second)
		return
	case err != nil:
		a.s.log.Error("aof rewrite failed; the old file stays in use", "err", err)
		a.nextAuto = time.Now().Add(10 * time.Second)
		return
	}
	if a.detached {
		a.s.log.Info("aof rewrite done (appendonly no)", "path", a.path, "seconds", st.lastDur.Seconds())
		return
	}
	a.switchedOn()
	a.lastSave = a.s.clock.Now()
	a.dirtyAtSave = rw.dirty
	a.s.log.Info("aof rewrite done", "path", a.path, "bytes", a.baseSize.Load(),
		"seconds", st.lastDur.Seconds())
}

// abortRewrite stops a running rewrite at shutdown. Runs on the executor.
func (a *aof) abortRewrite() {
	if a.rw != nil {
		a.rw.aborted = true
		a.rw = nil
		a.s.setWriteHooks()
	}
}

// maybeRewrite starts a scheduled rewrite, or an automatic one when the file has
// grown by auto-aof-rewrite-percentage since the last rewrite. Runs on the executor.
func (a *aof) maybeRewrite() {
	if a.closed || a.rewriting {
		return
	}
	if a.s.aofrw.scheduled {
		a.startRewrite()
		return
	}
	if a.waiting { // turned on at run time, its first rewrite failed (aof_switch.go)
		if !time.Now().Before(a.nextAuto) {
			a.startRewrite()
		}
		return
	}
	perc := a.s.cfg.AutoAOFRewritePercentage
	cur, base := a.curSize.Load(), max(a.baseSize.Load(), 1)
	if perc < 0 || cur < a.s.cfg.AutoAOFRewriteMinSize || time.Now().Before(a.nextAuto) {
		return
	}
	if growth := cur*100/base - 100; growth >= int64(perc) {
		a.s.log.Info("starting automatic aof rewrite", "growth_percent", growth, "bytes", cur)
		a.startRewrite()
	}
}

// rewriteEncoder turns captured keys into commands. Runs on the rewriter.
type rewriteEncoder struct {
	selected int
	b        []byte
}

// append returns the commands for one key; the slice is reused by the next call.
func (e *rewriteEncoder) append(it snapItem) []byte {
	b := e.b[:0]
	if it.db != e.selected {
		b = appendCommand(b, [][]byte{[]byte("SELECT"), strconv.AppendInt(nil, int64(it.db), 10)})
		e.selected = it.db
	}
	key := []byte(it.key)
	switch {
	case it.isString && it.expireAt != 0:
		b = appendCommand(b, [][]byte{[]byte("SET"), key, it.str, []byte("PXAT"), strconv.AppendInt(nil, it.expireAt, 10)})
	case it.isString:
		b = appendCommand(b, [][]byte{[]byte("SET"), key, it.str})
	default:
		b = append(b, it.cmds...)
		if it.expireAt != 0 {
			b = appendCommand(b, [][]byte{[]byte("PEXPIREAT"), key, strconv.AppendInt(nil, it.expireAt, 10)})
		}
	}
	e.b = b
	return b
}
