package myredis

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// withNodeSize shrinks the B+tree's nodes for the rest of the test so that a
// few dozen members already build a tree several levels deep.
func withNodeSize(t testing.TB, n int) {
	old := zNodeMax
	zNodeMax = n
	oldSmall := zsetSmall
	zsetSmall = 0 // and a scores map from the first member: the large form
	t.Cleanup(func() { zNodeMax, zsetSmall = old, oldSmall })
}

// checkPack verifies a packed set: within the small limits, no map, n entries
// in order, nothing after the last.
func checkPack(t interface {
	Helper()
	Fatalf(string, ...any)
}, z *zset) {
	t.Helper()
	tr := z.view()
	if z.view().scores() != nil || tr.len() > zsetSmall {
		t.Fatalf("packed set of %d members (small up to %d) with map %v", tr.len(), zsetSmall, z.view().scores() != nil)
	}
	n, off := 0, 0
	pack := tr.packBytes()
	var prev *zItem
	for off < len(pack) {
		it, next := packItem(pack, off)
		if prev != nil && !zLess(*prev, it) {
			t.Fatalf("pack out of order: %v then %v", *prev, it)
		}
		if len(it.member) > zsetSmallValue {
			t.Fatalf("packed member of %d bytes", len(it.member))
		}
		prev, off, n = &it, next, n+1
	}
	if n != tr.len() || off != len(pack) {
		t.Fatalf("pack holds %d entries in %d of %d bytes, n says %d", n, off, len(pack), tr.len())
	}
}

// checkTree verifies every structural invariant of z: order, counts,
// separators, node fill, equal leaf depth, and agreement with the map.
func checkTree(t interface {
	Helper()
	Fatalf(string, ...any)
}, z *zset) {
	t.Helper()
	tr := z.view()
	if tr.packed() {
		checkPack(t, z)
		return
	}
	if z.view().scores() == nil || tr.len() != len(z.view().scores()) {
		t.Fatalf("tree holds %d, map %v", tr.len(), z.view().scores())
	}
	if tr.root == nil {
		if tr.len() != 0 {
			t.Fatalf("nil root with %d members", tr.len())
		}
		return
	}
	leafDepth := -1
	var prev *zItem
	var walk func(n *zNode, depth int, lo, hi *zItem, root bool) int
	walk = func(n *zNode, depth int, lo, hi *zItem, root bool) int {
		// Only the first and the last leaf may be narrower than zNodeMin:
		// runs of appends start a new edge leaf with one member.
		if !root && n.width() < zNodeMin() && !(n.leaf() && n.width() > 0 && (prev == nil || lastLeaf(tr.root) == n)) {
			t.Fatalf("node at depth %d has width %d < %d", depth, n.width(), zNodeMin())
		}
		if n.width() > zNodeMax {
			t.Fatalf("node at depth %d has width %d > %d", depth, n.width(), zNodeMax)
		}
		if n.leaf() {
			if leafDepth == -1 {
				leafDepth = depth
			} else if leafDepth != depth {
				t.Fatalf("leaves at depths %d and %d", leafDepth, depth)
			}
			for i := range n.items {
				it := n.items[i]
				if prev != nil && !zLess(*prev, it) {
					t.Fatalf("out of order: %v then %v", *prev, it)
				}
				if lo != nil && zLess(it, *lo) {
					t.Fatalf("%v below its separator %v", it, *lo)
				}
				if hi != nil && !zLess(it, *hi) {
					t.Fatalf("%v not below the next separator %v", it, *hi)
				}
				if s, ok := z.view().scoreOf(it.member); !ok || s != it.score {
					t.Fatalf("tree has %v, map has %v %v", it, s, ok)
				}
				prev = &n.items[i]
			}
			return len(n.items)
		}
		if root && len(n.kids) < 2 {
			t.Fatalf("inner root with %d children", len(n.kids))
		}
		if len(n.counts) != len(n.kids) || len(n.keys) != len(n.kids) {
			t.Fatalf("inner node with %d kids, %d counts, %d keys", len(n.kids), len(n.counts), len(n.keys))
		}
		total := 0
		for i, kid := range n.kids {
			klo, khi := lo, hi
			if i > 0 {
				klo = &n.keys[i]
			}
			if i+1 < len(n.kids) {
				khi = &n.keys[i+1]
			}
			c := walk(kid, depth+1, klo, khi, false)
			if c != n.counts[i] {
				t.Fatalf("child %d at depth %d holds %d, count says %d", i, depth, c, n.counts[i])
			}
			total += c
		}
		return total
	}
	if got := walk(tr.root, 0, nil, nil, true); got != tr.len() {
		t.Fatalf("tree walk found %d members, n is %d", got, tr.len())
	}
}

func lastLeaf(n *zNode) *zNode {
	for !n.leaf() {
		n = n.kids[len(n.kids)-1]
	}
	return n
}

func items(z *zset) []zItem { return z.Items(0, z.Len(), false) }

func zi(score float64, member string) zItem { return zItem{score, member} }

func TestZSetBasics(t *testing.T) {
	z := newZSet()
	for _, it := range []zItem{zi(3, "c"), zi(1, "a"), zi(2, "b"), zi(2, "a2"), zi(math.Inf(-1), "low"), zi(math.Inf(1), "high")} {
		if !z.Add(it.member, it.score) {
			t.Fatalf("Add(%q) reported existing", it.member)
		}
	}
	want := []zItem{zi(math.Inf(-1), "low"), zi(1, "a"), zi(2, "a2"), zi(2, "b"), zi(3, "c"), zi(math.Inf(1), "high")}
	if got := items(z); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if z.Add("b", 2) || z.Add("b", 0.5) {
		t.Fatal("re-adding b reported new")
	}
	if s, _ := z.Score("b"); s != 0.5 {
		t.Fatalf("b's score %v", s)
	}
	for _, tc := range []struct {
		member  string
		reverse bool
		rank    int
		ok      bool
	}{
		{"low", false, 0, true},
		{"b", false, 1, true},
		{"a", false, 2, true},
		{"high", false, 5, true},
		{"high", true, 0, true},
		{"low", true, 5, true},
		{"nope", false, 0, false},
	} {
		r, ok := z.Rank(tc.member, tc.reverse)
		if r != tc.rank || ok != tc.ok {
			t.Errorf("Rank(%q, %v) = %d %v, want %d %v", tc.member, tc.reverse, r, ok, tc.rank, tc.ok)
		}
	}
	z.Add("neg0", math.Copysign(0, -1))
	if s, _ := z.Score("neg0"); math.Signbit(s) {
		t.Error("-0 stored with its sign; Redis's listpack stores 0")
	}
	if !z.Remove("neg0") || z.Remove("neg0") {
		t.Error("Remove of neg0 twice")
	}
	if got := z.PopMin(2); !slices.Equal(got, []zItem{zi(math.Inf(-1), "low"), zi(0.5, "b")}) {
		t.Errorf("PopMin(2) = %v", got)
	}
	if got := z.PopMax(1); !slices.Equal(got, []zItem{zi(math.Inf(1), "high")}) {
		t.Errorf("PopMax(1) = %v", got)
	}
	if got := z.PopMax(10); !slices.Equal(got, []zItem{zi(3, "c"), zi(2, "a2"), zi(1, "a")}) {
		t.Errorf("PopMax(10) = %v", got)
	}
	if z.Len() != 0 || z.PopMin(1) != nil {
		t.Errorf("emptied set has Len %d", z.Len())
	}
	checkTree(t, z)
}

func TestZSetRanges(t *testing.T) {
	z := newZSet()
	for i, m := range []string{"a", "b", "c", "d", "e", "f"} {
		z.Add(m, float64(i/2)) // a,b:0 c,d:1 e,f:2
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		r     scoreRange
		start int
		end   int
	}{
		{scoreRange{min: -inf, max: inf}, 0, 6},
		{scoreRange{min: 1, max: 1}, 2, 4},
		{scoreRange{min: 1, max: 1, minEx: true}, 4, 4},
		{scoreRange{min: 0, max: 2, minEx: true, maxEx: true}, 2, 4},
		{scoreRange{min: 0.5, max: 1.5}, 2, 4},
		{scoreRange{min: 2, max: 0}, 4, 4}, // min > max: empty, not an error
		{scoreRange{min: 3, max: inf}, 6, 6},
		{scoreRange{min: -inf, max: -1}, 0, 0},
		{scoreRange{min: inf, max: inf}, 6, 6},
	} {
		s, e := z.ScoreSpan(tc.r)
		if s != tc.start || e != tc.end {
			t.Errorf("ScoreSpan(%+v) = [%d,%d), want [%d,%d)", tc.r, s, e, tc.start, tc.end)
		}
		if c := z.CountScore(tc.r); c != tc.end-tc.start {
			t.Errorf("CountScore(%+v) = %d", tc.r, c)
		}
	}
	for _, tc := range []struct {
		start, stop int
		reverse     bool
		from, to    int
	}{
		{0, -1, false, 0, 6},
		{0, 0, false, 0, 1},
		{-2, -1, false, 4, 6},
		{-100, 1, false, 0, 2},
		{4, 100, false, 4, 6},
		{3, 2, false, 0, 0},
		{6, 10, false, 0, 0},
		{0, 0, true, 5, 6},
		{1, 2, true, 3, 5},
		{-1, -1, true, 0, 1},
	} {
		from, to := z.RankSpan(tc.start, tc.stop, tc.reverse)
		if from != tc.from || to != tc.to {
			t.Errorf("RankSpan(%d, %d, %v) = [%d,%d), want [%d,%d)", tc.start, tc.stop, tc.reverse, from, to, tc.from, tc.to)
		}
	}
	if got := z.Items(1, 4, true); !slices.Equal(got, []zItem{zi(1, "d"), zi(1, "c"), zi(0, "b")}) {
		t.Errorf("Items(1, 4, reverse) = %v", got)
	}
	if n := z.RemoveRangeByScore(scoreRange{min: 1, max: 1}); n != 2 || z.Len() != 4 {
		t.Errorf("RemoveRangeByScore removed %d, left %d", n, z.Len())
	}
	if n := z.RemoveRangeByRank(-1, -1); n != 1 || z.Len() != 3 {
		t.Errorf("RemoveRangeByRank(-1,-1) removed %d", n)
	}
	if got := items(z); !slices.Equal(got, []zItem{zi(0, "a"), zi(0, "b"), zi(2, "e")}) {
		t.Errorf("left %v", got)
	}
}

func TestZSetLex(t *testing.T) {
	z := newZSet()
	for _, m := range []string{"a", "b", "bb", "c", "d\x00", "d", "é"} {
		z.Add(m, 0)
	}
	// order by raw bytes: a b bb c d d\x00 é
	for _, tc := range []struct {
		min, max string
		want     []string
	}{
		{"-", "+", []string{"a", "b", "bb", "c", "d", "d\x00", "é"}},
		{"[b", "[c", []string{"b", "bb", "c"}},
		{"(b", "(c", []string{"bb"}},
		{"[bb", "(bb", nil},
		{"[d", "[d", []string{"d"}},
		{"(d", "+", []string{"d\x00", "é"}},
		{"+", "-", nil},
		{"-", "-", nil},
		{"+", "+", nil},
		{"[", "(b", []string{"a"}},
		{"[z", "+", []string{"é"}},
	} {
		r, ok := parseLexRange(tc.min, tc.max)
		if !ok {
			t.Fatalf("parseLexRange(%q, %q) failed", tc.min, tc.max)
		}
		s, e := z.LexSpan(r, false)
		var got []string
		for _, it := range z.Items(s, e, false) {
			got = append(got, it.member)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("lex %q..%q = %q, want %q", tc.min, tc.max, got, tc.want)
		}
		if c := z.CountLex(r); c != len(tc.want) {
			t.Errorf("CountLex %q..%q = %d", tc.min, tc.max, c)
		}
	}
}

// TestZSetLexMixedScores pins the unspecified case, lex ranges over different
// scores, to what redis-server 7.0.15 answers for a small (listpack) set.
func TestZSetLexMixedScores(t *testing.T) {
	z := newZSet()
	for _, it := range []zItem{zi(1, "a"), zi(1, "b"), zi(2, "c"), zi(3, "aa")} {
		z.Add(it.member, it.score)
	}
	for _, tc := range []struct {
		min, max string
		reverse  bool
		want     []string
	}{
		{"[b", "+", false, nil},
		{"-", "(b", false, []string{"a"}},
		{"[b", "+", true, nil},
		{"-", "(b", true, []string{"aa", "c", "b", "a"}},
		{"[aa", "[c", true, []string{"aa", "c", "b"}},
		{"[aa", "[b", false, []string{"b"}},
		{"[ab", "+", false, nil},
		{"-", "[ab", true, []string{"aa", "c", "b", "a"}},
		{"(a", "[c", false, []string{"b", "c", "aa"}},
		{"(a", "[c", true, []string{"aa", "c", "b"}},
		{"[c", "[b", false, nil},
	} {
		r, _ := parseLexRange(tc.min, tc.max)
		s, e := z.LexSpan(r, tc.reverse)
		var got []string
		for _, it := range z.Items(s, e, tc.reverse) {
			got = append(got, it.member)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("lex %s..%s reverse=%v = %q, want %q", tc.min, tc.max, tc.reverse, got, tc.want)
		}
	}
}

// TestZSetBulk builds deep trees (with 4-wide nodes) and empties them in
// the orders a waiting room produces: append at the back, pop at the front,
// remove by score range from the front, and random removal.
func TestZSetBulk(t *testing.T) {
	for _, size := range []int{4, 5, 8, 64} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			withNodeSize(t, size)
			z := newZSet()
			const n = 3000
			for i := range n {
				z.Add(fmt.Sprintf("m%05d", i), float64(i))
			}
			checkTree(t, z)
			for i := 0; i < n; i += 97 {
				if r, _ := z.Rank(fmt.Sprintf("m%05d", i), false); r != i {
					t.Fatalf("rank of m%05d = %d", i, r)
				}
				if it := z.At(i); it.score != float64(i) {
					t.Fatalf("At(%d) = %v", i, it)
				}
			}
			z.PopMin(500)
			checkTree(t, z)
			if got := z.RemoveRangeByScore(scoreRange{min: 0, max: 999}); got != 500 {
				t.Fatalf("RemoveRangeByScore removed %d", got)
			}
			checkTree(t, z)
			for i := 1000; i < n; i += 2 {
				z.Remove(fmt.Sprintf("m%05d", i))
			}
			checkTree(t, z)
			if z.Len() != 1000 {
				t.Fatalf("Len %d", z.Len())
			}
			z.RemoveRangeByRank(0, -1)
			checkTree(t, z)
			if z.Len() != 0 || z.view().root.width() != 0 {
				t.Fatalf("not empty: %d", z.Len())
			}
		})
	}
}

// TestZSetAppendTiesPackDensely appends runs of equal scores whose members
// arrive in any order (a waiting room's deadlines: a millisecond's joins),
// as the expiry set does, and checks the leaves stay full: a leaf the run
// has passed is not split again. It also checks the separators the splits
// leave ((score, "")) still route every lookup and range.
func TestZSetAppendTiesPackDensely(t *testing.T) {
	for _, tc := range []struct {
		perScore int
		minFill  float64 // before leafSplit: 1.00, 0.65, 0.52
	}{{1, 0.99}, {3, 0.95}, {13, 0.78}} {
		t.Run(fmt.Sprint(tc.perScore), func(t *testing.T) {
			z := newZSet()
			const n = 20000
			member := func(i int) string { return fmt.Sprintf("%016x", uint64(i+1)*0x9E3779B97F4A7C15) }
			for i := range n {
				z.Add(member(i), float64(i/tc.perScore))
			}
			checkTree(t, z)
			var leaves, held int
			var walk func(n *zNode)
			walk = func(n *zNode) {
				if n.leaf() {
					leaves++
					held += len(n.items)
					return
				}
				for _, k := range n.kids {
					walk(k)
				}
			}
			walk(z.view().root)
			if fill := float64(held) / float64(leaves*zNodeMax); fill < tc.minFill {
				t.Errorf("%d members in %d leaves: fill %.2f, want >= %.2f", held, leaves, fill, tc.minFill)
			}
			for i := 0; i < n; i += 37 {
				s := float64(i / tc.perScore)
				if got, ok := z.Score(member(i)); !ok || got != s {
					t.Fatalf("Score(%s) = %v %v, want %v", member(i), got, ok, s)
				}
				r, _ := z.Rank(member(i), false)
				if it := z.At(r); it.member != member(i) {
					t.Fatalf("At(Rank(%s)) = %v", member(i), it)
				}
				if got := z.CountScore(scoreRange{min: s, max: s}); got != min(tc.perScore, n-i/tc.perScore*tc.perScore) {
					t.Fatalf("Count(%v..%v) = %d", s, s, got)
				}
			}
		})
	}
}

// zmodel is the obviously correct sorted set the property tests compare
// with: a sorted slice.
type zmodel []zItem

func (m zmodel) find(member string) int {
	return slices.IndexFunc(m, func(it zItem) bool { return it.member == member })
}

func (m *zmodel) add(member string, score float64) {
	if score == 0 {
		score = 0
	}
	if i := m.find(member); i >= 0 {
		*m = slices.Delete(*m, i, i+1)
	}
	*m = append(*m, zItem{score, member})
	slices.SortFunc(*m, func(a, b zItem) int {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			return c
		}
		return strings.Compare(a.member, b.member)
	})
}

// span is the linear-scan version of ScoreSpan and LexSpan.
func (m zmodel) span(in func(zItem) bool) (int, int) {
	start := slices.IndexFunc(m, in)
	if start < 0 {
		return len(m), len(m)
	}
	end := start
	for end < len(m) && in(m[end]) {
		end++
	}
	return start, end
}

func genScoreRange(t *rapid.T) scoreRange {
	scores := rapid.SampledFrom([]float64{math.Inf(-1), -2, -1, 0, 0.5, 1, 2, 3, math.Inf(1)})
	return scoreRange{
		min: scores.Draw(t, "min"), max: scores.Draw(t, "max"),
		minEx: rapid.Bool().Draw(t, "minEx"), maxEx: rapid.Bool().Draw(t, "maxEx"),
	}
}

func genLexRange(t *rapid.T) lexRange {
	b := rapid.SampledFrom([]string{"-", "+", "[", "(", "[a", "(a", "[b", "(b", "[bz", "(c", "[d", "(zz"})
	r, _ := parseLexRange(b.Draw(t, "min"), b.Draw(t, "max"))
	return r
}

// TestZSetModel drives random operations against zset and zmodel and
// compares them in full after every step.
func TestZSetModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		old := zNodeMax
		defer func() { zNodeMax = old }()
		zNodeMax = rapid.SampledFrom([]int{4, 5, 8, 64}).Draw(t, "nodeSize")
		oldSmall := zsetSmall
		defer func() { zsetSmall = oldSmall }()
		// no map, a map from the start, or one built midway
		zsetSmall = rapid.SampledFrom([]int{0, 6, 1000}).Draw(t, "smallMax")
		oldValue := zsetSmallValue
		defer func() { zsetSmallValue = oldValue }()
		zsetSmallValue = rapid.SampledFrom([]int{64, 2}).Draw(t, "smallValue") // 2: a 3-byte member converts
		// One score for every member makes lex ranges meaningful; Redis
		// leaves them unspecified otherwise.
		oneScore := rapid.Bool().Draw(t, "oneScore")
		members := rapid.StringMatching(`[a-d]{1,3}`)
		genScore := rapid.SampledFrom([]float64{math.Inf(-1), -1, 0, 0.5, 1, 1, 2, 3, math.Inf(1)})
		score := func(t *rapid.T) float64 {
			if oneScore {
				return 1
			}
			return genScore.Draw(t, "score")
		}
		z := newZSet()
		var m zmodel
		t.Repeat(map[string]func(*rapid.T){
			"Add": func(t *rapid.T) {
				mem, s := members.Draw(t, "member"), score(t)
				added := z.Add(mem, s)
				if want := m.find(mem) < 0; added != want {
					t.Fatalf("Add(%q) added=%v, want %v", mem, added, want)
				}
				m.add(mem, s)
			},
			"AddMany": func(t *rapid.T) {
				n := rapid.IntRange(1, 200).Draw(t, "n")
				for i := range n {
					mem := fmt.Sprintf("x%d", rapid.IntRange(0, 400).Draw(t, fmt.Sprint("m", i)))
					s := 1.0
					if !oneScore {
						s = float64(rapid.IntRange(-5, 5).Draw(t, fmt.Sprint("s", i)))
					}
					z.Add(mem, s)
					m.add(mem, s)
				}
			},
			"IncrBy": func(t *rapid.T) {
				if oneScore {
					t.Skip("scores must stay equal")
				}
				mem, d := members.Draw(t, "member"), genScore.Draw(t, "delta")
				s, _ := z.Score(mem)
				if s+d != s+d { // inf + -inf: Redis refuses, nothing changes
					return
				}
				z.Add(mem, s+d)
				m.add(mem, s+d)
			},
			"Remove": func(t *rapid.T) {
				mem := members.Draw(t, "member")
				i := m.find(mem)
				if got := z.Remove(mem); got != (i >= 0) {
					t.Fatalf("Remove(%q) = %v", mem, got)
				}
				if i >= 0 {
					m = slices.Delete(m, i, i+1)
				}
			},
			"PopMin": func(t *rapid.T) {
				n := rapid.IntRange(0, 5).Draw(t, "n")
				got, k := z.PopMin(n), min(n, len(m))
				if !slices.Equal(got, m[:k]) {
					t.Fatalf("PopMin(%d) = %v, want %v", n, got, m[:k])
				}
				m = slices.Delete(m, 0, k)
			},
			"PopMax": func(t *rapid.T) {
				n := rapid.IntRange(0, 5).Draw(t, "n")
				got, k := z.PopMax(n), min(n, len(m))
				want := slices.Clone(m[len(m)-k:])
				slices.Reverse(want)
				if !slices.Equal(got, want) {
					t.Fatalf("PopMax(%d) = %v, want %v", n, got, want)
				}
				m = m[:len(m)-k]
			},
			"RemoveRangeByScore": func(t *rapid.T) {
				r := genScoreRange(t)
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.score) && !r.aboveMax(it.score) })
				if got := z.RemoveRangeByScore(r); got != e-s {
					t.Fatalf("RemoveRangeByScore(%+v) = %d, want %d", r, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"RemoveRangeByRank": func(t *rapid.T) {
				start, stop := rapid.IntRange(-8, 8).Draw(t, "start"), rapid.IntRange(-8, 8).Draw(t, "stop")
				s, e := z.RankSpan(start, stop, false)
				if got := z.RemoveRangeByRank(start, stop); got != e-s {
					t.Fatalf("RemoveRangeByRank(%d, %d) = %d, want %d", start, stop, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"RemoveRangeByLex": func(t *rapid.T) {
				if !oneScore {
					t.Skip("lex ranges need equal scores")
				}
				r := genLexRange(t)
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.member) && !r.aboveMax(it.member) })
				if got := z.RemoveRangeByLex(r); got != e-s {
					t.Fatalf("RemoveRangeByLex(%+v) = %d, want %d", r, got, e-s)
				}
				m = slices.Delete(m, s, e)
			},
			"ScoreRange": func(t *rapid.T) {
				r := genScoreRange(t)
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.score) && !r.aboveMax(it.score) })
				gs, ge := z.ScoreSpan(r)
				if ge-gs != e-s || (e > s && gs != s) || z.CountScore(r) != e-s {
					t.Fatalf("ScoreSpan(%+v) = [%d,%d), want [%d,%d)", r, gs, ge, s, e)
				}
			},
			"LexRange": func(t *rapid.T) {
				if !oneScore {
					t.Skip("lex ranges need equal scores")
				}
				r := genLexRange(t)
				s, e := m.span(func(it zItem) bool { return r.aboveMin(it.member) && !r.aboveMax(it.member) })
				gs, ge := z.LexSpan(r, false)
				if ge-gs != e-s || (e > s && gs != s) || z.CountLex(r) != e-s {
					t.Fatalf("LexSpan(%+v) = [%d,%d), want [%d,%d)", r, gs, ge, s, e)
				}
			},
			"Range": func(t *rapid.T) {
				start, stop := rapid.IntRange(-8, 8).Draw(t, "start"), rapid.IntRange(-8, 8).Draw(t, "stop")
				rev := rapid.Bool().Draw(t, "reverse")
				s, e := z.RankSpan(start, stop, rev)
				want := slices.Clone(m[s:e])
				if rev {
					slices.Reverse(want)
				}
				if got := z.Items(s, e, rev); !slices.Equal(got, want) {
					t.Fatalf("Items(%d, %d, %v) = %v, want %v", s, e, rev, got, want)
				}
			},
			"": func(t *rapid.T) {
				checkTree(t, z)
				if z.Len() != len(m) {
					t.Fatalf("Len %d, model %d", z.Len(), len(m))
				}
				if got := items(z); !slices.Equal(got, []zItem(m)) && len(m) > 0 {
					t.Fatalf("items %v, model %v", got, m)
				}
				for i, it := range m {
					if r, ok := z.Rank(it.member, false); !ok || r != i {
						t.Fatalf("Rank(%q) = %d %v, want %d", it.member, r, ok, i)
					}
					if r, _ := z.Rank(it.member, true); r != len(m)-1-i {
						t.Fatalf("reverse Rank(%q) = %d, want %d", it.member, r, len(m)-1-i)
					}
					if s, ok := z.Score(it.member); !ok || s != it.score {
						t.Fatalf("Score(%q) = %v %v, want %v", it.member, s, ok, it.score)
					}
					if got := z.At(i); got != it {
						t.Fatalf("At(%d) = %v, want %v", i, got, it)
					}
				}
			},
		})
	})
}

// The cases below were checked against redis-server 7.0.15: ZADD t <arg> m.
func TestParseScore(t *testing.T) {
	ok := map[string]float64{
		"1": 1, "1.5": 1.5, "-2.5": -2.5, "+3": 3, ".5": 0.5, "5.": 5, "00012": 12, "1e5": 1e5, "1E-2": 0.01,
		"inf": math.Inf(1), "+inf": math.Inf(1), "-inf": math.Inf(-1), "INF": math.Inf(1),
		"Infinity": math.Inf(1), "-INFINITY": math.Inf(-1), "infinity": math.Inf(1),
		"0x10": 16, "0x1.8p1": 3, "0x1P-2": 0.25, "0X.8": 0.5, "0xA": 10,
		"1e-310": 1e-310, "0e-400": 0, "-0": 0, "1.7976931348623157e308": math.MaxFloat64,
		"0.000000000000000000000000000000000000000001": 1e-42,
	}
	for in, want := range ok {
		got, valid := parseScore(in)
		if !valid || got != want {
			t.Errorf("parseScore(%q) = %v %v, want %v", in, got, valid, want)
		}
	}
	for _, in := range []string{
		"", " 1", "1 ", "\t1", "1\n", "infin", "in", "nan", "NaN", "-nan", "nan(1)", "0x", "0x.", "0xg", "1e400", "-1e400",
		"1e-400", "0x1p99999", "0x1p-99999", "1e", "1e+", "+", "-", ".", "1_0", "0x_1p0", "(1", "0b1", "1\x00", "1.2.3",
		"--1", "+-1", "1e5.5", "abc", "1,5",
	} {
		if got, valid := parseScore(in); valid {
			t.Errorf("parseScore(%q) = %v, want an error", in, got)
		}
	}
}

// The cases below were checked against redis-server 7.0.15 with ZCOUNT.
func TestParseScoreBound(t *testing.T) {
	for _, tc := range []struct {
		in string
		f  float64
		ex bool
	}{
		{"1", 1, false},
		{"(1", 1, true},
		{"", 0, false},
		{"(", 0, true},
		{" 1", 1, false},
		{"( \t1", 1, true},
		{"1e400", math.Inf(1), false},
		{"(-1e400", math.Inf(-1), true},
		{"1e-400", 0, false},
		{"0x1", 1, false},
		{"-INF", math.Inf(-1), false},
		{"(inf", math.Inf(1), true},
		{"+inf", math.Inf(1), false},
		{"infinity", math.Inf(1), false},
		{"1\x00x", 1, false},
		{"(1\x00x", 1, true},
		{"\x00junk", 0, false},
	} {
		f, ex, ok := parseScoreBound(tc.in)
		if !ok || f != tc.f || ex != tc.ex {
			t.Errorf("parseScoreBound(%q) = %v %v %v, want %v %v", tc.in, f, ex, ok, tc.f, tc.ex)
		}
	}
	for _, in := range []string{"1 ", "((1", "nan", "(nan", "[1", "1e", "  ", " ", "-", "(-", "x", "1x", "(\x01"} {
		if f, _, ok := parseScoreBound(in); ok {
			t.Errorf("parseScoreBound(%q) = %v, want an error", in, f)
		}
	}
	if _, ok := parseScoreRange("1", "x"); ok {
		t.Error("parseScoreRange accepted a bad max")
	}
	if r, ok := parseScoreRange("(1", "+inf"); !ok || r != (scoreRange{min: 1, max: math.Inf(1), minEx: true}) {
		t.Errorf("parseScoreRange((1, +inf) = %+v %v", r, ok)
	}
}

// Checked against redis-server 7.0.15 with ZLEXCOUNT.
func TestParseLexBound(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want lexBound
	}{
		{"-", lexBound{inf: -1, ex: true}},
		{"+", lexBound{inf: 1, ex: true}},
		{"+\x00x", lexBound{inf: 1, ex: true}},
		{"-\x00x", lexBound{inf: -1, ex: true}},
		{"[a", lexBound{s: "a"}},
		{"(a", lexBound{s: "a", ex: true}},
		{"[", lexBound{}},
		{"(", lexBound{ex: true}},
		{"[a\x00b", lexBound{s: "a\x00b"}},
	} {
		got, ok := parseLexBound(tc.in)
		if !ok || got != tc.want {
			t.Errorf("parseLexBound(%q) = %+v %v, want %+v", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{"", "a", "++", "-a", "inf", " [a", "]a"} {
		if got, ok := parseLexBound(in); ok {
			t.Errorf("parseLexBound(%q) = %+v, want an error", in, got)
		}
	}
}

// The expected strings are what redis-server 7.0.15 replied to ZSCORE.
func TestFormatScore(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{-3, "-3"},
		{1.5, "1.5"},
		{1.1, "1.1000000000000001"},
		{0.1, "0.10000000000000001"},
		{1e-5, "1.0000000000000001e-05"},
		{1e16, "10000000000000000"},
		{1e17, "1e+17"},
		{123456789012345678, "1.2345678901234568e+17"},
		{1e20, "1e+20"},
		{1e-310, "9.9999999999999694e-311"},
		{math.Copysign(0, -1), "-0"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{16, "16"},
		{0.25, "0.25"},
	} {
		if got := formatScore(tc.f); got != tc.want {
			t.Errorf("formatScore(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	// The integer shortcut agrees with the general path, which matches C's
	// %.17g (checked against glibc on 200k values).
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 100000 {
		f := float64(rng.Int64N(1<<uint(1+i%62))) * float64(1-2*(i%2))
		if i%3 == 0 {
			f = math.Trunc(rng.Float64() * math.Pow(10, float64(i%20)))
		}
		if got, want := formatScore(f), strconv.FormatFloat(f, 'g', 17, 64); got != want {
			t.Fatalf("formatScore(%v) = %q, %%.17g gives %q", f, got, want)
		}
	}
}

// cFloat is the grammar of a complete C float literal, without white space:
// what Redis's string2d accepts before it checks the value's range.
var cFloat = regexp.MustCompile(`^[+-]?(?i:inf|infinity|[0-9]+\.?[0-9]*(e[+-]?[0-9]+)?|\.[0-9]+(e[+-]?[0-9]+)?|0x([0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(p[+-]?[0-9]+)?)$`)

// FuzzParseScore checks parseScore against an independent statement of
// the rules: a regular expression for the literal and strconv for the value.
func FuzzParseScore(f *testing.F) {
	for _, s := range []string{"1", "-1.5e3", "inf", "-Infinity", "nan", "0x1.8p1", "0x", "1e400", "1e-400", " 1", "(1", "", ".e1", "0x.p1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseScore(s)
		if !cFloat.MatchString(s) {
			if ok {
				t.Fatalf("parseScore(%q) accepted a malformed literal as %v", s, got)
			}
			return
		}
		lit := strings.ToLower(s)
		if strings.Contains(lit, "0x") && !strings.Contains(lit, "p") {
			lit += "p0"
		}
		want, err := strconv.ParseFloat(lit, 64)
		body := strings.TrimLeft(lit, "+-")
		mant, _, _ := strings.Cut(body, "e")
		if h, isHex := strings.CutPrefix(body, "0x"); isHex {
			mant, _, _ = strings.Cut(h, "p")
		}
		nonzero := strings.Trim(mant, "0.") != ""
		outOfRange := err != nil || (want == 0 && nonzero)
		if strings.Contains(lit, "inf") {
			want, outOfRange = math.Inf(infSign(lit[0] == '-')), false
		}
		if ok == outOfRange || (ok && got != want) {
			t.Fatalf("parseScore(%q) = %v %v; want %v, out of range %v (%v)", s, got, ok, want, outOfRange, err)
		}
		// A valid score is also a valid range bound, with the same value,
		// and survives formatting.
		if ok {
			if b, ex, bok := parseScoreBound("(" + s); !bok || !ex || b != got {
				t.Fatalf("parseScoreBound((%s) = %v %v %v", s, b, ex, bok)
			}
			if back, bok := parseScore(formatScore(got)); !bok || back != got {
				t.Fatalf("formatScore(%v) = %q does not parse back", got, formatScore(got))
			}
		}
	})
}

// FuzzParseScoreRange checks the range parsers never panic, agree with
// parseScore where the rules coincide, and honour "(".
func FuzzParseScoreRange(f *testing.F) {
	for _, s := range []string{"1", "(1", "-inf", "+inf", "(inf", "", "(", " 1", "1 ", "1e400", "nan", "[a", "(a", "-", "+", "+\x00"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, min, max string) {
		r, ok := parseScoreRange(min, max)
		if ok && (r.min != r.min || r.max != r.max) {
			t.Fatalf("NaN bound from %q %q", min, max)
		}
		if v, vok := parseScore(min); vok {
			if b, ex, bok := parseScoreBound(min); !bok || ex || b != v {
				t.Fatalf("valid score %q (%v) parsed as bound %v %v %v", min, v, b, ex, bok)
			}
		}
		if v, ex, bok := parseScoreBound(min); bok && min != "" && min[0] != '(' {
			if v2, ex2, ok2 := parseScoreBound("(" + min); !ok2 || !ex2 || ex || v2 != v {
				t.Fatalf("(%q parses as %v %v %v, %q as %v", min, v2, ex2, ok2, min, v)
			}
		}
		lr, lok := parseLexRange(min, max)
		if lok && (lr.min.inf == 0) != (min[0] == '[' || min[0] == '(') {
			t.Fatalf("lex bound %q parsed as %+v", min, lr.min)
		}
	})
}

// TestPackScoreRoundTrip: every score comes back from its packed form exactly
// (-0 as 0, as a listpack keeps it), integers up to 2^53 in their short form.
func TestPackScoreRoundTrip(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 5, 63, 64, -64, 1764650000000, 1 << 53, -(1 << 53), 1<<53 + 2,
		-(1<<53 + 2), 1.5, -0.25, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, 1e300, math.Copysign(0, -1)} {
		p := appendPackScore([]byte{0xAA}, f)
		got, next := packScore(p, 1)
		if got != f || f == 0 && math.Signbit(got) || next != len(p) {
			t.Errorf("%v: packed %x, decoded %v (sign %v) ending at %d of %d", f, p, got, math.Signbit(got), next, len(p))
		}
		if n := packScoreLen(f); n != len(p)-1 {
			t.Errorf("%v: packScoreLen %d, packed %d bytes", f, n, len(p)-1)
		}
		short := f == math.Trunc(f) && math.Abs(f) <= 1<<53
		if short != (p[1]&1 == 0) {
			t.Errorf("%v: packed %x, short form %v", f, p, short)
		}
	}
	if p := appendPackScore(nil, 5); len(p) != 1 {
		t.Errorf("score 5 packed in %d bytes, want 1", len(p))
	}
}

// view is z's ztree as it stands: its box, or a copy of the small form.
func (z *zset) view() *ztree { return z.open(&ztree{}) }

// TestZSetLivesInItsEntry checks the layout memory per key rests on (zset.go):
// a small sorted set created by a command is its key's entry, its pack held
// there with no header object; past zsetSmall it moves to a box for good; COPY
// and RENAME give keys sets of their own.
func TestZSetLivesInItsEntry(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	entryOf := func(key string) (e *entry, z *zset) {
		s.submit(func() {
			e = s.dbs[0].entry(key)
			z, _ = e.value().(*zset)
		})
		return e, z
	}
	s.Do("ZADD", "z", "1", "alpha", "2", "bravo", "3.5", "charlie")
	e, z := entryOf("z")
	if z == nil || unsafe.Pointer(z) != unsafe.Pointer(e) || e.kind == kindZSet || e.kind < kindZSetPack {
		t.Fatalf("a new small sorted set is not its entry: entry %p set %p kind %#x", e, z, e.kind)
	}
	s.Do("COPY", "z", "c")
	s.Do("ZADD", "c", "0", "zero")
	s.Do("RENAME", "c", "r")
	s.Do("ZREM", "z", "bravo")
	for _, c := range []struct{ key, want string }{
		{"z", "*4\r\n$5\r\nalpha\r\n$1\r\n1\r\n$7\r\ncharlie\r\n$3\r\n3.5\r\n"},
		{"r", "*8\r\n$4\r\nzero\r\n$1\r\n0\r\n$5\r\nalpha\r\n$1\r\n1\r\n$5\r\nbravo\r\n$1\r\n2\r\n$7\r\ncharlie\r\n$3\r\n3.5\r\n"},
	} {
		if got := string(s.Do("ZRANGE", c.key, "0", "-1", "WITHSCORES")); got != c.want {
			t.Errorf("ZRANGE %s = %q, want %q", c.key, got, c.want)
		}
	}
	for i := range zsetSmall { // past zset-max-listpack-entries: the same entry, now boxed
		s.Do("ZADD", "z", strconv.Itoa(i+10), "m"+strconv.Itoa(i))
	}
	e2, z2 := entryOf("z")
	if e2 != e || z2 == nil || e2.kind != kindZSet || z2.view().packed() {
		t.Fatalf("after converting: entry %p (was %p), kind %#x", e2, e, e2.kind)
	}
	if got := string(s.Do("OBJECT", "ENCODING", "z")); got != "$8\r\nskiplist\r\n" {
		t.Errorf("OBJECT ENCODING z = %q", got)
	}
	if got := string(s.Do("ZCARD", "z")); got != ":130\r\n" {
		t.Errorf("ZCARD z = %q", got)
	}
	s.Do("ZREMRANGEBYRANK", "z", "2", "-1") // two members again: a converted set stays boxed
	if e3, _ := entryOf("z"); e3 != e || e3.kind != kindZSet {
		t.Errorf("after shrinking: entry %p (was %p), kind %#x", e3, e, e3.kind)
	}
	if got := string(s.Do("ZRANGE", "z", "0", "-1")); got != "*2\r\n$5\r\nalpha\r\n$7\r\ncharlie\r\n" {
		t.Errorf("ZRANGE z after shrinking = %q", got)
	}
}

// TestZRankAllocatesNothing: ZRANK reads its key and member without copying
// them (see zrank; the waiting room's join runs it on every call).
func TestZRankAllocatesNothing(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	c := newClient(s, nil)
	c.authed = true
	s.submit(func() {
		var w Writer
		for i := range 300 { // large: the B+tree
			s.call(c, argv("ZADD", "wr:{sale}:waiting", strconv.Itoa(i), fmt.Sprintf("%024x", i)), &w)
		}
		for _, args := range [][][]byte{
			argv("ZRANK", "wr:{sale}:waiting", fmt.Sprintf("%024x", 7)),
			argv("ZREVRANK", "wr:{sale}:waiting", fmt.Sprintf("%024x", 7)),
		} {
			if n := testing.AllocsPerRun(100, func() { w.Reset(); s.call(c, args, &w) }); n != 0 {
				t.Errorf("%s: %.1f allocations per call, want 0", args[0], n)
			}
			if string(w.Bytes()) != ":7\r\n" && string(w.Bytes()) != ":292\r\n" {
				t.Errorf("%s: %q", args[0], w.Bytes())
			}
		}
	})
}
