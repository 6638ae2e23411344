package queue

// Key layout (README.md has the full table). Every key of one queue carries
// the hash tag {<queue>}, so a queue lives in a single Redis Cluster slot and
// multi-key commands, MULTI and scripts work there unchanged. TTLs are kept by
// the store's clock. Every key written per ticket or per user has a TTL; the
// queue's own keys have none, so a store with maxmemory-policy volatile-lru
// evicts dead tickets' keys and never the sets that hold everyone's place
// (maxmemory_test.go checks both).
//
//	wr:{q}:waiting    sorted set  member ticket, score arrival number (INCR seq)      no TTL
//	wr:{q}:expiry     sorted set  member waiting ticket, score liveness deadline (ms)  no TTL
//	wr:{q}:active     sorted set  member ticket, score session deadline (unix ms)     no TTL
//	wr:{q}:seq        string      arrival counter                                     no TTL
//	wr:{q}:settings   hash        slot, session_ms, ticket_ttl_ms, max_session_ms, state... no TTL
//	wr:{q}:admitted   string      admissions so far (also the atomic strategy's nonces) no TTL
//	wr:{q}:rate       hash        admissions per unix second (store clock)            no TTL, fields pruned after 2 min
//	wr:{q}:hist       hash        the dashboard's history (history.go)                no TTL, old fields pruned
//	wr:{q}:codes      hash        bypass codes' uses (codes.go)                       no TTL
//	wr:{q}:pre        sorted set  pre-queue of a scheduled queue                      no TTL, deleted by the draw
//	wr:{q}:leader     string      lease holder of the leader strategy                 PX period+margin
//	wr:{q}:round:<i>  string      instance i is inside a round (only with MarkRounds)  PX 10 s
//	wr:{q}:pow:<n>    string      a spent proof-of-work challenge (pow.go)            until the challenge expires
//	wr:{q}:t:<t>      hash        ticket: u user, j joined, n nonce, a admitted, e entered, x end  2 ticket TTLs waiting / session + ticket TTL / tombstone max(ticket TTL, 1 min)
//	wr:{q}:user:<u>   string      ticket of user u, for idempotent join               same as wr:{q}:t:<t>
//	wr:{q}:events     shard channel  one message per round that changed the queue (SPUBLISH; events.go)
//	rate:wr:{q}:join:<ip>  string  join limit of one client IP (redis_rate, GCRA)    until the bucket refills
type keys struct {
	prefix   string // "wr:{q}:"
	waiting  string
	expiry   string
	active   string
	seq      string
	settings string
	leader   string
	admitted string
	rate     string
	events   string // a shard channel, not a key: hash-tagged so it lives in the queue's slot
}

func newKeys(queue string) keys {
	p := "wr:{" + queue + "}:"
	return keys{
		prefix:   p,
		waiting:  p + "waiting",
		expiry:   p + "expiry",
		active:   p + "active",
		seq:      p + "seq",
		settings: p + "settings",
		leader:   p + "leader",
		admitted: p + "admitted",
		rate:     p + "rate",
		events:   p + "events",
	}
}

// scriptKeys are the KEYS of scripts/waitroom.lua, in its order.
func (k keys) scriptKeys() []string {
	return []string{k.settings, k.waiting, k.active, k.expiry, k.seq, k.admitted, k.rate}
}

func (k keys) ticket(id string) string      { return k.prefix + "t:" + id }
func (k keys) user(user string) string      { return k.prefix + "user:" + user }
func (k keys) roundMark(inst string) string { return k.prefix + "round:" + inst }
