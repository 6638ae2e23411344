package myredis

// commandsTransaction registers MULTI/EXEC/DISCARD/WATCH/UNWATCH.
func commandsTransaction() []*command {
	return []*command{
		{name: "multi", arity: 1, flags: flagTx | flagNoScript, fn: cmdMulti},
		{name: "exec", arity: 1, flags: flagTx | flagNoScript, fn: cmdExec},
		{name: "discard", arity: 1, flags: flagTx | flagNoScript, fn: cmdDiscard},
		{name: "watch", arity: -2, flags: flagTx | flagNoScript, fn: cmdWatch, firstKey: 1, lastKey: -1},
		{name: "unwatch", arity: 1, flags: flagNoScript, fn: cmdUnwatch}, // queued inside MULTI, as in Redis
	}
}

// multiState is a client's open transaction.
type multiState struct {
	cmds    []queuedCmd
	failed  bool  // a command was rejected while queueing: EXEC aborts
	argvMem int64 // the queued arguments' bytes and pointers (Redis's mstate.argv_len_sums)
}

type queuedCmd struct {
	cmd  *command
	args [][]byte
}

func (m *multiState) queue(cmd *command, args [][]byte) {
	m.cmds = append(m.cmds, queuedCmd{cmd, args})
	m.argvMem += argvBytes(args) + 8*int64(len(args))
}

type watchedKey struct {
	db  *DB
	key string
}

func cmdMulti(x *Ctx) {
	if x.c.multi != nil {
		x.err(msgNestedMulti)
		return
	}
	m := x.c.spareMulti
	if m == nil {
		m = &multiState{}
	}
	x.c.spareMulti = nil
	x.c.multi = m
	x.c.inMulti.Store(true)
	x.ok()
}

func cmdDiscard(x *Ctx) {
	if x.c.multi == nil {
		x.err(msgDiscardNoMulti)
		return
	}
	m := x.c.multi
	x.s.discard(x.c)
	x.s.unwatchAll(x.c)
	x.c.recycle(m)
	x.ok()
}

func (s *Server) discard(c *Client) {
	c.multi = nil
	c.inMulti.Store(false)
}

// recycle keeps a finished transaction's queue for the client's next MULTI.
func (c *Client) recycle(m *multiState) {
	if cap(m.cmds) > 1024 {
		return // let a huge queue go
	}
	clear(m.cmds)
	m.cmds, m.failed, m.argvMem = m.cmds[:0], false, 0
	c.spareMulti = m
}

// cmdExec runs the queued commands back to back: it is one executor step, so
// nothing interleaves.
func cmdExec(x *Ctx) {
	c, s := x.c, x.s
	m := c.multi
	if m == nil {
		x.err(msgExecNoMulti)
		return
	}
	s.discard(c)
	defer c.recycle(m)
	if m.failed {
		s.unwatchAll(c)
		x.err(msgExecAbort)
		return
	}
	if c.dirtyCAS || s.watchedKeyExpired(c) {
		s.unwatchAll(c)
		x.w.NullArray()
		return
	}
	s.unwatchAll(c)
	x.w.Array(len(m.cmds))
	inner := &c.execX
	for _, q := range m.cmds {
		c.lastCmd = q.cmd.name
		if !c.user.unrestricted && !s.aclCheckExec(c, q.cmd, q.args, x.w) { // acl_check.go
			continue
		}
		*inner = Ctx{s: s, c: c, db: c.db, cmd: q.cmd, args: q.args, w: x.w, inMulti: true}
		s.exec(inner)
	}
}

// watchedKeyExpired reports whether a watched key reached its deadline since WATCH.
func (s *Server) watchedKeyExpired(c *Client) bool {
	now := s.nowMs()
	for _, wk := range c.watched {
		if wk.db.isExpired(wk.key, now) {
			return true
		}
	}
	return false
}

func cmdWatch(x *Ctx) {
	if x.c.multi != nil {
		x.err(msgWatchInMulti)
		return
	}
	for _, k := range x.args[1:] {
		key := string(k)
		if x.c.isWatching(x.db, key) {
			continue
		}
		x.db.lookup(key) // an already-expired key is gone before the watch starts
		x.c.watched = append(x.c.watched, watchedKey{x.db, key})
		x.db.watchers[key] = append(x.db.watchers[key], x.c)
	}
	x.ok()
}

func (c *Client) isWatching(db *DB, key string) bool {
	for _, wk := range c.watched {
		if wk.db == db && wk.key == key {
			return true
		}
	}
	return false
}

func cmdUnwatch(x *Ctx) {
	x.s.unwatchAll(x.c)
	x.ok()
}

// unwatchAll drops every WATCH of c and clears its dirty flag.
func (s *Server) unwatchAll(c *Client) {
	for _, wk := range c.watched {
		list := wk.db.watchers[wk.key]
		for i, o := range list {
			if o == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(wk.db.watchers, wk.key)
		} else {
			wk.db.watchers[wk.key] = list
		}
	}
	c.watched = nil
	c.dirtyCAS = false
}
