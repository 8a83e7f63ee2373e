package wire

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

// IDKey identifies a JSON-RPC id as a response matches it to its request:
// two ids match exactly when their keys are equal. Ids of different JSON
// types never match (5 and "5" differ); strings match by their decoded
// content; numbers by the integer IntegerID reads, so 5 and 5.0 match
// while 2^53 and 2^53+1 do not (a float64 comparison would equate them).
// A number that is not such an integer matches only the same spelling.
// IDKey is comparable, for use as a map key.
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
	if id.Kind == String {
		return IDKey{kind: String, text: string(AppendUnquote(nil, id.Raw))}
	}
	return IDKey{kind: id.Kind, text: string(id.Raw)}
}
