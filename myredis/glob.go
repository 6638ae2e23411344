package myredis

// globMatch is Redis's stringmatchlen: * ? [abc] [^a] [a-z] and \ escapes,
// byte for byte (a range compares bytes as C's signed char, as Redis does on x86).
//
// It is polynomial as Redis 7.0.9+ (CVE-2022-36021): once the rest of the pattern
// after a '*' has failed to match at every position of the string, no earlier '*'
// can help by matching more, so the whole match fails at once.
func globMatch(pattern, s string) bool {
	m := globMatcher{}
	return m.match(pattern, s, 0)
}

// globMatchNoCase is stringmatchlen with nocase set (CONFIG GET, COMMAND LIST).
func globMatchNoCase(pattern, s string) bool {
	m := globMatcher{nocase: true}
	return m.match(pattern, s, 0)
}

// globMatcher is one match in progress.
type globMatcher struct {
	nocase bool
	// skipLonger is set when the pattern after some '*' matched nowhere in the
	// rest of the string: every caller up the stack then gives up.
	skipLonger bool
	// steps counts pattern characters consumed, so tests can bound the work.
	steps int
}

// globMaxNesting bounds the recursion (one level per '*'), as Redis does.
const globMaxNesting = 1000

func (m *globMatcher) match(p, s string, nesting int) bool {
	if nesting > globMaxNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		m.steps++
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if m.match(p[1:], s, nesting+1) {
					return true
				}
				if m.skipLonger {
					return false
				}
				s = s[1:]
			}
			m.skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			var ok bool
			p, ok = m.matchClass(p[1:], s[0])
			if !ok {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if !m.sameByte(p[0], s[0]) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchClass matches c against the class that p starts just after '['. It
// returns the pattern from the class's closing ']' on (or its last byte when the
// class is not closed: Redis reads the end of the pattern as the ']').
func (m *globMatcher) matchClass(p string, c byte) (string, bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for {
		m.steps++
		if len(p) >= 2 && p[0] == '\\' {
			p = p[1:]
			if p[0] == c {
				match = true
			}
		} else if len(p) == 0 {
			// unterminated: leave one byte for the caller's step past ']'
			p = "]"
			break
		} else if p[0] == ']' {
			break
		} else if len(p) >= 3 && p[1] == '-' {
			if m.inRange(p[0], p[2], c) {
				match = true
			}
			p = p[2:]
		} else if m.sameByte(p[0], c) {
			match = true
		}
		p = p[1:]
	}
	return p, match != not
}

// inRange is Redis's [a-z] test: the ends compared as signed chars, swapped when
// reversed, lower-cased after the swap when nocase.
func (m *globMatcher) inRange(lo, hi, c byte) bool {
	start, end, x := int(int8(lo)), int(int8(hi)), int(int8(c))
	if start > end {
		start, end = end, start
	}
	if m.nocase {
		start, end, x = cLower(start), cLower(end), cLower(x)
	}
	return x >= start && x <= end
}

func (m *globMatcher) sameByte(a, b byte) bool {
	if m.nocase {
		return cLower(int(a)) == cLower(int(b))
	}
	return a == b
}

// cLower is C's tolower in the C locale: only 'A'..'Z' change.
func cLower(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
