package myredis

import (
	"runtime/metrics"
	"strings"
)

// maxmemory: a write that would grow the dataset is refused while the memory
// in use is above maxmemory, with Redis's OOM error, as Redis 7.0 does under
// the noeviction policy (processCommand's reject_cmd_on_oom):
//
//   - commands Redis flags denyoom (SET, LPUSH, ...; read from Redis's COMMAND
//     INFO, commandinfo_redis.go) are refused; reads, DEL and the like run;
//   - inside MULTI every command but EXEC, DISCARD, QUIT and RESET is refused
//     (queueing itself takes memory), and the refusal makes EXEC answer
//     EXECABORT; EXEC itself is refused (EXECABORT ... OOM) when the
//     transaction holds a denyoom command.
//
// Eviction (the other policies) is not built yet: under them MyRedis refuses
// as if no key could be evicted, which is what Redis does when its pool of
// candidates is empty. Commands inside Lua scripts are not checked yet.
//
// "Memory in use" is the Go heap's live objects, sampled hz times a second (and
// at CONFIG SET maxmemory) by the expiry ticker, so the check per command is
// one atomic load.

// memSample is the heap-objects metric, read without stopping the world.
var memSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// sampleMemory records the memory in use. Safe from any goroutine.
func (s *Server) sampleMemory() {
	smp := []metrics.Sample{{Name: memSample[0].Name}}
	metrics.Read(smp)
	if smp[0].Value.Kind() == metrics.KindUint64 {
		s.usedMemory.Store(smp[0].Value.Uint64())
	}
}

// overMaxmemory reports whether writes are refused now. Runs on the executor.
func (s *Server) overMaxmemory() bool {
	limit := s.cfg.MaxMemory
	return limit > 0 && s.usedMemory.Load() > limit
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
