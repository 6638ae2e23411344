package myredis

import (
	"sync"
)

// Workers mode (--workers N, N > 1) exists to show what breaks when the single
// executor is "parallelised" the naive way. N goroutines take jobs from the
// connections at once. The data is guarded per primitive access: every read or
// write of a key (DB.lookup, DB.set, DB.delete, ... and each sorted-set
// primitive) takes one mutex, but a command as a whole does not. The server never
// crashes and its maps never tear, yet a command's check and its act can
// interleave with another command's: two SET NX both find no key and both win,
// two ZPOPMIN take the same head, ZADD then ZCARD counts someone else's ZADD.
//
// Commands whose handlers go through primitives only are listed in
// parallelCommands and run side by side. Everything else (transactions, scripts,
// INFO, CLIENT, CONFIG, KEYS, SCAN, server tasks such as active expiry) touches
// state that has no primitive of its own, so it runs exclusively: no other job
// runs meanwhile. Unknown commands default to exclusive, which is always safe.
//
// With N = 1 (the default) none of this runs: dataLock.on is false and the data
// path costs one predictable branch per primitive.

// dataLock is the workers-mode lock. on never changes after New.
type dataLock struct {
	on bool
	mu sync.Mutex   // one primitive access at a time
	gt sync.RWMutex // parallel batches share it; exclusive jobs take it alone
}

// hold locks the primitive lock and returns its unlock, for
// `if l.on { defer l.hold()() }`.
func (l *dataLock) hold() func() {
	l.mu.Lock()
	return l.mu.Unlock
}

// hold locks a sorted set's primitive lock and returns its unlock.
func (z *zset) hold() func() {
	mu := z.box().x.mu
	mu.Lock()
	return mu.Unlock
}

// share gives a value entering the keyspace in workers mode its own lock.
// Runs under the data lock.
func share(val any) {
	if z, ok := val.(*zset); ok && !z.locked() {
		z.box().ext().mu = new(sync.Mutex)
	}
}

// parallelCommands run concurrently in workers mode: their handlers touch data
// only through DB and ZSet primitives, and otherwise only their own client.
var parallelCommands = map[string]bool{
	// strings
	"get": true, "set": true, "setnx": true, "setex": true, "psetex": true,
	"getdel": true, "getex": true, "getset": true, "mget": true, "mset": true,
	"msetnx": true, "incr": true, "decr": true, "incrby": true, "decrby": true,
	"incrbyfloat": true, "append": true, "strlen": true,
	// keys
	"del": true, "unlink": true, "exists": true, "type": true, "expire": true,
	"pexpire": true, "expireat": true, "pexpireat": true, "ttl": true, "pttl": true,
	"persist": true, "expiretime": true, "pexpiretime": true, "rename": true,
	"renamenx": true,
	// sorted sets. Not ZRANGE and friends: their reply announces a count, then
	// walks the set, and a write in between would make the reply lie about its
	// own length and desynchronise the client; so they, the store variants,
	// the blocking pops and the scans run exclusively.
	"zadd": true, "zincrby": true, "zrem": true, "zcard": true, "zscore": true,
	"zmscore": true, "zrank": true, "zrevrank": true, "zcount": true, "zlexcount": true,
	"zpopmin": true, "zpopmax": true,
	"zremrangebyscore": true, "zremrangebyrank": true, "zremrangebylex": true,
	// connection (own client only)
	"ping": true, "echo": true, "quit": true, "select": true, "auth": true,
	"hello": true, "multi": true,
}

// startWorkers runs n executor goroutines instead of one. Called from New.
func (s *Server) startWorkers(n int) {
	s.par.on = true
	s.log.Warn("!!! WORKERS MODE: commands run on several goroutines at once and are NOT atomic",
		"workers", n,
		"effect", "SET NX can elect two leaders, ZPOPMIN can pop one member twice, ZADD+ZCARD can overshoot",
		"use", "demonstrations only (bench race); never in production")
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runWorker()
		}()
	}
	go func() {
		wg.Wait()
		close(s.executorDone)
	}()
}

// runWorker is one of the N executor goroutines of workers mode.
func (s *Server) runWorker() {
	for j := range s.jobs {
		if j.fn != nil {
			s.par.gt.Lock()
			j.fn()
			s.par.gt.Unlock()
			continue
		}
		if !j.c.claim.CompareAndSwap(j.seq, 0) {
			continue // its connection answered it BUSY while it waited behind a script
		}
		if s.parallelBatch(j.c) {
			s.par.gt.RLock()
			s.runBatch(j.c)
			s.par.gt.RUnlock()
		} else {
			s.par.gt.Lock()
			s.runBatch(j.c)
			s.par.gt.Unlock()
		}
		j.c.done <- struct{}{}
	}
}

// parallelBatch reports whether every command of c's batch may run beside others.
// A command queued inside MULTI only touches its own client, so it is parallel too.
func (s *Server) parallelBatch(c *Client) bool {
	inMulti := c.multi != nil
	for _, cmd := range c.cmds {
		if len(cmd.Args) == 0 {
			continue
		}
		name := s.table.lookup(cmd.Args[0])
		if name == nil {
			continue // answered with an error, touches nothing
		}
		switch {
		case name.name == "multi":
			inMulti = true
		case name.name == "exec" || name.name == "discard" || name.name == "watch":
			return false
		case inMulti:
		case !parallelCommands[name.name]:
			return false
		}
	}
	return true
}

// execWorker is exec for workers mode: no comparison of the shared dirty counter
// (other workers move it), and propagation under the lock.
func (s *Server) execWorker(x *Ctx) {
	x.cmd.fn(x)
	s.bump(&s.stats.commands, 1)
	if x.changed > 0 && x.cmd.flags&flagWrite != 0 {
		args := x.args
		if x.rewrite != nil {
			args = x.rewrite
		}
		if len(args) > 0 { // empty: the command propagated what it did itself
			s.par.mu.Lock()
			s.propagate(x.db, args)
			s.par.mu.Unlock()
		}
	}
}

// modified is db.touch as a primitive of its own, for handlers that change a
// value in place (a sorted set) and then tell the watchers.
func (db *DB) modified(key string) {
	if db.s.par.on {
		defer db.s.par.hold()()
	}
	db.touch(key)
}

// bump increments a server counter, under the lock in workers mode.
func (s *Server) bump(p *int64, n int64) {
	if s.par.on {
		s.par.mu.Lock()
		*p += n
		s.par.mu.Unlock()
		return
	}
	*p += n
}

// deadline returns key's expiry deadline (unix ms), if it has one.
func (db *DB) deadline(key string) (int64, bool) {
	if db.s.par.on {
		defer db.s.par.hold()()
	}
	return db.expireAt(key)
}
