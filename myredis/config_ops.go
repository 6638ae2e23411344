package myredis

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/tidwall/redcon"
)

// The operator's settings of a stock redis.conf that decide who may connect,
// where the server listens, when writes are refused and how a signal stops it,
// by Redis 7.0.15's names, defaults and CONFIG SET errors (config.c):
//
//	protected-mode               yes  refuse non-loopback TCP clients while the default user has no password (protectedRefuses)
//	unixsocket, unixsocketperm   ""   also listen on a Unix socket, chmod it to the octal mode (listen_unix.go); start-up only
//	stop-writes-on-bgsave-error  yes  MISCONF for writes while the last BGSAVE failed (writesDeniedByDiskError)
//	shutdown-on-sigint/-sigterm  default  SHUTDOWN's flags for the signal (cmd_shutdown.go, cmd/myredis)
//	shutdown-timeout             10   seconds a shutdown waits for the replicas (shutdown_wait.go)
//	oom-score-adj, -values       no, 0 200 800  /proc/self/oom_score_adj (oom.go)
//	latency-tracking, -info-percentiles  yes, 50 99 99.9  INFO latencystats (stats.go)
//	activerehashing              yes  the cron finishes a keyspace rehash (rehash_cron.go)
//	sanitize-dump-payload        no   kept; payloads are always validated whole (sanitizeDumpNames)
//	lazyfree-lazy-*              no   kept; no effect in MyRedis (lazyfreeNames)
//
// tcp-backlog is in config_more.go and listen_backlog_linux.go; the replica-*
// settings in replication_config.go.

// OpsConfig holds those settings; Config.Ops, filled with the defaults by initOps.
type OpsConfig struct {
	ProtectedMode         bool
	UnixSocket            string
	UnixSocketPerm        uint32 // a file mode, 0 leaves the socket as created (umask)
	StopWritesOnBgsaveErr bool
	// ShutdownOnSigint and ShutdownOnSigterm are SHUTDOWN flags (shutdownSave...);
	// 0 is "default": save when save points are set.
	ShutdownOnSigint, ShutdownOnSigterm int
	// ShutdownTimeout is shutdown-timeout: the seconds a shutdown waits for
	// the replicas to catch up (0: it does not wait; shutdown_wait.go).
	ShutdownTimeout   int
	OOMScoreAdj       int    // oomAdjNo, oomAdjRelative or oomAdjAbsolute
	OOMScoreAdjValues [3]int // master, replica, background child
	// ActiveRehashing is activerehashing: the cron moves a resizing keyspace
	// table's buckets (rehash_cron.go).
	ActiveRehashing bool
	// SanitizeDumpPayload is sanitize-dump-payload ("no", "yes", "clients"):
	// shown and kept; MyRedis always validates a payload whole (see
	// sanitizeDumpNames).
	SanitizeDumpPayload string
	// LatencyTracking is latency-tracking: the commands' latency histograms
	// (INFO latencystats, LATENCY HISTOGRAM) are kept (stats.go).
	LatencyTracking bool
	// LatencyPercentiles is latency-tracking-info-percentiles: the percentiles
	// INFO latencystats shows. Replaced, never changed in place (Config is copied).
	LatencyPercentiles []float64
	// Lazyfree are lazyfree-lazy-eviction, -expire, -server-del, -user-del and
	// -user-flush (default no): shown, set and rewritten, with no effect, since
	// every way MyRedis deletes already leaves the freeing to Go's garbage
	// collector (see lazyfreeNames).
	Lazyfree map[string]bool
}

// lazyfreeNames are the lazyfree-lazy-* settings. In Redis "yes" moves the
// freeing of a deleted value (its elements one by one) from the main thread
// to a background thread. MyRedis never frees element by element: DEL, UNLINK,
// expiry, eviction, an overwrite and FLUSHALL/FLUSHDB (SYNC or ASYNC) drop
// the value's reference from the keyspace in O(1) on the executor, and Go's
// garbage collector reclaims the memory concurrently, with the same cost
// whatever the setting. So either value behaves as MyRedis always does.
var lazyfreeNames = []string{"lazyfree-lazy-eviction", "lazyfree-lazy-expire",
	"lazyfree-lazy-server-del", "lazyfree-lazy-user-del", "lazyfree-lazy-user-flush"}

// SHUTDOWN's flags as Redis numbers them (server.h SHUTDOWN_*), the values of
// shutdown-on-sigint and shutdown-on-sigterm.
const (
	shutdownSave   = 1
	shutdownNosave = 2
	shutdownNow    = 4
	shutdownForce  = 8
)

// shutdownSigNames are the enum's names in Redis's order (its error lists them
// so, and CONFIG GET writes several flags in this order).
var shutdownSigNames = []struct {
	name string
	flag int
}{{"default", 0}, {"save", shutdownSave}, {"nosave", shutdownNosave}, {"now", shutdownNow}, {"force", shutdownForce}}

// sanitizeDumpNames are sanitize-dump-payload's values. In Redis "yes" (or
// "clients", for RESTORE from clients) checks every element of a RESTORE
// payload or RDB file before using it, and "no" only its outer structure,
// leaving a corrupt listpack to be found (or to crash) later. MyRedis always
// decodes a payload whole into its own structures (rdb_value.go: every
// listpack and ziplist entry, its lengths and back-lengths, the entry count,
// duplicate fields, members and stream groups) and answers "Bad data format"
// to one that fails, so every value behaves as "yes"; with "no" a corrupt
// payload Redis would accept is refused.
var sanitizeDumpNames = []string{"no", "yes", "clients"}

// oom-score-adj values: "yes" is "relative", and CONFIG GET says "yes".
const (
	oomAdjNo = iota
	oomAdjRelative
	oomAdjAbsolute
)

var oomAdjNames = []struct {
	name string
	val  int
}{{"no", oomAdjNo}, {"yes", oomAdjRelative}, {"relative", oomAdjRelative}, {"absolute", oomAdjAbsolute}}

// oomAdjName is CONFIG GET's name for v: the first with that value.
func oomAdjName(v int) string {
	for _, n := range oomAdjNames {
		if n.val == v {
			return n.name
		}
	}
	return "unknown"
}

func (c *Config) initOps() {
	if !c.opsInit {
		c.Ops = OpsConfig{ // Redis 7.0.15's defaults
			ProtectedMode: true, StopWritesOnBgsaveErr: true, ShutdownTimeout: 10,
			OOMScoreAdjValues: [3]int{0, 200, 800}, ActiveRehashing: true, SanitizeDumpPayload: "no",
			LatencyTracking: true, LatencyPercentiles: []float64{50, 99, 99.9}, Lazyfree: map[string]bool{},
		}
		c.opsInit = true
	}
}

func init() {
	for _, name := range []string{"protected-mode", "stop-writes-on-bgsave-error", "shutdown-on-sigint",
		"shutdown-on-sigterm", "shutdown-timeout", "oom-score-adj", "oom-score-adj-values",
		"latency-tracking", "latency-tracking-info-percentiles", "activerehashing", "sanitize-dump-payload"} {
		runtimeSettable[name] = true
	}
	for _, name := range []string{"shutdown-on-sigint", "shutdown-on-sigterm", "oom-score-adj-values",
		"latency-tracking-info-percentiles"} {
		configMultiArgNames[name] = true
	}
	for _, name := range lazyfreeNames {
		runtimeSettable[name] = true
	}
	configStringNames["unixsocket"] = true
	configStringNames["replica-announce-ip"] = true
	configStringNames["bind-source-addr"] = true
}

// setOps is Set for the settings of this file; handled is false for other names.
func (c *Config) setOps(name, val string) (handled bool, err error) {
	c.initOps()
	o := &c.Ops
	switch name {
	case "protected-mode":
		o.ProtectedMode, err = parseYesNo(val)
	case "stop-writes-on-bgsave-error":
		o.StopWritesOnBgsaveErr, err = parseYesNo(val)
	case "unixsocket":
		o.UnixSocket = val
	case "unixsocketperm":
		var perm int64
		if perm, err = parseOctal(val); err == nil {
			if perm < 0 || perm > 0o777 {
				return true, errors.New("argument must be between 0 and 777 inclusive")
			}
			o.UnixSocketPerm = uint32(perm)
		}
	case "shutdown-on-sigint", "shutdown-on-sigterm":
		var flags int
		if flags, err = parseShutdownSig(val); err == nil {
			if name == "shutdown-on-sigint" {
				o.ShutdownOnSigint = flags
			} else {
				o.ShutdownOnSigterm = flags
			}
		}
	case "latency-tracking":
		o.LatencyTracking, err = parseYesNo(val)
	case "activerehashing":
		o.ActiveRehashing, err = parseYesNo(val)
	case "sanitize-dump-payload":
		err = errors.New("argument(s) must be one of the following: no, yes, clients")
		for _, n := range sanitizeDumpNames {
			if strings.EqualFold(n, val) {
				o.SanitizeDumpPayload, err = n, nil
			}
		}
	case "latency-tracking-info-percentiles":
		var ps []float64
		if ps, err = parsePercentiles(val); err == nil {
			o.LatencyPercentiles = ps
		}
	case "shutdown-timeout":
		o.ShutdownTimeout, err = intConfig(val, 0, math.MaxInt32)
	case "oom-score-adj":
		err = errors.New("argument(s) must be one of the following: no, yes, relative, absolute")
		for _, n := range oomAdjNames {
			if strings.EqualFold(n.name, val) {
				o.OOMScoreAdj, err = n.val, nil
			}
		}
	case lazyfreeNames[0], lazyfreeNames[1], lazyfreeNames[2], lazyfreeNames[3], lazyfreeNames[4]:
		var yes bool
		if yes, err = parseYesNo(val); err == nil {
			lf := maps.Clone(o.Lazyfree) // Config is copied by value: the map is not shared
			if lf == nil {
				lf = map[string]bool{}
			}
			lf[name] = yes
			o.Lazyfree = lf
		}
	case "oom-score-adj-values":
		var vals [3]int
		if vals, err = parseOOMScoreAdjValues(val); err == nil {
			o.OOMScoreAdjValues = vals
		}
	default:
		return false, nil
	}
	return true, err
}

// parseOctal reads an octal number as Redis's OCTAL_CONFIG: strtoll base 8,
// which must reach the end of the string without overflowing ("" is 0).
func parseOctal(val string) (int64, error) {
	bad := errors.New("argument couldn't be parsed as an octal number")
	t := strings.TrimLeft(val, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "" {
		if val == "" {
			return 0, nil
		}
		return 0, bad
	}
	n, err := strconv.ParseInt(t, 8, 64)
	if err != nil {
		return 0, bad
	}
	if neg {
		n = -n
	}
	return n, nil
}

// parseShutdownSig reads shutdown-on-sigint's words, ORing their flags as
// Redis's configEnumGetValue: any word not a name fails.
func parseShutdownSig(val string) (int, error) {
	flags := 0
	for _, w := range strings.Split(val, " ") {
		matched := false
		for _, n := range shutdownSigNames {
			if strings.EqualFold(n.name, w) {
				flags |= n.flag
				matched = true
			}
		}
		if !matched {
			return 0, errors.New("argument(s) must be one of the following: default, save, nosave, now, force")
		}
	}
	if flags&shutdownSave != 0 && flags&shutdownNosave != 0 {
		return 0, errors.New("shutdown options SAVE and NOSAVE can't be used simultaneously")
	}
	return flags, nil
}

// formatShutdownSig is CONFIG GET's name for flags: "default", or the flags'
// names in the enum's order.
func formatShutdownSig(flags int) string {
	if flags == 0 {
		return "default"
	}
	var names []string
	for _, n := range shutdownSigNames {
		if n.flag != 0 && flags&n.flag != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " ")
}

// parsePercentiles reads latency-tracking-info-percentiles: floats in
// 0..100 (Redis's string2d: no blanks, no NaN); a lone "" is none.
func parsePercentiles(val string) ([]float64, error) {
	if val == "" {
		return []float64{}, nil
	}
	words := strings.Split(val, " ")
	ps := make([]float64, len(words))
	for i, w := range words {
		p, err := strconv.ParseFloat(w, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || w == "" || strings.ContainsAny(w[:1], " \t\n\v\f\r") || math.IsNaN(p) {
			return nil, errors.New("Invalid latency-tracking-info-percentiles parameters")
		}
		if p > 100 || p < 0 {
			return nil, errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		ps[i] = p
	}
	return ps, nil
}

// formatPercentile writes p as Redis ("%f" without trailing zeros: 50, 99.9).
func formatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// parseOOMScoreAdjValues reads three integers in -2000..2000, each read by
// strtoll to its end (so an empty word, from two spaces, is 0, as in Redis).
func parseOOMScoreAdjValues(val string) ([3]int, error) {
	var vals [3]int
	words := strings.Split(val, " ")
	if len(words) != len(vals) {
		return vals, errors.New("wrong number of arguments")
	}
	for i, w := range words {
		n, ok := strtoll(w)
		if !ok || n < -2000 || n > 2000 {
			return vals, errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
		vals[i] = int(n)
	}
	return vals, nil
}

// opsConfigParams adds CONFIG GET's entries for the settings of this file.
func (s *Server) opsConfigParams(p map[string]func() string) {
	o := &s.cfg.Ops
	yesNo := map[bool]string{true: "yes", false: "no"}
	p["protected-mode"] = func() string { return yesNo[o.ProtectedMode] }
	p["stop-writes-on-bgsave-error"] = func() string { return yesNo[o.StopWritesOnBgsaveErr] }
	p["unixsocket"] = func() string { return o.UnixSocket }
	p["unixsocketperm"] = func() string { return strconv.FormatUint(uint64(o.UnixSocketPerm), 8) }
	p["shutdown-on-sigint"] = func() string { return formatShutdownSig(o.ShutdownOnSigint) }
	p["shutdown-on-sigterm"] = func() string { return formatShutdownSig(o.ShutdownOnSigterm) }
	p["shutdown-timeout"] = func() string { return strconv.Itoa(o.ShutdownTimeout) }
	p["latency-tracking"] = func() string { return yesNo[o.LatencyTracking] }
	p["activerehashing"] = func() string { return yesNo[o.ActiveRehashing] }
	p["sanitize-dump-payload"] = func() string { return o.SanitizeDumpPayload }
	p["latency-tracking-info-percentiles"] = func() string {
		words := make([]string, len(o.LatencyPercentiles))
		for i, p := range o.LatencyPercentiles {
			words[i] = formatPercentile(p)
		}
		return strings.Join(words, " ")
	}
	p["oom-score-adj"] = func() string { return oomAdjName(o.OOMScoreAdj) }
	for _, name := range lazyfreeNames {
		p[name] = func() string { return yesNo[o.Lazyfree[name]] }
	}
	p["oom-score-adj-values"] = func() string {
		v := o.OOMScoreAdjValues
		return fmt.Sprintf("%d %d %d", v[0], v[1], v[2])
	}
}

// protectedRefuses is Redis's clientAcceptHandler check: with protected-mode
// on and no password for the default user, a TCP client whose peer is not
// 127.0.0.1 or ::1 is refused (a Unix socket client never is). Runs on the
// accepting goroutine, hence the atomics.
func (s *Server) protectedRefuses(conn redcon.Conn) bool {
	if !s.live.protectedMode.Load() || !s.live.dfltNopass.Load() || isUnixConn(conn.NetConn()) {
		return false
	}
	host, _, err := net.SplitHostPort(conn.RemoteAddr())
	return err != nil || (host != "127.0.0.1" && host != "::1")
}

// writesDeniedByDiskError is Redis's writeCommandsDeniedByDiskError for the
// RDB: stop-writes-on-bgsave-error is yes, save points are set and the last
// save (BGSAVE, SAVE, a save point's) failed; the next successful save clears
// it. Runs on the executor.
func (s *Server) writesDeniedByDiskError() bool {
	return s.cfg.Ops.StopWritesOnBgsaveErr && len(s.cfg.Save) > 0 && s.rdb != nil && !s.rdb.lastOK
}

// diskErrorRefuses is processCommand's MISCONF rule: while writes are denied,
// a write command, an EXEC with a write queued, and PING are refused; the
// master's stream on a replica is not (Redis would panic unless
// replica-ignore-disk-write-errors, which MyRedis does not implement). Runs on
// the executor.
func (s *Server) diskErrorRefuses(c *Client, cmd *command) bool {
	if !s.writesDeniedByDiskError() || (s.isReplica() && c == s.repl.mc) {
		return false
	}
	return writes(c, cmd, flagWrite) || cmd.name == "ping"
}
