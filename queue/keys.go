package queue

// Key layout. Every key of one queue carries the hash tag {<queue>}, so a
// queue lives in a single Redis Cluster slot and multi-key commands, MULTI and
// scripts work there unchanged.
//
//	wr:{q}:waiting       sorted set  member ticket, score arrival number (INCR)
//	wr:{q}:active        sorted set  member ticket, score session deadline (unix ms)
//	wr:{q}:seq           string      arrival counter
//	wr:{q}:settings      hash        slot, session_ms, ticket_ttl_ms
//	wr:{q}:leader        string      lease holder of the leader strategy (PX)
//	wr:{q}:admitted      string      admissions so far (INCRBY)
//	wr:{q}:rate          hash        admissions per unix second, the last ~2 minutes
//	wr:{q}:alive:<t>     string      liveness of a waiting ticket (PX ticket TTL)
//	wr:{q}:pass:<t>      string      unused pass of an admitted ticket (PX session)
//	wr:{q}:user:<u>      string      ticket of user u, for idempotent join
type keys struct {
	prefix   string // "wr:{q}:"
	waiting  string
	active   string
	seq      string
	settings string
	leader   string
	admitted string
	rate     string
}

func newKeys(queue string) keys {
	p := "wr:{" + queue + "}:"
	return keys{
		prefix:   p,
		waiting:  p + "waiting",
		active:   p + "active",
		seq:      p + "seq",
		settings: p + "settings",
		leader:   p + "leader",
		admitted: p + "admitted",
		rate:     p + "rate",
	}
}

func (k keys) alive(ticket string) string { return k.prefix + "alive:" + ticket }
func (k keys) pass(ticket string) string  { return k.prefix + "pass:" + ticket }
func (k keys) user(user string) string    { return k.prefix + "user:" + user }
