package wire

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// StringContent returns the content of a raw JSON string token (with its
// quotes) when it contains no escape: the bytes between the quotes, ok=true.
// The content aliases raw. With escapes, or when raw is not a quoted token, it
// returns nil, false; use AppendUnquote then.
func StringContent(raw []byte) (content []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	content = raw[1 : len(raw)-1]
	if bytes.IndexByte(content, '\\') >= 0 {
		return nil, false
	}
	return content, true
}

// AppendUnquote appends the decoded content of a valid raw JSON string token
// (with its quotes) to dst and returns the extended slice, with JSON.parse
// semantics: escapes are decoded and a \uXXXX surrogate pair combines into one
// rune.
//
// Divergence from JSON.parse: a lone surrogate (e.g. "\ud800") is a valid
// JavaScript string unit but cannot be represented in UTF-8, so it becomes
// U+FFFD, as encoding/json does too.
//
// raw is expected to have passed Scan; malformed input never panics but is
// decoded on a best-effort basis (bad escapes are copied through literally).
func AppendUnquote(dst, raw []byte) []byte {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:k]...)
		raw = raw[k:]
		if len(raw) < 2 {
			return append(dst, raw...)
		}
		if e := raw[1]; e != 'u' {
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				dst = append(dst, unescapeByte(e))
			default:
				dst = append(dst, raw[:2]...)
			}
			raw = raw[2:]
			continue
		}
		r := rune(-1)
		if len(raw) >= 6 {
			r = hex4(raw[2:6])
		}
		if r < 0 {
			dst = append(dst, raw[:2]...)
			raw = raw[2:]
			continue
		}
		raw = raw[6:]
		if 0xD800 <= r && r < 0xDC00 {
			// High surrogate: combine with an immediately following low one.
			if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
				if lo := hex4(raw[2:6]); 0xDC00 <= lo && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					raw = raw[6:]
				}
			}
		}
		// utf8.AppendRune writes U+FFFD for a surrogate left unpaired.
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// maxInt64Digits is the number of decimal digits that always fit in int64.
const maxInt64Digits = 18

// NumberInt64 reports the integer value of a raw JSON number token when it
// denotes an integer that fits in int64, reading the decimal exactly (the
// JavaScript rounding to a double is deliberately ignored): "5" -> 5,true;
// "-0" -> 0,true; "5.0" -> 5,true; "1e2" -> 100,true; "50e-1" -> 5,true;
// "1.5" -> 0,false; "1e400" -> 0,false. It is used to match response ids
// against outgoing numeric ids, where JSON.parse would equate 5, 5.0 and 5e0.
//
// Plain digit strings take an allocation-free fast path; no input allocates.
// Tokens that are not JSON numbers report false.
func NumberInt64(raw []byte) (int64, bool) {
	// Fast path: optional minus and at most 18 digits cannot overflow.
	s := raw
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) > 0 && len(s) <= maxInt64Digits && (s[0] != '0' || len(s) == 1) {
		var v int64
		i := 0
		for ; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			v = v*10 + int64(c)
		}
		if i == len(s) {
			if neg {
				v = -v
			}
			return v, true
		}
	}
	return numberInt64Slow(raw)
}

// numberInt64Slow handles fractions, exponents and 19+ digit mantissas by
// exact decimal reasoning: value = digits × 10^exp with leading and trailing
// zeros stripped, so "100000000000000000000e-19" is 10 and "1e400" overflows
// without ever materialising a huge number.
func numberInt64Slow(raw []byte) (int64, bool) {
	i, n := 0, len(raw)
	neg := i < n && raw[i] == '-'
	if neg {
		i++
	}
	// Mantissa: integer part [intStart,intEnd), fraction part [fracStart,fracEnd).
	intStart := i
	for i < n && isDigit(raw[i]) {
		i++
	}
	intEnd := i
	if intEnd == intStart || (raw[intStart] == '0' && intEnd-intStart > 1) {
		return 0, false
	}
	fracStart, fracEnd := i, i
	if i < n && raw[i] == '.' {
		i++
		fracStart = i
		for i < n && isDigit(raw[i]) {
			i++
		}
		fracEnd = i
		if fracEnd == fracStart {
			return 0, false
		}
	}
	// Exponent, saturated: anything beyond ±2^30 is far outside int64 range
	// whatever the mantissa length could be in practice.
	const expLimit = 1 << 30 // fits an int on every platform
	exp := 0
	if i < n && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := false
		if i < n && (raw[i] == '+' || raw[i] == '-') {
			eneg = raw[i] == '-'
			i++
		}
		if i >= n || !isDigit(raw[i]) {
			return 0, false
		}
		for ; i < n && isDigit(raw[i]); i++ {
			if exp < expLimit {
				exp = exp*10 + int(raw[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != n {
		return 0, false
	}

	// Digit k of the mantissa (0-based over integer then fraction digits)
	// has weight 10^(intLen-1-k+exp).
	intLen := intEnd - intStart
	total := intLen + (fracEnd - fracStart)
	digit := func(k int) byte {
		if k < intLen {
			return raw[intStart+k] - '0'
		}
		return raw[fracStart+k-intLen] - '0'
	}
	hi := 0
	for hi < total && digit(hi) == 0 {
		hi++
	}
	if hi == total {
		return 0, true // zero, whatever the sign or exponent
	}
	lo := total - 1
	for digit(lo) == 0 {
		lo--
	}
	pHi := intLen - 1 - hi + exp // power of ten of the leading nonzero digit
	pLo := intLen - 1 - lo + exp // power of ten of the trailing nonzero digit
	if pLo < 0 {
		return 0, false // nonzero fractional part
	}
	if pHi >= 19 {
		return 0, false // at least 10^19 > MaxInt64
	}
	// At most 19 significant digits plus zeros: fits in uint64.
	var u uint64
	for k := hi; k <= lo; k++ {
		u = u*10 + uint64(digit(k))
	}
	for range pLo {
		u *= 10
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53-1.
const maxSafeInteger = 1<<53 - 1

// SafeInteger reports the value of a raw JSON number token as JSON.parse
// reads it (rounded to the nearest float64) when that value is a
// JavaScript safe integer (Number.isSafeInteger): "5", "5.0", "2e3" and
// "1e-400" (0) pass; "1.5", "9007199254740992" (2^53) and "1e300" do not. Unlike NumberInt64
// it follows the rounding, for the checks the runtime makes in JavaScript.
// Tokens that are not JSON numbers report false.
func SafeInteger(raw []byte) (int64, bool) {
	if KindOf(raw) != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}
