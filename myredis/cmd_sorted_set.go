package myredis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// commandsSortedSet registers the sorted-set commands. Every handler runs on the
// executor goroutine; each validates all of its arguments before it changes
// anything, so a command that fails leaves the data as it was.
func commandsSortedSet() []*command {
	return append(zmpopCommands(), []*command{
		{name: "zadd", arity: -4, flags: flagWrite, fn: cmdZadd, firstKey: 1, lastKey: 1},
		{name: "zincrby", arity: 4, flags: flagWrite, fn: cmdZincrby, firstKey: 1, lastKey: 1},
		{name: "zrem", arity: -3, flags: flagWrite, fn: cmdZrem, firstKey: 1, lastKey: 1},
		{name: "zcard", arity: 2, flags: flagReadonly, fn: cmdZcard, firstKey: 1, lastKey: 1},
		{name: "zscore", arity: 3, flags: flagReadonly, fn: cmdZscore, firstKey: 1, lastKey: 1},
		{name: "zmscore", arity: -3, flags: flagReadonly, fn: cmdZmscore, firstKey: 1, lastKey: 1},
		{name: "zrank", arity: 3, flags: flagReadonly, fn: zrankCmd(false), firstKey: 1, lastKey: 1},
		{name: "zrevrank", arity: 3, flags: flagReadonly, fn: zrankCmd(true), firstKey: 1, lastKey: 1},
		{name: "zcount", arity: 4, flags: flagReadonly, fn: cmdZcount, firstKey: 1, lastKey: 1},
		{name: "zlexcount", arity: 4, flags: flagReadonly, fn: cmdZlexcount, firstKey: 1, lastKey: 1},
		{name: "zrange", arity: -4, flags: flagReadonly, fn: zrangeCmd(byAuto, dirAuto), firstKey: 1, lastKey: 1},
		{name: "zrangestore", arity: -5, flags: flagWrite, fn: cmdZrangestore, firstKey: 1, lastKey: 2},
		{name: "zrevrange", arity: -4, flags: flagReadonly, fn: zrangeCmd(byRank, dirReverse), firstKey: 1, lastKey: 1},
		{name: "zrangebyscore", arity: -4, flags: flagReadonly, fn: zrangeCmd(byScore, dirForward), firstKey: 1, lastKey: 1},
		{name: "zrevrangebyscore", arity: -4, flags: flagReadonly, fn: zrangeCmd(byScore, dirReverse), firstKey: 1, lastKey: 1},
		{name: "zrangebylex", arity: -4, flags: flagReadonly, fn: zrangeCmd(byLex, dirForward), firstKey: 1, lastKey: 1},
		{name: "zrevrangebylex", arity: -4, flags: flagReadonly, fn: zrangeCmd(byLex, dirReverse), firstKey: 1, lastKey: 1},
		{name: "zpopmin", arity: -2, flags: flagWrite, fn: zpopCmd(false), firstKey: 1, lastKey: 1},
		{name: "zpopmax", arity: -2, flags: flagWrite, fn: zpopCmd(true), firstKey: 1, lastKey: 1},
		{name: "bzpopmin", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, fn: bzpopCmd(false), firstKey: 1, lastKey: -2, serves: servesZSet},
		{name: "bzpopmax", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, fn: bzpopCmd(true), firstKey: 1, lastKey: -2, serves: servesZSet},
		{name: "zremrangebyscore", arity: 4, flags: flagWrite, fn: zremrangeCmd(byScore), firstKey: 1, lastKey: 1},
		{name: "zremrangebyrank", arity: 4, flags: flagWrite, fn: zremrangeCmd(byRank), firstKey: 1, lastKey: 1},
		{name: "zremrangebylex", arity: 4, flags: flagWrite, fn: zremrangeCmd(byLex), firstKey: 1, lastKey: 1},
		{name: "zrandmember", arity: -2, flags: flagReadonly, fn: cmdZrandmember, firstKey: 1, lastKey: 1},
		{name: "zscan", arity: -3, flags: flagReadonly, fn: cmdZscan, firstKey: 1, lastKey: 1},
		{name: "zunionstore", arity: -4, flags: flagWrite, fn: zsetOpCmd(opUnion, true, false), firstKey: 1, lastKey: 1},
		{name: "zinterstore", arity: -4, flags: flagWrite, fn: zsetOpCmd(opInter, true, false), firstKey: 1, lastKey: 1},
		{name: "zdiffstore", arity: -4, flags: flagWrite, fn: zsetOpCmd(opDiff, true, false), firstKey: 1, lastKey: 1},
		{name: "zunion", arity: -3, flags: flagReadonly, fn: zsetOpCmd(opUnion, false, false)},
		{name: "zinter", arity: -3, flags: flagReadonly, fn: zsetOpCmd(opInter, false, false)},
		{name: "zdiff", arity: -3, flags: flagReadonly, fn: zsetOpCmd(opDiff, false, false)},
		{name: "zintercard", arity: -3, flags: flagReadonly, fn: zsetOpCmd(opInter, false, true)},
	}...)
}

func (z *zset) typeName() string { return "zset" }

// readZSet looks key up for reading: z is nil when the key is missing; ok is false
// (and WRONGTYPE written) when it holds another type.
func (x *Ctx) readZSet(key string) (z *zset, ok bool) { return readValue[*zset](x, key) }

// writeZSet is readZSet for a command about to modify the key (no hit statistics,
// as Redis's lookupKeyWrite).
func (x *Ctx) writeZSet(key string) (z *zset, ok bool) { return writeValue[*zset](x, key) }

func (x *Ctx) asZSet(e *entry) (*zset, bool) { return valueAs[*zset](x, e) }

// zsetChanged records n changes to the set at key: the key goes with its last
// member; otherwise WATCHers and blocked clients hear of the change.
func (x *Ctx) zsetChanged(key string, z *zset, n int) { x.membersChanged(key, z.Len(), n) }

// storeZSet replaces dst with z (dropping any TTL), or deletes dst when z is empty,
// and replies with z's size: the ending of every *STORE command.
func (x *Ctx) storeZSet(dst string, z *zset) {
	if z.Len() == 0 {
		if x.db.delete(dst) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", dst)
		}
		x.w.Int(0)
		return
	}
	x.db.set(dst, z, false)
	x.dirty(1)
	x.notify(notifyZset, x.cmd.name, dst) // zunionstore, zinterstore, zdiffstore, zrangestore
	x.w.Int(int64(z.Len()))
}

// replyScore writes a score: a RESP3 double, in RESP2 a bulk string formatted as
// Redis 7.0 does.
func (x *Ctx) replyScore(f float64) { x.w.Double(f) }

// replyItems writes members and, withScores, their scores: flattened in RESP2,
// [member, score] pairs in RESP3, as Redis 7.0 does.
func (x *Ctx) replyItems(items []zItem, withScores bool) {
	x.replyItemsAs(items, withScores, withScores && x.w.RESP3())
}

// replyItemsAs writes members (and scores), as [member, score] pairs when nested.
func (x *Ctx) replyItemsAs(items []zItem, withScores, nested bool) {
	n := len(items)
	if withScores && !nested {
		n *= 2
	}
	x.w.Array(n)
	for _, it := range items {
		if nested {
			x.w.Array(2)
		}
		x.w.BulkString(it.member)
		if withScores {
			x.replyScore(it.score)
		}
	}
}

// --- ZADD, ZINCRBY, ZREM ---

func cmdZadd(x *Ctx)    { x.zadd(false) }
func cmdZincrby(x *Ctx) { x.zadd(true) }

// zadd is ZADD and ZINCRBY (which is ZADD INCR with one pair), as Redis's
// zaddGenericCommand: options, then every score parsed, then the writes.
func (x *Ctx) zadd(incr bool) {
	var nx, xx, gt, lt, ch bool
	i := 2
options:
	for ; i < x.nargs(); i++ {
		switch a := x.args[i]; {
		case eqFold(a, "nx"):
			nx = true
		case eqFold(a, "xx"):
			xx = true
		case eqFold(a, "gt"):
			gt = true
		case eqFold(a, "lt"):
			lt = true
		case eqFold(a, "ch"):
			ch = true
		case eqFold(a, "incr"):
			incr = true
		default:
			break options
		}
	}
	pairs := x.nargs() - i
	if pairs == 0 || pairs%2 != 0 {
		x.err(msgSyntax)
		return
	}
	pairs /= 2
	switch {
	case nx && xx:
		x.err(msgZaddNXAndXX)
		return
	case nx && (gt || lt), gt && lt:
		x.err(msgZaddGTLTNX)
		return
	case incr && pairs > 1:
		x.err(msgZaddIncrPair)
		return
	}
	scores := make([]float64, pairs)
	for j := range scores {
		s, ok := parseScore(x.arg(i + 2*j))
		if !ok {
			x.err(msgNotFloat)
			return
		}
		scores[j] = s
	}

	key := x.arg(1)
	z, ok := x.writeZSet(key)
	if !ok {
		return
	}
	created := z == nil && !xx
	if created {
		z = newZSet()
	}
	var added, updated, processed int
	var score float64
	for j := 0; z != nil && j < pairs; j++ {
		member := x.arg(i + 2*j + 1)
		score = scores[j]
		cur, exists := z.Score(member)
		switch {
		case exists && nx:
			continue
		case exists:
			if incr {
				score += cur
				if math.IsNaN(score) {
					x.err(msgZaddNaN)
					return
				}
			}
			if (lt && score >= cur) || (gt && score <= cur) {
				continue
			}
			if score != cur {
				z.Add(member, score)
				updated++
			}
		case xx:
			continue
		default:
			z.Add(member, score)
			added++
		}
		processed++
	}
	if created {
		x.db.add(key, z) // a new key always gets its members: neither XX nor NaN
		x.dirty(added)
	} else if z != nil {
		x.zsetChanged(key, z, added+updated)
	}
	if added+updated > 0 {
		x.notify(notifyZset, zaddEvent(incr), key)
	}
	switch {
	case !incr:
		if ch {
			added += updated
		}
		x.w.Int(int64(added))
	case processed > 0:
		x.replyScore(score)
	default:
		x.w.Null()
	}
}

// zaddEvent is the event of a ZADD (ZINCRBY and ZADD INCR: zincr).
func zaddEvent(incr bool) string {
	if incr {
		return "zincr"
	}
	return "zadd"
}

func cmdZrem(x *Ctx) {
	key := x.arg(1)
	z, ok := x.writeZSet(key)
	if !ok {
		return
	}
	n := 0
	for j := 2; z != nil && j < x.nargs() && z.Len() > 0; j++ {
		if z.Remove(x.arg(j)) {
			n++
		}
	}
	if z != nil {
		if n > 0 {
			x.notify(notifyZset, "zrem", key)
		}
		x.zsetChanged(key, z, n)
	}
	x.w.Int(int64(n))
}

// --- ZCARD, ZSCORE, ZMSCORE, ZRANK, ZCOUNT, ZLEXCOUNT ---

func cmdZcard(x *Ctx) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(z.Len()))
}

func cmdZscore(x *Ctx) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Null()
		return
	}
	if s, found := z.Score(x.arg(2)); found {
		x.replyScore(s)
		return
	}
	x.w.Null()
}

func cmdZmscore(x *Ctx) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	x.w.Array(x.nargs() - 2)
	for j := 2; j < x.nargs(); j++ {
		if z != nil {
			if s, found := z.Score(x.arg(j)); found {
				x.replyScore(s)
				continue
			}
		}
		x.w.Null()
	}
}

// zrankCmd builds ZRANK and ZREVRANK as Redis 7.0 has them: key and member
// only (WITHSCORE came in 7.2; 7.0's arity check refuses it).
func zrankCmd(reverse bool) func(*Ctx) {
	return func(x *Ctx) { zrank(x, reverse) }
}

// zrank is ZRANK's body, a function of its own: inside the closure, as the
// copy of it the compiler makes when it inlines zrankCmd into the command
// table, string(x.args[i]) lost its stack buffer and allocated the key and
// the member (2 x 24 B of garbage per call, in the size class of the members
// a queue keeps: docs/performance.md, issue #15).
func zrank(x *Ctx, reverse bool) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Null()
		return
	}
	rank, found := z.Rank(x.arg(2), reverse)
	if !found {
		x.w.Null()
		return
	}
	x.w.Int(int64(rank))
}

func cmdZcount(x *Ctx) {
	r, ok := parseScoreRange(x.arg(2), x.arg(3))
	if !ok {
		x.err(msgMinMaxNotFloat)
		return
	}
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(z.CountScore(r)))
}

func cmdZlexcount(x *Ctx) {
	r, ok := parseLexRange(x.arg(2), x.arg(3))
	if !ok {
		x.err(msgLexRange)
		return
	}
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(z.CountLex(r)))
}

// --- ZRANGE and friends ---

// rangeBy is how a range command reads its min and max.
type rangeBy int

const (
	byAuto  rangeBy = iota // ZRANGE: rank unless BYSCORE or BYLEX
	byRank                 // 0 -1
	byScore                // (1 +inf
	byLex                  // [a (b - +
)

// rangeDir is the order of a range reply.
type rangeDir int

const (
	dirAuto    rangeDir = iota // ZRANGE: forward unless REV
	dirForward                 // lowest score first
	dirReverse                 // highest score first; score and lex ranges are given max first
)

// rangeSpec is a parsed ZRANGE-family request.
type rangeSpec struct {
	by         rangeBy
	reverse    bool
	withScores bool
	offset     int64
	limit      int64 // -1: no limit
	start      int64 // rank range
	stop       int64
	score      scoreRange
	lex        lexRange
}

// parseRange reads "<min> <max> [BYSCORE|BYLEX] [REV] [WITHSCORES] [LIMIT offset
// count]" from args[at:] as Redis's zrangeGenericCommand does, writing the error
// on failure. by and dir are fixed by the legacy commands, auto for ZRANGE.
func (x *Ctx) parseRange(at int, store bool, by rangeBy, dir rangeDir) (rangeSpec, bool) {
	sp := rangeSpec{limit: -1}
	for j := at + 2; j < x.nargs(); j++ {
		a := x.args[j]
		switch {
		case !store && eqFold(a, "withscores"):
			sp.withScores = true
		case eqFold(a, "limit") && x.nargs()-j-1 >= 2:
			var ok bool
			if sp.offset, ok = x.argInt(j + 1); !ok {
				return sp, false
			}
			if sp.limit, ok = x.argInt(j + 2); !ok {
				return sp, false
			}
			j += 2
		case dir == dirAuto && eqFold(a, "rev"):
			dir = dirReverse
		case by == byAuto && eqFold(a, "bylex"):
			by = byLex
		case by == byAuto && eqFold(a, "byscore"):
			by = byScore
		default:
			x.err(msgSyntax)
			return sp, false
		}
	}
	if by == byAuto {
		by = byRank
	}
	sp.by, sp.reverse = by, dir == dirReverse
	if sp.limit != -1 && by == byRank {
		x.err(msgZrangeLimit)
		return sp, false
	}
	if sp.withScores && by == byLex {
		x.err(msgZrangeLexScores)
		return sp, false
	}
	lo, hi := at, at+1
	if sp.reverse && by != byRank {
		lo, hi = hi, lo // ZREVRANGEBYSCORE key max min
	}
	var ok bool
	switch by {
	case byRank:
		if sp.start, ok = x.argInt(lo); !ok {
			return sp, false
		}
		if sp.stop, ok = x.argInt(hi); !ok {
			return sp, false
		}
	case byScore:
		if sp.score, ok = parseScoreRange(x.arg(lo), x.arg(hi)); !ok {
			x.err(msgMinMaxNotFloat)
			return sp, false
		}
	case byLex:
		if sp.lex, ok = parseLexRange(x.arg(lo), x.arg(hi)); !ok {
			x.err(msgLexRange)
			return sp, false
		}
	}
	return sp, true
}

// span returns the ascending indices [start, end) that sp selects from z, LIMIT
// applied; the reply runs from end-1 down when sp.reverse.
func (sp rangeSpec) span(z *zset) (int, int) {
	if sp.by == byRank {
		return z.RankSpan(clampInt(sp.start), clampInt(sp.stop), sp.reverse)
	}
	var start, end int
	if sp.by == byScore {
		start, end = z.ScoreSpan(sp.score)
	} else {
		start, end = z.LexSpan(sp.lex, sp.reverse)
	}
	// Redis: a negative offset, or one past the set, selects nothing; a negative
	// count means no limit.
	if sp.offset < 0 || sp.offset >= int64(end-start) {
		return 0, 0
	}
	n := int64(end-start) - sp.offset
	if sp.limit >= 0 {
		n = min(n, sp.limit)
	}
	if sp.reverse {
		end -= int(sp.offset)
		return end - int(n), end
	}
	start += int(sp.offset)
	return start, start + int(n)
}

// clampInt narrows an int64 argument to int (they are the same size on the 64-bit
// platforms MyRedis runs on; this keeps 32-bit builds correct too).
func clampInt(n int64) int {
	return int(max(min(n, math.MaxInt), math.MinInt))
}

// zrangeCmd builds ZRANGE, ZREVRANGE, Z[REV]RANGEBYSCORE and Z[REV]RANGEBYLEX.
func zrangeCmd(by rangeBy, dir rangeDir) func(*Ctx) {
	return func(x *Ctx) {
		sp, ok := x.parseRange(2, false, by, dir)
		if !ok {
			return
		}
		z, ok := x.readZSet(x.arg(1))
		if !ok {
			return
		}
		if z == nil {
			x.w.Array(0)
			return
		}
		start, end := sp.span(z)
		n := end - start
		nested := sp.withScores && x.w.RESP3() // [member, score] pairs
		if sp.withScores && !nested {
			n *= 2
		}
		x.w.Array(n)
		z.Range(start, end, sp.reverse, func(it zItem) bool {
			if nested {
				x.w.Array(2)
			}
			x.w.BulkString(it.member)
			if sp.withScores {
				x.replyScore(it.score)
			}
			return true
		})
	}
}

// cmdZrangestore is ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT o c].
func cmdZrangestore(x *Ctx) {
	sp, ok := x.parseRange(3, true, byAuto, dirAuto)
	if !ok {
		return
	}
	src, ok := x.readZSet(x.arg(2))
	if !ok {
		return
	}
	dst := newZSet()
	if src != nil {
		start, end := sp.span(src)
		src.Range(start, end, false, func(it zItem) bool {
			dst.Add(it.member, it.score)
			return true
		})
	}
	x.storeZSet(x.arg(1), dst)
}

// --- ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX ---

func zremrangeCmd(by rangeBy) func(*Ctx) {
	return func(x *Ctx) {
		var start, stop int64
		var sr scoreRange
		var lr lexRange
		ok := true
		switch by {
		case byRank:
			if start, ok = x.argInt(2); !ok {
				return
			}
			if stop, ok = x.argInt(3); !ok {
				return
			}
		case byScore:
			if sr, ok = parseScoreRange(x.arg(2), x.arg(3)); !ok {
				x.err(msgMinMaxNotFloat)
				return
			}
		case byLex:
			if lr, ok = parseLexRange(x.arg(2), x.arg(3)); !ok {
				x.err(msgLexRange)
				return
			}
		}
		key := x.arg(1)
		z, ok := x.writeZSet(key)
		if !ok {
			return
		}
		if z == nil {
			x.w.Int(0)
			return
		}
		var n int
		switch by {
		case byRank:
			n = z.RemoveRangeByRank(clampInt(start), clampInt(stop))
		case byScore:
			n = z.RemoveRangeByScore(sr)
		case byLex:
			n = z.RemoveRangeByLex(lr)
		}
		if n > 0 {
			x.notify(notifyZset, x.cmd.name, key) // zremrangebyrank, ...byscore, ...bylex
		}
		x.zsetChanged(key, z, n)
		x.w.Int(int64(n))
	}
}

// --- ZPOPMIN, ZPOPMAX, BZPOPMIN, BZPOPMAX ---

func zpopCmd(max bool) func(*Ctx) {
	return func(x *Ctx) {
		if x.nargs() > 3 {
			x.err(msgSyntax)
			return
		}
		count := int64(1)
		if x.nargs() == 3 {
			n, err := strconv.ParseInt(x.arg(2), 10, 64)
			if err != nil || !validIntText(x.args[2]) || n < 0 {
				x.err(msgNotPositive)
				return
			}
			count = n
		}
		key := x.arg(1)
		z, ok := x.writeZSet(key)
		if !ok {
			return
		}
		if z == nil || count == 0 {
			x.w.Array(0)
			return
		}
		// one member without COUNT: a flat [member, score] in RESP3 as well
		x.replyItemsAs(x.pop(key, z, max, clampInt(count)), true, x.w.RESP3() && x.nargs() == 3)
	}
}

// pop removes up to n members from one end of the set at key.
func (x *Ctx) pop(key string, z *zset, max bool, n int) []zItem {
	var items []zItem
	if max {
		items = z.PopMax(n)
	} else {
		items = z.PopMin(n)
	}
	if len(items) > 0 {
		x.notify(notifyZset, zpopEvent(max), key)
	}
	x.zsetChanged(key, z, len(items))
	return items
}

// bzpopCmd builds BZPOPMIN and BZPOPMAX: pop from the first non-empty key, or
// block until one of the keys gets members or the timeout passes. A blocked
// client costs the executor nothing: the core re-runs the command when a key it
// waits on changes, serving waiters in the order they blocked.
func bzpopCmd(max bool) func(*Ctx) {
	return func(x *Ctx) {
		timeout, errMsg := parseTimeout(x.args[x.nargs()-1])
		if errMsg != "" {
			x.err(errMsg)
			return
		}
		keys := make([]string, 0, x.nargs()-2)
		for _, k := range x.args[1 : x.nargs()-1] {
			keys = append(keys, string(k))
		}
		takeFrom := keys
		if x.readyKey != "" { // served: from the key that woke it, as Redis
			takeFrom = []string{x.readyKey}
		}
		for _, key := range takeFrom {
			z, ok := x.writeZSet(key)
			if !ok {
				return
			}
			if z == nil {
				continue
			}
			it := x.pop(key, z, max, 1)[0]
			if max {
				x.propagateAs("ZPOPMAX", key)
			} else {
				x.propagateAs("ZPOPMIN", key)
			}
			x.w.Array(3)
			x.w.BulkString(key)
			x.w.BulkString(it.member)
			x.replyScore(it.score)
			return
		}
		if !x.canBlock() {
			// inside MULTI or a script: as if the timeout had passed
			x.w.NullArray()
			return
		}
		x.block(keys, timeout)
	}
}

// servesZSet tells the blocking machinery whether key can serve a blocked
// BZPOPMIN/BZPOPMAX now: it holds a sorted set (never empty: the last member
// takes the key with it). Runs on the executor.
func servesZSet(db *DB, key string) bool {
	e := db.lookup(key)
	if e == nil {
		return false
	}
	_, ok := e.value().(*zset)
	return ok
}

// parseTimeout reads a blocking command's timeout in seconds as Redis 7.0 does: a
// long double, multiplied by 1000 and rounded up to whole milliseconds; 0 waits
// forever. Like 7.0, a timeout too large for a 64-bit millisecond count (1e400,
// inf) is "negative". errMsg is empty on success.
func parseTimeout(arg []byte) (d time.Duration, errMsg string) {
	s := string(arg)
	if s == "" || isCSpace(s[0]) {
		return 0, msgTimeoutNotFloat
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // strtold reads a C string
	}
	f, n, erange := strtod(s)
	if n != len(s) || math.IsNaN(f) {
		return 0, msgTimeoutNotFloat
	}
	if erange {
		// Out of a double's range; a long double reaches 2^±16384.
		if bf, _, err := big.ParseFloat(s, 10, 64, big.ToNearestEven); err == nil {
			if exp := bf.MantExp(nil); exp > 16384 || exp < -16444 {
				return 0, msgTimeoutNotFloat
			}
		}
		if f == 0 && s[0] != '-' {
			f = math.SmallestNonzeroFloat64 // rounds up to 1 ms
		}
	}
	ms := math.Ceil(f * 1000)
	if ms < 0 || ms >= math.MaxInt64 {
		return 0, msgTimeoutNegative
	}
	return time.Duration(ms) * time.Millisecond, ""
}

// --- ZRANDMEMBER, ZSCAN ---

// zrandMax bounds ZRANDMEMBER's negative count. Redis would build a reply of
// any size; here one command would then hold the executor, and every other
// client, for as long as it takes, so a count past this is refused.
const zrandMax = 1 << 24

func cmdZrandmember(x *Ctx) {
	if x.nargs() == 2 {
		z, ok := x.readZSet(x.arg(1))
		if !ok {
			return
		}
		if z == nil {
			x.w.Null()
			return
		}
		x.w.BulkString(z.At(rand.IntN(z.Len())).member)
		return
	}
	count, ok := x.argInt(2)
	if !ok {
		return
	}
	if count == math.MinInt64 {
		x.err(msgRandCountRange)
		return
	}
	withScores := false
	if x.nargs() > 4 || (x.nargs() == 4 && !x.argIs(3, "withscores")) {
		x.err(msgSyntax)
		return
	}
	if x.nargs() == 4 {
		withScores = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			x.err(msgOutOfRange)
			return
		}
	}
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil || count == 0 {
		x.w.Array(0)
		return
	}
	size := z.Len()
	switch {
	case count < 0 || count == 1:
		// with repetition, in random order
		n := clampInt(count)
		if n < 0 {
			n = -n
		}
		if n > zrandMax {
			x.err(msgOutOfRange)
			return
		}
		nested := withScores && x.w.RESP3()
		if withScores && !nested {
			x.w.Array(2 * n)
		} else {
			x.w.Array(n)
		}
		for range n {
			it := z.At(rand.IntN(size))
			if nested {
				x.w.Array(2)
			}
			x.w.BulkString(it.member)
			if withScores {
				x.replyScore(it.score)
			}
		}
	case count >= int64(size):
		// the whole set, highest first, as Redis's reverse iteration gives it
		x.replyItems(z.Items(0, size, true), withScores)
	default:
		// count distinct members: a partial Fisher-Yates shuffle of the ranks
		n := int(count)
		picked := make(map[int]int, n) // rank -> rank moved into its place
		items := make([]zItem, n)
		for i := range n {
			j := i + rand.IntN(size-i)
			rj, ok := picked[j]
			if !ok {
				rj = j
			}
			ri, ok := picked[i]
			if !ok {
				ri = i
			}
			picked[j] = ri
			items[i] = z.At(rj)
		}
		x.replyItems(items, withScores)
	}
}

// cmdZscan is ZSCAN key cursor [MATCH pattern] [COUNT count]. The cursor is a
// rank: members are returned in order, COUNT at a time. A member removed from
// below the cursor between calls shifts the ranks, so a member may then be
// skipped; Redis's hash-table cursor does not skip. Small sets are returned
// whole, as Redis returns a listpack.
func cmdZscan(x *Ctx) {
	cursor, ok := parseScanCursorString(x.arg(2))
	if !ok {
		x.err(msgInvalidCursor)
		return
	}
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Array(2)
		x.w.BulkString("0")
		x.w.Array(0)
		return
	}
	pattern, count, ok := x.scanOpts(3)
	if !ok {
		return
	}
	var items []zItem
	next := uint64(0)
	if isSmallZSet(z, x.s.limits()) {
		items = z.Items(0, z.Len(), false)
	} else if cursor < uint64(z.Len()) {
		start := int(cursor)
		end := start + min(count, z.Len()-start)
		items = z.Items(start, end, false)
		if end < z.Len() {
			next = uint64(end)
		}
	}
	if pattern != "*" {
		items = slices.DeleteFunc(items, func(it zItem) bool { return !globMatch(pattern, it.member) })
	}
	x.w.Array(2)
	x.w.BulkString(strconv.FormatUint(next, 10))
	x.w.Array(2 * len(items)) // scores as strings, in RESP3 too
	var buf [32]byte
	for _, it := range items {
		x.w.BulkString(it.member)
		x.w.Bulk(appendScore(buf[:0], it.score))
	}
}

// isSmallZSet reports whether Redis would keep z as a listpack: within
// zset-max-listpack-entries members of at most zset-max-listpack-value bytes.
// ZSCAN returns such a set in one reply whatever the COUNT.
func isSmallZSet(z *zset, l *EncodingLimits) bool {
	if int64(z.Len()) > l.ZSetEntries {
		return false
	}
	small := true
	z.Range(0, z.Len(), false, func(it zItem) bool {
		small = int64(len(it.member)) <= l.ZSetValue
		return small
	})
	return small
}

// parseScanCursorString reads a cursor as Redis does, with C's strtoul: optional
// sign (a negative cursor wraps around), digits, nothing else; the empty string
// is 0.
func parseScanCursorString(s string) (uint64, bool) {
	if s != "" && isCSpace(s[0]) {
		return 0, false
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // strtoul reads a C string
	}
	neg := false
	digits := s
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		neg = digits[0] == '-'
		digits = digits[1:]
		if digits == "" {
			return 0, false
		}
	}
	if digits == "" {
		return 0, true
	}
	for i := 0; i < len(digits); i++ {
		if !isDecimalDigit(digits[i]) {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// --- ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD ---

type setOp int

const (
	opUnion setOp = iota
	opInter
	opDiff
)

type aggregate int

const (
	aggSum aggregate = iota
	aggMin
	aggMax
)

// apply folds v into acc. MIN and MAX compare as Redis's C does (Go's min and
// max would put -0 below 0).
func (a aggregate) apply(acc, v float64) float64 {
	switch a {
	case aggMin:
		if v < acc {
			return v
		}
		return acc
	case aggMax:
		if v > acc {
			return v
		}
		return acc
	}
	acc += v
	if math.IsNaN(acc) { // inf + -inf: Redis's convention is 0
		return 0
	}
	return acc
}

// zsetOpCmd builds ZUNION/ZINTER/ZDIFF (store false), ZUNIONSTORE/ZINTERSTORE/
// ZDIFFSTORE (store true) and ZINTERCARD (cardOnly), as Redis's
// zunionInterDiffGenericCommand.
func zsetOpCmd(op setOp, store, cardOnly bool) func(*Ctx) {
	return func(x *Ctx) {
		numkeysAt := 1
		if store {
			numkeysAt = 2
		}
		setnum, ok := x.argInt(numkeysAt)
		if !ok {
			return
		}
		if setnum < 1 {
			x.w.Errorf(msgNumkeys, x.cmd.name)
			return
		}
		if setnum > int64(x.nargs()-numkeysAt-1) {
			x.err(msgSyntax)
			return
		}
		n := int(setnum)
		srcs := make([]*zset, n)
		for i := range srcs {
			if srcs[i], ok = x.readZSetSource(x.arg(numkeysAt + 1 + i)); !ok {
				return
			}
		}
		weights := make([]float64, n)
		for i := range weights {
			weights[i] = 1
		}
		agg, withScores, limit := aggSum, false, int64(0)
		for j := numkeysAt + 1 + n; j < x.nargs(); {
			left := x.nargs() - j
			switch a := x.args[j]; {
			case op != opDiff && !cardOnly && left >= n+1 && eqFold(a, "weights"):
				for i := range weights {
					if weights[i], ok = parseScore(x.arg(j + 1 + i)); !ok {
						x.err(msgWeightNotFloat)
						return
					}
				}
				j += n + 1
			case op != opDiff && !cardOnly && left >= 2 && eqFold(a, "aggregate"):
				switch b := x.args[j+1]; {
				case eqFold(b, "sum"):
					agg = aggSum
				case eqFold(b, "min"):
					agg = aggMin
				case eqFold(b, "max"):
					agg = aggMax
				default:
					x.err(msgSyntax)
					return
				}
				j += 2
			case !store && !cardOnly && eqFold(a, "withscores"):
				withScores = true
				j++
			case cardOnly && left >= 2 && eqFold(a, "limit"):
				l, err := strconv.ParseInt(x.arg(j+1), 10, 64)
				if err != nil || !validIntText(x.args[j+1]) || l < 0 {
					x.err(msgLimitNegative)
					return
				}
				limit = l
				j += 2
			default:
				x.err(msgSyntax)
				return
			}
		}

		if cardOnly {
			x.w.Int(int64(zinterCard(srcs, limit)))
			return
		}
		var items []zItem
		switch op {
		case opUnion:
			items = zunion(srcs, weights, agg)
		case opInter:
			items = zinter(srcs, weights, agg)
		case opDiff:
			items = zdiff(srcs)
		}
		if store {
			dst := newZSet()
			for _, it := range items {
				dst.Add(it.member, it.score)
			}
			x.storeZSet(x.arg(1), dst)
			return
		}
		x.replyItems(items, withScores)
	}
}

// readZSetSource reads one input of ZUNION, ZINTER, ZDIFF and their forms: a
// sorted set, or a plain set whose members all count with score 1, as in Redis.
// Anything else is WRONGTYPE.
func (x *Ctx) readZSetSource(key string) (*zset, bool) {
	v, _ := readValue[any](x, key)
	switch v := v.(type) {
	case nil:
		return nil, true
	case *zset:
		return v, true
	case *setValue:
		return zsetOfSet(v), true
	}
	x.wrongType()
	return nil, false
}

// zsetOfSet is a sorted set of set's members, each with score 1.
func zsetOfSet(set *setValue) *zset {
	z := newZSet()
	for i := range set.Len() {
		z.Add(set.at(i), 1)
	}
	return z
}

// weighted is a weight times a score, with Redis's NaN-to-0 rule (0 * inf).
func weighted(w, s float64) float64 {
	if v := w * s; !math.IsNaN(v) {
		return v
	}
	return 0
}

// bySize orders sources (weights alongside) smallest first, as Redis does before a
// union or intersection; the order of a floating-point sum follows it. The sort is
// stable, as glibc's qsort (a merge sort) is.
func bySize(srcs []*zset, weights []float64) ([]*zset, []float64) {
	idx := make([]int, len(srcs))
	for i := range idx {
		idx[i] = i
	}
	size := func(z *zset) int {
		if z == nil {
			return 0
		}
		return z.Len()
	}
	slices.SortStableFunc(idx, func(a, b int) int { return size(srcs[a]) - size(srcs[b]) })
	s, w := make([]*zset, len(srcs)), make([]float64, len(srcs))
	for i, j := range idx {
		s[i] = srcs[j]
		if weights != nil {
			w[i] = weights[j]
		}
	}
	return s, w
}

// sortItems orders a result as a sorted set would hold it, keeping each score as
// computed (a -0 stays -0 in the reply, as in Redis's temporary skip list).
func sortItems(items []zItem) []zItem {
	slices.SortFunc(items, func(a, b zItem) int {
		switch {
		case zLess(a, b):
			return -1
		case zLess(b, a):
			return 1
		}
		return 0
	})
	return items
}

func zunion(srcs []*zset, weights []float64, agg aggregate) []zItem {
	srcs, weights = bySize(srcs, weights)
	acc := make(map[string]float64)
	var order []string
	for i, z := range srcs {
		if z == nil {
			continue
		}
		z.Range(0, z.Len(), true, func(it zItem) bool {
			s := weighted(weights[i], it.score)
			if cur, ok := acc[it.member]; ok {
				acc[it.member] = agg.apply(cur, s)
			} else {
				acc[it.member] = s
				order = append(order, it.member)
			}
			return true
		})
	}
	items := make([]zItem, 0, len(order))
	for _, m := range order {
		items = append(items, zItem{acc[m], m})
	}
	return sortItems(items)
}

func zinter(srcs []*zset, weights []float64, agg aggregate) []zItem {
	srcs, weights = bySize(srcs, weights)
	if srcs[0] == nil || srcs[0].Len() == 0 {
		return nil
	}
	var items []zItem
	srcs[0].Range(0, srcs[0].Len(), true, func(it zItem) bool {
		score := weighted(weights[0], it.score)
		for j := 1; j < len(srcs); j++ {
			v, ok := srcs[j].Score(it.member)
			if !ok {
				return true
			}
			// Only the first product is cleared of NaN (0 * inf): a NaN here
			// makes a SUM NaN, which apply turns to 0, as in Redis.
			score = agg.apply(score, v*weights[j])
		}
		items = append(items, zItem{score, it.member})
		return true
	})
	return sortItems(items)
}

func zinterCard(srcs []*zset, limit int64) int {
	srcs, _ = bySize(srcs, nil)
	if srcs[0] == nil {
		return 0
	}
	n := 0
	srcs[0].Range(0, srcs[0].Len(), true, func(it zItem) bool {
		for _, z := range srcs[1:] {
			if _, ok := z.Score(it.member); !ok {
				return true
			}
		}
		n++
		return limit == 0 || int64(n) < limit
	})
	return n
}

func zdiff(srcs []*zset) []zItem {
	first := srcs[0]
	if first == nil {
		return nil
	}
	var items []zItem
	first.Range(0, first.Len(), false, func(it zItem) bool {
		for _, z := range srcs[1:] {
			if z == nil {
				continue
			}
			if _, ok := z.Score(it.member); ok {
				return true
			}
		}
		items = append(items, it)
		return true
	})
	return items
}

// zpopEvent is the event of a pop from either end.
func zpopEvent(max bool) string {
	if max {
		return "zpopmax"
	}
	return "zpopmin"
}
