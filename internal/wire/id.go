package wire

import "strconv"

// IntegerID reports the integer a JSON-RPC id denotes when it is a JSON
// number whose exact decimal value is an integer within int64 (5, 5.0 and
// 5e0 alike; 1.5, 1e400 and strings not), as NumberInt64 reads it. It is
// the rule by which a response finds the request this side numbered, and
// it never allocates.
func IntegerID(id Value) (int64, bool) {
	if id.Kind != Number {
		return 0, false
	}
	return NumberInt64(id.Raw)
}

// IDKey identifies a JSON-RPC id as ids are matched, one rule for every
// match (a response to its request, a cancel notification to the request
// it names): two ids match exactly when their keys are equal. Ids of
// different JSON types never match (5 and "5" differ); strings match by
// their decoded content; numbers by their exact decimal value, so 5, 5.0
// and 5e0 match, and 1.5 and 15e-1, while 2^53 and 2^53+1 do not (a
// float64 comparison would equate them), nor 1e400 and 2e400 (both
// infinite as doubles). IDKey is comparable, for use as a map key.
type IDKey struct {
	kind Kind
	n    int64  // a number's integer value
	text string // a string's content; the spelling of any other id
}

// KeyOfID returns the match key of the id.
func KeyOfID(id Value) IDKey {
	if n, ok := IntegerID(id); ok {
		return IDKey{kind: Number, n: n}
	}
	switch id.Kind {
	case String:
		return IDKey{kind: String, text: string(AppendUnquote(nil, id.Raw))}
	case Number:
		if v, ok := exactDecimal(id.Raw); ok {
			return IDKey{kind: Number, n: -1, text: v}
		}
	}
	return IDKey{kind: id.Kind, text: string(id.Raw)}
}

// exactDecimal returns the canonical spelling of the value of the JSON
// number raw, the same for every spelling of one value: its significant
// digits without leading or trailing zeros, then "e" and the exponent of
// the last digit ("15e-1" for 1.5, 1.50 and 15e-1). It reports false for a
// token that is not a number, or whose exponent does not fit an int64.
func exactDecimal(raw []byte) (string, bool) {
	i, n := 0, len(raw)
	neg := i < n && raw[i] == '-'
	if neg {
		i++
	}
	var digits []byte
	exp := int64(0)
	start := i
	for i < n && isDigit(raw[i]) {
		digits = append(digits, raw[i])
		i++
	}
	if i == start {
		return "", false
	}
	if i < n && raw[i] == '.' {
		i++
		for i < n && isDigit(raw[i]) {
			digits = append(digits, raw[i])
			exp--
			i++
		}
	}
	if i < n && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := i < n && raw[i] == '-'
		if i < n && (raw[i] == '-' || raw[i] == '+') {
			i++
		}
		var e int64
		for ; i < n && isDigit(raw[i]); i++ {
			if e > (1<<62)/10 {
				return "", false
			}
			e = e*10 + int64(raw[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != n {
		return "", false
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return "0", true // -0 is 0
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	b := make([]byte, 0, len(digits)+24)
	if neg {
		b = append(b, '-')
	}
	b = append(b, digits...)
	b = append(b, 'e')
	b = strconv.AppendInt(b, exp, 10)
	return string(b), true
}
