package wire

// ResponseIDInPrefix reads the start of a frame too long to be read whole
// and returns the id of the response it begins, when that much shows: the
// prefix opens an object whose top-level members, as far as they go, hold
// an id that is a string or a number, whole and valid within the prefix,
// and a result or error member (begun, at least), and no method member. A
// number at the very end of the prefix is not taken: its digits may go on.
// Peers write a response's id before its result, so the id of an oversize
// response is usually there; a method written after the cut would make
// the frame a request, which no peer writes with a result.
func ResponseIDInPrefix(prefix []byte) (Value, bool) {
	n := len(prefix)
	i := skipWS(prefix, 0)
	if i >= n || prefix[i] != '{' {
		return Value{}, false
	}
	var id Value
	answered := false
	for i++; ; {
		if i = skipWS(prefix, i); i >= n || prefix[i] != '"' {
			break
		}
		end, escaped, msg := scanString(prefix, i)
		if msg != "" {
			break
		}
		member := memberIndex(prefix[i+1:end-1], escaped)
		if i = skipWS(prefix, end); i >= n || prefix[i] != ':' {
			break
		}
		if i = skipWS(prefix, i+1); i >= n {
			break
		}
		switch member {
		case memberMethod:
			return Value{}, false
		case memberResult, memberError:
			answered = true
		}
		vend, _, ok := skipValue(prefix, i)
		if !ok || vend == n {
			break // the value runs on past the prefix
		}
		if v := prefix[i:vend]; member == memberID {
			if k := kindOf(v[0]); (k == String || k == Number) && valid(v) {
				id = Value{Raw: v, Kind: k}
			} else {
				id = Value{}
			}
		}
		if i = skipWS(prefix, vend); i >= n || prefix[i] != ',' {
			break
		}
		i++
	}
	if !answered {
		return Value{}, false
	}
	return id, id.Raw != nil
}
