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
	set          bool // holds at least the defaults
}

// defaultIntrospect is redis-server 7.0.15's defaults.
var defaultIntrospect = IntrospectConfig{SlowlogSlowerThan: 10000, SlowlogMaxLen: 128, DebugCommand: "no", set: true}

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
	case "enable-debug-command":
		switch val = strings.ToLower(val); val {
		case "no", "yes", "local":
			c.Intro.DebugCommand = val
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
}

// debugAllowed is Redis's allowProtectedAction for enable-debug-command:
// "local" lets loopback connections (and internal clients) run DEBUG.
func (s *Server) debugAllowed(c *Client) bool {
	switch s.cfg.Intro.DebugCommand {
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
