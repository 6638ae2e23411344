package myredis

import (
	"strconv"
	"strings"
	"time"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...], as Redis 7.0.15's
// migrateCommand: the keys' DUMP payloads are sent as RESTORE commands on a
// cached connection to the target (migrate_conn.go), and the keys the target
// acknowledged are deleted here (unless COPY) and propagated as one DEL.
//
// Redis blocks its whole server while it talks to the target. MyRedis does
// the talking off the executor: the payloads are made on the executor, the
// client then waits as a blocked client while a goroutine sends them and reads
// the replies, and the executor keeps serving everyone else. To keep MIGRATE
// atomic for the keys it moves, they are locked meanwhile: a command of
// another client that names one of them (its key arguments, the KEYS of a
// script, the commands of an EXEC), and FLUSHALL, FLUSHDB and SWAPDB, are
// postponed as CLIENT PAUSE postpones commands, and run once the MIGRATE has
// finished, so they see the keys deleted as in Redis. What a lock cannot
// cover: a script reaching one of the keys without declaring it, active
// expiry and eviction (which may delete a key meanwhile; the target still
// gets it). Inside MULTI or a script, and in --workers mode, the transfer
// runs on the executor, which then waits for the target as Redis does.

// commandsMigrate registers MIGRATE and RESTORE-ASKING (Redis's cluster
// RESTORE; the same command here).
func commandsMigrate() []*command {
	return []*command{
		{name: "migrate", arity: -6, flags: flagWrite, fn: cmdMigrate, firstKey: 3, lastKey: 3, keysFn: migrateKeys},
		{name: "restore-asking", arity: -4, flags: flagWrite, fn: cmdRestore, firstKey: 1, lastKey: 1},
	}
}

// migrateSocketTTL is how long an unused cached connection stays open, in
// seconds (Redis's MIGRATE_SOCKET_CACHE_TTL).
const migrateSocketTTL = 10

// migrateArgs is MIGRATE's command line, parsed.
type migrateArgs struct {
	host, port     string
	copy, replace  bool
	user, password string // password "" with auth false: no AUTH
	auth           bool
	dbid           int64
	timeout        time.Duration
	keys           []string
}

// parseMigrate parses in Redis's order: the options (KEYS ends them), then the
// timeout, then the database. It redacts the AUTH arguments for the slow log
// and MONITOR.
func (x *Ctx) parseMigrate() (migrateArgs, bool) {
	a := migrateArgs{host: x.arg(1), port: x.arg(2)}
	firstKey, numKeys := 3, 1
	for j := 6; j < x.nargs(); j++ {
		more := x.nargs() - 1 - j
		switch opt := strings.ToLower(x.arg(j)); {
		case opt == "copy":
			a.copy = true
		case opt == "replace":
			a.replace = true
		case opt == "auth" && more >= 1:
			j++
			a.auth, a.password = true, x.arg(j)
			x.redactArg(j)
		case opt == "auth2" && more >= 2:
			a.auth, a.user, a.password = true, x.arg(j+1), x.arg(j+2)
			x.redactArg(j + 1)
			x.redactArg(j + 2)
			j += 2
		case opt == "keys":
			if len(x.args[3]) != 0 {
				x.err(msgMigrateKeysArg)
				return a, false
			}
			firstKey, numKeys = j+1, x.nargs()-j-1
			j = x.nargs()
		default:
			x.err(msgSyntax)
			return a, false
		}
	}
	ms, ok := x.argInt(5)
	if !ok {
		return a, false
	}
	if a.dbid, ok = x.argInt(4); !ok {
		return a, false
	}
	if ms <= 0 {
		ms = 1000
	}
	a.timeout = time.Duration(min(ms, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
	for _, k := range x.args[firstKey : firstKey+numKeys] {
		a.keys = append(a.keys, string(k))
	}
	return a, true
}

// migrateKeys are MIGRATE's keys as Redis's migrateGetKeys finds them: the key
// argument, or the ones after KEYS (none if the key argument is not empty).
func migrateKeys(args [][]byte) [][]byte {
	if len(args) < 4 {
		return nil
	}
	for i := 6; i < len(args); i++ {
		switch {
		case eqFold(args[i], "keys"):
			if len(args[3]) > 0 {
				return nil
			}
			return args[i+1:]
		case eqFold(args[i], "auth"):
			i++
		case eqFold(args[i], "auth2"):
			i += 2
		}
	}
	return args[3:4]
}

// migrateJob is one MIGRATE in flight: what the executor prepared and, once
// the transfer is over, what the target answered.
type migrateJob struct {
	a    migrateArgs
	db   *DB
	keys []string // the keys sent, in order (found and not expired)
	// restores is the RESTORE commands, RESP-encoded, one per key
	restores []byte
	res      migrateResult
}

// migrateResult is the transfer's outcome: the keys the target acknowledged
// (indexes into keys) and the error to answer, "" for OK.
type migrateResult struct {
	acked []int
	err   string
}

// cmdMigrate prepares the transfer, or finishes it when x.migrated holds its
// outcome. Runs on the executor goroutine.
func cmdMigrate(x *Ctx) {
	a, ok := x.parseMigrate()
	if !ok {
		return
	}
	if x.migrated != nil {
		x.finishMigrate(x.migrated)
		return
	}
	job := x.prepareMigrate(a)
	if job == nil {
		return
	}
	if !x.canBlock() {
		job.res = x.s.migrate.transfer(job) // waits for the target, as Redis does
		x.finishMigrate(job)
		return
	}
	x.s.lockMigrating(job)
	x.block(nil, 0)
	bs := x.c.blocked
	bs.migrating = true
	s, c := x.s, x.c // (x is reused by c's next command)
	go func() {      // the transfer goroutine
		job.res = s.migrate.transfer(job)
		s.toExecutor(func() { s.migrateDone(c, bs, job) })
	}()
}

// prepareMigrate finds the keys and encodes their RESTORE commands; nil when
// it answered already (+NOKEY: none of the keys exists).
func (x *Ctx) prepareMigrate(a migrateArgs) *migrateJob {
	job := &migrateJob{a: a, db: x.db}
	var found []*entry
	var names []string
	for _, k := range a.keys {
		if e := x.lookupRead(k); e != nil {
			found, names = append(found, e), append(names, k)
		}
	}
	if len(found) == 0 {
		x.w.Simple("NOKEY")
		return nil
	}
	now := x.nowMs()
	for i, e := range found {
		var ttl int64
		if when, ok := x.db.expireAt(names[i]); ok {
			if ttl = when - now; ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		payload, ok := dumpPayload(e.value())
		if !ok {
			x.err(msgDumpUnsupported)
			return nil
		}
		job.keys = append(job.keys, names[i])
		job.restores = appendRestore(job.restores, names[i], ttl, payload, a.replace)
	}
	return job
}

// appendRestore encodes RESTORE key ttl payload [REPLACE] (Redis sends
// RESTORE-ASKING only in cluster mode).
func appendRestore(b []byte, key string, ttl int64, payload []byte, replace bool) []byte {
	n := 4
	if replace {
		n = 5
	}
	b = appendRESPArrayHead(b, n)
	b = appendRESPBulk(b, []byte("RESTORE"))
	b = appendRESPBulk(b, []byte(key))
	b = appendRESPBulk(b, strconv.AppendInt(nil, ttl, 10))
	b = appendRESPBulk(b, payload)
	if replace {
		b = appendRESPBulk(b, []byte("REPLACE"))
	}
	return b
}

func appendRESPArrayHead(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendRESPBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// migrateDone runs the finished MIGRATE again on the executor, as a served
// blocked command: it deletes the acknowledged keys and answers. The keys are
// deleted even when the client left meanwhile (the target has them). Runs on
// the executor goroutine.
func (s *Server) migrateDone(c *Client, bs *blockState, job *migrateJob) {
	s.unlockMigrating(job)
	waiting := c.blocked == bs
	var w Writer
	out := &w
	if waiting {
		s.unblock(c)
		c.blockOut.Reset()
		out = &c.blockOut
	}
	x := &Ctx{s: s, c: c, db: job.db, cmd: s.table.lookup([]byte("migrate")), args: bs.args, w: out,
		migrated: job, readyKey: job.a.keys[0]} // readyKey: served, monitors saw it when it came
	s.exec(x)
	if waiting {
		c.lastActive.Store(s.clock.Now().UnixMilli())
		s.release(c.wake)
	}
	s.releasePostponed() // the commands the lock held (pause.go)
}

// finishMigrate deletes the keys the target acknowledged (unless COPY),
// propagates them as one DEL and answers. Runs on the executor goroutine.
func (x *Ctx) finishMigrate(job *migrateJob) {
	if !job.a.copy && len(job.res.acked) > 0 {
		del := []string{"DEL"}
		n := 0
		for _, i := range job.res.acked {
			key := job.keys[i]
			if x.db.lookup(key) != nil && x.db.delete(key) {
				x.notify(notifyGeneric, "del", key)
				n++
			}
			del = append(del, key)
		}
		x.dirty(n)
		x.propagateAs(del...)
	}
	if job.res.err != "" {
		x.err(job.res.err)
		return
	}
	x.ok()
}

// --- the key lock ---

// lockMigrating locks job's keys until migrateDone. Runs on the executor.
func (s *Server) lockMigrating(job *migrateJob) {
	if s.migrating == nil {
		s.migrating, s.migratingDBs = make(map[dbKey]int), make(map[*DB]int)
	}
	for _, k := range job.keys {
		s.migrating[dbKey{job.db, k}]++
	}
	s.migratingDBs[job.db]++
}

// unlockMigrating releases job's keys. Runs on the executor.
func (s *Server) unlockMigrating(job *migrateJob) {
	for _, k := range job.keys {
		dk := dbKey{job.db, k}
		if s.migrating[dk]--; s.migrating[dk] <= 0 {
			delete(s.migrating, dk)
		}
	}
	if s.migratingDBs[job.db]--; s.migratingDBs[job.db] <= 0 {
		delete(s.migratingDBs, job.db)
	}
}

// migrationHolds reports whether a MIGRATE in flight holds cmd back: it names
// a key being moved (in c's database), or it flushes or swaps databases while
// one is. Replication and internal clients are never held. Runs on the executor.
func (s *Server) migrationHolds(c *Client, cmd *command, args [][]byte) bool {
	if c.conn == nil || c.replica != nil || c == s.repl.mc {
		return false
	}
	if c.multi != nil && cmd.name != "exec" {
		return false // queued, not run
	}
	if cmd.name == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if s.namesMigrating(c.db, q.cmd, q.args) {
				return true
			}
		}
		return false
	}
	return s.namesMigrating(c.db, cmd, args)
}

// namesMigrating: cmd's keys include a locked one, or cmd flushes or swaps a
// database holding one.
func (s *Server) namesMigrating(db *DB, cmd *command, args [][]byte) bool {
	switch cmd.name {
	case "flushall", "swapdb":
		return true
	case "flushdb":
		return s.migratingDBs[db] > 0
	}
	if s.migratingDBs[db] == 0 {
		return false
	}
	for _, k := range commandKeys(cmd, args) {
		if s.migrating[dbKey{db, string(k)}] > 0 {
			return true
		}
	}
	return false
}
