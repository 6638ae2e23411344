// Needs redis-server (skips without it): random points and random searches, the
// same on MyRedis and a real redis-server, replies compared byte for byte.
package myredis_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"waitroom/myredis/redistest"
)

// randomGeoPoint is a longitude and a latitude, mostly around a few centres
// (dense clusters exercise the cell edges), sometimes anywhere, near the poles
// or on the antimeridian.
func randomGeoPoint(r *rand.Rand) (lon, lat float64) {
	centres := [][2]float64{{13.36, 38.11}, {-73.98, 40.76}, {179.9, -10}, {0, 84}, {-120, -84.5}, {0, 0}}
	switch r.IntN(5) {
	case 0:
		return r.Float64()*360 - 180, r.Float64()*170.1 - 85.05
	case 1:
		return pickSign(r) * 180, r.Float64()*170 - 85
	}
	c := centres[r.IntN(len(centres))]
	spread := []float64{0.001, 0.05, 1, 5}[r.IntN(4)]
	lon = c[0] + r.NormFloat64()*spread
	lat = c[1] + r.NormFloat64()*spread
	lon = min(max(lon, -180), 180)
	lat = min(max(lat, -85.05112878), 85.05112878)
	return lon, lat
}

func pickSign(r *rand.Rand) float64 {
	if r.IntN(2) == 0 {
		return -1
	}
	return 1
}

func geoFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// randomGeoSearch builds a search of key g around a random centre or member.
func randomGeoSearch(r *rand.Rand, members int) []string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	unit := pick("m", "km", "mi", "ft")
	size := func() string {
		meters := []float64{0, 1, 100, 5000, 50000, 500000, 3e6, 2e7}[r.IntN(8)] * (0.5 + r.Float64())
		div := map[string]float64{"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit]
		return geoFloat(meters / div)
	}
	member := "p" + strconv.Itoa(r.IntN(members+2)) // sometimes missing
	lon, lat := randomGeoPoint(r)
	var cmd []string
	switch r.IntN(6) {
	case 0, 1, 2:
		cmd = []string{pick("GEOSEARCH", "geosearch"), "g"}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "FROMMEMBER", member)
		} else {
			cmd = append(cmd, "FROMLONLAT", geoFloat(lon), geoFloat(lat))
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "BYRADIUS", size(), unit)
		} else {
			cmd = append(cmd, "BYBOX", size(), size(), unit)
		}
	case 3:
		cmd = []string{pick("GEORADIUS", "GEORADIUS_RO"), "g", geoFloat(lon), geoFloat(lat), size(), unit}
	case 4:
		cmd = []string{pick("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"), "g", member, size(), unit}
	default:
		cmd = []string{"GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", geoFloat(lon), geoFloat(lat), "BYRADIUS", size(), unit}
		if r.IntN(3) == 0 {
			cmd = append(cmd, "ASC", "COUNT", strconv.Itoa(1+r.IntN(5)))
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "STOREDIST")
		}
		return cmd
	}
	// Without ASC/DESC the order is the cell scan order, which MyRedis follows too.
	cmd = append(cmd, pick("ASC", "DESC", "ASC", "DESC", ""))
	if r.IntN(3) == 0 {
		cmd = append(cmd, "COUNT", strconv.Itoa(1+r.IntN(8)))
		if r.IntN(3) == 0 {
			cmd = append(cmd, "ANY")
		}
	}
	for _, w := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
		if r.IntN(3) == 0 {
			cmd = append(cmd, w)
		}
	}
	return slicesWithout(cmd, "")
}

func slicesWithout(xs []string, drop string) []string {
	out := xs[:0]
	for _, x := range xs {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

func TestGeoCompatRandom(t *testing.T) {
	redistest.SkipWithoutRedis(t)
	real, mine := startPair(t)
	rc, mc := redistest.Dial(t, real), redistest.Dial(t, mine)
	same := func(args ...string) {
		t.Helper()
		if want, got := rc.Do(args...), mc.Do(args...); want != got {
			at := 0
			for at < min(len(want), len(got)) && want[at] == got[at] {
				at++
			}
			at = max(at-80, 0)
			t.Fatalf("%q, from byte %d:\n redis:   %.300q\n myredis: %.300q", args, at, want[at:], got[at:])
		}
	}
	searches, stored, inexact := 0, 0, 0
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		same("FLUSHALL")
		members := 50 + r.IntN(400)
		add := []string{"GEOADD", "g"}
		for i := range members {
			lon, lat := randomGeoPoint(r)
			add = append(add, geoFloat(lon), geoFloat(lat), "p"+strconv.Itoa(i))
		}
		same(add...)
		same("ZRANGE", "g", "0", "-1", "WITHSCORES")
		same("GEOPOS", "g", "p0", "p1", "p2", "nosuch")
		same("GEOHASH", "g", "p0", "p1", "p2", "nosuch")
		for range 150 {
			p, q := "p"+strconv.Itoa(r.IntN(members)), "p"+strconv.Itoa(r.IntN(members))
			same("GEODIST", "g", p, q, []string{"m", "km", "mi", "ft"}[r.IntN(4)])
			cmd := randomGeoSearch(r, members)
			same(cmd...)
			if strings.EqualFold(cmd[0], "GEOSEARCHSTORE") {
				same("ZRANGE", "dst", "0", "-1")
				n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(mc.Do("ZCARD", "dst"), ":")))
				stored += n
				inexact += closeScores(t, rc.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES"), mc.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES"))
			}
			searches++
		}
	}
	t.Logf("%d random searches matched; %d of %d stored scores differed in their last bits", searches, inexact, stored)
}

// closeScores compares two raw ZRANGE WITHSCORES replies whose members are the
// same: a STOREDIST score is a full-precision distance, which can differ in its
// last bits where glibc's sin, cos or asin are not correctly rounded (ours are;
// see geo_math.go), the more so for points nearly opposite on the globe, where
// asin is ill-conditioned. A score may be off by a relative 1e-11, no more.
func closeScores(t *testing.T, want, got string) (differ int) {
	t.Helper()
	w, g := strings.Split(want, "\r\n"), strings.Split(got, "\r\n")
	if len(w) != len(g) {
		t.Fatalf("ZRANGE WITHSCORES:\n redis:   %.300q\n myredis: %.300q", want, got)
	}
	for i := range w {
		if w[i] == g[i] || (strings.HasPrefix(w[i], "$") && strings.HasPrefix(g[i], "$")) {
			continue // bulk lengths: the values that follow are compared
		}
		a, errA := strconv.ParseFloat(w[i], 64)
		b, errB := strconv.ParseFloat(g[i], 64)
		if errA != nil || errB != nil || math.Abs(a-b) > 1e-11*math.Abs(a) {
			t.Fatalf("ZRANGE WITHSCORES line %d: redis %q, myredis %q", i, w[i], g[i])
		}
		differ++
	}
	return differ
}
