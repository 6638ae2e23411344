package myredis

// globMatch is Redis's stringmatchlen: * ? [abc] [^a] [a-z] and \ escapes.
func globMatch(pattern, s string) bool {
	skipLonger := false
	return globMatchDepth(pattern, s, 0, &skipLonger)
}

// globMatchDepth matches p against s. skipLonger is Redis's skipLongerMatches:
// once a "*" has tried every suffix of the string and failed, no outer "*" can
// do better by giving it a shorter suffix, so the whole match fails at once
// (without it "a*a*a*...b" takes exponential time).
func globMatchDepth(p, s string, depth int, skipLonger *bool) bool {
	if depth > 1000 { // Redis bounds recursion the same way
		return false
	}
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i < len(s); i++ {
				if globMatchDepth(p[1:], s[i:], depth+1, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
			}
			*skipLonger = true
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
					p = p[2:]
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if len(p) == 0 { // unterminated class: Redis treats the end as ']'
				p = "]"
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || p[0] != s[0] {
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
