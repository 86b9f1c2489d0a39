package strs

import "math/big"

// Exponents past these bounds decide the outcome without arithmetic: with at most
// maxFloatChars digits, a decimal exponent beyond ±expClamp is certain overflow or underflow.
const expClamp = 1 << 20

// parseDec parses strtold's decimal syntax without sign: digits, an optional '.', more digits
// (at least one digit in all), then an optional exponent 'e' [sign] digits. It returns the exact
// value (nil for zero) and false when b is not entirely such a number or is out of range.
func parseDec(b []byte) (*big.Rat, bool) {
	digits := make([]byte, 0, len(b))
	i, frac, seen, dot := 0, 0, false, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			seen = true
			if dot {
				frac++
			}
			if c != '0' || len(digits) > 0 {
				digits = append(digits, c)
			} else if dot {
				continue
			}
		case c == '.' && !dot:
			dot = true
			continue
		default:
			goto exponent
		}
	}
exponent:
	if !seen {
		return nil, false
	}
	exp, ok := parseExp(b[i:], 'e')
	if !ok {
		return nil, false
	}
	if len(digits) == 0 {
		return nil, true
	}
	// Leading zeros were dropped from digits but every fraction digit counts in frac, so the
	// value is digits × 10^(exp-frac) and lies in [10^(n-1+e10), 10^(n+e10)).
	e10 := exp - frac
	n := len(digits)
	switch {
	case n-1+e10 >= 4933: // at least 1e4933, above LDBL_MAX (1.19e4932)
		return nil, false
	case n+e10 <= -4952: // below 1e-4952, under half the smallest subnormal (3.6e-4951)
		return nil, false
	}
	m, _ := new(big.Int).SetString(string(digits), 10)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e10))), nil)
	if e10 >= 0 {
		return new(big.Rat).SetInt(m.Mul(m, p)), true
	}
	return new(big.Rat).SetFrac(m, p), true
}

// parseHex parses strtold's hexadecimal syntax after "0x": hex digits with an optional '.', at
// least one digit, then an optional binary exponent 'p' [sign] decimal digits.
func parseHex(b []byte) (*big.Rat, bool) {
	m := new(big.Int)
	i, frac, seen, dot := 0, 0, false, false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		d, ok := hexDigit(c)
		if !ok {
			break
		}
		seen = true
		if dot {
			frac++
		}
		m.Lsh(m, 4).Or(m, big.NewInt(int64(d)))
	}
	if !seen {
		return nil, false
	}
	exp, ok := parseExp(b[i:], 'p')
	if !ok {
		return nil, false
	}
	if m.Sign() == 0 {
		return nil, true
	}
	e2, bl := exp-4*frac, m.BitLen()
	switch {
	case bl-1+e2 >= extMaxExp:
		return nil, false
	case bl+e2 <= -extGrid-1: // below half the smallest subnormal
		return nil, false
	}
	if e2 >= 0 {
		return new(big.Rat).SetInt(m.Lsh(m, uint(e2))), true
	}
	return new(big.Rat).SetFrac(m, new(big.Int).Lsh(big.NewInt(1), uint(-e2))), true
}

// parseExp parses the rest of a number: empty, or the exponent letter (either case), an optional
// sign and at least one decimal digit. Huge exponents saturate at ±expClamp.
func parseExp(b []byte, letter byte) (int, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if b[0]|0x20 != letter || len(b) < 2 {
		return 0, false
	}
	b = b[1:]
	neg := b[0] == '-'
	if b[0] == '-' || b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	e := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		e = min(e*10+int(c-'0'), expClamp)
	}
	if neg {
		e = -e
	}
	return e, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return c | 0x20 - 'a' + 10, true
	}
	return 0, false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
