package myredis

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// DEBUG: the subcommands operators and Redis's own tests use. The others Redis
// has (crashes, allocator and cluster internals) are refused with Redis's reply
// to an unknown subcommand. DEBUG runs only where enable-debug-command allows
// it (call checks, as Redis's processCommand). Runs on the executor goroutine.

// debugHelp is DEBUG HELP: Redis's lines for the subcommands MyRedis has.
var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANGE-REPL-ID",
	"    Change the replication IDs of the instance.",
	"    Dangerous: should be used only for testing the replication subsystem.",
	"ERROR <string>",
	"    Return a Redis protocol error with <string> as message. Useful for clients",
	"    unit tests to simulate Redis errors.",
	"LOG <message>",
	"    Write <message> to the server log.",
	"OBJECT <key>",
	"    Show low level info about `key` and associated value.",
	"RELOAD [option ...]",
	"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
	"    * MERGE: conflicting keys will be loaded from RDB.",
	"    * NOFLUSH: the existing database will not be removed before load, but",
	"      conflicting keys will generate an exception and kill the server.",
	"    * NOSAVE: the database will be loaded from an existing RDB file.",
	"    Examples:",
	"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
	"      the database.",
	"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
	"      existing RDB file.",
	"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
	"      file to the database.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Setting it to 0 disables expiring keys in background when they are not",
	"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
	"    default.",
	"SLEEP <seconds>",
	"    Stop the server for <seconds>. Decimals allowed.",
	"HELP",
	"    Prints this help.",
}

func cmdDebug(x *Ctx) {
	n := x.nargs()
	switch sub := strings.ToLower(x.arg(1)); {
	case sub == "help" && n == 2:
		x.help(debugHelp)
	case sub == "sleep" && n == 3:
		debugSleep(x.arg(2))
		x.ok()
	case sub == "set-active-expire" && n == 3:
		x.s.expire.disabled = cAtoi(x.args[2]) == 0 // getkeys.go
		x.ok()
	case sub == "change-repl-id" && n == 2:
		x.s.log.Warn("changing replication IDs after receiving DEBUG change-repl-id")
		x.s.replID = randomHex(40)
		x.ok()
	case sub == "error" && n == 3:
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(x.arg(2))
		x.w.Raw([]byte("-" + msg + "\r\n"))
	case sub == "log" && n == 3:
		x.s.log.Warn("DEBUG LOG: " + x.arg(2))
		x.ok()
	case sub == "object" && n == 3:
		debugObject(x)
	case sub == "reload":
		debugReload(x)
	case sub == "digest" && n == 2:
		debugDigest(x) // digest.go
	case sub == "digest-value":
		debugDigestValue(x)
	default:
		x.w.Errorf(msgSubcommandSyntax, x.arg(1), "DEBUG")
	}
}

// debugSleep stops the executor (the whole server, as Redis) for secs seconds,
// read as C's strtod reads its prefix.
func debugSleep(secs string) {
	d := strtodPrefix(secs)
	if us := int64(d * 1e6); us > 0 {
		time.Sleep(time.Duration(us) * time.Microsecond)
	}
}

// strtodPrefix is C's strtod(s, NULL): the longest leading number, 0 if none.
func strtodPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for end := min(len(s), 64); end > 0; end-- { // (a number is never longer)
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return f
		}
	}
	return 0
}

// debugObject is DEBUG OBJECT key, Redis's low-level line: the value's
// address, refcount, encoding, the length of its RDB serialisation, its LRU
// clock and idle seconds, and for a list its quicklist's shape. Like Redis
// it reads the key without expiring it or counting an access.
func debugObject(x *Ctx) {
	e := x.db.entry(x.arg(2))
	if e == nil {
		x.err(msgNoSuchKey)
		return
	}
	line := fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		e, refcount(e.value(), x.s.ev.sharedInts), x.s.encodingOf(e.value()), x.s.serializedLength(e.value()),
		e.lru, x.s.idleMs(e)/1000)
	if l, ok := e.value().(*list); ok {
		nodes := l.nodeCount()
		line += fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%d",
			nodes, float64(l.n)/float64(nodes), l.fill, b2i(x.s.cfg.Enc.ListCompressDepth != 0),
			l.bytes+nodes*listpackOverhead)
	}
	x.w.Simple(line)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// serializedLength is Redis's rdbSavedObjectLen: the bytes of the value's RDB
// encoding (no key, no type byte), compressed as a save would.
func (s *Server) serializedLength(v any) int {
	w := rdbWriter{compress: s.cfg.rdbCompression()}
	switch v := v.(type) {
	case []byte:
		w.str(v)
	case rdbEncoder:
		v.appendRDB(&w)
	}
	return len(w.b)
}

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE], as Redis: save the
// RDB file, empty the dataset (keys and functions), and load the file back.
func debugReload(x *Ctx) {
	flush, save, merge := true, true, false
	for i := 2; i < x.nargs(); i++ {
		switch {
		case x.argIs(i, "merge"):
			merge = true
		case x.argIs(i, "noflush"):
			flush = false
		case x.argIs(i, "nosave"):
			save = false
		default:
			x.err(msgDebugReloadOptions)
			return
		}
	}
	s := x.s
	if save && s.saveRDB() != nil { // rdb_file.go
		x.err("ERR")
		return
	}
	if flush {
		for _, db := range s.dbs {
			db.flush()
		}
		s.trackingFlushed()
		s.functionLibs().flush()
	}
	data, err := os.ReadFile(s.rdbPath())
	if err == nil {
		s.beginLoading() // rdb_file.go
		_, err = s.loadRDBMerge(data, s.rdbPath(), merge)
		s.loading = false
	}
	if err != nil {
		s.log.Warn("debug reload failed", "err", err)
		x.err(msgDebugReloadFailed)
		return
	}
	s.log.Warn("db reloaded by debug reload")
	x.ok()
}
