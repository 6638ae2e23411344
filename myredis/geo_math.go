package myredis

import (
	"math"
	"math/big"
)

// Redis computes geo distances with the C library's sin, cos and asin. glibc's
// are correctly rounded for all but a small fraction of inputs, while Go's
// math.Sin, Cos and Asin are off by one unit in the last place for many (a
// third of asin's). A full-precision distance (a STOREDIST score) shows every
// bit, so the geo code uses the correctly rounded versions below: the value is
// evaluated in double-double arithmetic (about 106 bits) and rounded once.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddAdd(x, y dd) dd {
	s := twoSum(x.hi, y.hi)
	return quickTwoSum(s.hi, s.lo+x.lo+y.lo)
}

func ddMul(x, y dd) dd {
	p := x.hi * y.hi
	e := math.FMA(x.hi, y.hi, -p)
	return quickTwoSum(p, e+float64(x.hi*y.lo)+float64(x.lo*y.hi))
}

func ddNeg(x dd) dd { return dd{-x.hi, -x.lo} }

// ddFromBig splits an exact value into a double-double.
func ddFromBig(v *big.Float) dd {
	hi, _ := v.Float64()
	rest := new(big.Float).SetPrec(v.Prec()).Sub(v, big.NewFloat(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

const geoMathPrec = 256

var (
	ddHalfPi = func() dd {
		v, _, _ := big.ParseFloat("1.57079632679489661923132169163975144209858469968755291048747229615390820314310449931401741267105853399107404326", 10, geoMathPrec, big.ToNearestEven)
		return ddFromBig(v)
	}()
	// ddSinCoef[k] = (-1)^k/(2k+1)!, ddCosCoef[k] = (-1)^k/(2k)!.
	ddSinCoef, ddCosCoef = func() (s, c [16]dd) {
		fact := new(big.Float).SetPrec(geoMathPrec).SetInt64(1)
		for n := 0; n < 32; n++ {
			if n > 0 {
				fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
			}
			v := new(big.Float).SetPrec(geoMathPrec).Quo(big.NewFloat(1).SetPrec(geoMathPrec), fact)
			if (n/2)%2 == 1 {
				v.Neg(v)
			}
			if n%2 == 0 {
				c[n/2] = ddFromBig(v)
			} else {
				s[n/2] = ddFromBig(v)
			}
		}
		return s, c
	}()
)

// ddPoly evaluates sum coef[k] * r2^k for r2 <= (pi/4)^2, coef[0] = 1, with
// as many terms as reach 1e-33 of the sum. The terms below 2^-21 of it are
// summed in plain doubles, which costs less than 2^-74 of the sum, and only
// the larger ones in double-double. An error that small decides a rounding
// wrongly once in some 2^20 results, far rarer than glibc's own misroundings
// (about one in a thousand). Small arguments (nearby points) need few terms.
func ddPoly(coef *[16]dd, r2 dd) dd {
	n, head, pow := 0, 0, 1.0
	for ; n < len(coef); n++ {
		b := math.Abs(coef[n].hi) * pow
		if b < 1e-33 {
			break
		}
		if head == 0 && b < 0x1p-21 {
			head = n
		}
		pow *= r2.hi
	}
	if head == 0 {
		head = n
	}
	t := 0.0
	for k := n - 1; k >= head; k-- {
		t = t*r2.hi + coef[k].hi
	}
	p := dd{t, 0}
	if head == n { // no tail
		p = coef[n-1]
		head = n - 1
	}
	for k := head - 1; k >= 0; k-- {
		p = ddMulAdd(p, r2, coef[k])
	}
	return p
}

// ddMulAdd is x*y + c with one normalisation at the end.
func ddMulAdd(x, y, c dd) dd {
	p := x.hi * y.hi
	e := math.FMA(x.hi, y.hi, -p) + float64(x.hi*y.lo) + float64(x.lo*y.hi)
	s := twoSum(p, c.hi)
	return quickTwoSum(s.hi, s.lo+e+c.lo)
}

// ddReduce writes x as r + k*pi/2 with |r| <= pi/4 (about), r in double-double.
// ok is false for |x| > 8 or NaN (the callers then use Go's math, which only
// the search-area estimate of a radius past the whole earth reaches).
func ddReduce(x float64) (r dd, quadrant int, ok bool) {
	if math.IsNaN(x) || math.Abs(x) > 8 {
		return dd{}, 0, false
	}
	k := math.Round(x / ddHalfPi.hi)
	r = ddAdd(dd{x, 0}, ddNeg(ddMul(dd{k, 0}, ddHalfPi))) // k is a small integer
	return r, int(k) & 3, true
}

// ddSinReduced is sin(r) (cos=false) or cos(r) (cos=true) for a reduced r.
func ddSinReduced(r dd, cos bool) dd {
	r2 := ddMul(r, r)
	if cos {
		return ddPoly(&ddCosCoef, r2)
	}
	return ddMul(ddPoly(&ddSinCoef, r2), r)
}

// ddSin is sin(x) in double-double; ok as for ddReduce.
func ddSin(x float64) (dd, bool) {
	r, q, ok := ddReduce(x)
	if !ok {
		return dd{}, false
	}
	v := ddSinReduced(r, q&1 == 1) // sin(r + k*pi/2): sin, cos, -sin, -cos
	if q >= 2 {
		v = ddNeg(v)
	}
	return v, true
}

// ddCos is cos(x) in double-double; ok as for ddReduce.
func ddCos(x float64) (dd, bool) {
	r, q, ok := ddReduce(x)
	if !ok {
		return dd{}, false
	}
	v := ddSinReduced(r, q&1 == 0) // cos(r + k*pi/2): cos, -sin, -cos, sin
	if q == 1 || q == 2 {
		v = ddNeg(v)
	}
	return v, true
}

// geoSin is sin(x) correctly rounded (for |x| <= 8; Go's math.Sin beyond).
func geoSin(x float64) float64 {
	if x == 0 {
		return x
	}
	s, ok := ddSin(x)
	if !ok {
		return math.Sin(x)
	}
	return s.hi + s.lo
}

// geoCos is cos(x) correctly rounded (for |x| <= 8; Go's math.Cos beyond).
func geoCos(x float64) float64 {
	c, ok := ddCos(x)
	if !ok {
		return math.Cos(x)
	}
	return c.hi + c.lo
}

// geoAsin is asin(a) correctly rounded: Go's estimate y, refined by one Newton
// step y + (a - sin y)/cos y, the residual in double-double (cos y only scales
// a correction of an ulp or so, so a double does).
func geoAsin(a float64) float64 {
	y := math.Asin(a)
	if a == 0 || math.IsNaN(y) || math.Abs(a) == 1 {
		return y
	}
	s, ok := ddSin(y)
	c := math.Cos(y)
	if !ok || c == 0 {
		return y
	}
	r := ddAdd(dd{a, 0}, ddNeg(s))
	return y + (r.hi+r.lo)/c
}
