package myredis

// Typed lookups: the commands of every data type find their key the same
// way. Each type's command file names them for its type (readHash,
// writeList, ...) as one-liners over these. Run on the executor.

// readValue looks key up for a read, counting a keyspace hit or miss: v is
// the zero T (nil) when the key is missing; ok is false, and WRONGTYPE
// written, when the key holds another type.
func readValue[T any](x *Ctx, key string) (v T, ok bool) {
	e := x.db.lookup(key)
	if e == nil {
		x.s.bump(&x.s.stats.keyspaceMisses, 1) // workers.go: locked in workers mode
		x.notify(notifyKeyMiss, "keymiss", key)
		return v, true
	}
	x.s.bump(&x.s.stats.keyspaceHits, 1)
	return valueAs[T](x, e)
}

// writeValue is readValue for a command about to modify the key: no hit
// statistics, as Redis's lookupKeyWrite.
func writeValue[T any](x *Ctx, key string) (v T, ok bool) {
	e := x.db.lookup(key)
	if e == nil {
		return v, true
	}
	return valueAs[T](x, e)
}

// valueAs is e's value as a T, or WRONGTYPE written and ok false.
func valueAs[T any](x *Ctx, e *entry) (T, bool) {
	v, ok := e.value().(T)
	if !ok {
		x.wrongType()
	}
	return v, ok
}

// membersChanged records n changes to the collection at key, left members
// remaining: the key goes with its last member; otherwise WATCHers (and
// blocked clients) hear of the change.
func (x *Ctx) membersChanged(key string, left, n int) {
	if n == 0 {
		return
	}
	if left == 0 {
		x.db.delete(key)
		x.notify(notifyGeneric, "del", key)
	} else {
		x.db.modified(key) // touch, locked in workers mode (workers.go)
	}
	x.dirty(n)
}
