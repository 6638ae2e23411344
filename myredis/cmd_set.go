package myredis

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// commandsSet registers the set commands. Every handler runs on the executor
// goroutine and checks all of its arguments before it changes anything; a set
// whose last member goes is deleted with it. The value type is setValue (set.go).
func commandsSet() []*command {
	return []*command{
		{name: "sadd", arity: -3, flags: flagWrite, fn: cmdSadd, firstKey: 1, lastKey: 1},
		{name: "srem", arity: -3, flags: flagWrite, fn: cmdSrem, firstKey: 1, lastKey: 1},
		{name: "scard", arity: 2, flags: flagReadonly, fn: cmdScard, firstKey: 1, lastKey: 1},
		{name: "sismember", arity: 3, flags: flagReadonly, fn: cmdSismember, firstKey: 1, lastKey: 1},
		{name: "smismember", arity: -3, flags: flagReadonly, fn: cmdSmismember, firstKey: 1, lastKey: 1},
		{name: "smembers", arity: 2, flags: flagReadonly, fn: cmdSmembers, firstKey: 1, lastKey: 1},
		{name: "srandmember", arity: -2, flags: flagReadonly, fn: cmdSrandmember, firstKey: 1, lastKey: 1},
		{name: "spop", arity: -2, flags: flagWrite, fn: cmdSpop, firstKey: 1, lastKey: 1},
		{name: "smove", arity: 4, flags: flagWrite, fn: cmdSmove, firstKey: 1, lastKey: 2},
		{name: "sinter", arity: -2, flags: flagReadonly, fn: sinterCmd(false), firstKey: 1, lastKey: -1},
		{name: "sinterstore", arity: -3, flags: flagWrite, fn: sinterCmd(true), firstKey: 1, lastKey: -1},
		{name: "sintercard", arity: -3, flags: flagReadonly, fn: cmdSintercard, firstKey: 2, lastKey: -1, keysFn: sintercardKeys},
		{name: "sunion", arity: -2, flags: flagReadonly, fn: sunionDiffCmd(false, false), firstKey: 1, lastKey: -1},
		{name: "sunionstore", arity: -3, flags: flagWrite, fn: sunionDiffCmd(false, true), firstKey: 1, lastKey: -1},
		{name: "sdiff", arity: -2, flags: flagReadonly, fn: sunionDiffCmd(true, false), firstKey: 1, lastKey: -1},
		{name: "sdiffstore", arity: -3, flags: flagWrite, fn: sunionDiffCmd(true, true), firstKey: 1, lastKey: -1},
		{name: "sscan", arity: -3, flags: flagReadonly, fn: cmdSscan, firstKey: 1, lastKey: 1},
	}
}

// readSet looks key up for a read: s is nil when the key is missing; ok is false
// (and WRONGTYPE written) when it holds another type.
func (x *Ctx) readSet(key string) (s *setValue, ok bool) { return readValue[*setValue](x, key) }

// writeSet looks key up for a write, as readSet without the hit counters.
func (x *Ctx) writeSet(key string) (s *setValue, ok bool) { return writeValue[*setValue](x, key) }

func (x *Ctx) entrySet(e *entry) (*setValue, bool) { return valueAs[*setValue](x, e) }

// setChanged records n changes to the set at key: the key goes with its last
// member; otherwise WATCHers hear of the change.
func (x *Ctx) setChanged(key string, s *setValue, n int) { x.membersChanged(key, s.Len(), n) }

// setMaxInts is the set-max-intset-entries in force.
func (x *Ctx) setMaxInts() int { return x.s.cfg.setMaxIntsetEntries() }

// replySet writes every member of s (nil: none) in the set's order, as a RESP3
// set.
func (x *Ctx) replySet(s *setValue) { x.replyMembers(s, x.w.Set) }

// replyMembers writes every member of s (nil: none) in the set's order after
// head (the Writer's Set or Array).
func (x *Ctx) replyMembers(s *setValue, head func(n int)) {
	if s == nil {
		head(0)
		return
	}
	head(s.Len())
	var buf []byte
	for i := range s.Len() {
		buf = s.appendAt(buf[:0], i)
		x.w.Bulk(buf)
	}
}

func cmdSadd(x *Ctx) {
	key := x.arg(1)
	s, ok := x.writeSet(key)
	if !ok {
		return
	}
	if s == nil {
		s = newSet()
		x.db.add(key, s)
	}
	added := 0
	for _, m := range x.args[2:] {
		if s.add(m, x.setMaxInts()) {
			added++
		}
	}
	if added > 0 {
		x.db.modified(key)
		x.notify(notifySet, "sadd", key)
	}
	x.dirty(added)
	x.w.Int(int64(added))
}

func cmdSrem(x *Ctx) {
	key := x.arg(1)
	s, ok := x.writeSet(key)
	if !ok {
		return
	}
	removed := 0
	if s != nil {
		for _, m := range x.args[2:] {
			if s.remove(m) {
				removed++
				if s.Len() == 0 {
					break
				}
			}
		}
		if removed > 0 {
			x.notify(notifySet, "srem", key)
		}
		x.setChanged(key, s, removed)
	}
	x.w.Int(int64(removed))
}

func cmdScard(x *Ctx) {
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	if s == nil {
		x.w.Int(0)
		return
	}
	x.w.Int(int64(s.Len()))
}

func cmdSismember(x *Ctx) {
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	x.w.Bool(s != nil && s.has(x.args[2]))
}

func cmdSmismember(x *Ctx) {
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	x.w.Array(x.nargs() - 2)
	for _, m := range x.args[2:] {
		x.w.Bool(s != nil && s.has(m))
	}
}

func cmdSmembers(x *Ctx) {
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	x.replySet(s)
}

// srandMax bounds SRANDMEMBER's negative count, as zrandMax does ZRANDMEMBER's.
const srandMax = zrandMax

// SRANDMEMBER key [count]. A positive count gives that many distinct members (all
// of them, in the set's order, when count >= SCARD); a negative one |count|
// members drawn independently, so some may repeat.
func cmdSrandmember(x *Ctx) {
	if x.nargs() > 3 {
		x.err(msgSyntax)
		return
	}
	if x.nargs() == 2 {
		s, ok := x.readSet(x.arg(1))
		if !ok {
			return
		}
		if s == nil {
			x.w.Null()
			return
		}
		x.w.BulkString(s.at(s.random()))
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
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	if s == nil || count == 0 {
		x.w.Array(0)
		return
	}
	switch {
	case count < 0 || count == 1:
		n := max(-count, 1)
		if n > srandMax {
			x.err(msgOutOfRange)
			return
		}
		x.w.Array(int(n))
		var buf []byte
		for range n {
			buf = s.appendAt(buf[:0], s.random())
			x.w.Bulk(buf)
		}
	case count >= int64(s.Len()):
		x.replyAsNewSet(s, x.w.Array) // an array in RESP3 too, as Redis
	default:
		x.replyPositions(s, s.sample(int(count)))
	}
}

// replyAsNewSet writes every member of s in the order a copy of s would have:
// Redis answers SPOP and SRANDMEMBER with a count covering the whole set by
// building a new set, which is an intset (ascending) when the members allow it.
func (x *Ctx) replyAsNewSet(s *setValue, head func(n int)) {
	if !s.hash || s.Len() > x.setMaxInts() {
		x.replyMembers(s, head)
		return
	}
	ints := make([]int64, 0, s.Len())
	for _, e := range s.entries {
		n, ok := parseRedisInt([]byte(e.member))
		if !ok {
			x.replyMembers(s, head)
			return
		}
		ints = append(ints, n)
	}
	slices.Sort(ints)
	x.replyMembers(&setValue{ints: ints}, head)
}

// replyPositions writes the members at the given positions of s.
func (x *Ctx) replyPositions(s *setValue, pos []int) {
	x.w.Array(len(pos))
	var buf []byte
	for _, i := range pos {
		buf = s.appendAt(buf[:0], i)
		x.w.Bulk(buf)
	}
}

// spopMoveFactor is Redis's SPOP_MOVE_STRATEGY_MUL: when what stays is less than
// a fifth of what goes, SPOP rebuilds the set from what stays.
const spopMoveFactor = 5

// SPOP key [count]. The AOF records the popped members as one SREM (a DEL when
// the whole set goes), so a replay removes exactly what was popped.
func cmdSpop(x *Ctx) {
	if x.nargs() > 3 {
		x.err(msgSyntax)
		return
	}
	key := x.arg(1)
	if x.nargs() == 2 {
		s, ok := x.writeSet(key)
		if !ok {
			return
		}
		if s == nil {
			x.w.Null()
			return
		}
		i := s.random()
		m := s.at(i)
		s.removeAt(i)
		x.notify(notifySet, "spop", key)
		x.setChanged(key, s, 1)
		x.propagateAs("SREM", key, m)
		x.w.BulkString(m)
		return
	}
	count, err := strconv.ParseInt(x.arg(2), 10, 64)
	if err != nil || !validIntText(x.args[2]) || count < 0 {
		x.err(msgNotPositive)
		return
	}
	s, ok := x.writeSet(key)
	if !ok {
		return
	}
	if s == nil || count == 0 {
		x.w.Set(0)
		return
	}
	if size := s.Len(); count >= int64(size) {
		x.replyAsNewSet(s, x.w.Set)
		x.notify(notifySet, "spop", key)
		x.db.delete(key)
		x.notify(notifyGeneric, "del", key)
		x.dirty(size)
		x.propagateAs("DEL", key)
		return
	}
	x.spopSome(key, s, int(count))
}

// spopSome pops count (< Len) random members of s and replies with them.
func (x *Ctx) spopSome(key string, s *setValue, count int) {
	popped := make([]string, 0, count)
	if remaining := s.Len() - count; remaining*spopMoveFactor > count {
		for range count {
			i := s.random()
			popped = append(popped, s.at(i))
			s.removeAt(i)
		}
	} else {
		// Most of the set goes: as Redis, build a new set of the members that
		// stay (whose encoding may then be an intset again) and pop the rest.
		keep := s.sample(remaining)
		next := newSet()
		k := 0
		for i := range s.Len() {
			if k < len(keep) && keep[k] == i {
				next.add([]byte(s.at(i)), x.setMaxInts())
				k++
				continue
			}
			popped = append(popped, s.at(i))
		}
		*s = *next
	}
	x.notify(notifySet, "spop", key)
	x.setChanged(key, s, count)
	if len(x.s.hooks) > 0 {
		x.propagateAs(append([]string{"SREM", key}, popped...)...)
	}
	x.w.Set(len(popped))
	for _, m := range popped {
		x.w.BulkString(m)
	}
}

// SMOVE source destination member.
func cmdSmove(x *Ctx) {
	srcKey, dstKey := x.arg(1), x.arg(2)
	src, ok := x.writeSet(srcKey)
	if !ok {
		return
	}
	if src == nil {
		x.w.Int(0)
		return
	}
	dst, ok := x.writeSet(dstKey)
	if !ok {
		return
	}
	m := x.args[3]
	if src == dst {
		x.w.Bool(src.has(m))
		return
	}
	if !src.remove(m) {
		x.w.Int(0)
		return
	}
	x.notify(notifySet, "srem", srcKey)
	x.setChanged(srcKey, src, 1)
	if dst == nil {
		dst = newSet()
		x.db.add(dstKey, dst)
	}
	if dst.add(m, x.setMaxInts()) {
		x.db.modified(dstKey)
		x.dirty(1)
		x.notify(notifySet, "sadd", dstKey)
	}
	x.w.Int(1)
}

// readSets looks up every key for reading (a *STORE's sources too, as Redis:
// they count keyspace hits and misses), missing keys as nil. ok is false
// (WRONGTYPE written) if any holds another type.
func (x *Ctx) readSets(keys [][]byte, store bool) ([]*setValue, bool) {
	sets := make([]*setValue, len(keys))
	for i, k := range keys {
		var ok bool
		sets[i], ok = x.readSet(string(k))
		if !ok {
			return nil, false
		}
	}
	return sets, true
}

// sinterCmd builds SINTER and SINTERSTORE (store).
func sinterCmd(store bool) func(*Ctx) {
	return func(x *Ctx) {
		first := 1
		if store {
			first = 2
		}
		sets, ok := x.readSets(x.args[first:], store)
		if !ok {
			return
		}
		var out *setValue
		if store {
			out = newSet()
		}
		var members []string
		sinter(sets, func(m string) bool {
			if store {
				out.add([]byte(m), x.setMaxInts())
			} else {
				members = append(members, m)
			}
			return true
		})
		if store {
			x.storeSet(x.arg(1), out)
			return
		}
		x.w.Set(len(members))
		for _, m := range members {
			x.w.BulkString(m)
		}
	}
}

// sinter calls fn for each member of the intersection of sets (a nil set is
// empty), in the order of the smallest set, until fn returns false.
func sinter(sets []*setValue, fn func(m string) bool) {
	for _, s := range sets {
		if s == nil {
			return
		}
	}
	sorted := append([]*setValue(nil), sets...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Len() < sorted[j].Len() })
	small, rest := sorted[0], sorted[1:]
	var buf []byte
	for i := range small.Len() {
		buf = small.appendAt(buf[:0], i)
		in := true
		for _, o := range rest {
			if o != small && !o.has(buf) {
				in = false
				break
			}
		}
		if in && !fn(string(buf)) {
			return
		}
	}
}

// SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSintercard(x *Ctx) {
	n, limit, msg := parseSintercard(x.args[1:])
	if msg != "" {
		x.err(msg)
		return
	}
	sets, ok := x.readSets(x.args[2:2+n], false)
	if !ok {
		return
	}
	card := int64(0)
	sinter(sets, func(string) bool {
		card++
		return limit == 0 || card < limit
	})
	x.w.Int(card)
}

// sintercardKeys are SINTERCARD's key arguments, numkeys of them.
func sintercardKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	n, ok := parseRedisInt(args[1])
	if !ok || n < 1 || n > int64(len(args)-2) {
		return nil
	}
	return args[2 : 2+n]
}

// parseSintercard reads SINTERCARD's arguments after its name: numkeys, the keys
// and LIMIT (0: none), in Redis's order of checks. msg is the error to answer.
func parseSintercard(args [][]byte) (numkeys int, limit int64, msg string) {
	n, ok := parseRedisInt(args[0])
	if !ok || n < 1 {
		return 0, 0, msgNumkeysPositive
	}
	if n > int64(len(args)-1) {
		return 0, 0, msgNumKeysTooMany
	}
	for j := 1 + int(n); j < len(args); j += 2 {
		if !eqFold(args[j], "limit") || j+1 >= len(args) {
			return 0, 0, msgSyntax
		}
		l, ok := parseRedisInt(args[j+1])
		if !ok || l < 0 {
			return 0, 0, msgLimitNegative
		}
		limit = l
	}
	return int(n), limit, ""
}

// sunionDiffCmd builds SUNION, SDIFF (diff) and their STORE forms. As in Redis
// the result is a new set, so its order is that set's: ascending when it is an
// intset.
func sunionDiffCmd(diff, store bool) func(*Ctx) {
	return func(x *Ctx) {
		first := 1
		if store {
			first = 2
		}
		sets, ok := x.readSets(x.args[first:], store)
		if !ok {
			return
		}
		out := newSet()
		if diff {
			sdiffInto(out, sets, x.setMaxInts())
		} else {
			for _, s := range sets {
				addAll(out, s, x.setMaxInts())
			}
		}
		if store {
			x.storeSet(x.arg(1), out)
			return
		}
		x.replySet(out)
	}
}

// addAll adds every member of s (nil: none) to out.
func addAll(out, s *setValue, maxInts int) {
	if s == nil {
		return
	}
	var buf []byte
	for i := range s.Len() {
		buf = s.appendAt(buf[:0], i)
		out.add(buf, maxInts)
	}
}

// sdiffInto adds to out the members of sets[0] that are in none of the others.
func sdiffInto(out *setValue, sets []*setValue, maxInts int) {
	first := sets[0]
	if first == nil {
		return
	}
	var buf []byte
	for i := range first.Len() {
		buf = first.appendAt(buf[:0], i)
		in := false
		for _, o := range sets[1:] {
			if o == first || (o != nil && o.has(buf)) {
				in = true
				break
			}
		}
		if !in {
			out.add(buf, maxInts)
		}
	}
}

// storeSet replaces dst with s (dropping any TTL), or deletes dst when s is empty,
// and replies with s's size: the ending of every S*STORE command.
func (x *Ctx) storeSet(dst string, s *setValue) {
	if s.Len() == 0 {
		if x.db.delete(dst) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", dst)
		}
		x.w.Int(0)
		return
	}
	x.db.set(dst, s, false)
	x.dirty(1)
	x.notify(notifySet, x.cmd.name, dst) // sinterstore, sunionstore, sdiffstore
	x.w.Int(int64(s.Len()))
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. An intset comes back whole with
// cursor 0, as Redis sends it; a hashtable set is walked COUNT members a call by
// setValue.scan, whose cursor survives removals.
func cmdSscan(x *Ctx) {
	cursor, ok := parseScanCursorString(x.arg(2))
	if !ok {
		x.err(msgInvalidCursor)
		return
	}
	s, ok := x.readSet(x.arg(1))
	if !ok {
		return
	}
	if s == nil {
		x.w.Array(2)
		x.w.BulkString("0")
		x.w.Array(0)
		return
	}
	pattern, count, ok := x.scanOpts(3)
	if !ok {
		return
	}
	var found []string
	keep := func(m string) {
		if pattern == "*" || globMatch(pattern, m) { // a lone * matches all, "" included, as Redis
			found = append(found, m)
		}
	}
	next := uint64(0)
	if s.hash {
		next = s.scan(cursor, count, keep)
	} else {
		for i := range s.Len() {
			keep(s.at(i))
		}
	}
	x.w.Array(2)
	x.w.BulkString(strconv.FormatUint(next, 10))
	x.w.BulkStrings(found)
}
