package myredis

import (
	"math"
	"strconv"
	"strings"
)

// C's strtod for Go strings. Redis reads scores, range bounds and timeouts
// with strtod (or strtold), and what it accepts is part of the protocol: hex
// floats ("0x1p3"), "inf" and "infinity" in any case, no NaN for scores, and
// partial reads that the caller then rejects. parseScore, parseScoreBound
// (zset.go) and parseTimeout (cmd_sorted_set.go) build on it.

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// strtod is C's strtod (glibc, "C" locale) over a Go string: it skips
// leading white space and reads the longest float literal it can. n is the
// number of bytes consumed, 0 when there is no literal at all. erange is
// strtod's ERANGE for the two cases Redis cares about: overflow to ±inf and
// a nonzero literal that underflows to 0.
func strtod(s string) (f float64, n int, erange bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	lit := i // the literal, sign included, starts here
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return math.Inf(infSign(neg)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return math.Inf(infSign(neg)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlphanumeric(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return math.NaN(), j, false
	}
	if len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		if end, ok := scanMantissa(s, i+2, isHexadecimalDigit); ok {
			end, hasExp := scanExponent(s, end, 'p', 'P')
			lit := s[lit:end]
			if !hasExp {
				lit += "p0" // Go's hex floats need the exponent C makes optional
			}
			f, err := strconv.ParseFloat(lit, 64)
			return f, end, isRangeErr(err) || (f == 0 && nonzeroMantissa(s[i+2:end], isHexadecimalDigit))
		}
		// "0x" with no hex digits: C reads the "0" and stops at the "x"
	}
	end, ok := scanMantissa(s, i, isDecimalDigit)
	if !ok {
		return 0, 0, false
	}
	end, _ = scanExponent(s, end, 'e', 'E')
	f, err := strconv.ParseFloat(s[lit:end], 64)
	return f, end, isRangeErr(err) || (f == 0 && nonzeroMantissa(s[i:end], isDecimalDigit))
}

// scanMantissa reads digits, an optional '.', and digits from s[i:], and
// reports whether there was at least one digit.
func scanMantissa(s string, i int, digit func(byte) bool) (int, bool) {
	start := i
	for i < len(s) && digit(s[i]) {
		i++
	}
	digits := i > start
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && digit(s[j]) {
			j++
		}
		if digits || j > i+1 {
			return j, true
		}
	}
	return i, digits
}

// scanExponent reads an exponent ("e-5", "p+3") at s[i:] if a complete one
// is there.
func scanExponent(s string, i int, lower, upper byte) (int, bool) {
	if i >= len(s) || (s[i] != lower && s[i] != upper) {
		return i, false
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && isDecimalDigit(s[k]) {
		k++
	}
	if k == j {
		return i, false
	}
	return k, true
}

// nonzeroMantissa reports whether the mantissa of a literal has a nonzero
// digit, that is whether a zero result means underflow. The exponent, if
// any, is skipped.
func nonzeroMantissa(lit string, digit func(byte) bool) bool {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c == '.' {
			continue
		}
		if !digit(c) {
			return false
		}
		if c != '0' {
			return true
		}
	}
	return false
}

func infSign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isDecimalDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isHexadecimalDigit(c byte) bool { return isDecimalDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isAlphanumeric(c byte) bool     { return isDecimalDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }
