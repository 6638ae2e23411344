package myredis

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Client eviction, Redis 7.0's maxmemory-clients: when the memory of all
// normal and pub/sub clients together reaches the limit, the clients using the
// most are closed, largest first, until the total is under it again. A client
// that said CLIENT NO-EVICT ON, a replica's link, the master's link, a MONITOR
// and internal clients are never evicted (they still count in the total). The
// limit is bytes, or a percentage of maxmemory ("10%", kept negative as Redis
// keeps it), and never under 128 KB so an operator can still talk to the
// server. A client's memory is what CLIENT LIST's tot-mem shows (memory.go's
// clientMem) plus the commands queued in its MULTI.
//
// The total is kept up to date after every batch of a client (its own share
// is measured again) and summed afresh ten times a second (query buffers
// grow on the connection goroutines, between batches); eviction is checked at
// both points. Runs on the executor goroutine.

// clientEvictMin is Redis's floor on the effective limit.
const clientEvictMin = 128 << 10

// clientEviction is the executor's state.
type clientEviction struct {
	total   int64 // the clients' memory as last measured
	evicted int64 // INFO stats evicted_clients
}

// CLIENT NO-EVICT ON|OFF: c is exempt from client eviction.
func (x *Ctx) clientNoEvict() {
	switch {
	case eqFold(x.args[2], "on"):
		x.c.noEvict = true
	case eqFold(x.args[2], "off"):
		x.c.noEvict = false
	default:
		x.err(msgSyntax)
		return
	}
	x.ok()
}

// clientEvictLimit is the limit in bytes, 0 when client eviction is off, as
// Redis's getClientEvictionLimit.
func (s *Server) clientEvictLimit() int64 {
	v := s.cfg.MaxMemoryClients
	switch {
	case v < 0 && s.cfg.MaxMemory > 0:
		v = int64(min(float64(s.cfg.MaxMemory)*float64(-v)/100, math.MaxInt64))
	case v <= 0:
		return 0
	}
	return max(v, clientEvictMin)
}

// clientMemAll is c's memory for eviction: its buffers and structure, and
// the arguments queued in its MULTI (all in clientMem now, memory.go).
func clientMemAll(c *Client) int64 { return clientMem(c) }

// evictable reports whether eviction may close c (Redis's clientEvictionAllowed).
func (s *Server) evictable(c *Client) bool {
	return !c.noEvict && c.conn != nil && c.replica == nil && c != s.repl.mc && !s.isMonitor(c) && !c.closing
}

// clientMemAfterBatch measures c again after its batch and evicts if the total
// reached the limit.
func (s *Server) clientMemAfterBatch(c *Client) {
	now := clientMemAll(c)
	s.cev.total += now - c.memCounted
	c.memCounted = now
	s.evictClients()
}

// evictsCaller runs client eviction before a command's key eviction, as
// Redis's processCommand (evictClients, then performEvictions): clients whose
// buffers pass maxmemory-clients go before any key does. c is measured first,
// with the command's arguments (Redis's argv-mem); it reports whether c itself
// was evicted, in which case the command is not run and gets no reply. Runs on
// the executor.
func (s *Server) evictsCaller(c *Client, args [][]byte) bool {
	if s.clientEvictLimit() == 0 {
		return false
	}
	if s.cfg.MaxMemory > 0 && s.usedMemoryForEvict() > int64(s.cfg.MaxMemory) {
		// keys are about to go: other clients' buffers may have grown since
		// their last batch (a dead client's unfinished request), so every
		// client is measured afresh first, as Redis keeps each one's usage
		// current while it reads
		s.clientEvictResum()
	}
	was := c.closing
	now := clientMemAll(c) // with argv-mem: the request's arguments (runBatch sets it)
	if c.argc == 0 {       // a command not from the client's own request
		now += argvBytes(args)
	}
	s.cev.total += now - c.memCounted
	c.memCounted = now // measured again without the arguments after the batch
	s.evictClients()
	return !was && c.closing
}

// clientEvictCron sums every client's memory afresh and evicts if needed.
func (s *Server) clientEvictCron() {
	if s.clientEvictLimit() == 0 {
		return
	}
	s.clientEvictResum()
	s.evictClients()
}

// clientEvictResum sums every client's memory afresh. Runs on the executor.
func (s *Server) clientEvictResum() {
	s.mu.Lock()
	var total int64
	for _, c := range s.clients {
		c.memCounted = clientMemAll(c)
		total += c.memCounted
	}
	s.mu.Unlock()
	s.cev.total = total
}

// clientEvictForget takes a closed client's share off the total.
func (s *Server) clientEvictForget(c *Client) {
	s.cev.total -= c.memCounted
	c.memCounted = 0
}

// evictClients closes the largest evictable clients while the total is at or
// over the limit, as Redis's evictClients.
func (s *Server) evictClients() {
	limit := s.clientEvictLimit()
	if limit == 0 || s.cev.total < limit {
		return
	}
	s.mu.Lock()
	var cands []*Client
	for _, c := range s.clients {
		if s.evictable(c) {
			cands = append(cands, c)
		}
	}
	s.mu.Unlock()
	sort.Slice(cands, func(i, j int) bool { return cands[i].memCounted > cands[j].memCounted })
	for _, c := range cands {
		if s.cev.total < limit {
			return
		}
		s.log.Info("evicting client", "client", strings.TrimSuffix(c.info(s.clock.Now()), "\n"))
		s.cev.evicted++
		s.clientEvictForget(c)
		// its memory leaves used_memory now, as Redis frees the client at
		// once: key eviction right after must not count it
		if s.overheadMem.Add(-clientMem(c)) < 0 { // it had grown since the last sum
			s.overheadMem.Store(0)
		}
		c.closing = true
		c.conn.NetConn().Close() // the connection's read fails and closes the client
	}
	if s.cev.total >= limit {
		s.log.Warn("over client maxmemory after evicting all evictable clients")
	}
}

// setClientEvict is Config.Set for maxmemory-clients: a memory value, or a
// percentage of maxmemory up to 100; errUnknownOption for any other name.
func (c *Config) setClientEvict(name, val string) error {
	if name != "maxmemory-clients" {
		return errUnknownOption
	}
	if n, ok := parseMemoryRedis(val); ok {
		if n > math.MaxInt64 {
			return errors.New("percentage argument must be less or equal to 100")
		}
		c.MaxMemoryClients = int64(n)
		return nil
	}
	if pct, ok := strings.CutSuffix(val, "%"); ok && pct != "" {
		if n, ok := parseRedisInt([]byte(pct)); ok && n >= 0 {
			if n > 100 {
				return errors.New("percentage argument must be less or equal to 100")
			}
			c.MaxMemoryClients = -n
			return nil
		}
	}
	return errors.New("argument must be a memory or percent value")
}

// clientEvictParam is CONFIG GET maxmemory-clients.
func (c *Config) clientEvictParam() string {
	if c.MaxMemoryClients < 0 {
		return strconv.FormatInt(-c.MaxMemoryClients, 10) + "%"
	}
	return strconv.FormatInt(c.MaxMemoryClients, 10)
}

func init() { runtimeSettable["maxmemory-clients"] = true }
