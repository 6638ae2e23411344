package myredis

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
)

// IntrospectConfig holds the settings of the slow log (slowlog.go) and the
// latency monitor (latency.go), by their redis.conf names.
type IntrospectConfig struct {
	// SlowlogSlowerThan is slowlog-log-slower-than in microseconds: a command
	// that ran at least this long is logged; negative turns the log off.
	SlowlogSlowerThan int64
	// SlowlogMaxLen is slowlog-max-len, the entries kept.
	SlowlogMaxLen int64
	// LatencyThreshold is latency-monitor-threshold in milliseconds: events
	// that took at least this long are recorded; 0 turns the monitor off.
	LatencyThreshold int64
	// DebugCommand is enable-debug-command: "no", "yes" or "local" (from
	// loopback connections only); fixed at start-up.
	DebugCommand string
	// ModuleCommand is enable-module-command, the same for MODULE LOAD,
	// LOADEX and UNLOAD (cmd_module.go).
	ModuleCommand string
	set           bool // holds at least the defaults
}

// defaultIntrospect is redis-server 7.0.15's defaults.
var defaultIntrospect = IntrospectConfig{SlowlogSlowerThan: 10000, SlowlogMaxLen: 128, DebugCommand: "no", ModuleCommand: "no", set: true}

func (c *Config) initIntrospect() {
	if !c.Intro.set {
		c.Intro = defaultIntrospect
	}
}

// setIntrospect is Config.Set for the settings of this file; errUnknownOption
// for any other name.
func (c *Config) setIntrospect(name, val string) error {
	c.initIntrospect()
	var dst *int64
	var lo int64
	switch name {
	case "slowlog-log-slower-than":
		dst, lo = &c.Intro.SlowlogSlowerThan, -1
	case "slowlog-max-len":
		dst = &c.Intro.SlowlogMaxLen
	case "latency-monitor-threshold":
		dst = &c.Intro.LatencyThreshold
	case "enable-debug-command", "enable-module-command":
		switch val = strings.ToLower(val); val {
		case "no", "yes", "local":
			if name == "enable-debug-command" {
				c.Intro.DebugCommand = val
			} else {
				c.Intro.ModuleCommand = val
			}
			return nil
		}
		return errors.New("argument(s) must be one of the following: no, yes, local")
	default:
		return errUnknownOption
	}
	n, err := intConfig(val, lo, math.MaxInt64) // config_more.go
	if err == nil {
		*dst = int64(n)
	}
	return err
}

// params adds CONFIG GET's readers of these settings.
func (ic *IntrospectConfig) params(params map[string]func() string) {
	params["slowlog-log-slower-than"] = func() string { return strconv.FormatInt(ic.SlowlogSlowerThan, 10) }
	params["slowlog-max-len"] = func() string { return strconv.FormatInt(ic.SlowlogMaxLen, 10) }
	params["latency-monitor-threshold"] = func() string { return strconv.FormatInt(ic.LatencyThreshold, 10) }
	params["enable-debug-command"] = func() string { return ic.DebugCommand }
	params["enable-module-command"] = func() string { return ic.ModuleCommand }
}

// protectedRefusal is Redis's refusal of a protected command (DEBUG, MODULE
// LOAD/LOADEX/UNLOAD) that enable-debug-command or enable-module-command does
// not allow the client; "" when allowed.
func (s *Server) protectedRefusal(c *Client, cmd *command) string {
	if cmd.flags&flagProtectModule != 0 {
		if allowProtected(s.cfg.Intro.ModuleCommand, c) {
			return ""
		}
		return msgModuleNotAllowed
	}
	if s.debugAllowed(c) {
		return ""
	}
	return msgDebugNotAllowed
}

// debugAllowed is Redis's allowProtectedAction for enable-debug-command:
// "local" lets loopback connections (and internal clients) run DEBUG.
func (s *Server) debugAllowed(c *Client) bool { return allowProtected(s.cfg.Intro.DebugCommand, c) }

// allowProtected is Redis's allowProtectedAction for a setting's value.
func allowProtected(setting string, c *Client) bool {
	switch setting {
	case "yes":
		return true
	case "local":
		return isLocalClient(c)
	}
	return false
}

// isLocalClient reports whether c connected over loopback (or has no socket).
func isLocalClient(c *Client) bool {
	if c.conn == nil {
		return true
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func init() {
	for _, name := range []string{"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold"} {
		runtimeSettable[name] = true
	}
}
