package myredis

import (
	"math/big"
	"strings"
)

// INCRBYFLOAT computes in C's long double, which on amd64 (where Redis is
// usually built) is the x87 80-bit format: a 64-bit mantissa and exponents up to
// 2^16383. Redis parses both operands with strtold, adds, and prints the sum with
// "%.17Lf" minus trailing zeros, so 0.1 added to 1003 prints 1003.09999999999999998.
// These helpers reproduce that with big.Float rounded to 64 bits.

const (
	ldPrec    = 64    // mantissa bits of the x87 extended format
	ldMaxExp  = 16384 // big.Float exponent (mant in [0.5,1)) above which the value is inf
	ldMaxText = 5120  // Redis's MAX_LONG_DOUBLE_CHARS: longer inputs are refused
)

// longDouble is a finite long double value, or an infinity.
type longDouble struct {
	f   *big.Float
	inf bool
}

// parseLongDouble reads b as Redis's string2ld does: strtold's full syntax
// (decimal, hex with an optional p exponent, inf, infinity), no leading space, no
// trailing bytes, no NaN, no overflow, no underflow to zero.
func parseLongDouble(b []byte) (longDouble, bool) {
	if len(b) == 0 || len(b) >= ldMaxText {
		return longDouble{}, false
	}
	s := string(b)
	neg := false
	body := s
	if body[0] == '+' || body[0] == '-' {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch lower := strings.ToLower(body); {
	case lower == "inf" || lower == "infinity":
		f := new(big.Float).SetInf(neg)
		return longDouble{f: f, inf: true}, true
	case strings.HasPrefix(lower, "0x"):
		return parseHexLongDouble(lower[2:], neg)
	}
	if !decimalSyntax(body) {
		return longDouble{}, false
	}
	f, _, err := new(big.Float).SetPrec(512).Parse(s, 10)
	if err != nil {
		// Exponents beyond big.Float's range: overflow or underflow, both refused.
		return longDouble{}, false
	}
	return roundLongDouble(f, hasNonZeroDigit(body))
}

// decimalSyntax accepts digits, an optional fraction and an optional exponent,
// with at least one digit in the mantissa.
func decimalSyntax(s string) bool {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hasNonZeroDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == 'E' || s[i] == 'p' || s[i] == 'P' {
			break
		}
		if s[i] >= '1' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f' {
			return true
		}
	}
	return false
}

// parseHexLongDouble reads the part after "0x" (lower-cased): hex digits with an
// optional '.', then an optional p exponent (decimal, base 2).
func parseHexLongDouble(s string, neg bool) (longDouble, bool) {
	mant := new(big.Int)
	i, digits, fracDigits, dot := 0, 0, 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		var v int64
		switch {
		case isDigit(c):
			v = int64(c - '0')
		case 'a' <= c && c <= 'f':
			v = int64(c-'a') + 10
		default:
			goto exponent
		}
		mant.Lsh(mant, 4).Or(mant, big.NewInt(v))
		digits++
		if dot {
			fracDigits++
		}
	}
exponent:
	if digits == 0 {
		return longDouble{}, false
	}
	exp2 := int64(-4 * fracDigits)
	if i < len(s) {
		if s[i] != 'p' {
			return longDouble{}, false
		}
		i++
		sign := int64(1)
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			if s[i] == '-' {
				sign = -1
			}
			i++
		}
		start := i
		var e int64
		for ; i < len(s) && isDigit(s[i]); i++ {
			e = min(e*10+int64(s[i]-'0'), 1<<40)
		}
		if i == start || i != len(s) {
			return longDouble{}, false
		}
		exp2 += sign * e
	}
	if mant.Sign() == 0 {
		return longDouble{f: new(big.Float).SetPrec(ldPrec)}, true
	}
	if top := int64(mant.BitLen()) + exp2; top > ldMaxExp+1 || top < -16446 {
		return longDouble{}, false // certain overflow or underflow
	}
	f := new(big.Float).SetPrec(uint(mant.BitLen())).SetInt(mant)
	f.SetMantExp(f, int(exp2))
	if neg {
		f.Neg(f)
	}
	return roundLongDouble(f, true)
}

// roundLongDouble rounds f to the long double format; nonZero says whether the
// text had a non-zero digit (strtold reports an underflow to zero as an error).
func roundLongDouble(f *big.Float, nonZero bool) (longDouble, bool) {
	r := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Set(f)
	if r.Sign() == 0 {
		return longDouble{f: r}, !nonZero
	}
	e := r.MantExp(nil)
	switch {
	case e > ldMaxExp:
		return longDouble{}, false // overflow: strtold gives HUGE_VAL, Redis refuses
	case e < -16444:
		return longDouble{}, false // below the smallest denormal: underflow to zero
	}
	return longDouble{f: r}, true
}

// addLongDouble adds in long double precision and reports false when the sum is
// infinite (or NaN), which INCRBYFLOAT refuses.
func addLongDouble(a, b longDouble) (longDouble, bool) {
	if a.inf || b.inf {
		return longDouble{}, false
	}
	sum := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(a.f, b.f)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		return longDouble{}, false
	}
	return longDouble{f: sum}, true
}

// formatLongDouble prints v as Redis's ld2string in LD_STR_HUMAN mode: "%.17Lf",
// trailing zeros and a trailing '.' removed, "-0" written "0".
func formatLongDouble(v longDouble) string {
	s := v.f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
