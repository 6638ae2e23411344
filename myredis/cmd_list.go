package myredis

import (
	"strconv"
	"strings"
	"time"
)

// commandsList registers the list commands. Every handler runs on the executor
// goroutine and checks all of its arguments before it changes anything, in the
// order Redis 7.0 checks them (so the first error is Redis's); a list whose last
// element goes is deleted with it. The value type is list (list.go).
//
// The blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) park the
// client on the executor's wait lists when every key is empty; a push to one of
// the keys wakes the oldest waiter, which runs again against that key only. In
// MULTI or a script they answer at once, as if the timeout had passed.
func commandsList() []*command {
	return []*command{
		{name: "lpush", arity: -3, flags: flagWrite, fn: pushCmd(true, false), firstKey: 1, lastKey: 1},
		{name: "rpush", arity: -3, flags: flagWrite, fn: pushCmd(false, false), firstKey: 1, lastKey: 1},
		{name: "lpushx", arity: -3, flags: flagWrite, fn: pushCmd(true, true), firstKey: 1, lastKey: 1},
		{name: "rpushx", arity: -3, flags: flagWrite, fn: pushCmd(false, true), firstKey: 1, lastKey: 1},
		{name: "linsert", arity: 5, flags: flagWrite, fn: cmdLinsert, firstKey: 1, lastKey: 1},
		{name: "lpop", arity: -2, flags: flagWrite, fn: popCmd(true), firstKey: 1, lastKey: 1},
		{name: "rpop", arity: -2, flags: flagWrite, fn: popCmd(false), firstKey: 1, lastKey: 1},
		{name: "llen", arity: 2, flags: flagReadonly, fn: cmdLlen, firstKey: 1, lastKey: 1},
		{name: "lindex", arity: 3, flags: flagReadonly, fn: cmdLindex, firstKey: 1, lastKey: 1},
		{name: "lset", arity: 4, flags: flagWrite, fn: cmdLset, firstKey: 1, lastKey: 1},
		{name: "lrange", arity: 4, flags: flagReadonly, fn: cmdLrange, firstKey: 1, lastKey: 1},
		{name: "ltrim", arity: 4, flags: flagWrite, fn: cmdLtrim, firstKey: 1, lastKey: 1},
		{name: "lrem", arity: 4, flags: flagWrite, fn: cmdLrem, firstKey: 1, lastKey: 1},
		{name: "lpos", arity: -3, flags: flagReadonly, fn: cmdLpos, firstKey: 1, lastKey: 1},
		{name: "lmove", arity: 5, flags: flagWrite, fn: cmdLmove, firstKey: 1, lastKey: 2},
		{name: "rpoplpush", arity: 3, flags: flagWrite, fn: cmdRpoplpush, firstKey: 1, lastKey: 2},
		{name: "lmpop", arity: -4, flags: flagWrite, fn: mpopCmd(false), keysFn: mpopKeys(1)},
		{name: "blpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, fn: bpopCmd(true),
			firstKey: 1, lastKey: -2, serves: servesList},
		{name: "brpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, fn: bpopCmd(false),
			firstKey: 1, lastKey: -2, serves: servesList},
		{name: "blmove", arity: 6, flags: flagWrite | flagNoScript | flagBlocking, fn: cmdBlmove,
			firstKey: 1, lastKey: 2, serves: servesList},
		{name: "brpoplpush", arity: 4, flags: flagWrite | flagNoScript | flagBlocking, fn: cmdBrpoplpush,
			firstKey: 1, lastKey: 2, serves: servesList},
		{name: "blmpop", arity: -5, flags: flagWrite | flagBlocking, fn: mpopCmd(true), keysFn: mpopKeys(2),
			serves: servesList},
	}
}

// readList looks key up for a read: l is nil when the key is missing; ok is false
// (and WRONGTYPE written) when it holds another type.
func (x *Ctx) readList(key string) (l *list, ok bool) { return readValue[*list](x, key) }

// writeList looks key up for a write, as readList without the hit counters.
func (x *Ctx) writeList(key string) (l *list, ok bool) { return writeValue[*list](x, key) }

func (x *Ctx) entryList(e *entry) (*list, bool) { return valueAs[*list](x, e) }

// listFor returns key's list to push into, creating the key when l is nil;
// an existing key is marked modified (WATCH, blocked clients).
func (x *Ctx) listFor(key string, l *list) *list {
	if l == nil {
		l = newList(int(x.s.cfg.Enc.ListSize))
		x.db.add(key, l)
		return l
	}
	x.db.modified(key)
	return l
}

// listChanged records n elements taken from key's list: the key goes with its last
// element; otherwise WATCHers hear of the change.
func (x *Ctx) listChanged(key string, l *list, n int) { x.membersChanged(key, l.Len(), n) }

// servesList tells the blocking machinery whether key can serve a blocked list
// command now: it holds a list with elements. Runs on the executor.
func servesList(db *DB, key string) bool {
	e := db.lookup(key)
	if e == nil {
		return false
	}
	l, ok := e.value().(*list)
	return ok && l.Len() > 0
}

// --- pushing ---

// pushCmd builds LPUSH, RPUSH and (onlyExisting) LPUSHX, RPUSHX: they answer the
// new length.
func pushCmd(front, onlyExisting bool) func(*Ctx) {
	return func(x *Ctx) {
		key := x.arg(1)
		l, ok := x.writeList(key)
		if !ok {
			return
		}
		if l == nil && onlyExisting {
			x.w.Int(0)
			return
		}
		l = x.listFor(key, l)
		for _, v := range x.args[2:] {
			if front {
				l.PushFront(v)
			} else {
				l.PushBack(v)
			}
		}
		x.dirty(x.nargs() - 2)
		x.notify(notifyList, pushEvent(front), key)
		x.w.Int(int64(l.Len()))
	}
}

// LINSERT key BEFORE|AFTER pivot element answers the new length, -1 without the
// pivot, 0 without the key.
func cmdLinsert(x *Ctx) {
	var after bool
	switch {
	case x.argIs(2, "after"):
		after = true
	case x.argIs(2, "before"):
	default:
		x.err(msgSyntax)
		return
	}
	key := x.arg(1)
	l, ok := x.writeList(key)
	if !ok {
		return
	}
	if l == nil {
		x.w.Int(0)
		return
	}
	at, i := -1, 0
	l.Range(0, l.Len(), func(v []byte) bool {
		if string(v) == string(x.args[3]) {
			at = i
			return false
		}
		i++
		return true
	})
	if at < 0 {
		x.w.Int(-1)
		return
	}
	if after {
		at++
	}
	l.Insert(at, x.args[4])
	x.db.modified(key)
	x.dirty(1)
	x.notify(notifyList, "linsert", key)
	x.w.Int(int64(l.Len()))
}

// --- popping ---

// popCmd builds LPOP and RPOP key [count]: one element as a bulk string, or with a
// count an array of up to count elements.
func popCmd(front bool) func(*Ctx) {
	return func(x *Ctx) {
		if x.nargs() > 3 {
			x.err(errArity(x.cmd.name))
			return
		}
		withCount := x.nargs() == 3
		count := int64(1)
		if withCount {
			n, ok := parseRedisInt(x.args[2])
			if !ok || n < 0 {
				x.err(msgNotPositive)
				return
			}
			count = n
		}
		key := x.arg(1)
		l, ok := x.writeList(key)
		if !ok {
			return
		}
		switch {
		case l == nil && withCount:
			x.w.NullArray()
		case l == nil:
			x.w.Null()
		case !withCount:
			x.w.Bulk(popOne(l, front))
			x.notify(notifyList, popEvent(front), key)
			x.listChanged(key, l, 1)
		case count == 0:
			x.w.Array(0)
		default:
			n := x.popReply(l, front, count)
			x.notify(notifyList, popEvent(front), key)
			x.listChanged(key, l, n)
		}
	}
}

func popOne(l *list, front bool) []byte {
	if front {
		return l.PopFront()
	}
	return l.PopBack()
}

// popReply pops up to count elements, writing them as an array, and returns how
// many it popped.
func (x *Ctx) popReply(l *list, front bool, count int64) int {
	n := int(min(count, int64(l.Len())))
	x.w.Array(n)
	for range n {
		x.w.Bulk(popOne(l, front))
	}
	return n
}

// --- reading ---

func cmdLlen(x *Ctx) {
	l, ok := x.readList(x.arg(1))
	switch {
	case !ok:
	case l == nil:
		x.w.Int(0)
	default:
		x.w.Int(int64(l.Len()))
	}
}

// listIndex turns a LINDEX/LSET index (negative: from the end) into a position,
// false when it is out of range.
func listIndex(l *list, i int64) (int, bool) {
	if i < 0 {
		i += int64(l.Len())
	}
	if i < 0 || i >= int64(l.Len()) {
		return 0, false
	}
	return int(i), true
}

func cmdLindex(x *Ctx) {
	l, ok := x.readList(x.arg(1))
	if !ok {
		return
	}
	if l == nil {
		x.w.Null()
		return
	}
	i, ok := x.argInt(2)
	if !ok {
		return
	}
	if at, in := listIndex(l, i); in {
		x.w.Bulk(l.Index(at))
		return
	}
	x.w.Null()
}

func cmdLset(x *Ctx) {
	key := x.arg(1)
	l, ok := x.writeList(key)
	if !ok {
		return
	}
	if l == nil {
		x.err(msgNoSuchKey)
		return
	}
	i, ok := x.argInt(2)
	if !ok {
		return
	}
	at, in := listIndex(l, i)
	if !in {
		x.err(msgIndexOutOfRange)
		return
	}
	l.Set(at, x.args[3])
	x.db.modified(key)
	x.dirty(1)
	x.notify(notifyList, "lset", key)
	x.ok()
}

// listSpan turns LRANGE/LTRIM's start and stop into the half-open span [from, to)
// of a list of n elements, as Redis clamps them (empty: from == to).
func listSpan(start, stop int64, n int) (from, to int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	start = max(start, 0)
	if start > stop || start >= ln {
		return 0, 0
	}
	stop = min(stop, ln-1)
	return int(start), int(stop) + 1
}

func cmdLrange(x *Ctx) {
	start, ok := x.argInt(2)
	if !ok {
		return
	}
	stop, ok := x.argInt(3)
	if !ok {
		return
	}
	l, ok := x.readList(x.arg(1))
	if !ok {
		return
	}
	if l == nil {
		x.w.Array(0)
		return
	}
	from, to := listSpan(start, stop, l.Len())
	x.w.Array(to - from)
	l.Range(from, to, func(v []byte) bool {
		x.w.Bulk(v)
		return true
	})
}

func cmdLtrim(x *Ctx) {
	start, ok := x.argInt(2)
	if !ok {
		return
	}
	stop, ok := x.argInt(3)
	if !ok {
		return
	}
	key := x.arg(1)
	l, ok := x.writeList(key)
	if !ok {
		return
	}
	if l == nil {
		x.ok()
		return
	}
	n := l.Len()
	from, to := listSpan(start, stop, n)
	if from == to { // nothing kept
		from, to = n, n
	}
	l.TrimBack(n - to)
	l.TrimFront(from)
	x.notify(notifyList, "ltrim", key)
	if l.Len() == 0 {
		x.db.delete(key)
		x.notify(notifyGeneric, "del", key)
	} else {
		x.db.modified(key) // as Redis: even when nothing went
	}
	x.dirty(n - l.Len())
	x.ok()
}

// LREM key count element: count > 0 removes the first count matches, < 0 the last,
// 0 all of them.
func cmdLrem(x *Ctx) {
	count, ok := x.argInt(2)
	if !ok {
		return
	}
	key := x.arg(1)
	l, ok := x.writeList(key)
	if !ok {
		return
	}
	if l == nil {
		x.w.Int(0)
		return
	}
	limit := count
	if limit < 0 {
		limit = -limit // (math.MinInt64 stays negative: then it means "all")
	}
	if limit < 0 || limit > int64(l.Len()) {
		limit = 0
	}
	removed := l.Remove(x.args[3], int(limit), count < 0)
	if removed > 0 {
		x.notify(notifyList, "lrem", key)
	}
	x.listChanged(key, l, removed)
	x.w.Int(int64(removed))
}

// --- LPOS ---

// lposOpts are LPOS's options; count -1 means COUNT was not given.
type lposOpts struct {
	rank, count, maxlen int64
}

// parseLposOpts reads LPOS's RANK, COUNT and MAXLEN from args (those after the
// element), returning Redis's error text for the first bad one.
func parseLposOpts(args [][]byte) (o lposOpts, errMsg string) {
	o = lposOpts{rank: 1, count: -1}
	for j := 0; j < len(args); j++ {
		opt, more := string(args[j]), j+1 < len(args)
		switch {
		case strings.EqualFold(opt, "rank") && more:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok {
				return o, msgNotInt
			}
			if n == 0 {
				return o, msgLposRankZero
			}
			o.rank = n
		case strings.EqualFold(opt, "count") && more:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok || n < 0 {
				return o, msgLposCountNegative
			}
			o.count = n
		case strings.EqualFold(opt, "maxlen") && more:
			j++
			n, ok := parseRedisInt(args[j])
			if !ok || n < 0 {
				return o, msgLposMaxlenNegative
			}
			o.maxlen = n
		default:
			return o, msgSyntax
		}
	}
	return o, ""
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]: the index of the
// rank-th match (negative rank: counting from the tail), or with COUNT the indexes
// of up to that many matches from there (0: all), comparing at most MAXLEN elements.
func cmdLpos(x *Ctx) {
	o, errMsg := parseLposOpts(x.args[3:])
	if errMsg != "" {
		x.err(errMsg)
		return
	}
	l, ok := x.readList(x.arg(1))
	if !ok {
		return
	}
	if l == nil {
		if o.count != -1 {
			x.w.Array(0)
		} else {
			x.w.Null()
		}
		return
	}
	found := lposFind(l, x.args[2], o)
	if o.count != -1 {
		x.w.Array(len(found))
		for _, i := range found {
			x.w.Int(int64(i))
		}
		return
	}
	if len(found) == 0 {
		x.w.Null()
		return
	}
	x.w.Int(int64(found[0]))
}

// lposFind returns the indexes LPOS answers. Like Redis 7.0 it negates the rank
// with wrapping arithmetic, so RANK -9223372036854775808 counts from the tail and
// matches the first match there.
func lposFind(l *list, elem []byte, o lposOpts) []int {
	rank, fromTail := o.rank, false
	if rank < 0 {
		rank, fromTail = -rank, true
	}
	var found []int
	var seen, matches int64
	visit := func(i int, v []byte) bool {
		if o.maxlen != 0 && seen >= o.maxlen {
			return false
		}
		seen++
		if string(v) != string(elem) {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		found = append(found, i)
		if o.count == -1 {
			return false
		}
		return o.count == 0 || matches-rank+1 < o.count
	}
	if fromTail {
		l.RangeBack(visit)
		return found
	}
	i := -1
	l.Range(0, l.Len(), func(v []byte) bool {
		i++
		return visit(i, v)
	})
	return found
}

// --- moving ---

// parseWhere reads LEFT or RIGHT (any case): front is true for LEFT.
func parseWhere(b []byte) (front, ok bool) {
	switch {
	case strings.EqualFold(string(b), "left"):
		return true, true
	case strings.EqualFold(string(b), "right"):
		return false, true
	}
	return false, false
}

func whereName(front bool) string {
	if front {
		return "LEFT"
	}
	return "RIGHT"
}

// moveWhere reads LMOVE/BLMOVE's two directions at args[3] and args[4].
func (x *Ctx) moveWhere() (from, to, ok bool) {
	if from, ok = parseWhere(x.args[3]); !ok {
		x.err(msgSyntax)
		return
	}
	if to, ok = parseWhere(x.args[4]); !ok {
		x.err(msgSyntax)
	}
	return
}

func cmdLmove(x *Ctx) {
	from, to, ok := x.moveWhere()
	if !ok {
		return
	}
	x.move(from, to)
}

func cmdRpoplpush(x *Ctx) { x.move(false, true) }

// move pops from the source list (args[1]) and pushes the element onto the
// destination (args[2]), answering it; a missing source answers nil. It reports
// whether the source was missing.
func (x *Ctx) move(fromFront, toFront bool) (missing bool) {
	src, dst := x.arg(1), x.arg(2)
	sl, ok := x.writeList(src)
	if !ok {
		return false
	}
	if sl == nil {
		x.w.Null()
		return true
	}
	dl, ok := x.writeList(dst)
	if !ok {
		return false
	}
	v := strings.Clone(string(popOne(sl, fromFront))) // the push may reuse its bytes
	dl = x.listFor(dst, dl)
	if toFront {
		dl.PushFront([]byte(v))
	} else {
		dl.PushBack([]byte(v))
	}
	x.notify(notifyList, pushEvent(toFront), dst)
	x.notify(notifyList, popEvent(fromFront), src)
	if sl.Len() == 0 {
		x.db.delete(src)
		x.notify(notifyGeneric, "del", src)
	} else {
		x.db.modified(src)
	}
	x.dirty(1)
	x.w.BulkString(v)
	return false
}

// --- blocking ---

// blockingKeys returns the keys a blocking command waits on (all of them, in
// order) and those it may take from now: all of them on its first run, only the
// key that woke it when it is served (as Redis serves key by key).
func (x *Ctx) blockingKeys(args [][]byte) (keys, takeFrom []string) {
	keys = make([]string, 0, len(args))
	for _, k := range args {
		keys = append(keys, string(k))
	}
	if x.readyKey != "" {
		return keys, []string{x.readyKey}
	}
	return keys, keys
}

// blockOn parks the client on keys (each once) until one gets elements or the
// timeout passes; inside MULTI or a script it answers nil at once instead, with
// the null that command answers there (nullArray: *-1, otherwise $-1).
func (x *Ctx) blockOn(keys []string, timeout time.Duration, nullArray bool) {
	if !x.canBlock() {
		if nullArray {
			x.w.NullArray()
		} else {
			x.w.Null()
		}
		return
	}
	seen := make(map[string]bool, len(keys))
	uniq := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	x.block(uniq, timeout)
}

// bpopCmd builds BLPOP and BRPOP key [key ...] timeout: the key and element of the
// first non-empty list, else block.
func bpopCmd(front bool) func(*Ctx) {
	return func(x *Ctx) {
		timeout, errMsg := parseTimeout(x.args[x.nargs()-1])
		if errMsg != "" {
			x.err(errMsg)
			return
		}
		keys, takeFrom := x.blockingKeys(x.args[1 : x.nargs()-1])
		for _, key := range takeFrom {
			l, ok := x.writeList(key)
			if !ok {
				return
			}
			if l == nil {
				continue
			}
			x.w.Array(2)
			x.w.BulkString(key)
			x.w.Bulk(popOne(l, front))
			x.notify(notifyList, popEvent(front), key)
			x.listChanged(key, l, 1)
			x.propagateAs(popName(front), key)
			return
		}
		x.blockOn(keys, timeout, true)
	}
}

// pushEvent and popEvent are the list events of a push or pop at either end.
func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

func popName(front bool) string {
	if front {
		return "LPOP"
	}
	return "RPOP"
}

func cmdBlmove(x *Ctx) {
	from, to, ok := x.moveWhere()
	if !ok {
		return
	}
	x.blmove(from, to, 5)
}

func cmdBrpoplpush(x *Ctx) { x.blmove(false, true, 3) }

// blmove is BLMOVE and BRPOPLPUSH: LMOVE when the source has elements, else block.
// The AOF records the LMOVE (RPOPLPUSH) that happened.
func (x *Ctx) blmove(from, to bool, timeoutAt int) {
	timeout, errMsg := parseTimeout(x.args[timeoutAt])
	if errMsg != "" {
		x.err(errMsg)
		return
	}
	src := x.arg(1)
	sl, ok := x.writeList(src)
	if !ok {
		return
	}
	if sl == nil {
		x.blockOn([]string{src}, timeout, false)
		return
	}
	x.move(from, to)
	if x.cmd.name == "brpoplpush" {
		x.propagateAs("RPOPLPUSH", src, x.arg(2))
	} else {
		x.propagateAs("LMOVE", src, x.arg(2), whereName(from), whereName(to))
	}
}

// mpopArgs are LMPOP's and BLMPOP's parsed arguments.
type mpopArgs struct {
	keys  [][]byte
	front bool
	count int64
}

// parseMpop reads numkeys key [key ...] LEFT|RIGHT [COUNT count] from args,
// returning Redis's error text for the first bad one.
func parseMpop(args [][]byte) (m mpopArgs, errMsg string) {
	numkeys, ok := parseRedisInt(args[0])
	if !ok || numkeys <= 0 {
		return m, msgMpopNumkeys
	}
	if numkeys >= int64(len(args)-1) { // no room for LEFT/RIGHT
		return m, msgSyntax
	}
	m.keys = args[1 : 1+numkeys]
	rest := args[1+numkeys:]
	if m.front, ok = parseWhere(rest[0]); !ok {
		return m, msgSyntax
	}
	m.count = -1
	for j := 1; j < len(rest); j++ {
		if m.count == -1 && strings.EqualFold(string(rest[j]), "count") && j+1 < len(rest) {
			j++
			n, ok := parseRedisInt(rest[j])
			if !ok || n <= 0 {
				return m, msgMpopCountPositive
			}
			m.count = n
			continue
		}
		return m, msgSyntax
	}
	if m.count == -1 {
		m.count = 1
	}
	return m, ""
}

// mpopKeys finds LMPOP's (numkeysAt 1) or BLMPOP's (2) keys; none if numkeys is bad.
func mpopKeys(numkeysAt int) func(args [][]byte) [][]byte {
	return func(args [][]byte) [][]byte {
		if len(args) <= numkeysAt {
			return nil
		}
		n, ok := parseRedisInt(args[numkeysAt])
		if !ok || n <= 0 || n >= int64(len(args)-numkeysAt-1) {
			return nil
		}
		return args[numkeysAt+1 : numkeysAt+1+int(n)]
	}
}

// mpopCmd builds LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] and BLMPOP
// timeout numkeys ...: the first non-empty list's key and up to count elements.
// The AOF records the LPOP/RPOP key count that happened.
func mpopCmd(blocking bool) func(*Ctx) {
	return func(x *Ctx) {
		at := 1
		if blocking {
			at = 2
		}
		m, errMsg := parseMpop(x.args[at:])
		if errMsg != "" {
			x.err(errMsg)
			return
		}
		var timeout time.Duration
		if blocking {
			if timeout, errMsg = parseTimeout(x.args[1]); errMsg != "" {
				x.err(errMsg)
				return
			}
		}
		keys, takeFrom := x.blockingKeys(m.keys)
		for _, key := range takeFrom {
			l, ok := x.writeList(key)
			if !ok {
				return
			}
			if l == nil {
				continue
			}
			x.w.Array(2)
			x.w.BulkString(key)
			n := x.popReply(l, m.front, m.count)
			x.notify(notifyList, popEvent(m.front), key)
			x.listChanged(key, l, n)
			x.propagateAs(popName(m.front), key, strconv.Itoa(n))
			return
		}
		if !blocking {
			x.w.NullArray()
			return
		}
		x.blockOn(keys, timeout, true)
	}
}
