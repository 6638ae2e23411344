package myredis

import "fmt"

// rdbSlicer is the executor's side of an RDB snapshot's capture, shared by
// BGSAVE (rdb_bgsave.go) and the AOF rewrite's RDB preamble (aof_preamble.go):
// records ready for the writer (items), the large values being encoded a
// slice per step (slicing, in order), and what was captured while one is
// (later: a record must stay whole in the file, so they follow its last
// slice). Runs on the executor.
type rdbSlicer struct {
	items   []rdbItem
	slicing []*rdbCapture
	later   []rdbItem
}

// capture takes key's record (e its entry, at its deadline) and returns its
// cost in scan budget: a string by reference (the writer encodes it), a large
// value queued to be encoded a slice per step unless whole is set (it is about
// to change), anything else encoded now.
func (r *rdbSlicer) capture(db *DB, key string, e *entry, at int64, whole, compress bool) (int, error) {
	it := rdbItem{db: db.id, key: key, expireAt: at}
	if v, ok := e.str(); ok {
		it.isString, it.str = true, v
	} else if v := rdbSliceOf(e.value()); v != nil && !whole {
		r.slicing = append(r.slicing, &rdbCapture{db: db, key: key, v: v, expireAt: at})
		return 1, nil
	} else {
		w := rdbWriter{compress: compress}
		if !appendRDBKeyValue(&w, key, e.value(), 0) {
			return 1, fmt.Errorf("no RDB encoding for a value of type %T (key %q)", e.value(), key)
		}
		it.rec = w.b
	}
	r.emit(it)
	return 1 + len(it.rec)/4096, nil
}

// emit hands a record over, after the value being sliced if any.
func (r *rdbSlicer) emit(it rdbItem) {
	if len(r.slicing) > 0 {
		r.later = append(r.later, it)
		return
	}
	r.items = append(r.items, it)
}

// step encodes the next slice of the first value being sliced (to its end if
// all is set); after its last one come the records that waited.
func (r *rdbSlicer) step(compress, all bool) {
	it, finished := r.slicing[0].slice(compress, all)
	r.items = append(r.items, it)
	if finished {
		r.slicing[0] = nil
		r.slicing = r.slicing[1:]
		if len(r.slicing) == 0 {
			r.items = append(r.items, r.later...)
			r.later = nil
		}
	}
}

// finish encodes the rest of dk's value if it is being sliced (a write is
// about to change it), and reports whether it was.
func (r *rdbSlicer) finish(dk dbKey, compress bool) bool {
	for i, c := range r.slicing {
		if c.db != dk.db || c.key != dk.key {
			continue
		}
		if i == 0 {
			r.step(compress, true)
			return true
		}
		// not started: written whole after the values before it
		r.slicing = append(r.slicing[:i], r.slicing[i+1:]...)
		w := rdbWriter{compress: compress}
		appendRDBKeyValue(&w, c.key, c.v, 0)
		r.later = append(r.later, rdbItem{db: c.db.id, key: c.key, expireAt: c.expireAt, rec: w.b})
		return true
	}
	return false
}
