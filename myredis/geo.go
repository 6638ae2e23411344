package myredis

import (
	"math"
	"strconv"
	"strings"
)

// Geo points live in a sorted set whose score is a 52-bit geohash: 26 bits of
// longitude and 26 of latitude, interleaved (latitude in the even bits), over
// Redis's Web-Mercator limits (latitude ±85.05112878). The arithmetic below
// follows Redis 7.0's geohash.c and geohash_helper.c step by step so that scores,
// decoded coordinates, distances and search areas come out bit for bit the same.
// Products are wrapped in float64() where C rounds them, which keeps Go from
// fusing them into one multiply-add.

const (
	geoStepMax  = 26 // 26*2 = 52 bits
	geoLatLimit = 85.05112878
	geoLonLimit = 180
)

// Variables, not constants: Go folds constant expressions exactly, C rounds
// each step to a double.
var (
	geoPi          = math.Pi
	geoDegToRad    = geoPi / 180.0 // Redis's D_R (M_PI / 180.0)
	geoEarthRadius = 6372797.560856
	geoMercatorMax = 20037726.37

	geoLonRange = geoRange{-geoLonLimit, geoLonLimit}
	geoLatRange = geoRange{-geoLatLimit, geoLatLimit}
)

// geoRange is an interval of one coordinate.
type geoRange struct{ min, max float64 }

// geoHash is an interleaved hash of step*2 bits. A zero step marks a neighbour
// the search leaves out.
type geoHash struct {
	bits uint64
	step uint8
}

func (h geoHash) isZero() bool { return h.bits == 0 && h.step == 0 }

// geoArea is the cell a hash stands for.
type geoArea struct{ lon, lat geoRange }

func degRad(a float64) float64 { return float64(a * geoDegToRad) }
func radDeg(a float64) float64 { return a / geoDegToRad }

// interleave64 puts x's bits at the even positions and y's at the odd ones.
func interleave64(x32, y32 uint32) uint64 {
	x, y := uint64(x32), uint64(y32)
	masks := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
		0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	shifts := [...]uint{1, 2, 4, 8, 16}
	for i := 4; i >= 0; i-- {
		x = (x | x<<shifts[i]) & masks[i]
		y = (y | y<<shifts[i]) & masks[i]
	}
	return x | y<<1
}

// deinterleave64 undoes interleave64: the even bits in the low 32 bits of the
// result, the odd bits in the high 32.
func deinterleave64(v uint64) uint64 {
	masks := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
		0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	shifts := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := v, v>>1
	for i := range masks {
		x = (x | x>>shifts[i]) & masks[i]
		y = (y | y>>shifts[i]) & masks[i]
	}
	return x | y<<32
}

// geoEncode hashes a point with step bits per coordinate over the given ranges;
// ok is false outside Redis's limits or the ranges.
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) (geoHash, bool) {
	if lon > geoLonLimit || lon < -geoLonLimit || lat > geoLatLimit || lat < -geoLatLimit {
		return geoHash{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return geoHash{}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	scale := float64(uint64(1) << step)
	latOff = float64(latOff * scale)
	lonOff = float64(lonOff * scale)
	return geoHash{bits: interleave64(uint32(latOff), uint32(lonOff)), step: step}, true
}

// geoEncodeWGS84 hashes a point over Redis's coordinate limits.
func geoEncodeWGS84(lon, lat float64, step uint8) (geoHash, bool) {
	return geoEncode(geoLonRange, geoLatRange, lon, lat, step)
}

// geoDecode returns the cell of h over the given ranges.
func geoDecode(lonR, latR geoRange, h geoHash) geoArea {
	sep := deinterleave64(h.bits)
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	ilat := uint32(sep)
	ilon := uint32(sep >> 32)
	div := float64(uint64(1) << h.step)
	var a geoArea
	a.lat.min = latR.min + float64(float64(ilat)/div*latScale)
	a.lat.max = latR.min + float64(float64(ilat+1)/div*latScale) // uint32 sum, as C's
	a.lon.min = lonR.min + float64(float64(ilon)/div*lonScale)
	a.lon.max = lonR.min + float64(float64(ilon+1)/div*lonScale)
	return a
}

// geoAlign52 shifts a hash of any step to the 52-bit score space.
func geoAlign52(h geoHash) uint64 { return h.bits << (52 - uint(h.step)*2) }

// geoScore is the sorted-set score of a point (valid coordinates only).
func geoScore(lon, lat float64) float64 {
	h, _ := geoEncodeWGS84(lon, lat, geoStepMax)
	return float64(geoAlign52(h))
}

// geoDecodeScore returns the centre of the cell a score stands for, clamped to
// Redis's limits, as Redis's decodeGeohash.
func geoDecodeScore(score float64) (lon, lat float64) {
	a := geoDecode(geoLonRange, geoLatRange, geoHash{bits: uint64(score), step: geoStepMax})
	lon = (a.lon.min + a.lon.max) / 2
	lon = min(max(lon, -geoLonLimit), geoLonLimit)
	lat = (a.lat.min + a.lat.max) / 2
	lat = min(max(lat, -geoLatLimit), geoLatLimit)
	return lon, lat
}

// geoLatDistance is the distance in metres between two latitudes on one meridian.
func geoLatDistance(lat1, lat2 float64) float64 {
	return float64(geoEarthRadius * math.Abs(degRad(lat2)-degRad(lat1)))
}

// geoDistance is Redis's haversine distance in metres.
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	cos1, cos2 := math.NaN(), math.NaN()
	return geoDistanceCos(lon1, lat1, lon2, lat2, &cos1, &cos2)
}

// geoDistanceCos is geoDistance with the cosines of the two latitudes kept in
// *cos1 and *cos2 (NaN: not computed yet), so a search computes the centre's
// once. The same input always gives the same cosine, so the result does not
// change.
func geoDistanceCos(lon1, lat1, lon2, lat2 float64, cos1, cos2 *float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := geoSin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := geoSin((lat2r - lat1r) / 2)
	if math.IsNaN(*cos1) {
		*cos1 = geoCos(lat1r)
	}
	if math.IsNaN(*cos2) {
		*cos2 = geoCos(lat2r)
	}
	a := float64(u*u) + float64(float64(float64(*cos1**cos2)*v)*v)
	return float64(2.0*geoEarthRadius) * geoAsin(math.Sqrt(a))
}

// geoHashString is GEOHASH's 11-character standard geohash of a score: the
// decoded centre re-encoded over [-180,180] x [-90,90], its last character '0'.
func geoHashString(score float64) string {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	lon, lat := geoDecodeScore(score)
	h, _ := geoEncode(geoRange{-180, 180}, geoRange{-90, 90}, lon, lat, geoStepMax)
	var buf [11]byte
	for i := range 10 {
		buf[i] = alphabet[(h.bits>>(52-(i+1)*5))&0x1f]
	}
	buf[10] = alphabet[0]
	return string(buf[:])
}

// A geoShape is a search area: a circle (radius) or an axis-aligned box
// (width x height) around a centre, sizes in the caller's unit.
type geoShape struct {
	lon, lat      float64
	box           bool
	radius        float64
	width, height float64
	toMeters      float64 // metres per unit
	cosLat        float64 // cosine of the centre's latitude, NaN until computed
}

// bounds is the shape's bounding box in degrees (Redis's geohashBoundingBox).
func (s *geoShape) bounds() (minLon, minLat, maxLon, maxLat float64) {
	height, width := float64(s.toMeters*s.radius), float64(s.toMeters*s.radius)
	if s.box {
		height = float64(s.toMeters * (s.height / 2))
		width = float64(s.toMeters * (s.width / 2))
	}
	latDelta := radDeg(height / geoEarthRadius)
	lonDeltaTop := radDeg(width / geoEarthRadius / geoCos(degRad(s.lat+latDelta)))
	lonDeltaBottom := radDeg(width / geoEarthRadius / geoCos(degRad(s.lat-latDelta)))
	lonDelta := lonDeltaTop
	if s.lat < 0 {
		lonDelta = lonDeltaBottom
	}
	return s.lon - lonDelta, s.lat - latDelta, s.lon + lonDelta, s.lat + latDelta
}

// radiusMeters is the distance from the centre to the farthest edge point.
func (s *geoShape) radiusMeters() float64 {
	r := s.radius
	if s.box {
		r = math.Sqrt(float64((s.width/2)*(s.width/2)) + float64((s.height/2)*(s.height/2)))
	}
	return float64(r * s.toMeters)
}

// contains reports whether the point of a score lies in the shape, with its
// decoded position and its distance (metres) from the centre. s.cosLat holds
// the cosine of the centre's latitude once computed (NaN before).
func (s *geoShape) contains(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = geoDecodeScore(score)
	cosLat := math.NaN()
	if !s.box {
		dist = geoDistanceCos(s.lon, s.lat, lon, lat, &s.cosLat, &cosLat)
		return lon, lat, dist, dist <= float64(s.radius*s.toMeters)
	}
	if geoLatDistance(lat, s.lat) > float64(s.height*s.toMeters)/2 {
		return lon, lat, 0, false
	}
	if geoDistanceCos(lon, lat, s.lon, lat, &cosLat, &cosLat) > float64(s.width*s.toMeters)/2 {
		return lon, lat, 0, false
	}
	return lon, lat, geoDistanceCos(s.lon, s.lat, lon, lat, &s.cosLat, &cosLat), true
}

// geoStepsForRadius estimates the hash precision whose cells cover a radius.
func geoStepsForRadius(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < geoMercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// geoNeighbour moves h by dx cells east (or west) and dy north (or south).
func geoNeighbour(h geoHash, dx, dy int) geoHash {
	width := 64 - uint(h.step)*2
	if dx != 0 {
		x := h.bits & 0xaaaaaaaaaaaaaaaa
		y := h.bits & 0x5555555555555555
		zz := uint64(0x5555555555555555) >> width
		if dx > 0 {
			x += zz + 1
		} else {
			x = (x | zz) - (zz + 1)
		}
		x &= uint64(0xaaaaaaaaaaaaaaaa) >> width
		h.bits = x | y
	}
	if dy != 0 {
		x := h.bits & 0xaaaaaaaaaaaaaaaa
		y := h.bits & 0x5555555555555555
		zz := uint64(0xaaaaaaaaaaaaaaaa) >> width
		if dy > 0 {
			y += zz + 1
		} else {
			y = (y | zz) - (zz + 1)
		}
		y &= uint64(0x5555555555555555) >> width
		h.bits = x | y
	}
	return h
}

// geoNeighbourMoves lists the search cells in Redis's order: the centre, north,
// south, east, west, north-east, north-west, south-east, south-west.
var geoNeighbourMoves = [9][2]int{{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}

// searchCells returns the (up to) nine cells that cover the shape, in Redis's
// order, with the useless ones zeroed (Redis's geohashCalculateAreasByShapeWGS84).
func (s *geoShape) searchCells() [9]geoHash {
	minLon, minLat, maxLon, maxLat := s.bounds()
	steps := geoStepsForRadius(s.radiusMeters(), s.lat)
	cells := geoCellsAround(s.lon, s.lat, steps)
	north := geoDecode(geoLonRange, geoLatRange, cells[1])
	south := geoDecode(geoLonRange, geoLatRange, cells[2])
	east := geoDecode(geoLonRange, geoLatRange, cells[3])
	west := geoDecode(geoLonRange, geoLatRange, cells[4])
	if steps > 1 && (north.lat.max < maxLat || south.lat.min > minLat ||
		east.lon.max < maxLon || west.lon.min > minLon) {
		steps--
		cells = geoCellsAround(s.lon, s.lat, steps)
	}
	if steps >= 2 {
		area := geoDecode(geoLonRange, geoLatRange, cells[0])
		if area.lat.min < minLat {
			cells[2], cells[7], cells[8] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lat.max > maxLat {
			cells[1], cells[5], cells[6] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.min < minLon {
			cells[4], cells[8], cells[6] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.max > maxLon {
			cells[3], cells[7], cells[5] = geoHash{}, geoHash{}, geoHash{}
		}
	}
	return cells
}

// geoCellsAround is the cell of a point at a precision and its eight neighbours.
func geoCellsAround(lon, lat float64, steps uint8) [9]geoHash {
	h, _ := geoEncodeWGS84(lon, lat, steps)
	var cells [9]geoHash
	for i, m := range geoNeighbourMoves {
		cells[i] = geoNeighbour(h, m[0], m[1])
	}
	return cells
}

// A geoPoint is one search hit.
type geoPoint struct {
	member   string
	score    float64
	lon, lat float64
	dist     float64 // metres until the reply divides by the unit
}

// geoSearch returns the members of z inside the shape, cell by cell in Redis's
// order (each cell in score order). A positive limit stops the search as soon
// as that many are found (COUNT ... ANY).
func geoSearch(z *zset, s *geoShape, limit int) []geoPoint {
	var hits []geoPoint
	s.cosLat = math.NaN()
	cells := s.searchCells()
	last := 0
	for i, c := range cells {
		if c.isZero() {
			continue
		}
		if last != 0 && c == cells[last] {
			continue // huge radii: neighbours can be the same cell
		}
		if limit > 0 && len(hits) >= limit {
			break
		}
		hits = geoSearchCell(z, s, c, hits, limit)
		last = i
	}
	return hits
}

// geoSearchCell appends the members of one cell that lie in the shape.
func geoSearchCell(z *zset, s *geoShape, c geoHash, hits []geoPoint, limit int) []geoPoint {
	lo := float64(geoAlign52(c))
	c.bits++
	hi := float64(geoAlign52(c))
	start, end := z.ScoreSpan(scoreRange{min: lo, max: hi, maxEx: true})
	z.Range(start, end, false, func(it zItem) bool {
		if lon, lat, dist, ok := s.contains(it.score); ok {
			hits = append(hits, geoPoint{member: it.member, score: it.score, lon: lon, lat: lat, dist: dist})
		}
		return limit <= 0 || len(hits) < limit
	})
	return hits
}

// formatGeoDistance prints a distance with four decimals, rounded half to even
// as Redis's fixedpoint_d2string (llrint).
func formatGeoDistance(d float64) string {
	n := int64(math.RoundToEven(float64(d * 10000)))
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	if len(s) < 5 {
		s = strings.Repeat("0", 5-len(s)) + s
	}
	s = s[:len(s)-4] + "." + s[len(s)-4:]
	if neg {
		s = "-" + s
	}
	return s
}

// formatGeoCoord prints a coordinate as Redis's addReplyHumanLongDouble:
// "%.17Lf" with trailing zeros (and a trailing '.') removed, "-0" as "0".
func formatGeoCoord(f float64) string {
	s := strconv.FormatFloat(f, 'f', 17, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// formatCFloat prints f as C's "%f" (six decimals; "inf", "-inf", "nan").
func formatCFloat(f float64) string { return formatC(f, 'f', 6) }

// formatC prints f as C's printf with the given format letter and precision,
// "inf", "-inf" and "nan" included.
func formatC(f float64, fmt byte, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, fmt, prec, 64)
}
