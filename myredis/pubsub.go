package myredis

import (
	"strconv"
	"time"

	"github.com/tidwall/redcon"
)

// Pub/sub: the server's subscription registry and each client's subscriptions.
// Everything here runs on the executor goroutine. Messages reach a subscriber
// through its outbox (outbox.go), so a publisher never waits for a subscriber.

// subKind is one of the three subscription spaces Redis keeps apart.
type subKind int

const (
	subChannel subKind = iota // SUBSCRIBE
	subPattern                // PSUBSCRIBE
	subShard                  // SSUBSCRIBE
)

// subNames are the confirmation kinds, by subKind: subscribe, then unsubscribe.
var subNames = [3][2]string{
	{"subscribe", "unsubscribe"},
	{"psubscribe", "punsubscribe"},
	{"ssubscribe", "sunsubscribe"},
}

// orderedSet keeps strings (or clients) in insertion order with O(1) lookup;
// removal keeps the order, as Redis's lists of subscribers do.
type orderedSet[T comparable] struct {
	items []T
	index map[T]struct{}
}

func (o *orderedSet[T]) has(v T) bool { _, ok := o.index[v]; return ok }
func (o *orderedSet[T]) len() int     { return len(o.items) }

func (o *orderedSet[T]) add(v T) bool {
	if o.has(v) {
		return false
	}
	if o.index == nil {
		o.index = make(map[T]struct{})
	}
	o.index[v] = struct{}{}
	o.items = append(o.items, v)
	return true
}

func (o *orderedSet[T]) remove(v T) bool {
	if !o.has(v) {
		return false
	}
	delete(o.index, v)
	for i, it := range o.items {
		if it == v {
			o.items = append(o.items[:i], o.items[i+1:]...)
			break
		}
	}
	return true
}

// pubsubRegistry maps each channel, pattern and shard channel to its subscribers.
type pubsubRegistry struct {
	subs [3]map[string]*orderedSet[*Client] // by subKind
	pats orderedSet[string]                 // patterns in subscription order
}

// subscribers is the set for name in kind, created when create is set.
func (r *pubsubRegistry) subscribers(kind subKind, name string, create bool) *orderedSet[*Client] {
	if r.subs[kind] == nil {
		if !create {
			return nil
		}
		r.subs[kind] = make(map[string]*orderedSet[*Client])
	}
	set := r.subs[kind][name]
	if set == nil && create {
		set = &orderedSet[*Client]{}
		r.subs[kind][name] = set
	}
	return set
}

// count is how many channels (patterns, shard channels) have subscribers.
func (r *pubsubRegistry) count(kind subKind) int { return len(r.subs[kind]) }

// clientPubSub is one client's subscriptions and its outbox.
type clientPubSub struct {
	names [3]orderedSet[string] // by subKind
	out   *outbox
}

// subCount is Redis's count in (un)subscribe confirmations: channels and
// patterns together, shard channels on their own.
func (p *clientPubSub) subCount(kind subKind) int {
	if kind == subShard {
		return p.names[subShard].len()
	}
	return p.names[subChannel].len() + p.names[subPattern].len()
}

// isSubscriber reports whether c is in pub/sub mode: subscribed to anything.
// Runs on the executor.
func (c *Client) isSubscriber() bool {
	return c.ps != nil && c.ps.subCount(subChannel)+c.ps.subCount(subShard) > 0
}

// pubsubOnly reports whether c may run only the pub/sub commands: subscribed
// while speaking RESP2. Runs on the executor, for every command (one nil check
// for a client that never subscribed).
func (c *Client) pubsubOnly() bool { return c.ps != nil && c.resp == 2 && c.isSubscriber() }

// allowedWhileSubscribed are the commands a RESP2 subscriber may send.
var allowedWhileSubscribed = map[string]bool{
	"ping": true, "subscribe": true, "ssubscribe": true, "unsubscribe": true, "sunsubscribe": true,
	"psubscribe": true, "punsubscribe": true, "quit": true, "reset": true,
}

// pubsubState gives c its subscription state and outbox, on first use. A client
// without a socket (scripts, Server.Do) gets no outbox and no messages.
func (s *Server) pubsubState(c *Client) *clientPubSub {
	if c.ps == nil {
		c.ps = &clientPubSub{}
		if c.conn != nil && c.conn.NetConn() != nil {
			c.ps.out = newOutbox(c.conn.NetConn())
		}
	}
	return c.ps
}

// subscribe adds c to name in kind and writes the confirmation to w.
func (s *Server) subscribe(c *Client, kind subKind, name string, w *Writer) {
	ps := s.pubsubState(c)
	if ps.names[kind].add(name) {
		s.pubsub.subscribers(kind, name, true).add(c)
		if kind == subPattern {
			s.pubsub.pats.add(name)
		}
	}
	writeSubReply(w, subNames[kind][0], []byte(name), ps.subCount(kind))
}

// unsubscribe removes c from name in kind; it writes the confirmation to w
// unless w is nil. It reports whether c was subscribed.
func (s *Server) unsubscribe(c *Client, kind subKind, name string, w *Writer) {
	ps := s.pubsubState(c)
	if ps.names[kind].remove(name) {
		set := s.pubsub.subscribers(kind, name, false)
		set.remove(c)
		if set.len() == 0 {
			delete(s.pubsub.subs[kind], name)
			if kind == subPattern {
				s.pubsub.pats.remove(name)
			}
		}
	}
	if w != nil {
		writeSubReply(w, subNames[kind][1], []byte(name), ps.subCount(kind))
	}
}

// unsubscribeAll removes every subscription of c in kind, confirming each to w
// (if not nil); with none, w gets one confirmation with a null name, as Redis.
func (s *Server) unsubscribeAll(c *Client, kind subKind, w *Writer) {
	if c.ps == nil || c.ps.names[kind].len() == 0 {
		if w != nil {
			count := 0
			if c.ps != nil {
				count = c.ps.subCount(kind)
			}
			writeSubReply(w, subNames[kind][1], nil, count)
		}
		return
	}
	for _, name := range append([]string(nil), c.ps.names[kind].items...) {
		s.unsubscribe(c, kind, name, w)
	}
}

// dropSubscriptions forgets a closed or RESET client's subscriptions, silently.
func (s *Server) dropSubscriptions(c *Client) {
	if c.ps == nil {
		return
	}
	for kind := subChannel; kind <= subShard; kind++ {
		s.unsubscribeAll(c, kind, nil)
	}
}

// writeSubReply writes a (un)subscribe confirmation: [kind, name or null, count],
// a push in RESP3.
func writeSubReply(w *Writer, kind string, name []byte, count int) {
	w.Push(3)
	w.BulkString(kind)
	if name == nil {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
}

// publish sends message to the subscribers of channel (and, unless shard, to the
// clients whose patterns match it) and returns how many received it. Pushing
// never changes the registry (a client over its limit is forgotten later, by its
// connection's close), so the sets are walked as they are.
func (s *Server) publish(kind subKind, channel, message []byte) int {
	n := 0
	kindName := "message"
	if kind == subShard {
		kindName = "smessage"
	}
	if set := s.pubsub.subscribers(kind, string(channel), false); set != nil {
		var msgs [2][]byte // RESP2 and RESP3 forms, made when first needed
		for _, c := range set.items {
			s.pushTo(c, messageFor(&msgs, c, kindName, nil, channel, message))
			n++
		}
	}
	if kind == subShard {
		return n
	}
	for _, pat := range s.pubsub.pats.items {
		if !globMatch(pat, string(channel)) {
			continue
		}
		set := s.pubsub.subscribers(subPattern, pat, false)
		if set == nil {
			continue
		}
		var msgs [2][]byte
		for _, c := range set.items {
			s.pushTo(c, messageFor(&msgs, c, "pmessage", []byte(pat), channel, message))
			n++
		}
	}
	return n
}

// messageFor is the message in c's protocol, from msgs (RESP2, RESP3) where it
// was made for an earlier subscriber.
func messageFor(msgs *[2][]byte, c *Client, kind string, pattern, channel, payload []byte) []byte {
	i := 0
	if c.resp == 3 {
		i = 1
	}
	if msgs[i] == nil {
		msgs[i] = appendMessage(nil, i == 1, kind, pattern, channel, payload)
	}
	return msgs[i]
}

// appendMessage appends a message: [kind, (pattern,) channel, payload], a push
// in RESP3 and an array in RESP2.
func appendMessage(b []byte, resp3 bool, kind string, pattern, channel, payload []byte) []byte {
	if pattern != nil {
		b = appendPushHeader(b, 4, resp3)
	} else {
		b = appendPushHeader(b, 3, resp3)
	}
	b = redcon.AppendBulkString(b, kind)
	if pattern != nil {
		b = redcon.AppendBulk(b, pattern)
	}
	b = redcon.AppendBulk(b, channel)
	return redcon.AppendBulk(b, payload)
}

// pushTo queues msg for c. The client whose batch is running gets it in its
// batch's reply stream, where Redis would put it (a PUBLISH inside MULTI or a
// script to the caller's own channel); the others through their outboxes.
func (s *Server) pushTo(c *Client, msg []byte) {
	if c == s.runningClient {
		c.out.Raw(msg)
		return
	}
	if c.ps == nil || c.ps.out == nil {
		return
	}
	if !c.ps.out.push(msg, s.obufLimitFor(c), s.clock.Now()) {
		s.log.Warn("client closed for overcoming of output buffer limits", "id", c.id, "addr", c.addr, "class", "pubsub")
	}
}

// obufLimitFor is the output-buffer limit of c's class: pubsub while it is
// subscribed, normal otherwise.
func (s *Server) obufLimitFor(c *Client) obufLimit {
	if c.isSubscriber() {
		return s.cfg.ObufLimits[obufPubSub]
	}
	return s.cfg.ObufLimits[obufNormal]
}

// flushToOutbox moves the replies of c's finished batch into its outbox, after
// any message queued before them. Runs on the executor at the end of a batch of
// a client that has an outbox.
func (s *Server) flushToOutbox(c *Client) {
	if c.ps.out == nil || c.out.Len() == 0 {
		return
	}
	c.ps.out.push(c.out.Bytes(), s.obufLimitFor(c), s.clock.Now())
	c.out.Reset()
}

// pubsubInfo is INFO stats' pub/sub lines.
func (s *Server) pubsubInfo() [][2]string {
	return [][2]string{
		{"pubsub_channels", strconv.Itoa(s.pubsub.count(subChannel))},
		{"pubsub_patterns", strconv.Itoa(s.pubsub.count(subPattern))},
		{"pubsubshard_channels", strconv.Itoa(s.pubsub.count(subShard))},
	}
}

// pubsubCounts is CLIENT LIST's sub, psub, ssub and omem. Runs on the executor.
func (c *Client) pubsubCounts() (subs [3]int, omem int64) {
	if c.ps == nil {
		return subs, 0
	}
	for k := range subs {
		subs[k] = c.ps.names[k].len()
	}
	if c.ps.out != nil {
		omem = int64(c.ps.out.pending())
	}
	return subs, omem
}

// pushReply queues a reply written outside a batch (a served blocking command)
// in c's outbox, if it has one, so it follows what is queued there. Runs on the
// connection goroutine between batches; false when c has no outbox.
func (c *Client) pushReply(b []byte) bool {
	if c.ps == nil || c.ps.out == nil {
		return false
	}
	c.ps.out.push(b, obufLimit{}, time.Time{})
	return true
}

// drainOutbox waits until c's queued replies are written (QUIT). Runs on the
// connection goroutine.
func (c *Client) drainOutbox() {
	if c.ps != nil && c.ps.out != nil {
		c.ps.out.drain()
	}
}

// closeOutbox stops c's outbox writer once the connection is closed. Runs on the
// connection goroutine after its last batch.
func (c *Client) closeOutbox() {
	if c.ps != nil && c.ps.out != nil {
		c.ps.out.close()
	}
}
