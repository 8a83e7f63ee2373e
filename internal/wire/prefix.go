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
	var id Value
	answered, method := false, false
	prefixMembers(prefix, func(member int, v []byte) bool {
		switch member {
		case memberMethod:
			method = true
			return false
		case memberResult, memberError:
			answered = true
		case memberID:
			id = Value{}
			if v != nil {
				if k := kindOf(v[0]); (k == String || k == Number) && valid(v) {
					id = Value{Raw: v, Kind: k}
				}
			}
		}
		return true
	})
	if method || !answered {
		return Value{}, false
	}
	return id, id.Raw != nil
}

// MethodInPrefix reads the start of a frame too long to be read whole and
// reports whether it opens an object whose top-level members, as far as
// they go, hold a method that is a string, whole and valid within the
// prefix: a request or a notification, never a response.
func MethodInPrefix(prefix []byte) bool {
	found := false
	prefixMembers(prefix, func(member int, v []byte) bool {
		if member == memberMethod {
			found = v != nil && kindOf(v[0]) == String && valid(v)
			return false
		}
		return true
	})
	return found
}

// prefixMembers calls visit with each top-level member of the object that
// prefix opens, in order, as far as the prefix goes: its index (memberIndex)
// and its value, nil when the value runs on past the prefix (a member so
// cut is the last visited). It stops when visit returns false.
func prefixMembers(prefix []byte, visit func(member int, v []byte) bool) {
	n := len(prefix)
	i := skipWS(prefix, 0)
	if i >= n || prefix[i] != '{' {
		return
	}
	for i++; ; {
		if i = skipWS(prefix, i); i >= n || prefix[i] != '"' {
			return
		}
		end, escaped, msg := scanString(prefix, i)
		if msg != "" {
			return
		}
		member := memberIndex(prefix[i+1:end-1], escaped)
		if i = skipWS(prefix, end); i >= n || prefix[i] != ':' {
			return
		}
		if i = skipWS(prefix, i+1); i >= n {
			return
		}
		vend, _, ok := skipValue(prefix, i)
		if !ok || vend == n { // the value runs on past the prefix
			visit(member, nil)
			return
		}
		if !visit(member, prefix[i:vend]) {
			return
		}
		if i = skipWS(prefix, vend); i >= n || prefix[i] != ',' {
			return
		}
		i++
	}
}
