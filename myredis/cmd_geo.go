package myredis

import (
	"fmt"
	"slices"
	"strconv"
)

// commandsGeo registers the geo commands, which keep points in a sorted set
// scored by their 52-bit geohash (geo.go). Every handler runs on the executor
// goroutine and parses all of its arguments before it changes anything.
func commandsGeo() []*command {
	return []*command{
		{name: "geoadd", arity: -5, flags: flagWrite, fn: cmdGeoadd, firstKey: 1, lastKey: 1},
		{name: "geopos", arity: -2, flags: flagReadonly, fn: cmdGeopos, firstKey: 1, lastKey: 1},
		{name: "geodist", arity: -4, flags: flagReadonly, fn: cmdGeodist, firstKey: 1, lastKey: 1},
		{name: "geohash", arity: -2, flags: flagReadonly, fn: cmdGeohash, firstKey: 1, lastKey: 1},
		{name: "geosearch", arity: -7, flags: flagReadonly, fn: geoSearchCmd(geoFlagSearch), firstKey: 1, lastKey: 1},
		{name: "geosearchstore", arity: -8, flags: flagWrite, fn: geoSearchCmd(geoFlagSearch | geoFlagSearchStore), firstKey: 1, lastKey: 2},
		{name: "georadius", arity: -6, flags: flagWrite, fn: geoSearchCmd(geoFlagCoords), firstKey: 1, lastKey: 1},
		{name: "georadius_ro", arity: -6, flags: flagReadonly, fn: geoSearchCmd(geoFlagCoords | geoFlagNoStore), firstKey: 1, lastKey: 1},
		{name: "georadiusbymember", arity: -5, flags: flagWrite, fn: geoSearchCmd(geoFlagMember), firstKey: 1, lastKey: 1},
		{name: "georadiusbymember_ro", arity: -5, flags: flagReadonly, fn: geoSearchCmd(geoFlagMember | geoFlagNoStore), firstKey: 1, lastKey: 1},
	}
}

// geoUnit returns the metres in one unit (m, km, ft, mi, any case).
func geoUnit(b []byte) (float64, bool) {
	switch {
	case eqFold(b, "m"):
		return 1, true
	case eqFold(b, "km"):
		return 1000, true
	case eqFold(b, "ft"):
		return 0.3048, true
	case eqFold(b, "mi"):
		return 1609.34, true
	}
	return 0, false
}

// parseGeoLonLat reads a longitude and a latitude, in Redis's limits.
func parseGeoLonLat(lonArg, latArg []byte) (lon, lat float64, errMsg string) {
	lon, ok := parseScore(string(lonArg))
	if !ok {
		return 0, 0, msgNotFloat
	}
	lat, ok = parseScore(string(latArg))
	if !ok {
		return 0, 0, msgNotFloat
	}
	if lon < -geoLonLimit || lon > geoLonLimit || lat < -geoLatLimit || lat > geoLatLimit {
		return 0, 0, fmt.Sprintf(msgGeoInvalidPair, formatCFloat(lon), formatCFloat(lat))
	}
	return lon, lat, ""
}

// --- GEOADD ---

// cmdGeoadd is GEOADD key [NX|XX] [CH] lon lat member ...: Redis turns it into
// ZADD with each point's geohash as the score, and so do we.
func cmdGeoadd(x *Ctx) {
	i := 2
	var nx, xx bool
options:
	for ; i < x.nargs(); i++ {
		switch a := x.args[i]; {
		case eqFold(a, "nx"):
			nx = true
		case eqFold(a, "xx"):
			xx = true
		case eqFold(a, "ch"):
		default:
			break options
		}
	}
	if (x.nargs()-i)%3 != 0 || (nx && xx) {
		x.err(msgSyntax)
		return
	}
	zargs := make([][]byte, 0, i+(x.nargs()-i)/3*2)
	zargs = append(zargs, []byte("zadd"))
	zargs = append(zargs, x.args[1:i]...)
	for j := i; j < x.nargs(); j += 3 {
		lon, lat, msg := parseGeoLonLat(x.args[j], x.args[j+1])
		if msg != "" {
			x.err(msg)
			return
		}
		score := strconv.FormatUint(uint64(geoScore(lon, lat)), 10)
		zargs = append(zargs, []byte(score), x.args[j+2])
	}
	orig := x.args
	x.args = zargs
	x.zadd(false)
	x.args = orig
}

// --- GEOPOS, GEODIST, GEOHASH ---

func cmdGeopos(x *Ctx) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	x.w.Array(x.nargs() - 2)
	for j := 2; j < x.nargs(); j++ {
		var score float64
		found := false
		if z != nil {
			score, found = z.Score(x.arg(j))
		}
		if !found {
			x.w.NullArray()
			continue
		}
		lon, lat := geoDecodeScore(score)
		x.w.Array(2)
		x.replyGeoCoord(lon)
		x.replyGeoCoord(lat)
	}
}

func cmdGeodist(x *Ctx) {
	toMeters := 1.0
	switch {
	case x.nargs() == 5:
		u, ok := geoUnit(x.args[4])
		if !ok {
			x.err(msgGeoUnit)
			return
		}
		toMeters = u
	case x.nargs() > 5:
		x.err(msgSyntax)
		return
	}
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	if z == nil {
		x.w.Null()
		return
	}
	s1, ok1 := z.Score(x.arg(2))
	s2, ok2 := z.Score(x.arg(3))
	if !ok1 || !ok2 {
		x.w.Null()
		return
	}
	lon1, lat1 := geoDecodeScore(s1)
	lon2, lat2 := geoDecodeScore(s2)
	x.w.BulkString(formatGeoDistance(geoDistance(lon1, lat1, lon2, lat2) / toMeters))
}

func cmdGeohash(x *Ctx) {
	z, ok := x.readZSet(x.arg(1))
	if !ok {
		return
	}
	x.w.Array(x.nargs() - 2)
	for j := 2; j < x.nargs(); j++ {
		var score float64
		found := false
		if z != nil {
			score, found = z.Score(x.arg(j))
		}
		if !found {
			x.w.Null()
			continue
		}
		x.w.BulkString(geoHashString(score))
	}
}

// --- GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER (and _RO) ---

// Which search command is running (Redis's georadiusGeneric flags).
const (
	geoFlagCoords      = 1 << iota // GEORADIUS: centre from lon lat arguments
	geoFlagMember                  // GEORADIUSBYMEMBER: centre from a member
	geoFlagNoStore                 // the _RO variants: no STORE / STOREDIST
	geoFlagSearch                  // GEOSEARCH syntax (FROM*, BY*)
	geoFlagSearchStore             // GEOSEARCHSTORE: destination first, STOREDIST flag
)

// Result orders.
const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// geoQuery is a parsed search.
type geoQuery struct {
	shape                         geoShape
	withDist, withHash, withCoord bool
	sort                          int
	any                           bool
	count                         int64 // 0: no limit
	store                         bool
	storeKey                      string
	storeDist                     bool
}

// parseGeoQuery reads a search command's arguments as Redis's georadiusGeneric
// does, errors in the same order. z is the source set (nil when missing: then a
// member centre is not looked up, and a missing member is no error). It only
// reads z, so it may run anywhere the set may be read.
func parseGeoQuery(args [][]byte, flags int, z *zset) (q geoQuery, errMsg string) {
	memberPos := func(member []byte) bool {
		score, ok := z.Score(string(member))
		if ok {
			q.shape.lon, q.shape.lat = geoDecodeScore(score)
		}
		return ok
	}
	base := 2
	switch {
	case flags&geoFlagCoords != 0:
		base = 6
		if q.shape.lon, q.shape.lat, errMsg = parseGeoLonLat(args[2], args[3]); errMsg != "" {
			return q, errMsg
		}
		if errMsg = q.parseRadius(args[4:6]); errMsg != "" {
			return q, errMsg
		}
	case flags&geoFlagMember != 0:
		base = 5
		if z == nil {
			break
		}
		if !memberPos(args[2]) {
			return q, msgGeoNoMember
		}
		if errMsg = q.parseRadius(args[3:5]); errMsg != "" {
			return q, errMsg
		}
	case flags&geoFlagSearchStore != 0:
		base = 3
		q.store, q.storeKey = true, string(args[1])
	}

	var fromMember, fromLonLat, byRadius, byBox bool
	canStore := flags&(geoFlagNoStore|geoFlagSearch) == 0
	for i := base; i < len(args); i++ {
		a, left := args[i], len(args)-i-1 // left: arguments after a
		switch {
		case eqFold(a, "withdist"):
			q.withDist = true
		case eqFold(a, "withhash"):
			q.withHash = true
		case eqFold(a, "withcoord"):
			q.withCoord = true
		case eqFold(a, "any"):
			q.any = true
		case eqFold(a, "asc"):
			q.sort = geoSortAsc
		case eqFold(a, "desc"):
			q.sort = geoSortDesc
		case eqFold(a, "count") && left >= 1:
			n, ok := parseRedisInt(args[i+1])
			if !ok {
				return q, msgNotInt
			}
			if n <= 0 {
				return q, msgGeoCount
			}
			q.count = n
			i++
		case (eqFold(a, "store") || eqFold(a, "storedist")) && left >= 1 && canStore:
			q.store, q.storeKey, q.storeDist = true, string(args[i+1]), eqFold(a, "storedist")
			i++
		case eqFold(a, "storedist") && flags&geoFlagSearchStore != 0:
			q.storeDist = true
		case eqFold(a, "frommember") && left >= 1 && flags&geoFlagSearch != 0 && !fromLonLat:
			if z != nil && !memberPos(args[i+1]) {
				return q, msgGeoNoMember
			}
			fromMember = true
			i++
		case eqFold(a, "fromlonlat") && left >= 2 && flags&geoFlagSearch != 0 && !fromMember:
			if q.shape.lon, q.shape.lat, errMsg = parseGeoLonLat(args[i+1], args[i+2]); errMsg != "" {
				return q, errMsg
			}
			fromLonLat = true
			i += 2
		case eqFold(a, "byradius") && left >= 2 && flags&geoFlagSearch != 0 && !byBox:
			if errMsg = q.parseRadius(args[i+1 : i+3]); errMsg != "" {
				return q, errMsg
			}
			byRadius = true
			i += 2
		case eqFold(a, "bybox") && left >= 3 && flags&geoFlagSearch != 0 && !byRadius:
			if errMsg = q.parseBox(args[i+1 : i+4]); errMsg != "" {
				return q, errMsg
			}
			byBox = true
			i += 3
		default:
			return q, msgSyntax
		}
	}

	search := flags&geoFlagSearch != 0
	switch {
	case q.store && (q.withDist || q.withHash || q.withCoord):
		name := "STORE option in GEORADIUS"
		if flags&geoFlagSearchStore != 0 {
			name = "GEOSEARCHSTORE"
		}
		return q, fmt.Sprintf(msgGeoStoreWith, name)
	case search && !fromMember && !fromLonLat:
		return q, fmt.Sprintf(msgGeoNeedFrom, args[0])
	case search && !byRadius && !byBox:
		return q, fmt.Sprintf(msgGeoNeedBy, args[0])
	case q.any && q.count == 0:
		return q, msgGeoAnyCount
	}
	if q.count != 0 && q.sort == geoSortNone && !q.any {
		q.sort = geoSortAsc // the closest COUNT, as Redis
	}
	return q, ""
}

// parseRadius reads "<radius> <unit>".
func (q *geoQuery) parseRadius(args [][]byte) string {
	r, ok := parseScore(string(args[0]))
	switch {
	case !ok:
		return msgGeoNeedRadius
	case r < 0:
		return msgGeoNegRadius
	}
	u, ok := geoUnit(args[1])
	if !ok {
		return msgGeoUnit
	}
	q.shape.box, q.shape.radius, q.shape.toMeters = false, r, u
	return ""
}

// parseBox reads "<width> <height> <unit>".
func (q *geoQuery) parseBox(args [][]byte) string {
	w, ok := parseScore(string(args[0]))
	if !ok {
		return msgGeoNeedWidth
	}
	h, ok := parseScore(string(args[1]))
	if !ok {
		return msgGeoNeedHeight
	}
	if w < 0 || h < 0 {
		return msgGeoNegBox
	}
	u, ok := geoUnit(args[2])
	if !ok {
		return msgGeoUnit
	}
	q.shape.box, q.shape.width, q.shape.height, q.shape.toMeters = true, w, h, u
	return ""
}

// geoSearchCmd builds the handler of one search command.
func geoSearchCmd(flags int) func(x *Ctx) {
	return func(x *Ctx) { x.geoSearch(flags) }
}

// geoSearch runs a search command: parse, search, then reply or store.
func (x *Ctx) geoSearch(flags int) {
	src := 1
	if flags&geoFlagSearchStore != 0 {
		src = 2
	}
	z, ok := x.readZSet(x.arg(src))
	if !ok {
		return
	}
	q, msg := parseGeoQuery(x.args, flags, z)
	if msg != "" {
		x.err(msg)
		return
	}
	if z == nil {
		if !q.store {
			x.w.Array(0)
			return
		}
		if x.db.delete(q.storeKey) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", q.storeKey)
		}
		x.w.Int(0)
		return
	}
	limit := 0
	if q.any {
		limit = int(q.count)
	}
	hits := geoSearch(z, &q.shape, limit)
	switch q.sort {
	case geoSortAsc:
		slices.SortStableFunc(hits, func(a, b geoPoint) int { return cmpFloat(a.dist, b.dist) })
	case geoSortDesc:
		slices.SortStableFunc(hits, func(a, b geoPoint) int { return cmpFloat(b.dist, a.dist) })
	}
	if q.count > 0 && int64(len(hits)) > q.count {
		hits = hits[:q.count]
	}
	for i := range hits {
		hits[i].dist /= q.shape.toMeters
	}
	if q.store {
		x.geoStore(q.storeKey, hits, q.storeDist)
		return
	}
	x.replyGeoHits(hits, &q)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// replyGeoHits writes the hits, each a bare member or an array of the member
// and the asked-for extras (distance, hash, coordinates, in that order).
func (x *Ctx) replyGeoHits(hits []geoPoint, q *geoQuery) {
	extras := 0
	for _, on := range []bool{q.withDist, q.withHash, q.withCoord} {
		if on {
			extras++
		}
	}
	x.w.Array(len(hits))
	for _, h := range hits {
		if extras > 0 {
			x.w.Array(extras + 1)
		}
		x.w.BulkString(h.member)
		if q.withDist {
			x.w.BulkString(formatGeoDistance(h.dist))
		}
		if q.withHash {
			x.w.Int(int64(h.score))
		}
		if q.withCoord {
			x.w.Array(2)
			x.replyGeoCoord(h.lon)
			x.replyGeoCoord(h.lat)
		}
	}
}

// geoStore replaces dst with the hits, scored by geohash or by distance
// (STOREDIST), or deletes dst when there are none; it replies with the count.
func (x *Ctx) geoStore(dst string, hits []geoPoint, byDist bool) {
	if len(hits) == 0 {
		if x.db.delete(dst) {
			x.dirty(1)
			x.notify(notifyGeneric, "del", dst)
		}
		x.w.Int(0)
		return
	}
	z := newZSet()
	for _, h := range hits {
		score := h.score
		if byDist {
			score = h.dist
		}
		z.Add(h.member, score)
	}
	x.db.set(dst, z, false)
	x.dirty(len(hits))
	if x.cmd.name == "geosearchstore" {
		x.notify(notifyZset, "geosearchstore", dst)
	} else {
		x.notify(notifyZset, "georadiusstore", dst)
	}
	x.w.Int(int64(len(hits)))
}

// replyGeoCoord writes a longitude or latitude as Redis's addReplyHumanLongDouble:
// a bulk string in RESP2, a double in RESP3, the same digits in both.
func (x *Ctx) replyGeoCoord(f float64) {
	if x.w.RESP3() {
		x.w.Raw([]byte("," + formatGeoCoord(f) + "\r\n"))
		return
	}
	x.w.BulkString(formatGeoCoord(f))
}
