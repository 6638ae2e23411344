package myredis

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/redcon"
)

// Client-side caching (CLIENT TRACKING), as Redis 7.0's tracking.c. Everything
// here runs on the executor goroutine.
//
// In the default mode the server remembers, for every key a tracking client
// read, the ids of the clients that read it; the first change of the key (the
// one hook every write path passes: DB.touch) sends each of them one
// invalidation and forgets the key. In BCAST mode nothing is remembered: every
// change of a key under one of the client's prefixes is collected and sent to
// it after the batch that made it. Invalidations go out as RESP3 pushes
// (">2 invalidate [keys]"), or, for a RESP2 client that redirected them to a
// subscribed RESP2 connection, as messages on __redis__:invalidate. The table is
// bounded by tracking-table-max-keys: past it, keys are invalidated at random.

// trackingChannel is where RESP2 redirected invalidations are published.
const trackingChannel = "__redis__:invalidate"

// trackingState is the server's tracking table.
type trackingState struct {
	keys     map[string]map[int64]struct{} // key -> ids of the clients that read it
	items    int64                         // ids in keys, summed over keys
	prefixes map[string]*bcastPrefix       // BCAST prefixes of all clients ("" is every key)
	clients  int                           // clients with tracking on
	// pending holds invalidations for the client whose command runs now, sent
	// after its reply (Redis's tracking_pending_keys); nil key is a flush
	pending []*string
	// serving is the blocked client being served now; invalidations for it wait
	// in served and follow its reply
	serving *Client
	served  []string
	// evictEffort grows while trackingLimit cannot get under the limit
	evictEffort int
	// executing is set while a command's handler runs (Redis's
	// CLIENT_EXECUTING_COMMAND): only then do the running client's own
	// invalidations wait for its reply; a key evicted or dropped by the table
	// limit before the command runs is announced before the reply
	executing bool
	// byServer is set while the server deletes a key by itself (expiry,
	// eviction): no client changed it, so a NOLOOP BCAST client hears of it
	// even when it ran the command that found it expired
	byServer bool
}

// bcastPrefix is one BCAST prefix: its clients, and the keys under it changed
// since the last broadcast, each with the client that changed it (NOLOOP).
type bcastPrefix struct {
	clients orderedSet[*Client]
	changed map[string]*Client
}

// clientTracking is one client's tracking mode (nil: tracking off).
type clientTracking struct {
	bcast, optin, optout, noloop bool
	caching                      bool // CLIENT CACHING yes|no for the next command
	brokenRedir                  bool // the redirect client went away
	redirect                     int64
	prefixes                     []string // BCAST prefixes, in byte order
}

// trackingOn reports whether any client tracks keys: one check on hot paths.
func (s *Server) trackingOn() bool { return s.tracking.clients > 0 }

// cmdClientTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST]
// [OPTIN] [OPTOUT] [NOLOOP], with Redis's checks in Redis's order.
func cmdClientTracking(x *Ctx) {
	var redirect int64
	var opt clientTracking
	var prefixes []string
	for j := 3; j < x.nargs(); j++ {
		more := x.nargs() - 1 - j
		switch {
		case x.argIs(j, "redirect") && more > 0:
			j++
			if redirect != 0 {
				x.err(msgTrackingOneRedirect)
				return
			}
			id, ok := x.argInt(j)
			if !ok {
				return
			}
			if x.s.trackingClient(id) == nil {
				x.err(msgTrackingNoRedirect)
				return
			}
			redirect = id
		case x.argIs(j, "bcast"):
			opt.bcast = true
		case x.argIs(j, "optin"):
			opt.optin = true
		case x.argIs(j, "optout"):
			opt.optout = true
		case x.argIs(j, "noloop"):
			opt.noloop = true
		case x.argIs(j, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, x.arg(j))
		default:
			x.err(msgSyntax)
			return
		}
	}
	c := x.c
	switch {
	case x.argIs(2, "off"):
		x.s.disableTracking(c)
		x.ok()
		return
	case !x.argIs(2, "on"):
		x.err(msgSyntax)
		return
	}
	cur := c.tracking
	switch {
	case !opt.bcast && len(prefixes) > 0:
		x.err(msgTrackingPrefixNeedsBcast)
	case cur != nil && cur.bcast != opt.bcast:
		x.err(msgTrackingSwitchBcast)
	case opt.bcast && (opt.optin || opt.optout):
		x.err(msgTrackingBcastOpt)
	case opt.optin && opt.optout:
		x.err(msgTrackingOptinOptout)
	case cur != nil && (opt.optin && cur.optout || opt.optout && cur.optin):
		x.err(msgTrackingSwitchOpt)
	case opt.bcast && !x.prefixesFree(prefixes):
	default:
		x.s.enableTracking(c, redirect, opt, prefixes)
		x.ok()
	}
}

// prefixesFree checks that no new prefix overlaps one of the client's or another
// new one (one is a prefix of the other), writing Redis's error if one does.
func (x *Ctx) prefixesFree(prefixes []string) bool {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		if x.c.tracking != nil {
			for _, old := range x.c.tracking.prefixes {
				if overlap(p, old) {
					x.w.Errorf("ERR Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client must not overlap.", p, old)
					return false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				x.w.Errorf("ERR Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single client must not overlap.", p, q)
				return false
			}
		}
	}
	return true
}

// enableTracking turns tracking on for c (or changes its options).
func (s *Server) enableTracking(c *Client, redirect int64, opt clientTracking, prefixes []string) {
	t := c.tracking
	if t == nil {
		t = &clientTracking{}
		c.tracking = t
		s.tracking.clients++
	}
	t.brokenRedir, t.bcast, t.optin, t.optout, t.noloop = false, opt.bcast, opt.optin, opt.optout, opt.noloop
	t.redirect = redirect
	if s.tracking.keys == nil {
		s.tracking.keys = make(map[string]map[int64]struct{})
		s.tracking.prefixes = make(map[string]*bcastPrefix)
	}
	if opt.bcast {
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			s.addBcastPrefix(c, p)
		}
	}
	s.pubsubState(c) // invalidations reach c, or its redirect, through an outbox
}

func (s *Server) addBcastPrefix(c *Client, p string) {
	bp := s.tracking.prefixes[p]
	if bp == nil {
		bp = &bcastPrefix{changed: make(map[string]*Client)}
		s.tracking.prefixes[p] = bp
	}
	if bp.clients.add(c) {
		i, _ := slices.BinarySearch(c.tracking.prefixes, p)
		c.tracking.prefixes = slices.Insert(c.tracking.prefixes, i, p)
	}
}

// disableTracking turns tracking off for c (CLIENT TRACKING OFF, RESET, close).
// The keys c read stay in the table until they change, as in Redis.
func (s *Server) disableTracking(c *Client) {
	t := c.tracking
	if t == nil {
		return
	}
	for _, p := range t.prefixes {
		bp := s.tracking.prefixes[p]
		bp.clients.remove(c)
		if bp.clients.len() == 0 {
			delete(s.tracking.prefixes, p)
		}
	}
	c.tracking = nil
	s.tracking.clients--
}

// clientByID finds a connected client.
func (s *Server) clientByID(id int64) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

// trackingClient finds a connected client that is not closing: one that said
// QUIT or was killed is gone for tracking, as Redis has freed it by the time its
// QUIT's OK is read (its connection goroutine forgets it a moment later here).
func (s *Server) trackingClient(id int64) *Client {
	if c := s.clientByID(id); c != nil && !c.closing {
		return c
	}
	return nil
}

// cmdClientCaching is CLIENT CACHING YES|NO.
func cmdClientCaching(x *Ctx) {
	t := x.c.tracking
	switch {
	case t == nil:
		x.err(msgTrackingCachingOff)
	case x.argIs(2, "yes"):
		if !t.optin {
			x.err(msgTrackingCachingYes)
			return
		}
		t.caching = true
		x.ok()
	case x.argIs(2, "no"):
		if !t.optout {
			x.err(msgTrackingCachingNo)
			return
		}
		t.caching = true
		x.ok()
	default:
		x.err(msgSyntax)
	}
}

// cmdClientGetredir is CLIENT GETREDIR: the redirect id, 0 for none, -1 when off.
func cmdClientGetredir(x *Ctx) {
	if x.c.tracking == nil {
		x.w.Int(-1)
		return
	}
	x.w.Int(x.c.tracking.redirect)
}

// cmdClientTrackinginfo is CLIENT TRACKINGINFO: flags (a set), redirect, prefixes.
func cmdClientTrackinginfo(x *Ctx) {
	t := x.c.tracking
	flags := []string{"off"}
	redirect := int64(-1)
	var prefixes []string
	if t != nil {
		flags[0], redirect, prefixes = "on", t.redirect, t.prefixes
		if t.bcast {
			flags = append(flags, "bcast")
		}
		if t.optin {
			flags = append(flags, "optin")
			if t.caching {
				flags = append(flags, "caching-yes")
			}
		}
		if t.optout {
			flags = append(flags, "optout")
			if t.caching {
				flags = append(flags, "caching-no")
			}
		}
		if t.noloop {
			flags = append(flags, "noloop")
		}
		if t.brokenRedir {
			flags = append(flags, "broken_redirect")
		}
	}
	x.w.Map(3)
	x.w.BulkString("flags")
	x.w.Set(len(flags))
	for _, f := range flags {
		x.w.BulkString(f)
	}
	x.w.BulkString("redirect")
	x.w.Int(redirect)
	x.w.BulkString("prefixes")
	x.w.BulkStrings(prefixes)
}

// trackingAfterCommand runs after each top-level command of a tracking client
// (or of any client while some client tracks): a CLIENT CACHING choice lasts
// for one command (or one transaction).
func (s *Server) trackingAfterCommand(c *Client, cmd string) {
	if t := c.tracking; t != nil && c.multi == nil && cmd != "client" && !strings.HasPrefix(cmd, "client|") {
		t.caching = false
	}
}

// trackingRemember records that the client of a read-only command read its keys.
// A read-only command a script calls makes its caller remember the keys the
// script declared (EVAL's, FCALL's), as Redis does.
func (s *Server) trackingRemember(x *Ctx) {
	switch x.cmd.name {
	case "eval_ro", "evalsha_ro", "fcall_ro":
		return // the commands they call count instead
	}
	if x.inScript && s.lua != nil && s.lua.caller != nil {
		x = s.lua.caller
	}
	caller := x.c
	t := caller.tracking
	if t == nil || t.bcast || (t.optin && !t.caching) || (t.optout && t.caching) {
		return
	}
	for _, k := range commandKeys(x.cmd, x.args) {
		ids := s.tracking.keys[string(k)]
		if ids == nil {
			ids = make(map[int64]struct{})
			s.tracking.keys[string(k)] = ids
		}
		if _, ok := ids[caller.id]; !ok {
			ids[caller.id] = struct{}{}
			s.tracking.items++
		}
	}
}

// commandKeys are the key arguments of a command line (COMMAND GETKEYS's).
func commandKeys(cmd *command, args [][]byte) [][]byte {
	if spec, ok := keynumSpecs[cmd.name]; ok {
		return spec.keys(args)
	}
	if cmd.firstKey == 0 {
		return nil
	}
	return cmd.keys(args)
}

// trackingInvalidate is called by DB.touch for every changed key: BCAST
// prefixes collect it, and every client that read it is told, once.
func (s *Server) trackingInvalidate(key string) {
	current := s.runningClient
	changer := current
	if s.tracking.byServer {
		changer = nil
	}
	for p, bp := range s.tracking.prefixes {
		if strings.HasPrefix(key, p) {
			bp.changed[key] = changer
		}
	}
	ids := s.tracking.keys[key]
	if ids == nil {
		return
	}
	delete(s.tracking.keys, key)
	s.tracking.items -= int64(len(ids))
	for _, id := range sortedIDs(ids) {
		target := s.trackingClient(id)
		if target == nil || target.tracking == nil || target.tracking.bcast {
			continue
		}
		switch {
		case target == current && target.tracking.noloop:
			// not told of its own changes (nor of keys that expire or are
			// evicted while it runs a command: Redis checks current_client)
		case target == s.tracking.serving:
			if !target.tracking.noloop {
				s.tracking.served = append(s.tracking.served, key)
			}
		case target == current && s.tracking.executing:
			k := key
			s.tracking.pending = append(s.tracking.pending, &k)
		default:
			s.sendInvalidation(target, appendKeysArray(nil, []string{key}), nil)
		}
	}
}

func sortedIDs(ids map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// appendKeysArray appends the RESP array of keys an invalidation carries.
func appendKeysArray(b []byte, keys []string) []byte {
	b = redcon.AppendArray(b, len(keys))
	for _, k := range keys {
		b = redcon.AppendBulkString(b, k)
	}
	return b
}

// trackingFlushServed appends the invalidations meant for a blocked client just
// served to its reply, after it.
func (s *Server) trackingFlushServed(c *Client) {
	keys := s.tracking.served
	s.tracking.served = nil
	for _, k := range keys {
		s.sendInvalidation(c, appendKeysArray(nil, []string{k}), &c.blockOut)
	}
}

// trackingFlushPending sends the invalidations meant for the client that just
// ran a command, after that command's reply. Runs at the end of each command of
// a batch (a transaction is one command).
func (s *Server) trackingFlushPending(c *Client) {
	pending := s.tracking.pending
	s.tracking.pending = nil
	if c.tracking == nil {
		return
	}
	for _, k := range pending {
		if k == nil {
			s.sendInvalidation(c, nullFor(c), nil)
		} else {
			s.sendInvalidation(c, appendKeysArray(nil, []string{*k}), nil)
		}
	}
}

// nullFor is a null in c's protocol (a flush invalidates everything).
func nullFor(c *Client) []byte {
	if c.resp == 3 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

// trackingFlushed is FLUSHALL's and FLUSHDB's: every tracking client hears a
// null invalidation and the table empties.
func (s *Server) trackingFlushed() {
	if s.tracking.clients > 0 {
		s.mu.Lock()
		clients := make([]*Client, 0, len(s.clients))
		for _, c := range s.clients {
			if c.tracking != nil {
				clients = append(clients, c)
			}
		}
		s.mu.Unlock()
		sortClients(clients)
		for _, c := range clients {
			if c == s.runningClient {
				s.tracking.pending = append(s.tracking.pending, nil)
				continue
			}
			s.sendInvalidation(c, nullFor(c), nil)
		}
	}
	if s.tracking.keys != nil {
		s.tracking.keys = make(map[string]map[int64]struct{})
		s.tracking.items = 0
	}
}

// sendInvalidation sends payload (an array of keys, or a null) to c's redirect
// client, or to c itself, as Redis's sendTrackingMessage: a push in RESP3, a
// message on __redis__:invalidate to a subscribed RESP2 redirect, nothing to a
// RESP2 client otherwise. A redirect that went away makes c's tracking broken
// (and a RESP3 c hears of it). A message for c itself goes to out when set.
func (s *Server) sendInvalidation(c *Client, payload []byte, out *Writer) {
	target := c
	redirected := false
	if id := c.tracking.redirect; id != 0 {
		target = s.trackingClient(id)
		if target == nil {
			c.tracking.brokenRedir = true
			if c.resp == 3 {
				msg := appendPushHeader(nil, 2, true)
				msg = redcon.AppendBulkString(msg, "tracking-redir-broken")
				msg = redcon.AppendInt(msg, id)
				s.pushTo(c, msg)
			}
			return
		}
		redirected = true
	}
	var msg []byte
	switch {
	case target.resp == 3:
		msg = redcon.AppendBulkString(appendPushHeader(nil, 2, true), "invalidate")
	case redirected && target.isSubscriber():
		msg = redcon.AppendBulkString(redcon.AppendBulkString(redcon.AppendArray(nil, 3), "message"), trackingChannel)
	default:
		return
	}
	msg = append(msg, payload...)
	if target == c && out != nil {
		out.Raw(msg)
		return
	}
	s.pubsubState(target)
	s.pushTo(target, msg)
}

// trackingBroadcast sends each BCAST prefix's changed keys to its clients (a
// NOLOOP client does not hear of its own changes), after a batch, as Redis does
// before it sleeps.
func (s *Server) trackingBroadcast() {
	var ready []string // prefixes with changed keys, sent in byte order as Redis's
	for p, bp := range s.tracking.prefixes {
		if len(bp.changed) > 0 {
			ready = append(ready, p)
		}
	}
	sort.Strings(ready)
	for _, p := range ready {
		bp := s.tracking.prefixes[p]
		keys := make([]string, 0, len(bp.changed))
		for k := range bp.changed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		all := appendKeysArray(nil, keys)
		for _, c := range bp.clients.items {
			if !c.tracking.noloop {
				s.sendInvalidation(c, all, nil)
				continue
			}
			var mine []string
			for _, k := range keys {
				if bp.changed[k] != c {
					mine = append(mine, k)
				}
			}
			if len(mine) > 0 {
				s.sendInvalidation(c, appendKeysArray(nil, mine), nil)
			}
		}
		bp.changed = make(map[string]*Client)
	}
}

// trackingLimit invalidates keys at random while the table holds more than
// tracking-table-max-keys (0: no limit), as Redis's trackingLimitUsedSlots.
// Runs before each command while some client tracks.
func (s *Server) trackingLimit() {
	max := s.cfg.trackingTableMaxKeys()
	if max == 0 || int64(len(s.tracking.keys)) <= max {
		s.tracking.evictEffort = 0
		return
	}
	effort := 100 * (s.tracking.evictEffort + 1)
	for key := range s.tracking.keys { // no command runs now: sent at once
		if effort == 0 {
			break
		}
		effort--
		s.trackingInvalidate(key)
		if int64(len(s.tracking.keys)) <= max {
			s.tracking.evictEffort = 0
			return
		}
	}
	s.tracking.evictEffort++
}

// trackingInfoClients is INFO clients' tracking_clients.
func (s *Server) trackingInfoClients() [][2]string {
	return [][2]string{{"tracking_clients", strconv.Itoa(s.tracking.clients)}}
}

// trackingInfoStats is INFO stats' tracking lines.
func (s *Server) trackingInfoStats() [][2]string {
	return [][2]string{
		{"tracking_total_keys", strconv.Itoa(len(s.tracking.keys))},
		{"tracking_total_items", strconv.FormatInt(s.tracking.items, 10)},
		{"tracking_total_prefixes", strconv.Itoa(len(s.tracking.prefixes))},
	}
}

// removeByServer is DB.remove for a key the server deletes by itself (expired,
// evicted): as Redis's signalModifiedKey(NULL, ...), no client changed it.
func (db *DB) removeByServer(key string) {
	t := &db.s.tracking
	prev := t.byServer
	t.byServer = true
	db.remove(key)
	t.byServer = prev
}
