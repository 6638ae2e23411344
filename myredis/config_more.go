package myredis

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The config file and command line, read as redis-server 7.0 reads them: a file
// (or "-" for stdin) of lines split by sdssplitargs (splitInline), then the
// "--name value ..." arguments turned into more such lines. Every directive Redis
// knows loads: the ones MyRedis implements take effect, the others are recorded
// in Config.Unsupported and cmd/myredis logs one warning line for each.

// ParseArgs reads redis-server style arguments: an optional config file first
// ("-" reads stdin), then "--name value" options, which override the file.
func ParseArgs(args []string) (Config, error) {
	return parseArgs(args, os.Stdin)
}

func parseArgs(args []string, stdin io.Reader) (Config, error) {
	var c Config
	j := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		j = 1
		if err := c.loadFile(args[0]); err != nil {
			return c, err
		}
		// CONFIG REWRITE's file (config_rewrite.go) and INFO's config_file, made
		// absolute as Redis's getAbsolutePath makes it (buildinfo.go)
		c.ConfigFile = redisAbsolutePath(args[0])
	}
	options, fromStdin := argsToConfigText(args[j:], j == 0)
	if fromStdin {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return c, err
		}
		if err := c.loadText(string(data), "stdin"); err != nil {
			return c, err
		}
	}
	if err := c.loadText(options, "the command line"); err != nil {
		return c, err
	}
	c.fillDefaults()
	return c, nil
}

// argsToConfigText turns command-line options into config lines as Redis's main
// does: "--name" starts a line, the arguments after it are quoted onto it, and an
// argument starting with "--" is a value while the option still has none. A lone
// "-" as the first or last argument means the config is also read from stdin.
func argsToConfigText(args []string, first bool) (text string, fromStdin bool) {
	var b strings.Builder
	haveValue := true
	for i, a := range args {
		switch {
		case a == "-" && ((first && i == 0) || i == len(args)-1):
			fromStdin = true
		case haveValue && strings.HasPrefix(a, "--"):
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(a[2:] + " ")
			words, _ := splitInline([]byte(a))
			haveValue = len(words) != 1
			if !haveValue && strings.EqualFold(a, "--save") &&
				(i == len(args)-1 || strings.HasPrefix(args[i+1], "--")) {
				b.WriteString(`""`) // "--save" with no value: save ""
				haveValue = true
			}
		default:
			b.WriteString(quoteArg(a) + " ")
			haveValue = true
		}
	}
	return b.String(), fromStdin
}

// quoteArg quotes s as Redis's sdscatrepr, so splitInline reads it back exactly.
func quoteArg(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if ch < 0x20 || ch > 0x7e {
				fmt.Fprintf(&b, `\x%02x`, ch)
			} else {
				b.WriteByte(ch)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (c *Config) loadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		msg := err.Error()
		return fmt.Errorf("Fatal error, can't open config file '%s': %s", path, strings.ToUpper(msg[:1])+msg[1:])
	}
	return c.loadText(string(data), path)
}

// configLineError is Redis's report of a bad config line.
type configLineError struct {
	source string
	line   int
	text   string
	msg    string
}

func (e *configLineError) Error() string {
	return fmt.Sprintf("\n*** FATAL CONFIG FILE ERROR (MyRedis %s) ***\nReading the configuration file (%s), at line %d\n>>> '%s'\n%s",
		redisVersion, e.source, e.line, e.text, e.msg)
}

// loadText applies config lines. Errors name the line as Redis does.
func (c *Config) loadText(text, source string) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		words, ok := splitInline([]byte(line))
		if !ok {
			return &configLineError{source, i + 1, line, "Unbalanced quotes in configuration line"}
		}
		if len(words) == 0 {
			continue
		}
		args := make([]string, len(words)-1)
		for k, w := range words[1:] {
			args[k] = string(w)
		}
		if err := c.setDirective(strings.ToLower(string(words[0])), args); err != nil {
			var inner *configLineError
			if errors.As(err, &inner) {
				return err
			}
			return &configLineError{source, i + 1, line, err.Error()}
		}
	}
	return nil
}

var errBadDirective = errors.New("Bad directive or wrong number of arguments")

// setDirective applies one config line's directive (name lower case).
func (c *Config) setDirective(name string, args []string) error {
	switch name {
	case "include":
		if len(args) != 1 {
			return errBadDirective
		}
		paths, err := filepath.Glob(args[0])
		if err != nil || len(paths) == 0 {
			paths = []string{args[0]}
		}
		for _, p := range paths {
			if err := c.loadFile(p); err != nil {
				return err
			}
		}
		return nil
	case "save":
		if !c.saveSet { // the file's first save line replaces the default
			c.saveSet, c.Save = true, nil
		}
		points, err := parseSave(args)
		if len(args) == 1 && args[0] == "" {
			c.Save = nil // save "": no save points
		}
		c.Save = append(c.Save, points...)
		return err
	case "bind", "client-output-buffer-limit", "oom-score-adj-values", "replicaof", "slaveof":
		return c.setOrBad(name, strings.Join(args, " "))
	case "user": // ACL users, loaded at start (acl_server.go)
		if len(args) < 1 {
			return errBadDirective
		}
		c.ACL.Users = append(c.ACL.Users, args)
		return nil
	}
	if len(args) != 1 {
		if redisConfigNames[name] && c.isUnsupported(name) {
			c.noteUnsupported(name) // rename-command, user, loadmodule...
			return nil
		}
		return errBadDirective
	}
	return c.setOrBad(name, args[0])
}

func (c *Config) setOrBad(name, val string) error {
	err := c.Set(name, val)
	if errors.Is(err, errUnknownOption) {
		return errBadDirective
	}
	return err
}

// isUnsupported reports whether setMore would only record name.
func (c *Config) isUnsupported(name string) bool {
	probe := *c
	probe.Unsupported = nil
	return probe.Set(name, "") == nil && len(probe.Unsupported) > 0
}

func (c *Config) noteUnsupported(name string) {
	for _, n := range c.Unsupported {
		if n == name {
			return
		}
	}
	c.Unsupported = append(c.Unsupported, name)
}

// maxmemory-policy values, in Redis's order (its error lists them so).
var maxMemPolicies = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
	"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

// setMore is Set for the settings of this file and for the directives MyRedis
// accepts without implementing them.
func (c *Config) setMore(name, val string) error {
	var err error
	switch name {
	case "dbfilename":
		if val != filepath.Base(val) || val == "" || val == "." || val == ".." {
			return errors.New("dbfilename can't be a path, just a filename")
		}
		c.DBFilename = val
	case "rdbcompression":
		var yes bool
		yes, err = parseYesNo(val)
		c.RDBNoCompression = err == nil && !yes
	case "aof-use-rdb-preamble":
		var yes bool
		if yes, err = parseYesNo(val); err == nil {
			c.AOFNoRDBPreamble = !yes
		}
	case "rdbchecksum":
		var yes bool
		yes, err = parseYesNo(val)
		c.RDBNoChecksum = err == nil && !yes
	case "save":
		var points [][2]int64
		if val != "" {
			points, err = parseSave(strings.Split(val, " "))
		}
		if err == nil {
			c.Save, c.saveSet = points, true
		}
	case "maxmemory":
		n, ok := parseMemoryRedis(val)
		if !ok {
			return errors.New("argument must be a memory value")
		}
		c.MaxMemory = n
	case "maxmemory-policy":
		val = strings.ToLower(val)
		for _, p := range maxMemPolicies {
			if p == val {
				c.MaxMemPolicy = val
				return nil
			}
		}
		return errors.New("argument(s) must be one of the following: " + strings.Join(maxMemPolicies, ", "))
	case "timeout":
		c.Timeout, err = intConfig(val, 0, math.MaxInt32)
	case "tcp-keepalive":
		c.TCPKeepAlive, err = intConfig(val, 0, math.MaxInt32)
		c.keepAliveSet = err == nil
	case "tcp-backlog":
		c.TCPBacklog, err = intConfig(val, 0, math.MaxInt32)
		c.noteUnsupported(name) // Go listens with the kernel's somaxconn
	case "daemonize":
		c.Daemonize, err = parseYesNo(val)
	case "supervised":
		for _, m := range supervisedModes { // supervise.go
			if strings.EqualFold(val, m) {
				c.Supervised = m
				return nil
			}
		}
		return errors.New("argument(s) must be one of the following: " + strings.Join(supervisedModes, ", "))
	case "logfile":
		c.LogFile = val
	case "pidfile":
		c.PidFile = val
	case "client-output-buffer-limit":
		err = c.setObufLimits(val) // pubsub_config.go
	case "tracking-table-max-keys":
		var n int
		n, err = intConfig(val, 0, math.MaxInt64)
		if err == nil {
			c.TrackingTableMaxKeys, c.trackingMaxSet = int64(n), true
		}
	case "notify-keyspace-events":
		c.NotifyEvents, err = parseNotifyClasses(val) // notify.go
	default:
		if handled, err := c.Repl.set(name, val); handled { // replication_config.go
			return err
		}
		if err := c.setIntrospect(name, val); err != errUnknownOption { // introspect_config.go
			return err
		}
		if err := c.setClientEvict(name, val); err != errUnknownOption { // client_evict.go
			return err
		}
		if !redisConfigNames[name] {
			return errUnknownOption
		}
		c.noteUnsupported(name)
	}
	return err
}

// intConfig parses an integer setting as Redis's numeric configs (string2ll).
func intConfig(val string, lo, hi int64) (int, error) {
	n, ok := parseRedisInt([]byte(val))
	if !ok {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return int(n), nil
}

// parseSave checks save points as Redis's setConfigSaveOption: pairs of seconds
// (>= 1) and changes (>= 0), each read by strtoll to its end; a single "" means
// none.
func parseSave(args []string) ([][2]int64, error) {
	if len(args) == 1 && args[0] == "" {
		return nil, nil
	}
	bad := errors.New("Invalid save parameters")
	if len(args)%2 != 0 {
		return nil, bad
	}
	points := make([][2]int64, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		secs, ok1 := strtoll(args[i])
		changes, ok2 := strtoll(args[i+1])
		if !ok1 || !ok2 || secs < 1 || changes < 0 {
			return nil, bad
		}
		points = append(points, [2]int64{secs, int64(int32(changes))}) // changes is a C int
	}
	return points, nil
}

// strtoll reads s as C's strtoll(s, &end, 10) with *end == '\0' required:
// leading blanks and a sign are allowed, an empty string is 0, and values
// saturate at the int64 bounds.
func strtoll(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, len(s) == 0 // "" parses no digits and stops at its end; "+" does not
	}
	var n uint64
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, false
		}
		if n <= math.MaxInt64 {
			n = n*10 + uint64(t[i]-'0')
		}
	}
	switch {
	case neg && n > math.MaxInt64:
		return math.MinInt64, true
	case neg:
		return -int64(n), true
	case n > math.MaxInt64:
		return math.MaxInt64, true
	}
	return int64(n), true
}

// parseMemoryRedis reads a memory value as Redis's memtoull: digits then an
// optional unit (b, k, kb, m, mb, g, gb, any case); no sign, no blanks. Digits
// saturate at 2^64-1 and the unit multiplies modulo 2^64, as in Redis 7.0.
func parseMemoryRedis(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil && s[:i] != "" {
		n = math.MaxUint64 // only digits: the error is the overflow
	}
	return n * mul, true
}

// formatSave is CONFIG GET save: "3600 1 300 100".
func formatSave(points [][2]int64) string {
	parts := make([]string, 0, 2*len(points))
	for _, p := range points {
		parts = append(parts, strconv.FormatInt(p[0], 10), strconv.FormatInt(p[1], 10))
	}
	return strings.Join(parts, " ")
}

// moreConfigParams are CONFIG GET's entries for the settings of this file.
func (s *Server) moreConfigParams() map[string]func() string {
	c := &s.cfg
	yesNo := map[bool]string{true: "yes", false: "no"}
	return map[string]func() string{
		"save":                 func() string { return formatSave(c.Save) },
		"maxmemory":            func() string { return strconv.FormatUint(c.MaxMemory, 10) },
		"maxmemory-policy":     func() string { return c.MaxMemPolicy },
		"timeout":              func() string { return strconv.Itoa(c.Timeout) },
		"tcp-keepalive":        func() string { return strconv.Itoa(c.TCPKeepAlive) },
		"tcp-backlog":          func() string { return strconv.Itoa(c.TCPBacklog) },
		"daemonize":            func() string { return yesNo[c.Daemonize] },
		"supervised":           func() string { return cmp.Or(c.Supervised, "no") },
		"logfile":              func() string { return c.LogFile },
		"pidfile":              func() string { return c.PidFile },
		"dbfilename":           c.dbFilename,
		"rdbcompression":       func() string { return yesNo[c.rdbCompression()] },
		"rdbchecksum":          func() string { return yesNo[c.rdbChecksum()] },
		"aof-use-rdb-preamble": func() string { return yesNo[c.aofRDBPreamble()] },
	}
}

// RedisVersion is the Redis version MyRedis answers as (INFO, HELLO, --version).
const RedisVersion = redisVersion

func (c *Config) dbFilename() string {
	if c.DBFilename == "" {
		return "dump.rdb"
	}
	return c.DBFilename
}

func (c *Config) rdbCompression() bool { return !c.RDBNoCompression }
func (c *Config) rdbChecksum() bool    { return !c.RDBNoChecksum }
func (c *Config) aofRDBPreamble() bool { return !c.AOFNoRDBPreamble }
