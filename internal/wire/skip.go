package wire

// Delimiting a value without validating it, for Scanner.LazyParams.

// structural marks the bytes the container skip stops at.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// delimiter marks the bytes that end a scalar.
var delimiter = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// skipValue delimits the value starting at b[i] without validating it: a
// string up to its closing quote, a container up to the bracket that
// closes it (of either kind: mismatched brackets are for validation to
// find), anything else up to the next delimiter. It reports the container
// depth of the value ({} and [] have depth 1), and ok false when b ends
// first or holds no value at all. On valid JSON it agrees with Scan.
func skipValue(b []byte, i int) (end, depth int, ok bool) {
	switch b[i] {
	case '"':
		end, ok = skipString(b, i)
		return end, 0, ok
	case '{', '[':
		d := 0
		for {
			for i < len(b) && !structural[b[i]] {
				i++
			}
			if i >= len(b) {
				return len(b), depth, false
			}
			switch b[i] {
			case '"':
				if i, ok = skipString(b, i); !ok {
					return len(b), depth, false
				}
				continue
			case '{', '[':
				d++
				depth = max(depth, d)
			default: // '}', ']'
				d--
				if d == 0 {
					return i + 1, depth, true
				}
			}
			i++
		}
	default:
		start := i
		for i < len(b) && !delimiter[b[i]] {
			i++
		}
		return i, 0, i > start // no value at all is no valid value either
	}
}

// skipString returns the offset just past the string starting with the
// quote at b[i], skipping escaped characters, or ok false when b ends
// first.
func skipString(b []byte, i int) (end int, ok bool) {
	i++
	for {
		i = indexSpecial(b, i)
		if i >= len(b) {
			return len(b), false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			i += 2
		default: // a control character: for validation to find
			i++
		}
	}
}

// valid reports whether value is one valid JSON value. It is for the rare
// duplicate params member, and allocates the nesting stack it needs.
func valid(value []byte) bool {
	var s Scanner
	_, _, err := s.Scan(value, nil)
	return err == nil
}
