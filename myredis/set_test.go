package myredis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// checkSet verifies s's invariants against the model: same members, a sorted
// duplicate-free intset, or a hashtable whose every entry is found through its
// bucket chain and whose chains hold exactly the entries.
func checkSet(t interface {
	Helper()
	Fatalf(string, ...any)
}, s *setValue, model map[string]bool) {
	t.Helper()
	if s.Len() != len(model) {
		t.Fatalf("Len %d, model %d", s.Len(), len(model))
	}
	got := map[string]bool{}
	for i := range s.Len() {
		m := s.at(i)
		if got[m] {
			t.Fatalf("member %q twice", m)
		}
		got[m] = true
		if !model[m] {
			t.Fatalf("member %q not in the model", m)
		}
		if !s.has([]byte(m)) {
			t.Fatalf("has(%q) false for a member", m)
		}
	}
	if !s.hash {
		if !slices.IsSorted(s.ints) {
			t.Fatalf("intset not sorted: %v", s.ints)
		}
		return
	}
	linked := 0
	for _, index := range [][]int32{s.buckets, s.old} {
		for b, head := range index {
			for i := head; i != 0; i = s.entries[i-1].next {
				e := s.entries[i-1]
				if int(e.hash&uint32(len(index)-1)) != b || e.hash != hashMember([]byte(e.member)) ||
					s.chain(e.hash) != &index[b] {
					t.Fatalf("entry %q in the wrong bucket", e.member)
				}
				linked++
			}
		}
	}
	if linked != len(s.entries) {
		t.Fatalf("%d entries linked, %d present", linked, len(s.entries))
	}
}

func TestSetEncodings(t *testing.T) {
	s := newSet()
	for _, m := range []string{"3", "-1", "10", "3"} {
		s.add([]byte(m), setMaxIntsetEntries)
	}
	if s.objectEncoding(nil) != "intset" || !slices.Equal(s.members(), []string{"-1", "3", "10"}) {
		t.Fatalf("intset: %s %v", s.objectEncoding(nil), s.members())
	}
	for _, m := range []string{"01", "+1", "-0", " 1", "1 ", "99999999999999999999"} {
		if s.has([]byte(m)) {
			t.Fatalf("has(%q) on an intset", m)
		}
	}
	s.add([]byte("01"), setMaxIntsetEntries) // not canonical: converts
	if s.objectEncoding(nil) != "hashtable" || !s.has([]byte("01")) || !s.has([]byte("10")) {
		t.Fatalf("after a non-integer: %s %v", s.objectEncoding(nil), s.members())
	}
	s.remove([]byte("01"))
	if s.objectEncoding(nil) != "hashtable" {
		t.Fatal("a hashtable set went back to an intset")
	}

	big := newSet()
	for i := range 4 {
		big.add([]byte(strconv.Itoa(i)), 3)
	}
	if !big.hash || big.Len() != 4 {
		t.Fatalf("past set-max-intset-entries: hash=%v len=%d", big.hash, big.Len())
	}

	c := big.copyValue().(*setValue)
	c.remove([]byte("0"))
	if !big.has([]byte("0")) || c.has([]byte("0")) {
		t.Fatal("copyValue shares state")
	}
}

// TestSetScanSurvivesRemovals: every member present for the whole walk is
// returned, whatever is removed and added between calls.
func TestSetScanSurvivesRemovals(t *testing.T) {
	s := newSet()
	model := map[string]bool{}
	for i := range 1000 {
		m := fmt.Sprintf("m%d", i)
		s.add([]byte(m), setMaxIntsetEntries)
		model[m] = true
	}
	seen := map[string]bool{}
	cursor, step := uint64(0), 0
	for {
		cursor = s.scan(cursor, 7, func(m string) { seen[m] = true })
		// remove some members, add others
		for k := range 5 {
			m := fmt.Sprintf("m%d", (step*31+k*97)%1000)
			if s.remove([]byte(m)) {
				delete(model, m)
			}
			s.add([]byte(fmt.Sprintf("new%d-%d", step, k)), setMaxIntsetEntries)
		}
		step++
		if cursor == 0 {
			break
		}
	}
	for m := range model {
		if !seen[m] {
			t.Fatalf("member %q present throughout was not returned", m)
		}
	}
}

// TestSetSampleFair: sample and random pick every position about equally often.
func TestSetSampleFair(t *testing.T) {
	s := newSet()
	const n = 20
	for i := range n {
		s.add([]byte(fmt.Sprintf("e%d", i)), setMaxIntsetEntries)
	}
	counts := make([]int, n)
	const rounds = 20000
	for range rounds {
		for _, i := range s.sample(5) { // small share: drawn
			counts[i]++
		}
		for _, i := range s.sample(15) { // large share: selection sampling
			counts[i]++
		}
		counts[s.random()]++
	}
	want := float64(rounds) * 21 / n
	for i, c := range counts {
		if float64(c) < want*0.9 || float64(c) > want*1.1 {
			t.Fatalf("position %d drawn %d times, expected about %.0f: %v", i, c, want, counts)
		}
	}
	for range 100 {
		p := s.sample(7)
		if !sort.IntsAreSorted(p) || len(slices.Compact(slices.Clone(p))) != 7 {
			t.Fatalf("sample not 7 distinct ascending positions: %v", p)
		}
	}
}

func TestSetModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxInts := rapid.SampledFrom([]int{2, 8, 512}).Draw(t, "maxInts")
		s := newSet()
		model := map[string]bool{}
		member := rapid.OneOf(
			rapid.StringMatching(`-?[0-9]{1,3}`),
			rapid.StringMatching(`[a-c]{1,2}`),
			rapid.SampledFrom([]string{"", "0", "-0", "01", "9223372036854775807", "9223372036854775808"}),
		)
		t.Repeat(map[string]func(*rapid.T){
			"Add": func(t *rapid.T) {
				m := member.Draw(t, "m")
				if got := s.add([]byte(m), maxInts); got == model[m] {
					t.Fatalf("add(%q) = %v, model had it: %v", m, got, model[m])
				}
				model[m] = true
			},
			"AddInts": func(t *rapid.T) {
				n := rapid.IntRange(1, 100).Draw(t, "n")
				for i := range n {
					m := strconv.Itoa(rapid.IntRange(-50, 50).Draw(t, fmt.Sprint("i", i)))
					s.add([]byte(m), maxInts)
					model[m] = true
				}
			},
			"Remove": func(t *rapid.T) {
				m := member.Draw(t, "m")
				if got := s.remove([]byte(m)); got != model[m] {
					t.Fatalf("remove(%q) = %v, model %v", m, got, model[m])
				}
				delete(model, m)
			},
			"RemoveAt": func(t *rapid.T) {
				if s.Len() == 0 {
					t.Skip("empty")
				}
				i := rapid.IntRange(0, s.Len()-1).Draw(t, "i")
				delete(model, s.at(i))
				s.removeAt(i)
			},
			"RemoveMany": func(t *rapid.T) {
				n := rapid.IntRange(1, 100).Draw(t, "n")
				for range n {
					if s.Len() == 0 {
						return
					}
					delete(model, s.at(0))
					s.removeAt(0)
				}
			},
			"Has": func(t *rapid.T) {
				m := member.Draw(t, "m")
				if s.has([]byte(m)) != model[m] {
					t.Fatalf("has(%q) = %v", m, !model[m])
				}
			},
			"Sample": func(t *rapid.T) {
				if s.Len() < 2 {
					t.Skip("too small")
				}
				n := rapid.IntRange(1, s.Len()-1).Draw(t, "n")
				p := s.sample(n)
				if len(p) != n || !sort.IntsAreSorted(p) || len(slices.Compact(slices.Clone(p))) != n {
					t.Fatalf("sample(%d) = %v", n, p)
				}
			},
			"": func(t *rapid.T) { checkSet(t, s, model) },
		})
	})
}

func TestSetRewriteChunks(t *testing.T) {
	s := newSet()
	for i := range 130 {
		s.add([]byte(fmt.Sprintf("m%d", i)), setMaxIntsetEntries)
	}
	b := s.appendRewrite(nil, "k", 0, s.Len())
	cmds, err := parseCommands(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 3 || len(cmds[0]) != 2+64 || len(cmds[2]) != 2+2 {
		t.Fatalf("130 members: %d commands", len(cmds))
	}
	back := newSet()
	for _, c := range cmds {
		if string(c[0]) != "SADD" || string(c[1]) != "k" {
			t.Fatalf("command %q", c[:2])
		}
		for _, m := range c[2:] {
			back.add(m, setMaxIntsetEntries)
		}
	}
	if !slices.Equal(sortedCopy(back.members()), sortedCopy(s.members())) {
		t.Fatal("rewrite does not rebuild the set")
	}
}

func sortedCopy(xs []string) []string {
	c := slices.Clone(xs)
	slices.Sort(c)
	return c
}

// parseCommands decodes RESP commands as the AOF loader reads them.
func parseCommands(b []byte) ([][][]byte, error) {
	rd := &respReader{r: bufio.NewReader(bytes.NewReader(b)), max: 1 << 30, size: int64(len(b))}
	var cmds [][][]byte
	for {
		c, err := rd.command()
		if errors.Is(err, io.EOF) {
			return cmds, nil
		}
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
}

// TestSetSpopBackToIntset: an SPOP that keeps only a few integers rebuilds an
// intset, as Redis 7.0 does; SADD past set-max-intset-entries converts.
func TestSetSpopBackToIntset(t *testing.T) {
	srv, _, _ := startHashServer(t)
	encoding := func() string {
		var enc string
		srv.submit(func() { enc = srv.dbs[0].entry("s").value().(*setValue).objectEncoding(nil) })
		return enc
	}
	args := []string{"SADD", "s"}
	for i := range setMaxIntsetEntries {
		args = append(args, strconv.Itoa(i))
	}
	srv.Do(args...)
	if e := encoding(); e != "intset" {
		t.Fatalf("512 integers: %s", e)
	}
	srv.Do("SADD", "s", "512")
	if e := encoding(); e != "hashtable" {
		t.Fatalf("513 integers: %s", e)
	}
	srv.Do("SPOP", "s", "503")
	if e := encoding(); e != "intset" {
		t.Fatalf("after SPOP keeping 10: %s", e)
	}
	if got := string(srv.Do("SCARD", "s")); got != ":10\r\n" {
		t.Fatalf("SCARD %q", got)
	}
}

// TestSetIndexResizes grows a set far and shrinks it back, checking the index
// while resizes are under way.
func TestSetIndexResizes(t *testing.T) {
	s := newSet()
	model := map[string]bool{}
	for i := range 5000 {
		m := fmt.Sprintf("m%d", i)
		s.add([]byte(m), setMaxIntsetEntries)
		model[m] = true
		if i%97 == 0 {
			checkSet(t, s, model)
		}
	}
	for i := range 4990 {
		m := fmt.Sprintf("m%d", i)
		if !s.remove([]byte(m)) {
			t.Fatalf("remove(%q) found nothing", m)
		}
		delete(model, m)
		if i%97 == 0 {
			checkSet(t, s, model)
		}
	}
	checkSet(t, s, model)
	if len(s.buckets) > 64 && s.old == nil {
		t.Fatalf("10 members left in %d buckets", len(s.buckets))
	}
}
