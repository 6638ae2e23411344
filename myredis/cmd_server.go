package myredis

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const redisVersion = "7.0.15"

// commandsServer registers the server commands.
func commandsServer() []*command {
	return []*command{
		{name: "command", arity: -1, fn: cmdCommand, subs: subcommands(map[string]int{
			"count": 2, "info": -2, "docs": -2, "list": -2, "getkeys": -4, "getkeysandflags": -4, "help": 2,
		})},
		{name: "config", arity: -2, flags: flagAdmin | flagNoScript, fn: cmdConfig, subs: subcommands(map[string]int{
			"get": -3, "set": -4, "resetstat": 2, "rewrite": 2, "help": 2,
		})},
		{name: "info", arity: -1, fn: cmdInfo},
		{name: "time", arity: 1, fn: cmdTime},
		{name: "lastsave", arity: 1, fn: cmdLastsave},
	}
}

func sortClients(cs []*Client) { sort.Slice(cs, func(i, j int) bool { return cs[i].id < cs[j].id }) }

// --- COMMAND ---

//go:generate go run ./internal/gencmdinfo -o commandinfo_redis.go

// cmdCommand serves COMMAND and its subcommands; call has checked the name and
// arity. COMMAND INFO and DOCS answer Redis 7.0's own entries
// (commandinfo_redis.go, generated: run go generate after adding commands).
func cmdCommand(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	if x.nargs() == 1 {
		x.writeCommandInfos(x.s.sortedCommands())
		return
	}
	switch sub := strings.ToLower(x.arg(1)); sub {
	case "count":
		x.w.Int(int64(len(x.s.table)))
	case "info":
		var cmds []*command
		if x.nargs() == 2 {
			cmds = x.s.sortedCommands()
		}
		for _, a := range x.args[2:] {
			cmds = append(cmds, x.s.table.lookupFullName(a)) // nil -> null entry (command_sub.go)
		}
		x.writeCommandInfos(cmds)
	case "docs":
		var cmds []*command
		if x.nargs() == 2 {
			cmds = x.s.sortedCommands()
		}
		for _, a := range x.args[2:] {
			if c := x.s.table.lookupFullName(a); c != nil {
				cmds = append(cmds, c)
			}
		}
		x.writeCommandDocs(cmds)
	case "list":
		x.commandList()
	case "getkeys":
		x.commandGetKeys(x.args[2:])
	case "getkeysandflags":
		x.commandGetKeysAndFlags(x.args[2:]) // getkeys.go
	case "help":
		x.help([]string{"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"(no subcommand)", "    Return details about all Redis commands.",
			"COUNT", "    Return the total number of commands in this Redis server.",
			"LIST", "    Return a list of all commands in this Redis server.",
			"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"GETKEYS <full-command>", "    Return the keys from a full Redis command.",
			"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full Redis command.",
			"HELP", "    Prints this help."})
	}
}

// commandList answers COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p],
// subcommands ("config|get") included as Redis lists them.
func (x *Ctx) commandList() {
	var keep func(c *command) bool
	switch {
	case x.nargs() == 2:
		keep = func(*command) bool { return true }
	case x.nargs() == 5 && eqFold(x.args[2], "filterby") && eqFold(x.args[3], "module"):
		keep = func(*command) bool { return false }
	case x.nargs() == 5 && eqFold(x.args[2], "filterby") && eqFold(x.args[3], "aclcat"):
		cat := aclCategory(x.arg(4)) // acl_meta.go: subcommands have their own
		keep = func(c *command) bool { return cat != 0 && c.acl.cats&cat != 0 }
	case x.nargs() == 5 && eqFold(x.args[2], "filterby") && eqFold(x.args[3], "pattern"):
		pattern := x.arg(4)
		keep = func(c *command) bool { return globMatchNoCase(pattern, c.name) }
	default:
		x.err(msgSyntax)
		return
	}
	var names []string
	for _, c := range x.s.sortedCommands() {
		all := []*command{c}
		for _, sub := range c.subs {
			all = append(all, sub)
		}
		for _, c := range all {
			if keep(c) {
				names = append(names, c.name)
			}
		}
	}
	sort.Strings(names)
	x.w.BulkStrings(names)
}

func (s *Server) sortedCommands() []*command {
	cmds := make([]*command, 0, len(s.table))
	for _, c := range s.table {
		cmds = append(cmds, c)
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

// writeCommandDocs writes COMMAND DOCS: name and Redis 7.0's docs of each command
// that has them (redis-cli builds its help and hints from these).
func (x *Ctx) writeCommandDocs(cmds []*command) {
	n := 0
	for _, c := range cmds {
		if _, _, ok := commandDocsEntry(c.name); ok {
			n++
		}
	}
	x.w.Map(n)
	for _, c := range cmds {
		if doc, types, ok := commandDocsEntry(c.name); ok { // command_sub.go
			x.w.BulkString(c.name)
			x.rawRESP(doc, types)
		}
	}
}

// rawRESP writes one of Redis's stored RESP2 entries, retyped for a RESP3
// connection by its aggregate types (see retypeRESP3).
func (x *Ctx) rawRESP(raw, types string) {
	if !x.w.RESP3() {
		x.w.Raw([]byte(raw))
		return
	}
	x.w.Raw(retypeRESP3(nil, raw, types))
}

// writeCommandInfos writes Redis 7.0's COMMAND INFO entries: Redis's own for the
// commands it has, else one built from the table in the same 10-field shape.
func (x *Ctx) writeCommandInfos(cmds []*command) {
	x.w.Array(len(cmds))
	for _, c := range cmds {
		if c == nil {
			x.w.Null()
			continue
		}
		if raw, types, ok := commandInfoEntry(c.name); ok { // command_sub.go
			x.rawRESP(raw, types)
			continue
		}
		x.w.Array(10)
		x.w.BulkString(c.name)
		x.w.Int(int64(c.arity))
		var flags []string
		if c.flags&flagWrite != 0 {
			flags = append(flags, "write")
		}
		if c.flags&flagReadonly != 0 {
			flags = append(flags, "readonly")
		}
		if c.flags&flagNoScript != 0 {
			flags = append(flags, "noscript")
		}
		if c.flags&flagNoAuth != 0 {
			flags = append(flags, "no_auth")
		}
		if c.flags&flagBlocking != 0 {
			flags = append(flags, "blocking")
		}
		x.w.Set(len(flags))
		for _, f := range flags {
			x.w.Simple(f)
		}
		x.w.Int(int64(c.firstKey))
		x.w.Int(int64(c.lastKey))
		x.w.Int(int64(max(c.step, min(c.firstKey, 1))))
		x.w.Set(0)   // ACL categories
		x.w.Set(0)   // tips
		x.w.Set(0)   // key specs
		x.w.Array(0) // subcommands
	}
}

// --- CONFIG ---

// configParams lists CONFIG GET's names and how to read each value.
func (s *Server) configParams() map[string]func() string {
	yesNo := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	c := &s.cfg
	params := map[string]func() string{
		"port":                    func() string { return strconv.Itoa(c.Port) },
		"bind":                    func() string { return c.Bind },
		"requirepass":             func() string { return c.RequirePass },
		"databases":               func() string { return strconv.Itoa(c.Databases) },
		"maxclients":              func() string { return strconv.Itoa(c.MaxClients) },
		"proto-max-bulk-len":      func() string { return strconv.FormatInt(c.ProtoMaxBulkLen, 10) },
		"hz":                      func() string { return strconv.Itoa(c.Hz) },
		"loglevel":                func() string { return c.LogLevel },
		"appendonly":              func() string { return yesNo(c.AppendOnly) },
		"appendfsync":             func() string { return c.AppendFsync },
		"dir":                     func() string { return c.Dir },
		"appendfilename":          func() string { return c.AppendFilename },
		"appenddirname":           func() string { return c.AppendDirname },
		"lua-time-limit":          func() string { return strconv.FormatInt(max(c.luaTimeLimit(), 0), 10) },
		"busy-reply-threshold":    func() string { return strconv.FormatInt(max(c.luaTimeLimit(), 0), 10) },
		"io-threads":              func() string { return strconv.Itoa(runtime.GOMAXPROCS(0)) },
		"hll-sparse-max-bytes":    func() string { return strconv.FormatInt(c.hllSparseMaxBytes(), 10) },
		"tracking-table-max-keys": func() string { return strconv.FormatInt(c.trackingTableMaxKeys(), 10) },
		"active-expire-effort":    func() string { return strconv.Itoa(c.ActiveExpireEffort) },

		// the AOF's automatic rewrite
		"auto-aof-rewrite-percentage": func() string { return strconv.Itoa(max(c.AutoAOFRewritePercentage, 0)) },
		"auto-aof-rewrite-min-size":   func() string { return strconv.FormatInt(c.AutoAOFRewriteMinSize, 10) },

		// sets
		"set-max-intset-entries": func() string { return strconv.Itoa(c.setMaxIntsetEntries()) },

		// clients
		"client-query-buffer-limit": func() string { return strconv.FormatInt(c.queryBufferLimit(), 10) },

		// hidden (hiddenConfigs)
		"key-load-delay":     func() string { return strconv.Itoa(c.KeyLoadDelay) },
		"rdb-key-save-delay": func() string { return strconv.Itoa(c.RDBKeySaveDelay) },
	}
	for name, get := range s.moreConfigParams() { // config_more.go
		params[name] = get
	}
	// pubsub_config.go
	params["client-output-buffer-limit"] = func() string { return formatObufLimits(c.ObufLimits) }
	params["notify-keyspace-events"] = func() string { return formatNotifyClasses(c.NotifyEvents) }
	c.Enc.params(params)                             // encoding.go
	c.Repl.params(params)                            // replication_config.go
	c.Intro.params(params)                           // introspect_config.go
	params["maxmemory-clients"] = c.clientEvictParam // client_evict.go
	c.evictionParams(params)                         // evict.go
	s.aclConfigParams(params)                        // acl_server.go
	s.tlsConfigParams(params)                        // tls.go
	return params
}

// configGetNames picks CONFIG GET's parameters as Redis 7.0 does: a name without
// glob characters is looked up and echoed as typed ("HZ"), a pattern matches
// without case and shows the parameter's own name; each parameter once, the first
// argument that names it winning. The result maps the parameter to the name shown.
func configGetNames(params map[string]func() string, args [][]byte) map[string]string {
	shown := map[string]string{}
	for _, a := range args {
		typed := string(a)
		if !strings.ContainsAny(typed, "[*?") {
			name := strings.ToLower(typed)
			if _, dup := shown[name]; !dup && params[name] != nil {
				shown[name] = typed
			}
			continue
		}
		for name := range params {
			if hiddenConfigs[name] {
				continue // shown only when named
			}
			if _, dup := shown[name]; !dup && globMatchNoCase(typed, name) {
				shown[name] = name
			}
		}
	}
	return shown
}

// runtimeSettable are the settings CONFIG SET may change while running.
var runtimeSettable = map[string]bool{
	"requirepass": true, "maxclients": true, "hz": true, "loglevel": true,
	"list-max-listpack-size": true, "list-max-ziplist-size": true, "list-compress-depth": true,
	"appendonly": true, "appendfsync": true, "save": true, "proto-max-bulk-len": true, "maxmemory": true, "timeout": true,
	"lua-time-limit": true, "busy-reply-threshold": true, "hll-sparse-max-bytes": true, "active-expire-effort": true,
	"maxmemory-policy": true, "tcp-keepalive": true, "tracking-table-max-keys": true,
	"maxmemory-samples": true, "maxmemory-eviction-tenacity": true, "lfu-log-factor": true, "lfu-decay-time": true,
	"auto-aof-rewrite-percentage": true, "auto-aof-rewrite-min-size": true,
	"set-max-intset-entries": true, "client-query-buffer-limit": true, "client-output-buffer-limit": true,
	"notify-keyspace-events": true, "port": true, "bind": true,
	"key-load-delay": true, "rdb-key-save-delay": true,
	"acllog-max-len": true, "acl-pubsub-default": true, // acl_server.go
	"tls-cert-file": true, "tls-key-file": true, "tls-ca-cert-file": true, "tls-ca-cert-dir": true, // tls.go
	"tls-auth-clients": true, "tls-replication": true, "tls-protocols": true, "tls-port": true, // listen.go moves it
}

// hiddenConfigs are Redis's HIDDEN_CONFIG settings: CONFIG GET shows them only
// when asked by name, never for a pattern.
var hiddenConfigs = map[string]bool{"key-load-delay": true, "rdb-key-save-delay": true}

// protectedConfigs are refused by CONFIG SET (enable-protected-configs is no).
var protectedConfigs = map[string]bool{"dbfilename": true, "dir": true}

func cmdConfig(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	switch sub := strings.ToLower(x.arg(1)); sub {
	case "get":
		params := x.s.configParams()
		shown := configGetNames(params, x.args[2:])
		names := make([]string, 0, len(shown))
		for name := range shown {
			names = append(names, name)
		}
		sort.Strings(names)
		x.w.Map(len(names))
		for _, n := range names {
			x.w.BulkString(shown[n])
			x.w.BulkString(params[n]())
		}
	case "set":
		if x.nargs()%2 != 0 {
			x.err(msgSyntax)
			return
		}
		x.configSet()
	case "resetstat":
		x.s.resetStats()
		x.ok()
	case "rewrite":
		x.configRewrite() // config_rewrite.go
	case "help":
		x.help(configHelp)
	}
}

// configHelp is CONFIG HELP's text, as Redis 7.0.15's.
var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Prints this help.",
}

// configSet applies CONFIG SET name value [name value ...] all or nothing, with
// Redis 7.0's checks in its order: unknown names, immutable ones and repeats
// first, then each value.
func (x *Ctx) configSet() {
	x.redactSensitiveConfigs() // introspect.go
	params := x.s.configParams()
	seen := map[string]bool{}
	var names, vals []string
	for i := 2; i < x.nargs(); i += 2 {
		name := strings.ToLower(x.arg(i))
		switch {
		case params[name] == nil:
			x.w.Errorf(msgConfigSetUnknow, x.arg(i))
			return
		case protectedConfigs[name]:
			x.w.Errorf(msgConfigSetFailed, x.arg(i), "can't set protected config")
			return
		case !runtimeSettable[name]:
			x.w.Errorf(msgConfigSetFailed, x.arg(i), "can't set immutable config")
			return
		case seen[name]:
			x.w.Errorf(msgConfigSetFailed, x.arg(i), "duplicate parameter")
			return
		}
		seen[name] = true
		names, vals = append(names, name), append(vals, x.arg(i+1))
	}
	next := x.s.cfg
	for i, name := range names {
		if err := next.Set(name, vals[i]); err != nil {
			x.w.Errorf(msgConfigSetFailed, name, err.Error())
			return
		}
	}
	tlsCfg, param, msg := x.s.checkTLSConfig(names, next) // tls.go
	if msg != "" {
		x.w.Errorf(msgConfigSetFailed, param, msg)
		return
	}
	if param, msg := x.s.relisten(names, next, tlsCfg); msg != "" { // listen.go
		x.w.Errorf(msgConfigSetFailed, param, msg)
		return
	}
	if next.AppendOnly != x.s.cfg.AppendOnly { // aof_switch.go
		if err := x.s.setAppendOnly(next.AppendOnly); err != nil {
			x.w.Errorf(msgConfigSetFailed, "appendonly", err.Error())
			return
		}
	}
	x.s.installTLS(tlsCfg) // tls.go
	x.s.applyConfig(next)
	x.ok()
}

// applyConfig installs changed runtime settings. Runs on the executor.
func (s *Server) applyConfig(next Config) {
	for _, h := range s.configHooks {
		h(s.cfg, next)
	}
	s.cfg = next
}

// --- INFO ---

// infoSection renders one INFO section's fields.
type infoSection struct {
	name   string
	fields func(s *Server) [][2]string
}

func (s *Server) infoSectionList() []infoSection {
	list := []infoSection{
		{"server", infoServer},
		{"clients", infoClients},
		{"memory", infoMemory},
		{"persistence", infoPersistence},
		{"stats", infoStats},
		{"replication", infoReplication},
		{"cpu", infoCPU},
		{"modules", noFields},
		{"commandstats", infoCommandstats},
		{"errorstats", infoErrorstats},
		{"latencystats", infoLatencystats},
		{"cluster", func(*Server) [][2]string { return [][2]string{{"cluster_enabled", "0"}} }},
		{"keyspace", infoKeyspace},
	}
	return list
}

// infoNotDefault are the sections INFO shows only when asked by name, or for
// "all" and "everything"; infoTitles are headers that are not just capitalised.
var (
	infoNotDefault = map[string]bool{"commandstats": true, "latencystats": true}
	infoTitles     = map[string]string{"cpu": "CPU"}
)

func noFields(*Server) [][2]string { return nil }

func infoCPU(*Server) [][2]string {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	secs := func(tv syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec)
	}
	// The executor is a goroutine, not a thread: the "main thread" is the process.
	return [][2]string{
		{"used_cpu_sys", secs(ru.Stime)},
		{"used_cpu_user", secs(ru.Utime)},
		{"used_cpu_sys_children", "0.000000"},
		{"used_cpu_user_children", "0.000000"},
		{"used_cpu_sys_main_thread", secs(ru.Stime)},
		{"used_cpu_user_main_thread", secs(ru.Utime)},
	}
}

func cmdInfo(x *Ctx) {
	want := map[string]bool{}
	for _, a := range x.args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	every := want["all"] || want["everything"]
	dflt := len(want) == 0 || want["default"]
	var b strings.Builder
	for _, sec := range x.s.infoSectionList() {
		if !every && !want[sec.name] && !(dflt && !infoNotDefault[sec.name]) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		title := infoTitles[sec.name]
		if title == "" {
			title = strings.ToUpper(sec.name[:1]) + sec.name[1:]
		}
		b.WriteString("# " + title + "\r\n")
		for _, f := range sec.fields(x.s) {
			b.WriteString(f[0] + ":" + f[1] + "\r\n")
		}
	}
	x.w.Verbatim(b.String())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// infoServer is Redis's server section, in its order, with MyRedis's own
// myredis, go_version and executor_workers after the Redis fields they belong
// with.
func infoServer(s *Server) [][2]string {
	now := s.clock.Now()
	up := now.Sub(s.started)
	b := buildInfoOnce() // buildinfo.go
	return [][2]string{
		{"redis_version", redisVersion},
		{"redis_git_sha1", b.sha1},
		{"redis_git_dirty", strconv.Itoa(b.dirty)},
		{"redis_build_id", b.id},
		{"redis_mode", "standalone"},
		{"myredis", "1"},
		{"os", unameString()},
		{"arch_bits", strconv.Itoa(strconv.IntSize)},
		{"monotonic_clock", "POSIX clock_gettime"}, // Go's monotonic readings (CLOCK_MONOTONIC), as Redis's without the TSC clock
		{"multiplexing_api", multiplexingAPI()},
		{"atomicvar_api", "sync/atomic"}, // Go's, where Redis names its C atomics ("c11-builtin")
		{"gcc_version", "0.0.0"},         // built by Go's compiler: Redis prints 0.0.0 when not built by GCC
		{"go_version", runtime.Version()},
		{"process_id", strconv.Itoa(os.Getpid())},
		{"process_supervised", s.processSupervised()}, // supervise.go
		{"run_id", s.runID},
		{"tcp_port", strconv.Itoa(s.cfg.Port)},
		{"server_time_usec", itoa(now.UnixMicro())},
		{"uptime_in_seconds", itoa(int64(up / time.Second))},
		{"uptime_in_days", itoa(int64(up / (24 * time.Hour)))},
		{"hz", strconv.Itoa(s.cfg.Hz)}, // no dynamic-hz: the crons run at the configured rate
		{"configured_hz", strconv.Itoa(s.cfg.Hz)},
		{"lru_clock", strconv.FormatUint(uint64(s.lruClock24()), 10)}, // evict.go
		{"executable", executablePath},
		{"config_file", s.cfg.ConfigFile},
		{"io_threads_active", "0"}, // no IO threads: connection goroutines read and write, never handed batches
		{"executor_workers", strconv.Itoa(s.cfg.Workers)},
	}
}

func infoClients(s *Server) [][2]string {
	s.memoryCron() // memory.go: the recent peaks include this moment
	s.mu.Lock()
	n, blocked, timed := len(s.clients), 0, 0
	for _, c := range s.clients {
		if c.blocked != nil { // on keys, in WAIT, or postponed by CLIENT PAUSE
			blocked++
			if !c.blocked.deadline.IsZero() {
				timed++
			}
		}
	}
	s.mu.Unlock()
	in, out := s.recentBufPeaks()
	return [][2]string{
		{"connected_clients", strconv.Itoa(n)},
		{"cluster_connections", "0"}, // no cluster bus
		{"maxclients", strconv.Itoa(s.cfg.MaxClients)},
		{"client_recent_max_input_buffer", itoa(in)},
		{"client_recent_max_output_buffer", itoa(out)},
		{"blocked_clients", strconv.Itoa(blocked)},
		s.trackingInfoClients()[0],
		{"clients_in_timeout_table", strconv.Itoa(timed)},
	}
}

func infoMemory(s *Server) [][2]string { return s.memoryInfo() } // memory.go

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// infoPersistence is the RDB's fields, the AOF rewrite's (kept while the AOF
// is off, aof_detached.go) and, while it is on, the AOF's.
func infoPersistence(s *Server) [][2]string {
	out := [][2]string{
		{"loading", "0"}, {"async_loading", "0"},
		// no fork: no page is copied on write by the kernel (a snapshot copies
		// the keys a write is about to change instead, rdb_bgsave.go)
		{"current_cow_peak", "0"}, {"current_cow_size", "0"}, {"current_cow_size_age", "0"},
	}
	out = append(out, s.saveProgressInfo()...) // rdb_bgsave.go
	out = append(append(out, s.rdbInfo()...), s.aofInfo()...)
	if s.persistenceInfo != nil {
		out = append(out, s.persistenceInfo()...)
	}
	return out
}

// infoStats is Redis's stats section, in its order. The mechanisms MyRedis
// does not have leave Redis's figures for a server without them at 0: forks,
// active defragmentation, writable replicas' own expiring keys, Redis's optional
// deep sanitization of RESTORE payloads (MyRedis always decodes a payload
// whole; sanitize-dump-payload is not implemented), IO threads, and the cron's
// resizing of a fixed per-client reply buffer (replybuf.go drops a grown one
// after the write instead).
func infoStats(s *Server) [][2]string {
	now := time.Now()
	evTotal, evCurrent := s.ev.exceededTimes(now) // evict.go
	kbps := func(r *rateSampler) string { return fmt.Sprintf("%.2f", float64(r.perSec())/1024) }
	out := [][2]string{
		{"total_connections_received", itoa(s.stats.connsReceived.Load())},
		{"total_commands_processed", itoa(s.stats.commands)},
		{"instantaneous_ops_per_sec", itoa(s.estats.opsSamples.perSec())},
		{"total_net_input_bytes", itoa(s.net.totalIn())},
		{"total_net_output_bytes", itoa(s.net.totalOut())},
		{"total_net_repl_input_bytes", itoa(s.net.replIn.Load())},
		{"total_net_repl_output_bytes", itoa(s.net.replOut.Load())},
		{"instantaneous_input_kbps", kbps(&s.estats.inSamples)},
		{"instantaneous_output_kbps", kbps(&s.estats.outSamples)},
		{"instantaneous_input_repl_kbps", kbps(&s.estats.replInSamples)},
		{"instantaneous_output_repl_kbps", kbps(&s.estats.replOutSamples)},
		{"rejected_connections", itoa(s.stats.rejectedConns.Load())},
		{"sync_full", itoa(s.repl.syncFull)}, // replication.go
		{"sync_partial_ok", itoa(s.repl.syncPartialOK)},
		{"sync_partial_err", itoa(s.repl.syncPartialErr)},
		{"expired_keys", itoa(s.stats.expiredKeys)},
		{"expired_stale_perc", fmt.Sprintf("%.2f", s.expire.stalePerc)}, // expire.go
		{"expired_time_cap_reached_count", itoa(s.expire.timeCapReached)},
		{"expire_cycle_cpu_milliseconds", itoa(s.expire.timeUsed.Milliseconds())},
		{"evicted_keys", itoa(s.stats.evictedKeys)},
		{"evicted_clients", itoa(s.cev.evicted)}, // client_evict.go
		{"total_eviction_exceeded_time", itoa(evTotal)},
		{"current_eviction_exceeded_time", itoa(evCurrent)},
		{"keyspace_hits", itoa(s.stats.keyspaceHits)},
		{"keyspace_misses", itoa(s.stats.keyspaceMisses)},
	}
	out = append(out, s.pubsubInfo()...)
	out = append(out, [][2]string{
		{"latest_fork_usec", "0"},
		{"total_forks", "0"},
		{"migrate_cached_sockets", itoa(s.migrate.open.Load())}, // migrate_conn.go
		{"slave_expires_tracked_keys", "0"},
		{"active_defrag_hits", "0"},
		{"active_defrag_misses", "0"},
		{"active_defrag_key_hits", "0"},
		{"active_defrag_key_misses", "0"},
		{"total_active_defrag_time", "0"},
		{"current_active_defrag_time", "0"},
	}...)
	out = append(out, s.trackingInfoStats()...)
	return append(out, [][2]string{
		{"unexpected_error_replies", itoa(s.estats.unexpectedErrors)},
		{"total_error_replies", itoa(s.estats.errorReplies)},
		{"dump_payload_sanitizations", "0"},
		{"total_reads_processed", itoa(s.net.reads.Load())},
		{"total_writes_processed", itoa(s.net.writes.Load())},
		{"io_threaded_reads_processed", "0"},
		{"io_threaded_writes_processed", "0"},
		{"reply_buffer_shrinks", "0"},
		{"reply_buffer_expands", "0"},
	}...)
}

func infoKeyspace(s *Server) [][2]string {
	var out [][2]string
	for _, db := range s.dbs {
		if db.Size() == 0 {
			continue
		}
		out = append(out, [2]string{"db" + strconv.Itoa(db.id),
			fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", db.Size(), db.Volatile())})
	}
	return out
}

func cmdTime(x *Ctx) {
	now := x.s.clock.Now()
	x.w.Array(2)
	x.w.BulkString(itoa(now.Unix()))
	x.w.BulkString(itoa(int64(now.Nanosecond() / 1000)))
}

// cmdLastsave answers the time of the last RDB save or AOF rewrite (or of
// start-up).
func cmdLastsave(x *Ctx) {
	t, _ := x.s.lastSaveTime()
	x.w.Int(t.Unix())
}
