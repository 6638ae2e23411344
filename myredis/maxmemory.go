package myredis

import (
	"runtime/debug"
	"strings"
)

// maxmemory: before each command, while used memory (memory.go) is over
// maxmemory, keys are evicted under the policy (evict.go); when nothing can be
// evicted (noeviction, or no candidate), a write that would grow the dataset is
// refused with Redis's OOM error, as Redis 7.0's processCommand does:
//
//   - commands Redis flags denyoom (SET, LPUSH, ...; read from Redis's COMMAND
//     INFO, commandinfo_redis.go) are refused; reads, DEL and the like run;
//   - inside MULTI every command but EXEC, DISCARD, QUIT and RESET is refused
//     (queueing itself takes memory), and the refusal makes EXEC answer
//     EXECABORT; EXEC itself is refused (EXECABORT ... OOM) when the
//     transaction holds a denyoom command;
//   - a script sees the state found before it started (Redis's
//     pre_command_oom_state): lua.go refuses a script with flags that may write
//     whole, and a denyoom call of a flagless one before it has written.

// maxmemoryRefuses evicts what the policy allows and reports whether cmd
// must be refused with OOM. Runs on the executor before each command when
// maxmemory is set.
func (s *Server) maxmemoryRefuses(c *Client, cmd *command) bool {
	s.ev.oom = s.performEvictions() == evictFail
	return s.ev.oom && refusedOnOOM(c, cmd)
}

// overMaxmemory reports whether the command running now found the memory
// over maxmemory with nothing to evict. Runs on the executor.
func (s *Server) overMaxmemory() bool {
	return s.cfg.MaxMemory > 0 && s.ev.oom
}

// maxmemoryChanged is the CONFIG SET listener: a lower limit evicts at once
// (as a task after the command, Redis's startEvictionTimeProc), and the Go
// runtime's limit follows.
func (s *Server) maxmemoryChanged(old, next Config) {
	s.applyEvictionConfig(next) // evict.go
	if next.MaxMemory != old.MaxMemory {
		s.tieGoMemoryLimit(next.MaxMemory)
	}
	if next.MaxMemory > 0 {
		s.startEvictionTask()
	}
}

// goMemLimit ties GOMEMLIMIT to maxmemory when the server owns its process.
type goMemLimit struct {
	on      bool  // WithGoMemoryLimit
	saved   bool  // initial holds the limit found at start (GOMEMLIMIT or none)
	initial int64 //
}

// WithGoMemoryLimit ties the Go runtime's soft memory limit (GOMEMLIMIT) to
// maxmemory, so the heap is collected before the process overshoots: cmd/myredis
// sets it. Servers that share a process with others (tests) leave it alone.
func WithGoMemoryLimit() Option { return func(s *Server) { s.goMemLimit.on = true } }

// goMemoryLimitFor is the Go limit for a maxmemory: a quarter more plus 8 MB
// for what the model does not count (garbage between collections, goroutine
// stacks, the runtime's own structures, buffers being parsed).
func goMemoryLimitFor(maxmemory uint64) int64 {
	return int64(min(maxmemory+maxmemory/4+8<<20, 1<<62))
}

// tieGoMemoryLimit applies goMemoryLimitFor(maxmemory), or restores the
// initial limit when maxmemory is 0.
func (s *Server) tieGoMemoryLimit(maxmemory uint64) {
	g := &s.goMemLimit
	if !g.on {
		return
	}
	if !g.saved {
		g.initial, g.saved = debug.SetMemoryLimit(-1), true
	}
	if maxmemory == 0 {
		debug.SetMemoryLimit(g.initial)
		return
	}
	debug.SetMemoryLimit(min(goMemoryLimitFor(maxmemory), g.initial))
}

// refusedOnOOM reports whether cmd is refused over maxmemory for client c.
func refusedOnOOM(c *Client, cmd *command) bool {
	if cmd.flags&flagDenyOOM != 0 {
		return true
	}
	if c.multi == nil {
		return false
	}
	switch cmd.name {
	case "exec": // refused when it would run a denyoom command
		for _, q := range c.multi.cmds {
			if q.cmd.flags&flagDenyOOM != 0 {
				return true
			}
		}
		return false
	case "discard", "quit", "reset":
		return false
	}
	return true
}

// markDenyOOM sets flagDenyOOM on the commands whose COMMAND INFO flags in
// Redis 7.0.15 include denyoom.
func markDenyOOM(t commandTable) {
	for name, c := range t {
		if hasInfoFlag(name, "denyoom") {
			c.flags |= flagDenyOOM
		}
		for _, sub := range c.subs {
			if hasInfoFlag(sub.name, "denyoom") {
				sub.flags |= flagDenyOOM
			}
		}
	}
}

// hasInfoFlag reports whether Redis's COMMAND INFO entry of name (a command,
// or "container|sub") lists flag. The entry is raw RESP: name, arity, then the
// array of flags as simple strings.
func hasInfoFlag(name, flag string) bool {
	container, _, isSub := strings.Cut(name, "|")
	raw := redisCommandInfo[container]
	if raw == "" {
		return false
	}
	if isSub { // the subcommand's own entry, inside the container's
		at := strings.Index(raw, "$"+itoa(int64(len(name)))+"\r\n"+name+"\r\n")
		if at < 0 {
			return false
		}
		raw = raw[at:]
	}
	// tokens: ["*10",] "$n", name, ":arity", "*k", then k "+flag"
	tok := strings.Split(raw, "\r\n")
	i := 3 // past "$n", name and the arity
	if !isSub {
		i = 4 // and the entry's own array header
	}
	if len(tok) <= i || !strings.HasPrefix(tok[i], "*") {
		return false
	}
	n, ok := parseRedisInt([]byte(tok[i][1:]))
	if !ok {
		return false
	}
	for _, f := range tok[i+1 : min(i+1+int(n), len(tok))] {
		if f == "+"+flag {
			return true
		}
	}
	return false
}
