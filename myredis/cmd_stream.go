package myredis

import (
	"strconv"
	"strings"
	"time"
)

// commandsStream registers the stream commands. Every handler runs on the
// executor goroutine and checks its arguments in the order Redis 7.0 checks
// them, so the first error is Redis's. The value type is stream (stream.go).
//
// XREAD and XREADGROUP with BLOCK park the client on the executor's wait lists;
// servesXread tells the machinery when a change to a key can answer one (new
// entries past its ID, or for XREADGROUP a group or key that went away), and the
// command then runs again against that key only.
//
// Propagation follows Redis: XADD and XTRIM are recorded with the ID they
// generated and an exact trim; XREADGROUP, XCLAIM and XAUTOCLAIM are recorded as
// the XCLAIM ... FORCE JUSTID commands (and XGROUP SETID / CREATECONSUMER) that
// recreate their effect, never as themselves.
func commandsStream() []*command {
	return []*command{
		{name: "xadd", arity: -5, flags: flagWrite, fn: cmdXadd, firstKey: 1, lastKey: 1},
		{name: "xrange", arity: -4, flags: flagReadonly, fn: xrangeCmd(false), firstKey: 1, lastKey: 1},
		{name: "xrevrange", arity: -4, flags: flagReadonly, fn: xrangeCmd(true), firstKey: 1, lastKey: 1},
		{name: "xlen", arity: 2, flags: flagReadonly, fn: cmdXlen, firstKey: 1, lastKey: 1},
		{name: "xdel", arity: -3, flags: flagWrite, fn: cmdXdel, firstKey: 1, lastKey: 1},
		{name: "xtrim", arity: -4, flags: flagWrite, fn: cmdXtrim, firstKey: 1, lastKey: 1},
		{name: "xread", arity: -4, flags: flagReadonly | flagBlocking, fn: cmdXread, keysFn: xreadKeys,
			servesArgs: servesXread},
		{name: "xreadgroup", arity: -7, flags: flagWrite | flagBlocking, fn: cmdXread, keysFn: xreadKeys,
			servesArgs: servesXread},
		{name: "xgroup", arity: -2, flags: flagWrite, fn: cmdXgroup, subs: xgroupSubs(), keysFn: xgroupKeys},
		{name: "xsetid", arity: -3, flags: flagWrite, fn: cmdXsetid, firstKey: 1, lastKey: 1},
		{name: "xack", arity: -4, flags: flagWrite, fn: cmdXack, firstKey: 1, lastKey: 1},
		{name: "xpending", arity: -3, flags: flagReadonly, fn: cmdXpending, firstKey: 1, lastKey: 1},
		{name: "xclaim", arity: -6, flags: flagWrite, fn: cmdXclaim, firstKey: 1, lastKey: 1},
		{name: "xautoclaim", arity: -6, flags: flagWrite, fn: cmdXautoclaim, firstKey: 1, lastKey: 1},
		{name: "xinfo", arity: -2, flags: flagReadonly, fn: cmdXinfo, subs: xinfoSubs()},
	}
}

func xgroupSubs() map[string]*command {
	subs := subcommands(map[string]int{"create": -5, "setid": -5, "destroy": 4,
		"createconsumer": 5, "delconsumer": 5, "help": 2})
	for name, c := range subs {
		if name != "help" {
			c.firstKey, c.lastKey = 2, 2
		}
	}
	return subs
}

// xgroupKeys is the key of an XGROUP subcommand (none for HELP).
func xgroupKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	return args[2:3]
}

func xinfoSubs() map[string]*command {
	subs := subcommands(map[string]int{"consumers": 4, "groups": 3, "stream": -3, "help": 2})
	for name, c := range subs {
		if name != "help" {
			c.firstKey, c.lastKey = 2, 2
		}
	}
	return subs
}

// readStream looks key up for a read: nil when missing; ok false (WRONGTYPE
// written) when it holds another type.
func (x *Ctx) readStream(key string) (*stream, bool) { return readValue[*stream](x, key) }

// readGroup looks up key's consumer group name for XPENDING, XCLAIM and
// XAUTOCLAIM; ok is false (and the error written) when the key holds another
// type or the key or the group is missing.
func (x *Ctx) readGroup(key, name string) (*stream, *streamGroup, bool) {
	s, ok := x.readStream(key)
	if !ok {
		return nil, nil, false
	}
	var g *streamGroup
	if s != nil {
		g = s.group(name)
	}
	if g == nil {
		x.err("NOGROUP No such key '" + key + "' or consumer group '" + name + "'")
		return nil, nil, false
	}
	return s, g, true
}

// writeStream is readStream for a command about to change the key.
func (x *Ctx) writeStream(key string) (*stream, bool) { return writeValue[*stream](x, key) }

// streamNodeLimits are stream-node-max-bytes and stream-node-max-entries.
func (x *Ctx) streamNodeLimits() (maxBytes, maxEntries int64) {
	l := x.s.limits()
	return l.StreamNodeBytes, l.StreamNodeEntries
}

// alsoPropagate records a command besides (or instead of) the one running, as
// Redis's alsoPropagate. Free without an AOF.
func (x *Ctx) alsoPropagate(args ...[]byte) {
	if len(x.s.hooks) == 0 {
		return
	}
	if x.s.par.on { // --workers mode: propagation under the lock (workers.go)
		x.s.par.mu.Lock()
		defer x.s.par.mu.Unlock()
	}
	x.s.propagate(x.db, args)
}

// propagateNothing keeps the running command itself out of the AOF (Redis's
// preventCommandPropagation): what it did is recorded by alsoPropagate.
func (x *Ctx) propagateNothing() { x.rewrite = [][]byte{} }

// replyStreamID writes an ID as a bulk string.
func (x *Ctx) replyStreamID(id streamID) {
	var buf [48]byte
	x.w.Bulk(id.appendTo(buf[:0]))
}

// replyEntry writes one entry: [id, [field, value, ...]].
func replyEntry(w *Writer, id streamID, fv [][]byte) {
	var buf [48]byte
	w.Array(2)
	w.Bulk(id.appendTo(buf[:0]))
	w.Array(len(fv))
	for _, b := range fv {
		w.Bulk(b)
	}
}

// parseStrictID reads argument i as an ID with no "-" or "+", writing Redis's
// error when it is not one.
func (x *Ctx) parseStrictID(i int, missingSeq uint64) (streamID, bool) {
	id, _, ok := parseStreamID(x.args[i], missingSeq, true, false)
	if !ok {
		x.err(msgStreamBadID)
	}
	return id, ok
}

// parseIntervalID reads a range bound: an ID, "-", "+", or "(" and an ID (an
// exclusive bound, moved by one: start up, end down).
func (x *Ctx) parseIntervalID(arg []byte, missingSeq uint64, isEnd bool) (streamID, bool) {
	exclusive := len(arg) > 1 && arg[0] == '('
	var id streamID
	var ok bool
	if exclusive {
		id, _, ok = parseStreamID(arg[1:], missingSeq, true, false)
	} else {
		id, _, ok = parseStreamID(arg, missingSeq, false, false)
	}
	if !ok {
		x.err(msgStreamBadID)
		return id, false
	}
	if !exclusive {
		return id, true
	}
	if isEnd {
		if id, ok = id.decr(); !ok {
			x.err(msgStreamBadEnd)
		}
		return id, ok
	}
	if id, ok = id.incr(); !ok {
		x.err(msgStreamBadStart)
	}
	return id, ok
}

// ---- XADD, XTRIM ----

// addArgs are XADD's parsed options.
type addArgs struct {
	trimArgs
	id         streamID
	idGiven    bool
	seqGiven   bool
	noMkstream bool
	idAt       int
}

// parseAddTrim reads the options of XADD (xadd) or XTRIM from argument 2 on,
// as streamParseAddOrTrimArgsOrReply.
func (x *Ctx) parseAddTrim(xadd bool) (a addArgs, ok bool) {
	limitGiven := false
	i := 2
	for ; i < x.nargs(); i++ {
		more := x.nargs() - 1 - i
		opt := x.args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			a.idAt = i
			return a, x.finishTrimArgs(&a, xadd, limitGiven)
		case x.argIs(i, "maxlen") && more > 0, x.argIs(i, "minid") && more > 0:
			if a.strategy != trimNone {
				x.err(msgStreamTrimBoth)
				return a, false
			}
			maxlen := x.argIs(i, "maxlen")
			a.approx = false
			if next := x.args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.approx = next[0] == '~'
				i++
			}
			if maxlen {
				n, ok := x.argInt(i + 1)
				if !ok {
					return a, false
				}
				if n < 0 {
					x.err(msgStreamMaxlenNeg)
					return a, false
				}
				a.maxlen, a.strategy = n, trimMaxlen
			} else {
				id, ok := x.parseStrictID(i+1, 0)
				if !ok {
					return a, false
				}
				a.minID, a.strategy = id, trimMinID
			}
			i++
			a.argAt = i
		case x.argIs(i, "limit") && more > 0:
			n, ok := x.argInt(i + 1)
			if !ok {
				return a, false
			}
			if n < 0 {
				x.err(msgStreamLimitNeg)
				return a, false
			}
			a.limit, limitGiven = n, true
			i++
		case xadd && x.argIs(i, "nomkstream"):
			a.noMkstream = true
		case xadd:
			id, seqGiven, ok := parseStreamID(opt, 0, true, true)
			if !ok {
				x.err(msgStreamBadID)
				return a, false
			}
			a.id, a.seqGiven, a.idGiven, a.idAt = id, seqGiven, true, i
			return a, x.finishTrimArgs(&a, xadd, limitGiven)
		default:
			x.err(msgSyntax)
			return a, false
		}
	}
	a.idAt = i
	return a, x.finishTrimArgs(&a, xadd, limitGiven)
}

// finishTrimArgs checks LIMIT against the strategy and sets its default.
func (x *Ctx) finishTrimArgs(a *addArgs, xadd, limitGiven bool) bool {
	if a.limit != 0 && a.strategy == trimNone {
		x.err(msgStreamLimitNoTrim)
		return false
	}
	if !xadd && a.strategy == trimNone {
		x.err(msgStreamXtrimNoTrim)
		return false
	}
	if x.s.loading { // from the AOF: the recorded trim is exact
		a.limit = 0
		return true
	}
	switch {
	case limitGiven && !a.approx:
		x.err(msgStreamLimitNoApprox)
		return false
	case !limitGiven && a.approx:
		_, maxEntries := x.streamNodeLimits()
		a.limit = 100 * maxEntries
		if a.limit <= 0 {
			a.limit = 10000
		}
		a.limit = min(a.limit, 1000000)
	case !limitGiven:
		a.limit = 0
	}
	return true
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
func cmdXadd(x *Ctx) {
	a, ok := x.parseAddTrim(true)
	if !ok {
		return
	}
	fieldAt := a.idAt + 1
	if n := x.nargs() - fieldAt; n < 2 || n%2 == 1 {
		x.err(errArity("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.isZero() {
		x.err(msgStreamXaddZero)
		return
	}
	key := x.arg(1)
	s, ok := x.writeStream(key)
	if !ok {
		return
	}
	if s == nil {
		if a.noMkstream {
			x.w.Null()
			return
		}
		s = newStream()
		x.db.add(key, s)
	}
	if s.lastID == maxStreamID {
		x.err(msgStreamExhausted)
		return
	}
	id, errMsg := xaddID(s, &a, uint64(x.nowMs()))
	if errMsg != "" {
		x.err(errMsg)
		return
	}
	fv := x.args[fieldAt:]
	total := 0
	for _, b := range fv {
		total += len(b)
	}
	if total > streamListpackMax {
		x.err(msgStreamTooLarge)
		return
	}
	maxBytes, maxEntries := x.streamNodeLimits()
	s.add(id, fv, maxBytes, maxEntries)
	x.replyStreamID(id)
	x.db.modified(key)
	x.notify(notifyStream, "xadd", key)
	x.dirty(1)
	if a.strategy != trimNone && s.trim(&a.trimArgs) > 0 {
		x.notify(notifyStream, "xtrim", key)
	}
	x.rewriteAddTrim(s, &a, id)
}

// xaddID is the ID of a new entry: given, with an automatic sequence, or from
// the clock; or Redis's error when it is not above the stream's last ID. (An
// automatic sequence past the last one fails in Redis without setting errno, so
// its reply is the other error, about sizes: kept as Redis 7.0.15 answers it.)
func xaddID(s *stream, a *addArgs, now uint64) (streamID, string) {
	var id streamID
	switch {
	case !a.idGiven:
		id = s.nextID(now)
	case a.seqGiven:
		id = a.id
	case s.lastID.ms == a.id.ms:
		if s.lastID.seq == ^uint64(0) {
			return id, msgStreamTooLarge
		}
		id = streamID{s.lastID.ms, s.lastID.seq + 1}
	default:
		id = a.id
	}
	if !s.lastID.less(id) {
		return id, msgStreamXaddSmaller
	}
	return id, ""
}

// rewriteAddTrim records XADD (id set) or XTRIM as Redis propagates them: the
// generated ID in place of * or ms-*, and an approximate trim as the exact one
// it turned out to be.
func (x *Ctx) rewriteAddTrim(s *stream, a *addArgs, id streamID) {
	if len(x.s.hooks) == 0 {
		return
	}
	args := append([][]byte(nil), x.args...)
	if a.approx {
		args[a.argAt-1] = []byte("=")
		if a.strategy == trimMaxlen {
			args[a.argAt] = strconv.AppendUint(nil, s.length, 10)
		} else {
			args[a.argAt] = s.edge(true, true).bytes()
		}
	}
	if id != (streamID{}) && (!a.idGiven || !a.seqGiven) {
		args[a.idAt] = id.bytes()
	}
	x.rewrite = args
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func cmdXtrim(x *Ctx) {
	a, ok := x.parseAddTrim(false)
	if !ok {
		return
	}
	key := x.arg(1)
	s, ok := x.writeStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.w.Int(0)
		return
	}
	n := s.trim(&a.trimArgs)
	if n > 0 {
		x.notify(notifyStream, "xtrim", key)
		x.db.modified(key)
		x.dirty(int(n))
		x.rewriteAddTrim(s, &a, streamID{})
	}
	x.w.Int(n)
}

// ---- XRANGE, XREVRANGE, XLEN, XDEL ----

// xrangeCmd builds XRANGE key start end [COUNT n] and XREVRANGE key end start [COUNT n].
func xrangeCmd(rev bool) func(*Ctx) {
	return func(x *Ctx) {
		startArg, endArg := x.args[2], x.args[3]
		if rev {
			startArg, endArg = endArg, startArg
		}
		start, ok := x.parseIntervalID(startArg, 0, false)
		if !ok {
			return
		}
		end, ok := x.parseIntervalID(endArg, ^uint64(0), true)
		if !ok {
			return
		}
		count := int64(-1)
		for j := 4; j < x.nargs(); j++ {
			if !x.argIs(j, "count") || j+1 >= x.nargs() {
				x.err(msgSyntax)
				return
			}
			n, ok := x.argInt(j + 1)
			if !ok {
				return
			}
			count = max(n, 0)
			j++
		}
		s, ok := x.readStream(x.arg(1))
		if !ok {
			return
		}
		if s == nil {
			x.w.Array(0)
			return
		}
		if count == 0 {
			x.w.NullArray()
			return
		}
		replyRange(x.w, s, start, end, count, rev)
	}
}

// replyRange writes the entries from start to end, at most count (< 0: all).
func replyRange(w *Writer, s *stream, start, end streamID, count int64, rev bool) int {
	var body Writer
	body.SetRESP3(w.RESP3())
	n := 0
	s.scan(start, end, rev, func(id streamID, fv [][]byte) bool {
		replyEntry(&body, id, fv)
		n++
		return count < 0 || int64(n) < count
	})
	w.Array(n)
	w.Raw(body.Bytes())
	return n
}

// XLEN key
func cmdXlen(x *Ctx) {
	s, ok := x.readStream(x.arg(1))
	if !ok {
		return
	}
	if s == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(s.length))
}

// XDEL key id [id ...]
func cmdXdel(x *Ctx) {
	key := x.arg(1)
	s, ok := x.writeStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.w.Int(0)
		return
	}
	ids := make([]streamID, 0, x.nargs()-2)
	for i := 2; i < x.nargs(); i++ {
		id, ok := x.parseStrictID(i, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	deleted, first := 0, false
	for _, id := range ids {
		if !s.remove(id) {
			continue
		}
		if id == s.firstID {
			first = true
		}
		if s.maxDeletedID.less(id) {
			s.maxDeletedID = id
		}
		deleted++
	}
	if deleted > 0 {
		if s.length == 0 {
			s.firstID = streamID{}
		} else if first {
			s.firstID = s.edge(true, false)
		}
		x.db.modified(key)
		x.notify(notifyStream, "xdel", key)
		x.dirty(deleted)
	}
	x.w.Int(int64(deleted))
}

// ---- XSETID ----

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
func cmdXsetid(x *Ctx) {
	id, ok := x.parseStrictID(2, 0)
	if !ok {
		return
	}
	added := int64(-1)
	var maxDel streamID
	for i := 3; i < x.nargs(); i += 2 {
		more := x.nargs() - 1 - i
		switch {
		case x.argIs(i, "entriesadded") && more > 0:
			n, ok := x.argInt(i + 1)
			if !ok {
				return
			}
			if n < 0 {
				x.err(msgStreamEntriesAddedNeg)
				return
			}
			added = n
		case x.argIs(i, "maxdeletedid") && more > 0:
			if maxDel, ok = x.parseStrictID(i+1, 0); !ok {
				return
			}
			if id.less(maxDel) {
				x.err(msgStreamSetidBelowMaxDel)
				return
			}
		default:
			x.err(msgSyntax)
			return
		}
	}
	key := x.arg(1)
	s, ok := x.writeStream(key)
	if !ok {
		return
	}
	if s == nil {
		x.err(msgNoSuchKey)
		return
	}
	if s.length > 0 {
		if id.less(s.lastValid()) {
			x.err(msgStreamSetidSmaller)
			return
		}
		if added != -1 && s.length > uint64(added) {
			x.err(msgStreamSetidAddedSmall)
			return
		}
	}
	s.lastID = id
	if added != -1 {
		s.entriesAdded = uint64(added)
	}
	if !maxDel.isZero() {
		s.maxDeletedID = maxDel
	}
	x.db.modified(key)
	x.dirty(1)
	x.ok()
	x.notify(notifyStream, "xsetid", key)
}

// ---- XREAD, XREADGROUP ----

// xreadArgs are XREAD's and XREADGROUP's parsed arguments.
type xreadArgs struct {
	block     bool
	timeout   time.Duration
	count     int64
	group     []byte
	consumer  []byte
	noack     bool
	streamsAt int // the index of the first key
	n         int // the number of keys
}

// xreadDefaultBlockedCount is the COUNT of a blocked read that gave none.
const xreadDefaultBlockedCount = 1000

// parseXread reads the options up to STREAMS.
func (x *Ctx) parseXread() (a xreadArgs, ok bool) {
	group := x.cmd.name == "xreadgroup"
	for i := 1; i < x.nargs(); i++ {
		more := x.nargs() - i - 1
		switch {
		case x.argIs(i, "block") && more > 0:
			if x.inScript {
				x.err("ERR " + string(x.args[0]) + " command is not allowed with BLOCK option from scripts")
				return a, false
			}
			i++
			ms, ok := parseRedisInt(x.args[i])
			if !ok {
				x.err(msgTimeoutNotInt)
				return a, false
			}
			if ms < 0 {
				x.err(msgTimeoutNegative)
				return a, false
			}
			a.block, a.timeout = true, time.Duration(ms)*time.Millisecond
		case x.argIs(i, "count") && more > 0:
			i++
			n, ok := x.argInt(i)
			if !ok {
				return a, false
			}
			a.count = max(n, 0)
		case x.argIs(i, "streams") && more > 0:
			rest := x.nargs() - i - 1
			if rest%2 != 0 {
				x.err(msgXreadUnbalanced)
				return a, false
			}
			a.streamsAt, a.n = i+1, rest/2
			i = x.nargs()
		case x.argIs(i, "group") && more >= 2:
			if !group {
				x.err(msgXreadGroupOption)
				return a, false
			}
			a.group, a.consumer = x.args[i+1], x.args[i+2]
			i += 2
		case x.argIs(i, "noack"):
			if !group {
				x.err(msgXreadNoackOption)
				return a, false
			}
			a.noack = true
		default:
			x.err(msgSyntax)
			return a, false
		}
	}
	if a.streamsAt == 0 {
		x.err(msgSyntax)
		return a, false
	}
	if group && a.group == nil {
		x.err(msgXreadgroupNoGroup)
		return a, false
	}
	return a, true
}

// xreadKeys finds the keys of XREAD and XREADGROUP: the first half of what
// follows STREAMS.
func xreadKeys(args [][]byte) [][]byte {
	for i := 1; i < len(args); i++ {
		if strings.EqualFold(string(args[i]), "streams") {
			rest := len(args) - i - 1
			if rest == 0 || rest%2 != 0 {
				return nil
			}
			return args[i+1 : i+1+rest/2]
		}
	}
	return nil
}

// xreadTarget is one key of a read: the ID its entries must be above (">" as
// the maximum ID) and, for XREADGROUP, the group.
type xreadTarget struct {
	key   string
	s     *stream
	after streamID
	g     *streamGroup
}

// XREAD [COUNT n] [BLOCK ms] STREAMS key ... id ...
// XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...
func cmdXread(x *Ctx) {
	a, ok := x.parseXread()
	if !ok {
		return
	}
	if x.readyKey != "" { // a blocked read being served
		x.serveBlockedXread(&a)
		return
	}
	targets, ok := x.resolveXread(&a)
	if !ok {
		return
	}
	x.propagateNothing()
	var body Writer
	body.SetRESP3(x.w.RESP3())
	served := 0
	for i := range targets {
		t := &targets[i]
		s, _ := x.readStream(t.key)
		if s == nil {
			continue
		}
		t.s = s
		history := false
		if a.group != nil {
			if t.after != maxStreamID {
				history = true
			} else if s.length == 0 || !t.g.lastID.less(s.lastValid()) {
				continue
			} else {
				t.after = t.g.lastID
			}
		} else if s.length == 0 || !t.after.less(s.lastValid()) {
			continue
		}
		served++
		if !body.RESP3() {
			body.Array(2)
		}
		body.BulkString(t.key)
		x.serveXread(&body, &a, t, a.count, history)
	}
	if served > 0 {
		if x.w.RESP3() {
			x.w.Map(served)
		} else {
			x.w.Array(served)
		}
		x.w.Raw(body.Bytes())
		return
	}
	if !a.block || !x.canBlock() {
		x.w.NullArray()
		return
	}
	x.blockXread(&a, targets)
}

// resolveXread looks up every key and parses every ID ("$": the stream's last
// ID now; ">": the maximum ID), checking the groups of XREADGROUP.
func (x *Ctx) resolveXread(a *xreadArgs) ([]xreadTarget, bool) {
	targets := make([]xreadTarget, a.n)
	for i := range targets {
		key := x.arg(a.streamsAt + i)
		idArg := x.args[a.streamsAt+a.n+i]
		s, ok := x.readStream(key)
		if !ok {
			return nil, false
		}
		t := &targets[i]
		t.key = key
		if a.group != nil {
			if s != nil {
				t.g = s.group(string(a.group))
			}
			if t.g == nil {
				x.err("NOGROUP No such key '" + key + "' or consumer group '" + string(a.group) +
					"' in XREADGROUP with GROUP option")
				return nil, false
			}
		}
		switch string(idArg) {
		case "$":
			if a.group != nil {
				x.err(msgXreadgroupDollar)
				return nil, false
			}
			if s != nil {
				t.after = s.lastID
			}
			continue
		case ">":
			if a.group == nil {
				x.err(msgXreadGreater)
				return nil, false
			}
			t.after = maxStreamID
			continue
		}
		id, _, ok := parseStreamID(idArg, 0, true, false)
		if !ok {
			x.err(msgStreamBadID)
			return nil, false
		}
		t.after = id
	}
	return targets, true
}

// serveXread writes one key's entries for a read: new entries (delivered to
// the group's consumer, unless NOACK, in its PEL), or with history the
// consumer's own pending entries from the given ID.
func (x *Ctx) serveXread(w *Writer, a *xreadArgs, t *xreadTarget, count int64, history bool) {
	start, _ := t.after.incr()
	if t.g == nil {
		replyRange(w, t.s, start, maxStreamID, countOrAll(count), false)
		return
	}
	now := x.nowMs()
	c := t.g.consumers[string(a.consumer)]
	if c == nil {
		c = t.g.createConsumer(string(a.consumer), now)
		x.dirty(1)
		x.notify(notifyStream, "xgroup-createconsumer", t.key)
		if a.noack {
			x.alsoPropagate([]byte("XGROUP"), []byte("CREATECONSUMER"), []byte(t.key), a.group, a.consumer)
		}
	} else {
		c.seenTime = now
	}
	if history {
		x.replyConsumerHistory(w, t.s, c, start, count)
	} else {
		x.deliver(w, t, c, start, count, a.noack, a.group)
	}
	x.dirty(1)
	x.db.modified(t.key)
}

func countOrAll(count int64) int64 {
	if count == 0 {
		return -1
	}
	return count
}

// deliver writes the entries after the group's last ID and records them as
// delivered (streamReplyWithRange with a group).
func (x *Ctx) deliver(w *Writer, t *xreadTarget, c *streamConsumer, start streamID, count int64,
	noack bool, group []byte) {
	s, g := t.s, t.g
	now := x.nowMs()
	var body Writer
	body.SetRESP3(w.RESP3())
	n := 0
	moved := false
	s.scan(start, maxStreamID, false, func(id streamID, fv [][]byte) bool {
		if g.lastID.less(id) {
			if g.entriesRead != -1 && !s.rangeHasTombstones(id, maxStreamID) {
				g.entriesRead++
			} else if s.entriesAdded > 0 {
				g.entriesRead = s.estimateEntriesRead(id)
			}
			g.lastID = id
			moved = moved || noack
		}
		replyEntry(&body, id, fv)
		if !noack {
			p := g.pending(id)
			if p == nil {
				p = &pendingEntry{id: id}
				g.pel.Set(p)
			} else if p.consumer != nil {
				p.consumer.pel.Delete(p)
			}
			p.consumer, p.deliveryTime, p.deliveryCount = c, now, 1
			c.pel.Set(p)
			x.propagateClaim(t.key, group, g, p)
		}
		n++
		return count <= 0 || int64(n) < count
	})
	if moved {
		x.propagateGroupID(t.key, group, g)
	}
	w.Array(n)
	w.Raw(body.Bytes())
}

// replyConsumerHistory writes the consumer's pending entries from start on (an
// entry deleted meanwhile as [id, nil]) and counts a delivery for each.
func (x *Ctx) replyConsumerHistory(w *Writer, s *stream, c *streamConsumer, start streamID, count int64) {
	var body Writer
	body.SetRESP3(w.RESP3())
	n := 0
	now := x.nowMs()
	c.pel.Ascend(&pendingEntry{id: start}, func(p *pendingEntry) bool {
		if count > 0 && int64(n) >= count {
			return false
		}
		if fv, ok := s.get(p.id); ok {
			replyEntry(&body, p.id, fv)
			p.deliveryTime = now
			p.deliveryCount++
		} else {
			body.Array(2)
			body.Bulk(p.id.bytes())
			body.NullArray()
		}
		n++
		return true
	})
	w.Array(n)
	w.Raw(body.Bytes())
}

// propagateClaim records a PEL entry as the XCLAIM that recreates it.
func (x *Ctx) propagateClaim(key string, group []byte, g *streamGroup, p *pendingEntry) {
	if len(x.s.hooks) == 0 {
		return
	}
	x.alsoPropagate([]byte("XCLAIM"), []byte(key), group, []byte(p.consumer.name), []byte("0"),
		p.id.bytes(), []byte("TIME"), strconv.AppendInt(nil, p.deliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, p.deliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.lastID.bytes())
}

// propagateGroupID records a group's last ID and read counter.
func (x *Ctx) propagateGroupID(key string, group []byte, g *streamGroup) {
	x.alsoPropagate([]byte("XGROUP"), []byte("SETID"), []byte(key), group, g.lastID.bytes(),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.entriesRead, 10))
}

// blockXread parks the client on the keys. The arguments it will run again
// with have "$" replaced by the ID it stood for now.
func (x *Ctx) blockXread(a *xreadArgs, targets []xreadTarget) {
	args := append([][]byte(nil), x.args...)
	keys := make([]string, 0, len(targets))
	seen := make(map[string]bool, len(targets))
	for i, t := range targets {
		if string(args[a.streamsAt+a.n+i]) == "$" {
			args[a.streamsAt+a.n+i] = t.after.bytes()
		}
		if !seen[t.key] {
			seen[t.key] = true
			keys = append(keys, t.key)
		}
	}
	x.args = args
	x.block(keys, a.timeout)
}

// blockedXreadID is the ID a blocked read waits past on key (its first
// mention), from the arguments it blocked with.
func blockedXreadID(args [][]byte, key string) (streamID, bool) {
	n, at := 0, 0
	for i := 1; i < len(args); i++ {
		if strings.EqualFold(string(args[i]), "streams") {
			at, n = i+1, (len(args)-i-1)/2
			break
		}
	}
	for i := range n {
		if string(args[at+i]) == key {
			arg := args[at+n+i]
			if string(arg) == ">" {
				return maxStreamID, true
			}
			id, _, ok := parseStreamID(arg, 0, true, false)
			return id, ok
		}
	}
	return streamID{}, false
}

// blockedGroupName is the group of a blocked XREADGROUP (nil for XREAD).
func blockedGroupName(args [][]byte) []byte {
	if !strings.EqualFold(string(args[0]), "xreadgroup") {
		return nil
	}
	for i := 1; i+1 < len(args); i++ {
		if strings.EqualFold(string(args[i]), "streams") {
			return nil
		}
		if strings.EqualFold(string(args[i]), "group") {
			return args[i+1]
		}
	}
	return nil
}

// servesXread tells the blocking machinery whether a change to key answers a
// client blocked with args (serveClientsBlockedOnStreamKey): entries past its
// ID or the group's last ID, or, for XREADGROUP, a key or group that is gone
// (answered with an error). Runs on the executor.
func servesXread(db *DB, key string, args [][]byte) bool {
	group := blockedGroupName(args)
	e := db.peek(key)
	var s *stream
	if e != nil {
		s, _ = e.value().(*stream)
	}
	if s == nil {
		return group != nil
	}
	after, ok := blockedXreadID(args, key)
	if !ok {
		return false
	}
	if group != nil {
		g := s.group(string(group))
		if g == nil {
			return true
		}
		after = g.lastID
	}
	return after.less(s.lastID)
}

// signalStreamsGone marks ready every stream key of db that clients block on,
// before the database is emptied: a blocked XREADGROUP is then answered that
// the key no longer exists (Redis's scanDatabaseForDeletedStreams).
func (db *DB) signalStreamsGone() {
	for dk := range db.s.blocking {
		if dk.db != db {
			continue
		}
		if e := db.entry(dk.key); e != nil {
			if _, ok := e.value().(*stream); ok {
				db.s.signalReady(db, dk.key)
			}
		}
	}
}

// serveBlockedXread answers a blocked read from the key that became ready.
func (x *Ctx) serveBlockedXread(a *xreadArgs) {
	key := x.readyKey
	x.propagateNothing()
	e := x.db.peek(key)
	var s *stream
	if e != nil {
		s, _ = e.value().(*stream)
	}
	if s == nil {
		x.err(msgXreadgroupKeyGone)
		return
	}
	t := xreadTarget{key: key, s: s}
	t.after, _ = blockedXreadID(x.args, key)
	if a.group != nil {
		if t.g = s.group(string(a.group)); t.g == nil {
			x.err(msgXreadgroupGroupGone)
			return
		}
		t.after = t.g.lastID
	}
	count := a.count
	if count == 0 {
		count = xreadDefaultBlockedCount
	}
	if x.w.RESP3() {
		x.w.Map(1)
	} else {
		x.w.Array(1)
		x.w.Array(2)
	}
	x.w.BulkString(key)
	x.serveXread(x.w, a, &t, count, false)
}

// ---- XGROUP ----

// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP ...
func cmdXgroup(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	sub := strings.ToLower(x.arg(1))
	if sub == "help" {
		x.help(xgroupHelp)
		return
	}
	mkstream := false
	entriesRead := int64(-1)
	for i := 5; i < x.nargs(); {
		switch {
		case sub == "create" && x.argIs(i, "mkstream"):
			mkstream = true
			i++
		case (sub == "create" || sub == "setid") && x.argIs(i, "entriesread") && i+1 < x.nargs():
			n, ok := x.argInt(i + 1)
			if !ok {
				return
			}
			if n < 0 && n != -1 {
				x.err(msgXgroupEntriesRead)
				return
			}
			entriesRead = n
			i += 2
		default:
			x.err(errSubcommandSyntax(x.args))
			return
		}
	}
	key, name := x.arg(2), x.arg(3)
	s, ok := x.writeStream(key)
	if !ok {
		return
	}
	var g *streamGroup
	if !mkstream {
		if s == nil {
			x.err(msgXgroupNoKey)
			return
		}
		if g = s.group(name); g == nil && (sub == "setid" || sub == "createconsumer" || sub == "delconsumer") {
			x.err("NOGROUP No such consumer group '" + name + "' for key name '" + key + "'")
			return
		}
	}
	switch {
	case sub == "create" && x.nargs() <= 8:
		x.xgroupCreate(key, name, s, entriesRead)
	case sub == "setid" && (x.nargs() == 5 || x.nargs() == 7):
		id := s.lastID
		if x.arg(4) != "$" {
			var ok bool
			if id, _, ok = parseStreamID(x.args[4], 0, false, false); !ok {
				x.err(msgStreamBadID)
				return
			}
		}
		g.lastID, g.entriesRead = id, entriesRead
		x.db.modified(key)
		x.dirty(1)
		x.ok()
		x.notify(notifyStream, "xgroup-setid", key)
	case sub == "destroy" && x.nargs() == 4:
		if g == nil {
			x.w.Int(0)
			return
		}
		delete(s.groups, name)
		x.db.modified(key)
		x.dirty(1)
		x.w.Int(1)
		x.notify(notifyStream, "xgroup-destroy", key)
	case sub == "createconsumer" && x.nargs() == 5:
		if g.createConsumer(x.arg(4), x.nowMs()) == nil {
			x.w.Int(0)
			return
		}
		x.db.modified(key)
		x.dirty(1)
		x.notify(notifyStream, "xgroup-createconsumer", key)
		x.w.Int(1)
	case sub == "delconsumer" && x.nargs() == 5:
		c := g.consumers[x.arg(4)]
		if c == nil {
			x.w.Int(0)
			return
		}
		pending := c.pel.Len()
		g.deleteConsumer(c)
		x.db.modified(key)
		x.dirty(1)
		x.notify(notifyStream, "xgroup-delconsumer", key)
		x.w.Int(int64(pending))
	default:
		x.err(errSubcommandSyntax(x.args))
	}
}

// xgroupCreate is XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n].
func (x *Ctx) xgroupCreate(key, name string, s *stream, entriesRead int64) {
	var id streamID
	if x.arg(4) == "$" {
		if s != nil {
			id = s.lastID
		}
	} else {
		var ok bool
		if id, ok = x.parseStrictID(4, 0); !ok {
			return
		}
	}
	if s == nil {
		s = newStream()
		x.db.add(key, s)
	}
	if s.createGroup(name, id, entriesRead) == nil {
		x.err(msgXgroupBusy)
		return
	}
	x.db.modified(key)
	x.dirty(1)
	x.ok()
	x.notify(notifyStream, "xgroup-create", key)
}

var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

// ---- XACK, XPENDING ----

// XACK key group id [id ...]
func cmdXack(x *Ctx) {
	s, ok := x.readStream(x.arg(1))
	if !ok {
		return
	}
	var g *streamGroup
	if s != nil {
		g = s.group(x.arg(2))
	}
	if g == nil {
		x.w.Int(0)
		return
	}
	ids := make([]streamID, 0, x.nargs()-3)
	for i := 3; i < x.nargs(); i++ {
		id, ok := x.parseStrictID(i, 0)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	acked := 0
	for _, id := range ids {
		if p := g.pending(id); p != nil {
			g.ack(p)
			acked++
		}
	}
	if acked > 0 {
		x.db.modified(x.arg(1))
		x.dirty(acked)
	}
	x.w.Int(int64(acked))
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
func cmdXpending(x *Ctx) {
	n := x.nargs()
	if n != 3 && (n < 6 || n > 9) {
		x.err(msgSyntax)
		return
	}
	var start, end streamID
	var count, minIdle int64
	var consumer []byte
	if n >= 6 {
		at := 3
		if x.argIs(3, "idle") {
			var ok bool
			if minIdle, ok = x.argInt(4); !ok {
				return
			}
			if n < 8 {
				x.err(msgSyntax)
				return
			}
			at += 2
		}
		var ok bool
		if count, ok = x.argInt(at + 2); !ok {
			return
		}
		count = max(count, 0)
		if start, ok = x.parseIntervalID(x.args[at], 0, false); !ok {
			return
		}
		if end, ok = x.parseIntervalID(x.args[at+1], ^uint64(0), true); !ok {
			return
		}
		if at+3 < n {
			consumer = x.args[at+3]
		}
	}
	key, name := x.arg(1), x.arg(2)
	_, g, ok := x.readGroup(key, name)
	if !ok {
		return
	}
	if n == 3 {
		x.xpendingSummary(g)
		return
	}
	pel := g.pel
	if consumer != nil {
		c := g.consumers[string(consumer)]
		if c == nil {
			x.w.Array(0)
			return
		}
		pel = c.pel
	}
	now := x.nowMs()
	var body Writer
	body.SetRESP3(x.w.RESP3())
	rows := 0
	pel.Ascend(&pendingEntry{id: start}, func(p *pendingEntry) bool {
		if count == 0 || end.less(p.id) {
			return false
		}
		if minIdle != 0 && now-p.deliveryTime < minIdle {
			return true
		}
		rows++
		count--
		body.Array(4)
		body.Bulk(p.id.bytes())
		body.BulkString(p.consumer.name)
		body.Int(max(now-p.deliveryTime, 0))
		body.Int(int64(p.deliveryCount))
		return true
	})
	x.w.Array(rows)
	x.w.Raw(body.Bytes())
}

// xpendingSummary is XPENDING key group: the count, the first and last IDs and
// the consumers with pending entries.
func (x *Ctx) xpendingSummary(g *streamGroup) {
	x.w.Array(4)
	x.w.Int(int64(g.pel.Len()))
	if g.pel.Len() == 0 {
		x.w.Null()
		x.w.Null()
		x.w.NullArray()
		return
	}
	first, _ := g.pel.Min()
	last, _ := g.pel.Max()
	x.replyStreamID(first.id)
	x.replyStreamID(last.id)
	var body Writer
	body.SetRESP3(x.w.RESP3())
	rows := 0
	for _, name := range g.consumerNames() {
		c := g.consumers[name]
		if c.pel.Len() == 0 {
			continue
		}
		rows++
		body.Array(2)
		body.BulkString(name)
		body.BulkInt(int64(c.pel.Len()))
	}
	x.w.Array(rows)
	x.w.Raw(body.Bytes())
}

// ---- XCLAIM, XAUTOCLAIM ----

// xclaimOpts are XCLAIM's options.
type xclaimOpts struct {
	minIdle      int64
	retryCount   int64 // -1: not given
	deliveryTime int64 // -1: not given
	force        bool
	justID       bool
	lastID       streamID
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
func cmdXclaim(x *Ctx) {
	key, name := x.arg(1), x.arg(2)
	s, g, ok := x.readGroup(key, name)
	if !ok {
		return
	}
	o := xclaimOpts{retryCount: -1, deliveryTime: -1}
	n, ok := parseRedisInt(x.args[4])
	if !ok {
		x.err(msgXclaimMinIdle)
		return
	}
	o.minIdle = max(n, 0)
	var ids []streamID
	j := 5
	for ; j < x.nargs(); j++ {
		id, _, ok := parseStreamID(x.args[j], 0, true, false)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := x.nowMs()
	if !x.parseXclaimOpts(j, now, &o) {
		return
	}
	propagateLastID := false
	if g.lastID.less(o.lastID) {
		g.lastID = o.lastID
		propagateLastID = true
	}
	switch {
	case o.deliveryTime == -1:
		o.deliveryTime = now
	case o.deliveryTime < 0 || o.deliveryTime > now:
		o.deliveryTime = now
	}
	x.propagateNothing()
	consumerName := x.arg(3)
	var c *streamConsumer
	var body Writer
	body.SetRESP3(x.w.RESP3())
	claimed := 0
	for i, id := range ids {
		p := g.pending(id)
		if !s.has(id) {
			if p != nil { // the entry is gone: so is its PEL entry
				x.propagateClaimArg(key, g, p, x.args[5+i])
				propagateLastID = false
				x.dirty(1)
				g.ack(p)
			}
			continue
		}
		if o.force && p == nil {
			p = &pendingEntry{id: id}
			g.pel.Set(p)
		}
		if p == nil {
			continue
		}
		if p.consumer != nil && o.minIdle > 0 && now-p.deliveryTime < o.minIdle {
			continue
		}
		if c == nil {
			c = x.lookupOrCreateConsumer(g, key, consumerName, now)
		}
		if p.consumer != c {
			if p.consumer != nil {
				p.consumer.pel.Delete(p)
			}
			c.pel.Set(p)
			p.consumer = c
		}
		p.deliveryTime = o.deliveryTime
		if o.retryCount >= 0 {
			p.deliveryCount = uint64(o.retryCount)
		} else if !o.justID {
			p.deliveryCount++
		}
		if o.justID {
			body.Bulk(id.bytes())
		} else {
			fv, _ := s.get(id)
			replyEntry(&body, id, fv)
		}
		claimed++
		x.propagateClaimArg(key, g, p, x.args[5+i])
		propagateLastID = false
		x.dirty(1)
	}
	if propagateLastID {
		x.propagateGroupID(key, []byte(name), g)
		x.dirty(1)
	}
	if x.changed > 0 || propagateLastID {
		x.db.modified(key)
	}
	x.w.Array(claimed)
	x.w.Raw(body.Bytes())
}

// parseXclaimOpts reads XCLAIM's options from argument j on.
func (x *Ctx) parseXclaimOpts(j int, now int64, o *xclaimOpts) bool {
	for ; j < x.nargs(); j++ {
		more := x.nargs() - 1 - j
		switch {
		case x.argIs(j, "force"):
			o.force = true
		case x.argIs(j, "justid"):
			o.justID = true
		case x.argIs(j, "idle") && more > 0:
			j++
			n, ok := parseRedisInt(x.args[j])
			if !ok {
				x.err(msgXclaimIdle)
				return false
			}
			o.deliveryTime = now - n
		case x.argIs(j, "time") && more > 0:
			j++
			n, ok := parseRedisInt(x.args[j])
			if !ok {
				x.err(msgXclaimTime)
				return false
			}
			o.deliveryTime = n
		case x.argIs(j, "retrycount") && more > 0:
			j++
			n, ok := parseRedisInt(x.args[j])
			if !ok {
				x.err(msgXclaimRetry)
				return false
			}
			o.retryCount = n
		case x.argIs(j, "lastid") && more > 0:
			j++
			id, ok := x.parseStrictID(j, 0)
			if !ok {
				return false
			}
			o.lastID = id
		default:
			x.err("ERR Unrecognized XCLAIM option '" + cstring(x.args[j]) + "'")
			return false
		}
	}
	return true
}

// lookupOrCreateConsumer finds a consumer (marking it seen) or creates it.
func (x *Ctx) lookupOrCreateConsumer(g *streamGroup, key, name string, now int64) *streamConsumer {
	if c := g.consumers[name]; c != nil {
		c.seenTime = now
		return c
	}
	x.dirty(1)
	x.notify(notifyStream, "xgroup-createconsumer", key)
	return g.createConsumer(name, now)
}

// propagateClaimArg records p as XCLAIM with the ID as the client wrote it.
func (x *Ctx) propagateClaimArg(key string, g *streamGroup, p *pendingEntry, idArg []byte) {
	if len(x.s.hooks) == 0 {
		return
	}
	consumer := ""
	if p.consumer != nil {
		consumer = p.consumer.name
	}
	x.alsoPropagate([]byte("XCLAIM"), []byte(key), []byte(g.name), []byte(consumer), []byte("0"),
		idArg, []byte("TIME"), strconv.AppendInt(nil, p.deliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, p.deliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.lastID.bytes())
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
func cmdXautoclaim(x *Ctx) {
	n, ok := parseRedisInt(x.args[4])
	if !ok {
		x.err(msgXautoclaimMinIdle)
		return
	}
	minIdle := max(n, 0)
	start, ok := x.parseIntervalID(x.args[5], 0, false)
	if !ok {
		return
	}
	count, justID := int64(100), false
	for j := 6; j < x.nargs(); j++ {
		more := x.nargs() - 1 - j
		switch {
		case x.argIs(j, "count") && more > 0:
			v, ok := parseRedisInt(x.args[j+1])
			const maxCount = (1<<63 - 1) / 10
			if !ok || v < 1 || v > maxCount {
				x.err(msgXautoclaimCount)
				return
			}
			count = v
			j++
		case x.argIs(j, "justid"):
			justID = true
		default:
			x.err(msgSyntax)
			return
		}
	}
	key, name := x.arg(1), x.arg(2)
	s, g, ok := x.readGroup(key, name)
	if !ok {
		return
	}
	x.propagateNothing()
	x.xautoclaim(key, s, g, xautoclaimArgs{minIdle, start, count, justID})
}

type xautoclaimArgs struct {
	minIdle int64
	start   streamID
	count   int64
	justID  bool
}

func (x *Ctx) xautoclaim(key string, s *stream, g *streamGroup, a xautoclaimArgs) {
	now := x.nowMs()
	attempts := a.count * 10
	count := a.count
	var c *streamConsumer
	var deleted []streamID
	var body Writer
	body.SetRESP3(x.w.RESP3())
	claimed := 0
	next := streamID{}
	var visit []*pendingEntry
	g.pel.Ascend(&pendingEntry{id: a.start}, func(p *pendingEntry) bool {
		visit = append(visit, p)
		return int64(len(visit)) <= attempts // one more: the cursor
	})
	i := 0
	for ; i < len(visit) && attempts > 0 && count > 0; i++ {
		attempts--
		p := visit[i]
		if !s.has(p.id) {
			x.propagateClaimArg(key, g, p, p.id.bytes())
			x.dirty(1)
			g.ack(p)
			deleted = append(deleted, p.id)
			count--
			continue
		}
		if a.minIdle > 0 && now-p.deliveryTime < a.minIdle {
			continue
		}
		if c == nil {
			c = x.lookupOrCreateConsumer(g, key, x.arg(3), now)
		}
		if p.consumer != c {
			if p.consumer != nil {
				p.consumer.pel.Delete(p)
			}
			c.pel.Set(p)
			p.consumer = c
		}
		p.deliveryTime = now
		if !a.justID {
			p.deliveryCount++
		}
		if a.justID {
			body.Bulk(p.id.bytes())
		} else {
			fv, _ := s.get(p.id)
			replyEntry(&body, p.id, fv)
		}
		claimed++
		count--
		x.propagateClaimArg(key, g, p, p.id.bytes())
		x.dirty(1)
	}
	if i < len(visit) {
		next = visit[i].id
	}
	if x.changed > 0 {
		x.db.modified(key)
	}
	x.w.Array(3)
	x.replyStreamID(next)
	x.w.Array(claimed)
	x.w.Raw(body.Bytes())
	x.w.Array(len(deleted))
	for _, id := range deleted {
		x.replyStreamID(id)
	}
}

// ---- XINFO ----

// XINFO STREAM key [FULL [COUNT n]] | GROUPS key | CONSUMERS key group | HELP
func cmdXinfo(x *Ctx) {
	if !x.resolveSubcommand() {
		return
	}
	sub := strings.ToLower(x.arg(1))
	if sub == "help" {
		x.help(xinfoHelp)
		return
	}
	s, ok := x.readStream(x.arg(2))
	if !ok {
		return
	}
	if s == nil {
		x.err(msgNoSuchKey)
		return
	}
	switch sub {
	case "consumers":
		x.xinfoConsumers(s)
	case "groups":
		x.xinfoGroups(s)
	case "stream":
		x.xinfoStream(s)
	}
}

var xinfoHelp = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

func (x *Ctx) xinfoConsumers(s *stream) {
	g := s.group(x.arg(3))
	if g == nil {
		x.err("NOGROUP No such consumer group '" + x.arg(3) + "' for key name '" + x.arg(2) + "'")
		return
	}
	now := x.nowMs()
	names := g.consumerNames()
	x.w.Array(len(names))
	for _, name := range names {
		c := g.consumers[name]
		x.w.Map(3)
		x.w.BulkString("name")
		x.w.BulkString(name)
		x.w.BulkString("pending")
		x.w.Int(int64(c.pel.Len()))
		x.w.BulkString("idle")
		x.w.Int(max(now-c.seenTime, 0))
	}
}

func (x *Ctx) xinfoGroups(s *stream) {
	groups := s.sortedGroups()
	x.w.Array(len(groups))
	for _, g := range groups {
		x.w.Map(6)
		x.w.BulkString("name")
		x.w.BulkString(g.name)
		x.w.BulkString("consumers")
		x.w.Int(int64(len(g.consumers)))
		x.w.BulkString("pending")
		x.w.Int(int64(g.pel.Len()))
		x.w.BulkString("last-delivered-id")
		x.replyStreamID(g.lastID)
		x.w.BulkString("entries-read")
		x.replyEntriesRead(g.entriesRead)
		x.w.BulkString("lag")
		x.replyLag(s, g)
	}
}

func (x *Ctx) replyEntriesRead(n int64) {
	if n == -1 {
		x.w.Null()
		return
	}
	x.w.Int(n)
}

func (x *Ctx) replyLag(s *stream, g *streamGroup) {
	if lag, ok := s.lag(g); ok {
		x.w.Int(lag)
		return
	}
	x.w.Null()
}

func (x *Ctx) xinfoStream(s *stream) {
	full, count := false, int64(10)
	switch opts := x.args[3:]; len(opts) {
	case 0:
	case 1, 3:
		if !strings.EqualFold(string(opts[0]), "full") ||
			(len(opts) == 3 && !strings.EqualFold(string(opts[1]), "count")) {
			x.err(errSubcommandSyntax(x.args))
			return
		}
		full = true
		if len(opts) == 3 {
			n, ok := x.argInt(5)
			if !ok {
				return
			}
			if count = n; n < 0 {
				count = 10
			}
		}
	default:
		x.err(errSubcommandSyntax(x.args))
		return
	}
	if full {
		x.w.Map(9)
	} else {
		x.w.Map(10)
	}
	x.w.BulkString("length")
	x.w.Int(int64(s.length))
	x.w.BulkString("radix-tree-keys")
	x.w.Int(int64(s.nodeCount()))
	x.w.BulkString("radix-tree-nodes")
	x.w.Int(int64(s.radixNodes()))
	x.w.BulkString("last-generated-id")
	x.replyStreamID(s.lastID)
	x.w.BulkString("max-deleted-entry-id")
	x.replyStreamID(s.maxDeletedID)
	x.w.BulkString("entries-added")
	x.w.Int(int64(s.entriesAdded))
	x.w.BulkString("recorded-first-entry-id")
	x.replyStreamID(s.firstID)
	if !full {
		x.w.BulkString("groups")
		x.w.Int(int64(len(s.groups)))
		for _, rev := range []bool{false, true} {
			if rev {
				x.w.BulkString("last-entry")
			} else {
				x.w.BulkString("first-entry")
			}
			found := false
			s.scan(streamID{}, maxStreamID, rev, func(id streamID, fv [][]byte) bool {
				replyEntry(x.w, id, fv)
				found = true
				return false
			})
			if !found {
				x.w.Null()
			}
		}
		return
	}
	x.w.BulkString("entries")
	replyRange(x.w, s, streamID{}, maxStreamID, countOrAll(count), false)
	x.w.BulkString("groups")
	groups := s.sortedGroups()
	x.w.Array(len(groups))
	for _, g := range groups {
		x.xinfoFullGroup(s, g, count)
	}
}

func (x *Ctx) xinfoFullGroup(s *stream, g *streamGroup, count int64) {
	x.w.Map(7)
	x.w.BulkString("name")
	x.w.BulkString(g.name)
	x.w.BulkString("last-delivered-id")
	x.replyStreamID(g.lastID)
	x.w.BulkString("entries-read")
	x.replyEntriesRead(g.entriesRead)
	x.w.BulkString("lag")
	x.replyLag(s, g)
	x.w.BulkString("pel-count")
	x.w.Int(int64(g.pel.Len()))
	x.w.BulkString("pending")
	x.replyPEL(g.pel, count, true)
	x.w.BulkString("consumers")
	names := g.consumerNames()
	x.w.Array(len(names))
	for _, name := range names {
		c := g.consumers[name]
		x.w.Map(4)
		x.w.BulkString("name")
		x.w.BulkString(name)
		x.w.BulkString("seen-time")
		x.w.Int(c.seenTime)
		x.w.BulkString("pel-count")
		x.w.Int(int64(c.pel.Len()))
		x.w.BulkString("pending")
		x.replyPEL(c.pel, count, false)
	}
}

// replyPEL writes up to count (0: all) pending entries, with their consumer
// when withConsumer.
func (x *Ctx) replyPEL(pel interface {
	Len() int
	Scan(func(*pendingEntry) bool)
}, count int64, withConsumer bool) {
	n := int64(pel.Len())
	if count > 0 {
		n = min(n, count)
	}
	x.w.Array(int(n))
	i := int64(0)
	pel.Scan(func(p *pendingEntry) bool {
		if i == n {
			return false
		}
		i++
		if withConsumer {
			x.w.Array(4)
			x.replyStreamID(p.id)
			x.w.BulkString(p.consumer.name)
		} else {
			x.w.Array(3)
			x.replyStreamID(p.id)
		}
		x.w.Int(p.deliveryTime)
		x.w.Int(int64(p.deliveryCount))
		return true
	})
}

// radixNodes estimates the nodes of Redis's radix tree of node keys (XINFO's
// radix-tree-nodes): MyRedis keeps a B-tree, so this is the count a radix tree
// of the same 16-byte big-endian keys has.
func (s *stream) radixNodes() int {
	keys := make([][]byte, 0, s.nodes.Len())
	s.nodes.Scan(func(n *streamNode) bool {
		var k [16]byte
		putBE(k[:8], n.master.ms)
		putBE(k[8:], n.master.seq)
		keys = append(keys, k[:])
		return true
	})
	return radixNodeCount(keys)
}

func putBE(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// radixNodeCount counts the nodes of a compressed radix tree holding the
// sorted keys: one per distinct branching prefix plus the leaves and the root.
func radixNodeCount(keys [][]byte) int {
	if len(keys) == 0 {
		return 1
	}
	var count func(keys [][]byte, depth int) int
	count = func(keys [][]byte, depth int) int {
		// the common prefix of keys beyond depth is one compressed node
		if len(keys) == 1 {
			if depth == len(keys[0]) {
				return 1
			}
			return 2 // a compressed node and the leaf
		}
		lcp := len(keys[0])
		for _, k := range keys[1:] {
			i := depth
			for i < lcp && i < len(k) && k[i] == keys[0][i] {
				i++
			}
			lcp = i
		}
		n := 0
		if lcp > depth {
			n++ // a compressed node for the shared run
		}
		n++ // the branching node
		for i := 0; i < len(keys); {
			j := i + 1
			for j < len(keys) && keys[j][lcp] == keys[i][lcp] {
				j++
			}
			n += count(keys[i:j], lcp+1)
			i = j
		}
		return n
	}
	return count(keys, 0)
}
