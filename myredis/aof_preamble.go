package myredis

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// aof-use-rdb-preamble (default yes, as in Redis 7.0).
//
// With yes, an AOF rewrite writes the data as at t0 as an RDB payload (what
// BGSAVE writes, with aux aof-base 1), followed by the rewrite buffer's
// commands, as Redis 7.0 writes its base file. The capture is the rewrite's
// own copy on write (aof_rewrite.go); only the encoding changes: a step
// encodes each key's RDB record instead of its commands, and every captured
// key is marked, since an RDB payload must not hold a key twice. A large
// sorted set, hash, set, list or stream is encoded a slice per job as BGSAVE
// does (rdb_bgsave.go): its record must stay in one piece, so what is captured
// meanwhile waits until its last slice, and a write to it first encodes the
// rest of it.
//
// MyRedis keeps one AOF file (appendfilename in dir), not Redis 7's
// appendonlydir with a manifest (which it imports: aof_import.go): the preamble
// is at the head of that file.
// At start-up a file that begins with "REDIS" is loaded as RDB up to its EOF
// opcode and checksum, then the commands after it are replayed as usual. A
// damaged or truncated preamble stops start-up (Redis aborts the load too:
// aof-load-truncated only applies to the commands).

func init() {
	runtimeSettable["aof-use-rdb-preamble"] = true
}

// preamble is the RDB encoding of a rewrite's snapshot.
type preamble struct {
	compress, checksum bool
	functions          []string // library code at t0
}

// newPreamble takes the settings and the libraries at t0. Runs on the executor.
func (s *Server) newPreamble() *preamble {
	p := &preamble{compress: s.cfg.rdbCompression(), checksum: s.cfg.rdbChecksum()}
	if libs := s.functionsPtr.Load(); libs != nil {
		for _, lib := range libs.sorted() {
			p.functions = append(p.functions, lib.code)
		}
	}
	return p
}

// captureRDB captures key's RDB record (rdb_slicer.go) and returns its cost
// in scan budget. Runs on the executor.
func (rw *rewrite) captureRDB(db *DB, key string, e *entry, at int64, whole bool) int {
	cost, err := rw.rdb.capture(db, key, e, at, whole, rw.pre.compress)
	if err != nil {
		rw.err = fmt.Errorf("aof rewrite: %w", err)
	}
	return cost
}

// takeRDB moves the RDB records ready for the rewriter into rw.items. Runs on
// the executor.
func (rw *rewrite) takeRDB() {
	for i, it := range rw.rdb.items {
		rw.items = append(rw.items, snapItem{db: it.db, key: it.key, isString: it.isString, str: it.str, rec: it.rec, expireAt: it.expireAt})
		rw.rdb.items[i] = rdbItem{}
	}
	rw.rdb.items = rw.rdb.items[:0]
}

// snapshotOut writes the captured keys of a rewrite. Runs on the rewriter.
type snapshotOut interface {
	items([]snapItem) error
	end() error // after the last key
}

// snapshotWriter returns the writer of rw's snapshot part: commands, or an
// RDB payload with aof-use-rdb-preamble yes.
func (a *aof) snapshotWriter(rw *rewrite, bw *bufio.Writer) snapshotOut {
	if rw.pre == nil {
		bw.Write(rw.functions)
		return &commandOut{bw: bw, enc: rewriteEncoder{selected: -1}}
	}
	f := &rdbFileWriter{w: rdbWriter{compress: rw.pre.compress}, out: bw, checksum: rw.pre.checksum, aofBase: true}
	a.s.writeRDBHeader(f, rw.pre.functions)
	return &rdbOut{s: a.s, f: f, selected: -1}
}

// commandOut writes keys as commands (aof-use-rdb-preamble no).
type commandOut struct {
	bw  *bufio.Writer
	enc rewriteEncoder
}

func (o *commandOut) items(items []snapItem) error {
	for _, it := range items {
		o.bw.Write(o.enc.append(it))
	}
	return nil
}

func (o *commandOut) end() error { return nil }

// rdbOut writes keys as RDB records.
type rdbOut struct {
	s        *Server
	f        *rdbFileWriter
	selected int
}

func (o *rdbOut) items(items []snapItem) error {
	f := o.f
	for _, it := range items {
		if err := f.writeKey(&o.selected, it.db, it.key, it.isString, it.str, it.rec, it.expireAt); err != nil {
			return err
		}
	}
	return nil
}

func (o *rdbOut) end() error { return o.s.writeRDBTrailer(o.f) }

// loadPreamble loads the RDB payload at the head of the AOF f if there is
// one, and returns the offset of the commands after it (0 without one).
// Runs on the executor, with s.loading set.
func (a *aof) loadPreamble(f *os.File, path string, size int64) (keys int, end int64, err error) {
	var sig [5]byte
	if n, _ := f.ReadAt(sig[:], 0); n < len(sig) || string(sig[:]) != "REDIS" {
		return 0, 0, nil
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return 0, 0, fmt.Errorf("aof: %w", err)
	}
	keys, n, err := a.s.loadRDBPrefix(data, path, false)
	if err != nil {
		return 0, 0, fmt.Errorf("aof: reading the RDB preamble of %s (AOF loading aborted): %w", path, err)
	}
	return keys, int64(n), nil
}
