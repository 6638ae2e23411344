package myredis

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Config holds the settings redis-server also takes, by the same names.
type Config struct {
	Port            int
	Bind            string
	RequirePass     string
	Databases       int
	MaxClients      int
	ProtoMaxBulkLen int64
	Hz              int
	LogLevel        string
	AppendOnly      bool
	AppendFsync     string
	Dir             string
	AppendFilename  string
	// AppendDirname is appenddirname: the directory in dir where Redis 7 keeps its
	// multi-part AOF. MyRedis writes one file, and imports that directory at
	// start-up (aof_import.go).
	AppendDirname string
	// Automatic AOF rewrite: when the file has grown by this percentage over its size
	// after the last rewrite (100: doubled) and is at least AutoAOFRewriteMinSize bytes.
	// Negative disables it (CONFIG SET auto-aof-rewrite-percentage 0); 0 means 100.
	AutoAOFRewritePercentage int
	AutoAOFRewriteMinSize    int64
	Workers                  int
	// IOThreads is how many threads run Go code (GOMAXPROCS), applied by
	// cmd/myredis; 0 keeps Go's default (every CPU, or the GOMAXPROCS variable).
	IOThreads int
	// LuaTimeLimit is lua-time-limit (busy-reply-threshold) in milliseconds: after
	// it a running script makes other clients get BUSY and may be killed. 0 means
	// the default, 5000; negative means never (redis.conf's 0).
	LuaTimeLimit int64
	// HLLSparseMaxBytes is hll-sparse-max-bytes: 0 means the default, 3000;
	// negative means 0 (see hllSparseMaxBytes).
	HLLSparseMaxBytes int64
	// SetMaxIntsetEntries is set-max-intset-entries: 0 means the default, 512;
	// negative means 0 (no intsets).
	SetMaxIntsetEntries int
	// ActiveExpireEffort is active-expire-effort, 1..10 (expire.go).
	ActiveExpireEffort int
	// DBFilename is dbfilename ("" means dump.rdb); RDBNoCompression and
	// RDBNoChecksum are rdbcompression no and rdbchecksum no (rdb_file.go).
	DBFilename                      string
	RDBNoCompression, RDBNoChecksum bool
	// AOFNoRDBPreamble is aof-use-rdb-preamble no (aof_preamble.go).
	AOFNoRDBPreamble bool
	// KeyLoadDelay and RDBKeySaveDelay are Redis's hidden testing settings
	// key-load-delay and rdb-key-save-delay: a pause in microseconds after
	// each key loaded from or saved to an RDB payload (negative -n: a 1 us
	// pause once in n keys on average), see debugDelay.
	KeyLoadDelay, RDBKeySaveDelay int

	// Settings of config_more.go: see there.
	Save         [][2]int64 // save points (seconds, changes); MyRedis saves through the AOF
	MaxMemory    uint64
	MaxMemPolicy string
	Timeout      int // idle client timeout in seconds, 0: none
	TCPKeepAlive int // seconds; 0: off
	TCPBacklog   int
	Daemonize    bool
	Supervised   string // supervised: no, upstart, systemd or auto (supervise.go; cmd/myredis acts on it)
	LogFile      string
	PidFile      string
	// ObufLimits is client-output-buffer-limit by class (pubsub_config.go).
	ObufLimits [3]obufLimit
	obufInit   bool
	// Unsupported names the options that were read but have no effect in MyRedis
	// (cmd/myredis logs one warning for each).
	Unsupported  []string
	saveSet      bool // save was set (a file's first save line replaces the default)
	keepAliveSet bool // tcp-keepalive was set (0 turns it off)

	// TrackingTableMaxKeys is tracking-table-max-keys (0: no limit); unset
	// means Redis's default, 1000000 (see trackingTableMaxKeys)
	TrackingTableMaxKeys int64
	trackingMaxSet       bool
	// QueryBufferLimit is client-query-buffer-limit: the most payload one
	// request may carry before the client is closed; 0 means the default, 1gb.
	QueryBufferLimit int64
	// NotifyEvents is notify-keyspace-events (notify.go).
	NotifyEvents notifyClass
	// Enc are the encoding settings (hash-max-listpack-entries, ...: encoding.go).
	Enc     EncodingLimits
	encInit bool // Enc holds at least the defaults
	// Repl are the replication settings (replication_config.go); ConfigFile
	// is the config file read at start-up, absolute ("" : none), for CONFIG REWRITE.
	Repl       ReplConfig
	ConfigFile string
	// Evict are maxmemory-samples and the like (evict.go).
	Evict     EvictionSettings
	evictInit bool
	// Intro are the slow log and latency monitor settings (introspect_config.go).
	Intro IntrospectConfig
	// MaxMemoryClients is maxmemory-clients (client_evict.go): bytes, or minus
	// a percentage of maxmemory; 0 is off.
	MaxMemoryClients int64
	// ACL is aclfile, acllog-max-len, acl-pubsub-default, user lines (acl_server.go).
	ACL aclConfig
	// TLS is the tls-* settings (tls.go).
	TLS TLSConfig
}

// queryBufferLimit is the effective client-query-buffer-limit.
func (c Config) queryBufferLimit() int64 {
	if c.QueryBufferLimit == 0 {
		return 1 << 30
	}
	return c.QueryBufferLimit
}

// trackingTableMaxKeys is the effective tracking-table-max-keys.
func (c Config) trackingTableMaxKeys() int64 {
	if !c.trackingMaxSet && c.TrackingTableMaxKeys == 0 {
		return 1000000
	}
	return c.TrackingTableMaxKeys
}

// hllSparseMaxBytes is the effective hll-sparse-max-bytes.
func (c Config) hllSparseMaxBytes() int64 {
	if c.HLLSparseMaxBytes == 0 {
		return 3000
	}
	return max(c.HLLSparseMaxBytes, 0)
}

// setMaxIntsetEntries is the effective set-max-intset-entries.
func (c Config) setMaxIntsetEntries() int {
	switch {
	case c.SetMaxIntsetEntries == 0:
		return setMaxIntsetEntries
	case c.SetMaxIntsetEntries < 0:
		return 0
	}
	return c.SetMaxIntsetEntries
}

// luaTimeLimit is the effective lua-time-limit in milliseconds (<= 0: none).
func (c Config) luaTimeLimit() int64 {
	if c.LuaTimeLimit == 0 {
		return 5000
	}
	return c.LuaTimeLimit
}

// DefaultConfig is redis-server's defaults, bound to loopback.
func DefaultConfig() Config {
	c := Config{}
	c.fillDefaults()
	return c
}

func (c *Config) fillDefaults() {
	if c.Port == 0 {
		c.Port = 6379
	}
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
	if c.Databases <= 0 {
		c.Databases = 16
	}
	if c.MaxClients <= 0 {
		c.MaxClients = 10000
	}
	if c.ProtoMaxBulkLen <= 0 {
		c.ProtoMaxBulkLen = 512 << 20
	}
	if c.Hz <= 0 {
		c.Hz = 10
	}
	if c.LogLevel == "" {
		c.LogLevel = "notice"
	}
	if c.AppendFsync == "" {
		c.AppendFsync = "everysec"
	}
	if c.Dir == "" {
		c.Dir = "."
	}
	if c.AppendFilename == "" {
		c.AppendFilename = "appendonly.aof"
	}
	if c.AppendDirname == "" {
		c.AppendDirname = "appendonlydir"
	}
	if c.AutoAOFRewritePercentage == 0 {
		c.AutoAOFRewritePercentage = 100
	}
	if c.AutoAOFRewriteMinSize <= 0 {
		c.AutoAOFRewriteMinSize = 64 << 20
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.ActiveExpireEffort == 0 {
		c.ActiveExpireEffort = 1
	}
	c.initEncoding()
	c.initEviction() // evict.go
	c.initObuf()
	c.initIntrospect()
	if !c.keepAliveSet {
		c.TCPKeepAlive = 300
	}
	if c.TCPBacklog == 0 {
		c.TCPBacklog = 511
	}
	if c.MaxMemPolicy == "" {
		c.MaxMemPolicy = "noeviction"
	}
}

func (c *Config) initEncoding() {
	if !c.encInit {
		c.Enc, c.encInit = defaultEncodingLimits, true
	}
}

// Set assigns one setting by its redis.conf name.
func (c *Config) Set(name, val string) error {
	var err error
	switch strings.ToLower(name) {
	case "port":
		c.Port, err = intInRange(val, 0, 65535)
	case "key-load-delay":
		c.KeyLoadDelay, err = intInRange(val, math.MinInt32, math.MaxInt32)
	case "rdb-key-save-delay":
		c.RDBKeySaveDelay, err = intInRange(val, math.MinInt32, math.MaxInt32)
	case "bind":
		addrs := strings.Fields(val)
		if len(addrs) == 0 {
			c.Bind = ""
			break
		}
		c.Bind = strings.Join(addrs, " ") // every address is listened on (listen.go)
	case "requirepass":
		c.RequirePass = val
	case "databases":
		c.Databases, err = intInRange(val, 1, math.MaxInt32)
	case "maxclients":
		c.MaxClients, err = intInRange(val, 1, math.MaxUint32)
	case "proto-max-bulk-len":
		c.ProtoMaxBulkLen, err = ParseMemory(val)
		if err != nil {
			err = errors.New("argument must be a memory value")
		} else if c.ProtoMaxBulkLen < 1<<20 {
			err = errors.New("argument must be between 1048576 and 9223372036854775807 inclusive")
		}
	case "hz":
		c.Hz, err = intInRange(val, 0, math.MaxInt32)
		c.Hz = min(max(c.Hz, 1), 500) // Redis clamps to 1..500 after accepting
	case "loglevel":
		switch val = strings.ToLower(val); val {
		case "debug", "verbose", "notice", "warning":
		default:
			err = errors.New("argument(s) must be one of the following: debug, verbose, notice, warning")
		}
		c.LogLevel = val
	case "appendonly":
		c.AppendOnly, err = parseYesNo(val)
	case "appendfsync":
		if val = strings.ToLower(val); val != "always" && val != "everysec" && val != "no" {
			err = errors.New("argument(s) must be one of the following: everysec, always, no")
		}
		c.AppendFsync = val
	case "dir":
		c.Dir = val
	case "appendfilename":
		err = checkBaseName("appendfilename", "filename", val)
		c.AppendFilename = val
	case "appenddirname": // immutable, as in Redis
		err = checkBaseName("appenddirname", "dirname", val)
		c.AppendDirname = val
	case "auto-aof-rewrite-percentage":
		c.AutoAOFRewritePercentage, err = strconv.Atoi(val)
		if err == nil && c.AutoAOFRewritePercentage <= 0 {
			c.AutoAOFRewritePercentage = -1
		}
	case "auto-aof-rewrite-min-size":
		c.AutoAOFRewriteMinSize, err = ParseMemory(val)
	case "workers":
		c.Workers, err = strconv.Atoi(val)
	case "io-threads":
		c.IOThreads, err = strconv.Atoi(val)
		if err == nil && (c.IOThreads < 1 || c.IOThreads > 128) {
			err = fmt.Errorf("argument must be between 1 and 128 inclusive")
		}
	case "lua-time-limit", "busy-reply-threshold":
		c.LuaTimeLimit, err = strconv.ParseInt(val, 10, 64)
		if c.LuaTimeLimit <= 0 {
			c.LuaTimeLimit = -1
		}
	case "hll-sparse-max-bytes":
		if c.HLLSparseMaxBytes, err = ParseMemory(val); err != nil {
			err = errors.New("argument must be a memory value")
		} else if c.HLLSparseMaxBytes == 0 {
			c.HLLSparseMaxBytes = -1
		}
	case "set-max-intset-entries":
		c.SetMaxIntsetEntries, err = intInRange(val, 0, math.MaxInt64)
		if c.SetMaxIntsetEntries == 0 {
			c.SetMaxIntsetEntries = -1
		}
	case "client-query-buffer-limit":
		var n int64
		if n, err = ParseMemory(val); err != nil {
			err = errors.New("argument must be a memory value")
		} else if n < 1<<20 {
			err = fmt.Errorf("argument must be between %d and %d inclusive", 1<<20, int64(math.MaxInt64))
		} else {
			c.QueryBufferLimit = n
		}
	case "active-expire-effort":
		c.ActiveExpireEffort, err = intInRange(val, 1, 10)
	case "aclfile", "acllog-max-len", "acl-pubsub-default":
		_, err = c.setACL(strings.ToLower(name), val) // acl_server.go
	default:
		if ok, err := c.setTLS(strings.ToLower(name), val); ok { // tls.go
			return err
		}
		if err, ok := c.setEviction(name, val); ok { // evict.go
			return err
		}
		c.initEncoding()
		if err := c.Enc.set(name, val); err != errUnknownOption {
			return err
		}
		return c.setMore(strings.ToLower(name), val) // config_more.go
	}
	var numErr *strconv.NumError
	if errors.As(err, &numErr) {
		err = errors.New("argument couldn't be parsed into an integer")
	}
	return err
}

// checkBaseName is Redis's isValidAOFfilename and isValidAOFdirname: a name in
// dir, not empty and without a '/' or '\\'.
func checkBaseName(name, what, val string) error {
	switch {
	case val == "":
		return fmt.Errorf("%s can't be empty", name)
	case strings.ContainsAny(val, `/\`):
		return fmt.Errorf("%s can't be a path, just a %s", name, what)
	}
	return nil
}

// errUnknownOption is Set's error for a name it does not know.
var errUnknownOption = errors.New("unknown option")

// intInRange parses an integer setting with Redis's CONFIG SET error texts.
func intInRange(val string, lo, hi int64) (int, error) {
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return int(n), nil
}

func parseYesNo(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("argument must be 'yes' or 'no'")
}

// ParseMemory reads "512mb", "1gb", "100k", "1024" as redis.conf does.
func ParseMemory(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mul    int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}}
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mul = strings.TrimSuffix(s, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid memory value %q", s)
	}
	return n * mul, nil
}
