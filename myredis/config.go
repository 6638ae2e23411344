package myredis

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
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
	// Automatic AOF rewrite: when the file has grown by this percentage over its size
	// after the last rewrite (100: doubled) and is at least AutoAOFRewriteMinSize bytes.
	// Negative disables it (CONFIG SET auto-aof-rewrite-percentage 0); 0 means 100.
	AutoAOFRewritePercentage int
	AutoAOFRewriteMinSize    int64
	Workers                  int
	// ListMaxListpackSize is list-max-listpack-size (alias list-max-ziplist-size):
	// a list node's fill limit, negative -1..-5 for 4..64 KB, positive for a count
	// of elements (and at most 8 KB). A list keeps the value it was created with.
	ListMaxListpackSize int
	listFillSet         bool // ListMaxListpackSize was given (0 is a valid value)
	// ListCompressDepth is list-compress-depth: kept for CONFIG GET; MyRedis does
	// not compress list nodes (it changes memory use only, never a reply).
	ListCompressDepth int
	// IOThreads is how many threads run Go code (GOMAXPROCS), applied by
	// cmd/myredis; 0 keeps Go's default (every CPU, or the GOMAXPROCS variable).
	IOThreads int
	// LuaTimeLimit is lua-time-limit (busy-reply-threshold) in milliseconds: after
	// it a running script makes other clients get BUSY and may be killed. 0 means
	// the default, 5000; negative means never (redis.conf's 0).
	LuaTimeLimit int64
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
	if c.AutoAOFRewritePercentage == 0 {
		c.AutoAOFRewritePercentage = 100
	}
	if c.AutoAOFRewriteMinSize <= 0 {
		c.AutoAOFRewriteMinSize = 64 << 20
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if !c.listFillSet {
		c.ListMaxListpackSize, c.listFillSet = -2, true
	}
}

// ParseArgs reads redis-server style arguments: an optional config file first,
// then "--name value" pairs, which override the file.
func ParseArgs(args []string) (Config, error) {
	var c Config
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		if err := c.loadFile(args[0]); err != nil {
			return c, err
		}
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			return c, fmt.Errorf("unexpected argument %q", args[i])
		}
		var vals []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			vals = append(vals, args[i+1])
			i++
		}
		if err := c.Set(name, strings.Join(vals, " ")); err != nil {
			return c, fmt.Errorf("--%s: %w", name, err)
		}
	}
	c.fillDefaults()
	return c, nil
}

func (c *Config) loadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(text, " ")
		if err := c.Set(name, strings.Trim(strings.TrimSpace(val), `"`)); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", path, line, name, err)
		}
	}
	return sc.Err()
}

// Set assigns one setting by its redis.conf name.
func (c *Config) Set(name, val string) error {
	var err error
	switch strings.ToLower(name) {
	case "port":
		c.Port, err = intInRange(val, 0, 65535)
	case "bind":
		c.Bind = strings.Fields(val + " ")[0]
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
		c.AppendFilename = val
	case "list-max-listpack-size", "list-max-ziplist-size":
		c.ListMaxListpackSize, err = intInRange(val, math.MinInt32, math.MaxInt32)
		c.listFillSet = err == nil
	case "list-compress-depth":
		c.ListCompressDepth, err = intInRange(val, 0, math.MaxInt32)
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
	case "save", "daemonize", "protected-mode", "logfile":
		// accepted for compatibility; MyRedis has no RDB and stays in the foreground
	default:
		return errUnknownOption
	}
	var numErr *strconv.NumError
	if errors.As(err, &numErr) {
		err = errors.New("argument couldn't be parsed into an integer")
	}
	return err
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
