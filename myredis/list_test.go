package myredis

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// withListNodeBytes shrinks list nodes for the rest of the test, so that a few
// elements already spread over many nodes.
func withListNodeBytes(t testing.TB, n int) {
	old := listNodeBytes
	listNodeBytes = n
	t.Cleanup(func() { listNodeBytes = old })
}

// listElems returns the elements of l front to back, read with Range.
func listElems(l *list) []string {
	var out []string
	l.Range(0, l.Len(), func(v []byte) bool {
		out = append(out, string(v))
		return true
	})
	return out
}

// checkList verifies l's structure: counts, no empty nodes, node fill, and that
// walking back to front gives the same elements as walking front to back.
func checkList(t interface{ Fatalf(string, ...any) }, l *list) {
	total := 0
	for i, nd := range l.nodes[l.head:] {
		if nd.n <= 0 {
			t.Fatalf("node %d is empty", i)
		}
		count := 0
		for p := nd.off; p < len(nd.b); count++ {
			_, p = entryAt(nd.b, p)
		}
		if count != nd.n {
			t.Fatalf("node %d counts %d, holds %d", i, nd.n, count)
		}
		if nd.n > 1 && (nd.size() > l.maxNodeBytes() || (l.fill >= 0 && nd.n > l.fill)) {
			t.Fatalf("node %d holds %d bytes in %d elements (fill %d)", i, nd.size(), nd.n, l.fill)
		}
		total += nd.n
	}
	if total != l.n {
		t.Fatalf("nodes hold %d elements, list says %d", total, l.n)
	}
	fwd := listElems(l)
	var back []string
	l.RangeBack(func(i int, v []byte) bool {
		if i != l.n-1-len(back) {
			t.Fatalf("RangeBack index %d, want %d", i, l.n-1-len(back))
		}
		back = append(back, string(v))
		return true
	})
	slices.Reverse(back)
	if !slices.Equal(fwd, back) {
		t.Fatalf("forward %q, backward %q", fwd, back)
	}
}

func TestListEntryEncoding(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21} {
		v := bytes.Repeat([]byte{'x'}, n)
		b := make([]byte, entrySize(n)+entrySize(n/2))
		putEntry(b[:entrySize(n)], v)
		putEntry(b[entrySize(n):], v[:n/2])
		got, next := entryAt(b, 0)
		if len(got) != n || next != entrySize(n) {
			t.Fatalf("entryAt(%d) = %d bytes, next %d", n, len(got), next)
		}
		got, start := entryBefore(b, len(b))
		if len(got) != n/2 || start != entrySize(n) {
			t.Fatalf("entryBefore(%d) = %d bytes, start %d", n, len(got), start)
		}
	}
}

func TestListEnds(t *testing.T) {
	withListNodeBytes(t, 32)
	l := newList(-2)
	for i := range 100 {
		l.PushBack([]byte(fmt.Sprint(i)))
		l.PushFront([]byte(fmt.Sprint(-i - 1)))
	}
	checkList(t, l)
	if l.Len() != 200 || string(l.Index(0)) != "-100" || string(l.Index(199)) != "99" ||
		string(l.Index(100)) != "0" {
		t.Fatalf("len %d, index 0 %q, 100 %q, 199 %q", l.Len(), l.Index(0), l.Index(100), l.Index(199))
	}
	for i := range 100 {
		if got := string(l.PopFront()); got != fmt.Sprint(-100+i) {
			t.Fatalf("PopFront %d = %q", i, got)
		}
		if got := string(l.PopBack()); got != fmt.Sprint(99-i) {
			t.Fatalf("PopBack %d = %q", i, got)
		}
	}
	if l.Len() != 0 || l.nodeCount() != 0 {
		t.Fatalf("emptied list: len %d, %d nodes", l.Len(), l.nodeCount())
	}
}

func TestListBigElements(t *testing.T) {
	l := newList(-2)
	big := strings.Repeat("b", 3*listNodeBytes)
	l.PushBack([]byte("a"))
	l.PushBack([]byte(big))
	l.PushFront([]byte(big))
	l.Insert(1, []byte(big))
	l.Set(3, []byte(big+"!"))
	checkList(t, l)
	want := []string{big, big, "a", big + "!"}
	if got := listElems(l); !slices.Equal(got, want) {
		t.Fatalf("got %d elements, want %d", len(got), len(want))
	}
}

// TestListNodesStayFull checks the memory layout that keeps lists compact: pushing
// at one end fills every node but the last to the limit, in a buffer of that size.
func TestListNodesStayFull(t *testing.T) {
	for _, front := range []bool{false, true} {
		l := newList(-2)
		for i := range 100000 {
			v := []byte(fmt.Sprintf("mem:%012d", i))
			if front {
				l.PushFront(v)
			} else {
				l.PushBack(v)
			}
		}
		checkList(t, l)
		nodes := l.nodes[l.head:]
		for i, nd := range nodes[1 : len(nodes)-1] {
			if cap(nd.b) != listNodeBytes || nd.size() < listNodeBytes-entrySize(16) {
				t.Fatalf("front %v: node %d holds %d bytes in a buffer of %d", front, i+1, nd.size(), cap(nd.b))
			}
		}
	}
}

// TestListModel drives the list with random operations beside a plain slice.
func TestListModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		old := listNodeBytes
		listNodeBytes = rapid.SampledFrom([]int{8, 24, 64, 8192}).Draw(t, "nodeBytes")
		defer func() { listNodeBytes = old }()
		l := newList(rapid.SampledFrom([]int{-2, -2, -2, 0, 1, 3, -1}).Draw(t, "fill"))
		var model []string
		elem := func(t *rapid.T) string {
			return rapid.SampledFrom([]string{"", "a", "b", "abc", strings.Repeat("x", 40), strings.Repeat("y", 200)}).Draw(t, "v")
		}
		index := func(t *rapid.T) int { return rapid.IntRange(0, len(model)-1).Draw(t, "i") }
		t.Repeat(map[string]func(*rapid.T){
			"PushBack": func(t *rapid.T) {
				v := elem(t)
				l.PushBack([]byte(v))
				model = append(model, v)
			},
			"PushFront": func(t *rapid.T) {
				v := elem(t)
				l.PushFront([]byte(v))
				model = slices.Insert(model, 0, v)
			},
			"PushMany": func(t *rapid.T) {
				n := rapid.IntRange(1, 60).Draw(t, "n")
				front := rapid.Bool().Draw(t, "front")
				for i := range n {
					v := fmt.Sprint(i)
					if front {
						l.PushFront([]byte(v))
						model = slices.Insert(model, 0, v)
					} else {
						l.PushBack([]byte(v))
						model = append(model, v)
					}
				}
			},
			"PopFront": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				if got := string(l.PopFront()); got != model[0] {
					t.Fatalf("PopFront = %q, want %q", got, model[0])
				}
				model = model[1:]
			},
			"PopBack": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				if got := string(l.PopBack()); got != model[len(model)-1] {
					t.Fatalf("PopBack = %q, want %q", got, model[len(model)-1])
				}
				model = model[:len(model)-1]
			},
			"Index": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				i := index(t)
				if got := string(l.Index(i)); got != model[i] {
					t.Fatalf("Index(%d) = %q, want %q", i, got, model[i])
				}
			},
			"Set": func(t *rapid.T) {
				if len(model) == 0 {
					t.Skip("empty")
				}
				i, v := index(t), elem(t)
				l.Set(i, []byte(v))
				model[i] = v
			},
			"Insert": func(t *rapid.T) {
				i := rapid.IntRange(0, len(model)).Draw(t, "i")
				v := elem(t)
				l.Insert(i, []byte(v))
				model = slices.Insert(model, i, v)
			},
			"Range": func(t *rapid.T) {
				from := rapid.IntRange(0, len(model)).Draw(t, "from")
				to := rapid.IntRange(from, len(model)).Draw(t, "to")
				var got []string
				l.Range(from, to, func(v []byte) bool { got = append(got, string(v)); return true })
				if !slices.Equal(got, model[from:to]) && (len(got) > 0 || to > from) {
					t.Fatalf("Range(%d, %d) = %q, want %q", from, to, got, model[from:to])
				}
			},
			"Trim": func(t *rapid.T) {
				front := rapid.IntRange(0, len(model)).Draw(t, "front")
				back := rapid.IntRange(0, len(model)-front).Draw(t, "back")
				l.TrimFront(front)
				l.TrimBack(back)
				model = model[front : len(model)-back]
			},
			"Remove": func(t *rapid.T) {
				v := elem(t)
				limit := rapid.IntRange(0, 5).Draw(t, "limit")
				fromTail := rapid.Bool().Draw(t, "fromTail")
				got := l.Remove([]byte(v), limit, fromTail)
				want := modelRemove(&model, v, limit, fromTail)
				if got != want {
					t.Fatalf("Remove(%q, %d, %v) = %d, want %d", v, limit, fromTail, got, want)
				}
			},
			"Copy": func(t *rapid.T) {
				c := l.copyValue().(*list)
				checkList(t, c)
				if !slices.Equal(listElems(c), model) && len(model) > 0 {
					t.Fatalf("copy differs")
				}
				l = c
			},
			"": func(t *rapid.T) {
				checkList(t, l)
				if l.Len() != len(model) {
					t.Fatalf("Len = %d, want %d", l.Len(), len(model))
				}
				if got := listElems(l); !slices.Equal(got, model) && len(model) > 0 {
					t.Fatalf("list %q, model %q", got, model)
				}
			},
		})
	})
}

// modelRemove is LREM on the slice model.
func modelRemove(model *[]string, v string, limit int, fromTail bool) int {
	m := *model
	removed := 0
	if !fromTail {
		kept := m[:0:0]
		for _, e := range m {
			if e == v && (limit == 0 || removed < limit) {
				removed++
				continue
			}
			kept = append(kept, e)
		}
		*model = kept
		return removed
	}
	var kept []string
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] == v && (limit == 0 || removed < limit) {
			removed++
			continue
		}
		kept = append(kept, m[i])
	}
	slices.Reverse(kept)
	*model = kept
	return removed
}

func TestListSortHooks(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	l := listFromElems(s, [][]byte{[]byte("b"), []byte(""), []byte("a")}).(*list)
	got := l.sortElements()
	if len(got) != 3 || string(got[0]) != "b" || string(got[1]) != "" || string(got[2]) != "a" || l.fill != -2 {
		t.Fatalf("sortElements = %q, fill %d", got, l.fill)
	}
}
