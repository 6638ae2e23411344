package myredis

import (
	"strings"
	"testing"
)

// refGlob is a plain dynamic-programming matcher with Redis's pattern syntax,
// written independently of globMatch: match[i][j] says whether p[i:] matches s[j:].
//
// One quirk of Redis's is copied on purpose: an empty string matches only the empty
// pattern ("*" does not match ""; KEYS and SCAN special-case a lone "*").
func refGlob(p, s string, nocase bool) bool {
	if s == "" {
		return p == ""
	}
	type tok struct {
		kind byte // '*', '?', 'c' (class), 'l' (literal)
		lit  byte
		not  bool
		in   func(c byte) bool
	}
	eq := func(a, b byte) bool {
		if nocase {
			return cLower(int(a)) == cLower(int(b))
		}
		return a == b
	}
	var toks []tok
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			toks = append(toks, tok{kind: '*'})
		case '?':
			toks = append(toks, tok{kind: '?'})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			toks = append(toks, tok{kind: 'l', lit: p[i]})
		case '[':
			i++
			not := i < len(p) && p[i] == '^'
			if not {
				i++
			}
			var parts []func(c byte) bool
			for i < len(p) && p[i] != ']' {
				switch {
				case p[i] == '\\' && i+1 < len(p):
					b := p[i+1]
					parts = append(parts, func(c byte) bool { return c == b })
					i += 2
				case i+2 < len(p) && p[i+1] == '-':
					lo, hi := int(int8(p[i])), int(int8(p[i+2]))
					if lo > hi {
						lo, hi = hi, lo
					}
					if nocase {
						lo, hi = cLower(lo), cLower(hi)
					}
					parts = append(parts, func(c byte) bool {
						x := int(int8(c))
						if nocase {
							x = cLower(x)
						}
						return x >= lo && x <= hi
					})
					i += 3
				default:
					b := p[i]
					parts = append(parts, func(c byte) bool { return eq(c, b) })
					i++
				}
			}
			toks = append(toks, tok{kind: 'c', not: not, in: func(c byte) bool {
				for _, f := range parts {
					if f(c) {
						return true
					}
				}
				return false
			}})
		default:
			toks = append(toks, tok{kind: 'l', lit: p[i]})
		}
	}
	// match[j] for the current token suffix, computed from the last token back.
	next := make([]bool, len(s)+1)
	next[len(s)] = true
	for t := len(toks) - 1; t >= 0; t-- {
		cur := make([]bool, len(s)+1)
		for j := len(s); j >= 0; j-- {
			switch tk := toks[t]; tk.kind {
			case '*':
				cur[j] = next[j] || (j < len(s) && cur[j+1])
			case '?':
				cur[j] = j < len(s) && next[j+1]
			case 'c':
				cur[j] = j < len(s) && tk.in(s[j]) != tk.not && next[j+1]
			default:
				cur[j] = j < len(s) && eq(tk.lit, s[j]) && next[j+1]
			}
		}
		next = cur
	}
	return next[0]
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"*", "", false}, // as Redis: an empty string matches only the empty pattern
		{"**", "", false},
		{"", "", true},
		{"a", "", false},
		{"h?llo", "hello", true},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[^e]llo", "hallo", true},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true}, // reversed range
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{"[abc", "a", true}, // unterminated class
		{"[a-", "-", true},  // "a", "-"
		{`[\]]`, "]", true}, // escaped ']' in a class
		{"a*", "abc", true},
		{"a\\", "a\\", true},       // trailing backslash is a literal
		{"[a-\xff]", "\xff", true}, // signed char range: -1..'a'
		{"[\x80-a]", "\xff", true},
		{"[\x80-a]", "b", false},
		{strings.Repeat("a*", 20) + "b", strings.Repeat("a", 40), false},
	}
	for _, c := range cases {
		if got := globMatch(c.p, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
		if ref := refGlob(c.p, c.s, false); ref != c.want {
			t.Errorf("refGlob(%q, %q) = %v, want %v", c.p, c.s, ref, c.want)
		}
	}
	if !globMatchNoCase("H[A-Z]", "hz") || globMatchNoCase("[Z-a]", "z") {
		t.Error("nocase: lower-casing follows the swap of a reversed range, as Redis")
	}
}

// TestGlobNesting: Redis gives up past 1000 nested '*'.
func TestGlobNesting(t *testing.T) {
	s := strings.Repeat("a", 1100)
	if !globMatch(strings.Repeat("*a", 1000), s) {
		t.Error("1000 stars should match")
	}
	if globMatch(strings.Repeat("*a", 1001), s) {
		t.Error("1001 stars should not match (Redis's nesting limit)")
	}
}

// globSteps returns the matcher's step count for one match.
func globSteps(p, s string) (bool, int) {
	m := globMatcher{}
	ok := m.match(p, s, 0)
	return ok, m.steps
}

// TestGlobPolynomial: the CVE-2022-36021 pattern takes steps bounded by
// len(p)*len(s), not exponential ones.
func TestGlobPolynomial(t *testing.T) {
	for _, n := range []int{10, 20, 40, 200} {
		p := strings.Repeat("a*", n) + "b"
		s := strings.Repeat("a", 2*n)
		ok, steps := globSteps(p, s)
		if ok {
			t.Fatalf("%q matched", p)
		}
		if bound := 2 * (len(p) + 1) * (len(s) + 1); steps > bound {
			t.Fatalf("n=%d: %d steps, bound %d", n, steps, bound)
		}
	}
}

// FuzzGlob compares globMatch with the reference matcher and bounds the steps.
func FuzzGlob(f *testing.F) {
	f.Add("a*b?c[^d-f]\\*", "aXXbYc*", false)
	f.Add("*a*a*a*b", "aaaaaaaaa", true)
	f.Add("[z-a]", "m", true)
	f.Fuzz(func(t *testing.T, p, s string, nocase bool) {
		if len(p) > 64 || len(s) > 64 {
			return
		}
		m := globMatcher{nocase: nocase}
		got := m.match(p, s, 0)
		if want := refGlob(p, s, nocase); got != want {
			t.Fatalf("match(%q, %q, nocase=%v) = %v, reference %v", p, s, nocase, got, want)
		}
		if bound := 2 * (len(p) + 1) * (len(s) + 1); m.steps > bound {
			t.Fatalf("match(%q, %q): %d steps > %d", p, s, m.steps, bound)
		}
	})
}

// BenchmarkGlobCVE times the CVE-2022-36021 regression pattern on a 40-byte key.
func BenchmarkGlobCVE(b *testing.B) {
	p, s := strings.Repeat("a*", 20)+"b", strings.Repeat("a", 40)
	for i := 0; i < b.N; i++ {
		globMatch(p, s)
	}
}
