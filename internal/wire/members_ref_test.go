package wire

// The members of an object in the plainest form, which the tests compare
// the readers of members with.

// Member is one member of a JSON object, as AppendMembers returns it.
type Member struct {
	Key   []byte // the key, unescaped as Members yields it
	Value []byte // the raw value, without the white space around it
}

// AppendMembers appends the members of obj, as Members yields them, to dst
// and returns the extended slice. A key that Members would have decoded
// into its buffer gets storage of its own, so that every member stays
// valid as long as obj is.
func AppendMembers(dst []Member, obj []byte) []Member {
	for i := firstMember(obj); i >= 0; {
		m, next, ok := nextMember(obj, i)
		if !ok {
			break
		}
		i = next
		key := m.key(obj)
		if m.slowKey {
			key = AppendUnquoteUTF8(nil, key)
		}
		dst = append(dst, Member{Key: key, Value: obj[m.value:m.end:m.end]})
	}
	return dst
}

// Last returns the value of the last of ms called key, or nil.
func Last(ms []Member, key string) []byte {
	for i := len(ms) - 1; i >= 0; i-- {
		if string(ms[i].Key) == key {
			return ms[i].Value
		}
	}
	return nil
}
