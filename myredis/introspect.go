package myredis

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Introspection: what exec tells the slow log (slowlog.go), the latency monitor
// (latency.go) and MONITOR clients (monitor.go) about each command it ran.
//
// Timing costs one monotonic clock read per command: the reading taken when a
// command ends is also the start of the next one, and each job (a client's
// batch, a server task) starts the chain afresh. A command's time therefore
// also holds the few steps between two commands of a batch (lookup, arity and
// auth checks of the next one), tens of nanoseconds. Nested commands (inside
// EXEC and scripts) time themselves the same way, and the command around them
// is timed from its own start to its own end.

// introspection is the executor's state for the three features.
type introspection struct {
	base time.Time // the monotonic origin of tick
	tick int64     // ns since base of the last reading: where the running command started
	// slowNs is the shortest time that interests the slow log or the latency
	// monitor, in ns (MaxInt64: neither), so exec tests one number per command.
	slowNs   int64
	slowlog  slowlog
	latency  latencyMonitor
	monitors []*Client // MONITOR clients, in the order they asked
}

// initIntrospection starts the clock chain and follows CONFIG SET. Runs in New.
func (s *Server) initIntrospection() {
	s.intro.base = time.Now()
	s.intro.setThresholds(s.cfg.Intro)
	s.configHooks = append(s.configHooks, func(_, next Config) { s.intro.setThresholds(next.Intro) })
}

func (in *introspection) setThresholds(c IntrospectConfig) {
	in.slowNs = math.MaxInt64
	if c.SlowlogSlowerThan >= 0 {
		in.slowNs = min(c.SlowlogSlowerThan, math.MaxInt64/1000) * 1000
	}
	if c.LatencyThreshold > 0 {
		in.slowNs = min(in.slowNs, min(c.LatencyThreshold, math.MaxInt64/1_000_000)*1_000_000)
	}
}

// startTiming begins the chain at the start of a job. Runs on the executor.
func (s *Server) startTiming() {
	if s.intro.slowNs != math.MaxInt64 {
		s.intro.tick = int64(time.Since(s.intro.base))
	}
}

// batchStartMs is the unix time in ms at the start of the running job: the
// chain's reading when the clock is the system's, so a batch reads it once.
func (s *Server) batchStartMs() int64 {
	if _, real := s.clock.(systemClock); real && s.intro.slowNs != math.MaxInt64 {
		return s.intro.base.UnixMilli() + s.intro.tick/1e6
	}
	return s.clock.Now().UnixMilli()
}

// startCommand is where exec's timing of cmd starts and whether cmd is timed.
// While the slow log or the latency monitor is on, every command is: its start
// is the last reading of the chain. With both off, one call in timeEvery is
// (stats.go), with a reading of its own.
func (s *Server) startCommand(cmd *command) (start int64, timed bool) {
	if s.intro.slowNs != math.MaxInt64 {
		return s.intro.tick, true
	}
	if cmd.stats.timeNext() {
		return int64(time.Since(s.intro.base)), true
	}
	return 0, false
}

// endTiming reads the clock once: the end of the command that started at
// start, and the start of whatever runs next. It returns the command's time.
func (s *Server) endTiming(start int64) int64 {
	now := int64(time.Since(s.intro.base))
	s.intro.tick = now
	return now - start
}

// observe hands a command that ran for ns to the slow log, the latency monitor
// and the monitors. Runs on the executor after every command exec runs.
func (s *Server) observe(x *Ctx, ns int64) {
	served := x.readyKey != "" // a blocked command run again: monitors saw it when it came
	if len(s.intro.monitors) > 0 && !served && x.cmd.intro&introMonitorAfter != 0 {
		s.feedMonitors(x)
	}
	if ns < s.intro.slowNs || (x.c.blocked != nil && !x.inMulti && !x.inScript) {
		return // (a command that blocked is logged when it is served)
	}
	cfg := &s.cfg.Intro
	if cfg.LatencyThreshold > 0 && ns >= cfg.LatencyThreshold*1e6 {
		event := "command"
		if x.cmd.intro&introFast != 0 {
			event = "fast-command"
		}
		s.intro.latency.add(event, ns/1e6, s.clock.Now().Unix())
	}
	if cfg.SlowlogSlowerThan >= 0 && ns/1000 >= cfg.SlowlogSlowerThan && x.cmd.intro&introSkipSlowlog == 0 {
		s.intro.slowlog.push(x, ns/1000, s.clock.Now().Unix(), cfg.SlowlogMaxLen)
	}
}

// Per-command introspection flags (command.intro), from Redis's command table.
const (
	introFast         = 1 << iota // latency event "fast-command" rather than "command"
	introSkipSlowlog              // EXEC: its commands are logged, not itself
	introMonitorAfter             // fed to monitors after it runs (not admin, not a script)
	introMonitorFirst             // EVAL and FCALL: fed before the commands they run
)

// markIntrospection sets every command's intro flags from Redis 7.0's command
// table (commandinfo_redis.go): "fast", admin commands hidden from monitors, and
// the scripts that feed monitors themselves, before their commands.
func markIntrospection(t commandTable) {
	for _, c := range t {
		mark := func(c *command, flags map[string]bool) {
			if flags["fast"] {
				c.intro |= introFast
			}
			switch {
			case c.name == "exec":
				c.intro |= introSkipSlowlog | introMonitorAfter
			case scriptCommands[c.name]:
				c.intro |= introMonitorFirst
			case !flags["admin"] && c.flags&flagAdmin == 0:
				c.intro |= introMonitorAfter
			}
		}
		all := redisCommandFlags(c.name)
		mark(c, all[c.name])
		for _, sub := range c.subs {
			mark(sub, all[sub.name])
		}
	}
}

// scriptCommands are the commands Redis flags skip_monitor: they feed monitors
// themselves, before the commands their script runs.
var scriptCommands = map[string]bool{
	"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true,
}

// help writes a HELP reply: status lines, as Redis's addReplyHelp.
func (x *Ctx) help(lines []string) {
	x.w.Array(len(lines))
	for _, l := range lines {
		x.w.Simple(l)
	}
}

// redactArg hides argument i from the slow log and MONITOR, as Redis's
// redactClientCommandArgument (passwords of AUTH, HELLO, CONFIG SET).
func (x *Ctx) redactArg(i int) {
	if i < len(x.args) {
		x.redacted = append(x.redacted, i)
	}
}

// redactSensitiveConfigs hides the values of CONFIG SET's secret settings,
// whatever else fails, as Redis's configSetCommand.
func (x *Ctx) redactSensitiveConfigs() {
	for i := 2; i+1 < x.nargs(); i += 2 {
		switch strings.ToLower(x.arg(i)) {
		case "requirepass", "masterauth", "masteruser":
			x.redactArg(i + 1)
		}
	}
}

// loggedArgs are the arguments as the slow log and monitors show them.
func (x *Ctx) loggedArgs() [][]byte {
	if x.redacted == nil {
		return x.args
	}
	out := append([][]byte(nil), x.args...)
	for _, i := range x.redacted {
		out[i] = []byte("(redacted)")
	}
	return out
}

// --- Redis's command flags, read from its COMMAND INFO replies ---

// redisCommandFlags reads the flags of a command and of its subcommands from
// Redis's COMMAND INFO entry for it: name -> flag -> true.
func redisCommandFlags(name string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	raw := redisCommandInfo[name]
	if raw == "" {
		return out
	}
	v, _, ok := parseRESP([]byte(raw))
	if !ok {
		return out
	}
	var walk func(e respValue)
	walk = func(e respValue) {
		if len(e.items) < 10 {
			return
		}
		flags := map[string]bool{}
		for _, f := range e.items[2].items {
			flags[string(f.str)] = true
		}
		out[string(e.items[0].str)] = flags
		for _, sub := range e.items[9].items {
			walk(sub)
		}
	}
	walk(v)
	return out
}

// respValue is a parsed RESP2 value: a string-like (simple, bulk, integer,
// error) in str, an array in items.
type respValue struct {
	str   []byte
	items []respValue
}

// parseRESP parses one RESP2 value from b, returning it and the bytes after it.
func parseRESP(b []byte) (respValue, []byte, bool) {
	if len(b) == 0 {
		return respValue{}, nil, false
	}
	end := -1
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		return respValue{}, nil, false
	}
	line, rest := b[1:end], b[end+2:]
	switch b[0] {
	case '+', '-', ':':
		return respValue{str: line}, rest, true
	case '$':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return respValue{}, nil, false
		}
		if n == -1 {
			return respValue{}, rest, true
		}
		if len(rest) < n+2 {
			return respValue{}, nil, false
		}
		return respValue{str: rest[:n]}, rest[n+2:], true
	case '*':
		n, err := strconv.Atoi(string(line))
		if err != nil || n < -1 {
			return respValue{}, nil, false
		}
		v := respValue{items: make([]respValue, 0, max(n, 0))}
		for range n {
			var item respValue
			var ok bool
			if item, rest, ok = parseRESP(rest); !ok {
				return respValue{}, nil, false
			}
			v.items = append(v.items, item)
		}
		return v, rest, true
	}
	return respValue{}, nil, false
}
