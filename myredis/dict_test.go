package myredis

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestDictModel runs random adds, removes, lookups, shrinks and scan steps
// against a map: the table holds what the map holds, and a scan that began
// before the changes returns every key present from its start to its end.
func TestDictModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := newDict()
		model := map[string]bool{}
		keyGen := rapid.IntRange(0, 300)
		var cursor uint64
		scanning := false
		stayed := map[string]bool{} // present since the scan began
		seen := map[string]bool{}
		shrinkOK := true // a shrink may make a scan repeat keys, never miss one
		t.Repeat(map[string]func(*rapid.T){
			"add": func(t *rapid.T) {
				k := "k" + strconv.Itoa(keyGen.Draw(t, "k"))
				if model[k] {
					return
				}
				d.add(&entry{key: k, vpos: -1})
				model[k] = true
			},
			"remove": func(t *rapid.T) {
				k := "k" + strconv.Itoa(keyGen.Draw(t, "k"))
				got := d.remove(k)
				if (got != nil) != model[k] {
					t.Fatalf("remove %s: found %v, model %v", k, got != nil, model[k])
				}
				if got != nil && got.key != k {
					t.Fatalf("remove %s returned %s", k, got.key)
				}
				delete(model, k)
				delete(stayed, k)
				if shrinkOK && rapid.Bool().Draw(t, "shrink") {
					d.shrinkIfSparse()
				}
			},
			"find": func(t *rapid.T) {
				k := "k" + strconv.Itoa(keyGen.Draw(t, "k"))
				if got := d.find(k); (got != nil) != model[k] {
					t.Fatalf("find %s: found %v, model %v", k, got != nil, model[k])
				}
			},
			"random": func(t *rapid.T) {
				e := d.random()
				if (e == nil) != (len(model) == 0) || e != nil && !model[e.key] {
					t.Fatalf("random returned %v with %d keys", e, len(model))
				}
			},
			"scan": func(t *rapid.T) {
				if !scanning {
					scanning, cursor = true, 0
					clear(seen)
					clear(stayed)
					for k := range model {
						stayed[k] = true
					}
				}
				cursor = d.scan(cursor, func(e *entry) { seen[e.key] = true })
				if cursor == 0 {
					for k := range stayed {
						if !seen[k] {
							t.Fatalf("scan missed %s, present the whole time", k)
						}
					}
					scanning = false
				}
			},
			"": func(t *rapid.T) {
				if d.len() != len(model) {
					t.Fatalf("len %d, model %d", d.len(), len(model))
				}
				n := 0
				d.each(func(e *entry) {
					if !model[e.key] {
						t.Fatalf("each visited %s, absent from the model", e.key)
					}
					n++
				})
				if n != len(model) {
					t.Fatalf("each visited %d entries, model has %d", n, len(model))
				}
			},
		})
	})
}

// TestDictScanQuietNoRepeats: a full scan of a table nobody changes returns
// each key exactly once, whatever its size and rehash state.
func TestDictScanQuietNoRepeats(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 17, 1000, 4097} {
		d := newDict()
		for i := range n {
			d.add(&entry{key: strconv.Itoa(i), vpos: -1})
		}
		seen := map[string]int{}
		cursor := uint64(0)
		for {
			cursor = d.scan(cursor, func(e *entry) { seen[e.key]++ })
			if cursor == 0 {
				break
			}
		}
		if len(seen) != n {
			t.Fatalf("%d keys (rehashing %v): scan returned %d", n, d.rehashing(), len(seen))
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("%d keys: %s returned %d times", n, k, c)
			}
		}
	}
}

// TestDictShrinks: a table emptied to under a tenth shrinks and keeps its keys.
func TestDictShrinks(t *testing.T) {
	d := newDict()
	for i := range 10000 {
		d.add(&entry{key: strconv.Itoa(i), vpos: -1})
	}
	for d.rehashing() {
		d.rehash(100)
	}
	big := len(d.tab[0])
	for i := 100; i < 10000; i++ {
		d.remove(strconv.Itoa(i))
	}
	d.shrinkIfSparse()
	if len(d.tab[0]) >= big/10 || d.rehashing() {
		t.Fatalf("%d buckets for %d keys after the shrink (was %d)", len(d.tab[0]), d.len(), big)
	}
	for i := range 100 {
		if d.find(strconv.Itoa(i)) == nil {
			t.Fatalf("key %d lost in the shrink", i)
		}
	}
}
