package sdkproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/linerpc/linerpc/internal/wire"
)

// This file holds the machinery that keeps decoded values lossless: every
// object type of the package records the bytes it was decoded from and, when
// encoded again, returns them unchanged, or, if a known member was modified
// in Go, rewrites only that member and keeps every other member (unknown
// ones included) with its original spelling and position.

// member is one member of a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// parseObject splits a JSON object into its members in document order
// (duplicates included). ok is false when data is not an object.
func parseObject(data []byte) (members []member, ok bool, err error) {
	data = bytes.TrimSpace(data)
	if kindOf(data) != kindObject {
		return nil, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil {
		return nil, true, err
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, true, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, true, err
		}
		members = append(members, member{key, v})
	}
	if _, err := d.Token(); err != nil {
		return nil, true, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, true, errors.New("sdkproto: trailing data after JSON object")
	}
	return members, true, nil
}

// lookup returns the value of the last member called key (JSON.parse keeps
// the last duplicate), or nil when there is none.
func lookup(ms []member, key string) json.RawMessage {
	var v json.RawMessage
	for _, m := range ms {
		if m.key == key {
			v = m.value
		}
	}
	return v
}

// field binds a JSON member name to a Go field of an object type. dec
// stores a member's value (and may refuse a value of the wrong JSON type,
// leaving the field at its zero value); enc returns the member's encoding
// and whether the member is present.
type field struct {
	key string
	dec func(raw json.RawMessage)
	enc func() (json.RawMessage, bool)
}

// keep is embedded state of a decoded object: the bytes it came from and
// the encoding of its known members right after decoding.
type keep struct {
	raw  json.RawMessage // nil for a value built in Go
	then []member        // encoding of the fields at decode time
}

// decodeFields decodes the object data into fields and records data in k.
// A value that is not an object leaves the fields at zero and is kept as is
// when object is false; with object true it is an error.
func decodeFields(k *keep, data []byte, fields []field) (isObject bool, err error) {
	ms, ok, err := parseObject(data)
	if err != nil {
		return ok, err
	}
	if !ok {
		if !json.Valid(data) {
			return false, errors.New("sdkproto: invalid JSON")
		}
		*k = keep{raw: append(json.RawMessage(nil), bytes.TrimSpace(data)...)}
		k.then = encodeMembers(fields) // the fields of an empty object, for encodeFields
		return false, nil
	}
	for _, m := range ms {
		for _, f := range fields {
			if f.key == m.key {
				f.dec(m.value)
			}
		}
	}
	k.raw = append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	k.then = encodeMembers(fields) // after k.raw: some fields' presence depends on it
	return true, nil
}

func encodeMembers(fields []field) []member {
	var out []member
	for _, f := range fields {
		if v, ok := f.enc(); ok {
			out = append(out, member{f.key, v})
		}
	}
	return out
}

// encodeFields encodes an object: the kept bytes when no known member
// changed since decoding, the kept bytes with only the changed members
// rewritten otherwise, and a fresh compact object (members in field order)
// for a value built in Go.
func encodeFields(k keep, fields []field) ([]byte, error) {
	now := encodeMembers(fields)
	if k.raw == nil {
		return buildObject(now), nil
	}
	raw := k.raw
	if kindOf(raw) != kindObject {
		// A non-object decoded as params stands for an empty object: it
		// encodes as one, so that it decodes back to the same value.
		raw = json.RawMessage("{}")
	}
	if sameMembers(k.then, now) {
		return raw, nil
	}
	ms, ok, err := parseObject(raw)
	if err != nil || !ok {
		return buildObject(now), nil
	}
	known := map[string]bool{}
	for _, f := range fields {
		known[f.key] = true
	}
	thenV, nowV := index(k.then), index(now)
	emitted := map[string]bool{}
	var out []member
	for _, m := range ms {
		if !known[m.key] {
			out = append(out, m)
			continue
		}
		nv, inNow := nowV[m.key]
		tv, inThen := thenV[m.key]
		switch {
		case inNow && inThen && bytes.Equal(nv, tv):
			out = append(out, m) // unchanged: keep the original spelling
		case inNow:
			if !emitted[m.key] {
				out = append(out, member{m.key, nv})
			}
		case !inThen:
			out = append(out, m) // a value the typed view could not hold, untouched
		}
		emitted[m.key] = true
	}
	for _, m := range now {
		if tv, inThen := thenV[m.key]; emitted[m.key] || (inThen && bytes.Equal(tv, m.value)) {
			continue // already written, or the unchanged default of an absent member
		}
		out = append(out, m)
	}
	return buildObject(out), nil
}

func index(ms []member) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		out[m.key] = m.value
	}
	return out
}

func sameMembers(a, b []member) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].value, b[i].value) {
			return false
		}
	}
	return true
}

func buildObject(ms []member) []byte {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, marshal(m.key)...)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// marshal encodes v compactly without HTML escaping, as JSON.stringify does.
// It is used for strings, numbers, booleans and types of this package,
// which cannot fail to encode.
func marshal(v any) json.RawMessage {
	b, err := wire.Stringify(v)
	if err != nil {
		panic("sdkproto: " + err.Error())
	}
	return b
}

// Field constructors. "req" members are always written (upstream always
// sends them); "opt" members are written only when set.

func reqString(key string, p *string) field {
	return field{key, func(r json.RawMessage) { *p, _ = asString(r) },
		func() (json.RawMessage, bool) { return marshal(*p), true }}
}

func optString(key string, p *string) field {
	return field{key, func(r json.RawMessage) { *p, _ = asString(r) },
		func() (json.RawMessage, bool) { return marshal(*p), *p != "" }}
}

func reqInt(key string, p *int64) field {
	return field{key, func(r json.RawMessage) { *p, _ = wire.NumberInt64(r) },
		func() (json.RawMessage, bool) { return marshal(*p), true }}
}

func optBool(key string, p *bool) field {
	return field{key, func(r json.RawMessage) { *p, _ = asBool(r) },
		func() (json.RawMessage, bool) { return marshal(*p), *p }}
}

func optBoolPtr(key string, p **bool) field {
	return field{key, func(r json.RawMessage) {
		if b, ok := asBool(r); ok {
			*p = &b
		}
	}, func() (json.RawMessage, bool) {
		if *p == nil {
			return nil, false
		}
		return marshal(**p), true
	}}
}

func optRaw(key string, p *json.RawMessage) field {
	return field{key, func(r json.RawMessage) { *p = append(json.RawMessage(nil), r...) },
		func() (json.RawMessage, bool) { return compact(*p), *p != nil }}
}

// value is a field whose Go type has its own JSON methods; present reports
// whether it is written.
func value[T any](key string, p *T, present func() bool) field {
	return field{key, func(r json.RawMessage) {
		var v T
		if json.Unmarshal(r, &v) == nil {
			*p = v
		}
	}, func() (json.RawMessage, bool) {
		if !present() {
			return nil, false
		}
		return marshal(*p), true
	}}
}

func compact(r json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, r) != nil {
		return r
	}
	return buf.Bytes()
}

func asString(r json.RawMessage) (string, bool) {
	var s string
	if kindOf(r) != kindString || json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}

func asBool(r json.RawMessage) (bool, bool) {
	switch string(r) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// The JSON kinds of raw values are wire's (wire.KindOf); members taken
// from a document may keep surrounding whitespace, which kindOf skips.
const (
	kindAbsent = wire.Absent
	kindNull   = wire.Null
	kindNumber = wire.Number
	kindString = wire.String
	kindArray  = wire.Array
	kindObject = wire.Object
)

func kindOf(r json.RawMessage) wire.Kind { return wire.KindOf(bytes.TrimSpace(r)) }

// splitArray returns the elements of a JSON array; ok is false when r is
// not an array.
func splitArray(r json.RawMessage) (elems []json.RawMessage, ok bool) {
	if kindOf(r) != kindArray {
		return nil, false
	}
	if err := json.Unmarshal(r, &elems); err != nil {
		return nil, false
	}
	if elems == nil {
		elems = []json.RawMessage{}
	}
	return elems, true
}
