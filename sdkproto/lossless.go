package sdkproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/wire"
)

// This file holds the machinery that keeps decoded values lossless: every
// object type of the package records the bytes it was decoded from and, when
// encoded again, returns them unchanged, or, if a known member was modified
// in Go, rewrites only that member and keeps every other member (unknown
// ones included) with its original spelling and position.
//
// An object is read once: validated and split into its members in one pass
// (wire.ScanFillSpans), or, when it comes from bytes already validated,
// split as it is decoded (wire.SpanWalker, decodeWalk); the value keeps its
// members (as offsets into its bytes) beside them, so that looking a member
// up (Member, the checks) costs no second parse. Values nested in it are
// taken from those members, which are valid already: they are delimited,
// never validated again.

// maxDepth bounds the nesting of the values this package decodes; deeper
// input fails to decode. It is encoding/json's limit, which json.Marshal
// applies to the output of MarshalJSON methods, so that what decodes here
// encodes there. An object's members may each nest maxDepth deep.
const maxDepth = 10000

var errTooDeep = errors.New("sdkproto: JSON exceeded max depth")

// validate checks that data is one JSON value (JSON white space around it
// allowed) nested at most limit deep.
func validate(data []byte, limit int) error {
	_, depth, err := wire.ScanValue(data)
	if err != nil {
		return err
	}
	if depth > limit {
		return errTooDeep
	}
	return nil
}

// tooDeep returns the error of the first member of obj, a valid object,
// that nests deeper than maxDepth: encoding/json's, whose bound this is,
// so that a payload too deep to decode is reported in its words ("invalid
// character '[' exceeded max depth").
func tooDeep(obj []byte) error {
	for _, m := range splitObject(obj) {
		if v := m.Value(obj); validate(v, maxDepth) != nil {
			if err := json.Unmarshal(v, new(json.RawMessage)); err != nil {
				return err
			}
		}
	}
	return errTooDeep
}

// member is one member of an encoded object: a field's encoding, as
// encodeFields compares and writes them.
type member struct {
	key   string
	value json.RawMessage
	// asIs says that value is the member's value as decoded, which the
	// field holds whole, so that its encoding is value compacted: the
	// compaction waits for an encoding that needs it (see held).
	asIs bool
}

// encoded returns the member's encoding.
func (m member) encoded() json.RawMessage {
	if m.asIs {
		return wire.Compact(m.value) // valid: a member of a validated object
	}
	return m.value
}

// parseObject validates data, less the white space that bytes.TrimSpace
// removes around it, as one JSON object whose members nest at most
// maxDepth deep, and returns its members in document order, duplicates
// included, located in the trimmed data. ok is false when data is not an
// object.
func parseObject(data []byte) (members []wire.Span, ok bool, err error) {
	data = bytes.TrimSpace(data)
	if kindOf(data) != kindObject {
		return nil, false, nil
	}
	// Validated and split in one pass, the members kept in a slice of
	// their number (see splitObject).
	var buf [16]wire.Span
	n, _, depth, err := wire.ScanFillSpans(buf[:], data)
	switch {
	case err != nil:
		return nil, true, err
	case depth > maxDepth+1:
		return nil, true, tooDeep(data)
	}
	return keptSpans(buf[:], n, data), true, nil
}

// keptSpans returns the n members of obj in a slice of their number (the
// values that keep them are many and mostly small): buf's, copied, when
// buf held them all.
func keptSpans(buf []wire.Span, n int, obj []byte) []wire.Span {
	switch {
	case n == 0:
		return nil
	case n <= len(buf):
		return slices.Clone(buf[:n])
	}
	out := make([]wire.Span, n)
	wire.FillSpans(out, obj)
	return out
}

// lookup returns the value of the last member of obj called key (JSON.parse
// keeps the last duplicate), of ms, its members, or nil when there is none.
func lookup(obj []byte, ms []wire.Span, key string) json.RawMessage {
	if m, ok := wire.LastSpan(obj, ms, key); ok {
		return m.Value(obj)
	}
	return nil
}

// get returns the value of the last member called key of obj, a value
// taken from a validated object, or nil when there is none or obj is not
// an object.
func get(obj json.RawMessage, key string) json.RawMessage { return wire.Lookup(obj, key) }

// sameBytes reports whether a and b are the same bytes in memory, so that
// what is known of one (its members) holds for the other.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// dig validates obj as parseObject does and returns the value at the end
// of keys, each looked up in the value before it: nil when obj is not a
// valid object or a member on the way is missing or not an object.
func dig(obj json.RawMessage, keys ...string) json.RawMessage {
	v := json.RawMessage(bytes.TrimSpace(obj))
	if kindOf(v) != kindObject {
		return nil
	}
	// The first key is looked up in the pass that validates obj.
	var first json.RawMessage
	_, depth, err := wire.ScanMembers(v, func(key, value []byte) bool {
		if string(key) == keys[0] {
			first = value
		}
		return true
	})
	if err != nil || depth > maxDepth+1 {
		return nil
	}
	v = first
	for _, k := range keys[1:] {
		if v = get(v, k); v == nil {
			return nil
		}
	}
	return v
}

// held is what a field holds once its decoder ran on a member's value.
type held uint8

const (
	// heldOther: a value of its own, whose encoding is computed.
	heldOther held = iota
	// heldAsIs: the member's value, decoded whole, which encodes as that
	// value compacted (an object of this package that kept its bytes, raw
	// JSON, a string or a number written as the field would write it).
	// Its encoding at decode time is known without being computed: only
	// the rare encoding that finds the value changed needs it, which
	// keeps decoding from encoding every value again.
	heldAsIs
	// heldBefore: what it held before; the decoder refused the value.
	heldBefore
)

// field binds a JSON member name to a Go field of the object type T, for
// values v of T. dec stores a member's value (and may refuse a value of
// the wrong JSON type, leaving the field at its zero value) and says what
// the field then holds; depth is how deep v lies in content (see
// maxContentDepth). enc returns the member's encoding and whether the
// member is present. A type's fields are one table, built once, one
// field a key.
//
// decAt, when set, is dec for a value that is an object at the start of
// obj, which goes on past it: it has the effect dec would have on the
// object, and returns its length, found by taking it apart (see
// decodeWalk).
type field[T any] struct {
	key   string
	dec   func(v *T, raw json.RawMessage, depth int) held
	enc   func(v *T) (json.RawMessage, bool)
	decAt func(v *T, obj []byte, depth int) int
}

// keep is embedded state of a decoded object: the bytes it came from, their
// members, and the depth it was decoded at.
//
// What its known members encoded to right after decoding (the snapshot an
// encoding compares the fields with, to find what changed) is not kept: it
// is a function of these bytes, computed again by the rare encoding of a
// decoded value (snapshotOf) rather than by every decoding.
type keep struct {
	raw   json.RawMessage // nil for a value built in Go
	ms    []wire.Span     // the members of raw, when it is an object
	depth int             // how deep in content the value was decoded
}

// keeper is a pointer to an object type of this package, which embeds its
// keep: encodeFields reaches a value's keep, and snapshotOf a fresh
// value's, through it.
type keeper[T any] interface {
	*T
	kept() *keep
}

// decodeFields decodes the object data into the fields of v, which lies
// depth deep in content, and records data in k, v's keep. A value that is
// not an object leaves the fields at zero and is kept as is when object is
// false; with object true it is an error.
func decodeFields[T any](k *keep, data []byte, fields []field[T], v *T, depth int) (isObject bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if kindOf(trimmed) != kindObject {
		if validate(data, maxDepth) != nil {
			return false, errors.New("sdkproto: invalid JSON")
		}
		*k = keep{raw: append(json.RawMessage(nil), trimmed...), depth: depth}
		return false, nil
	}
	raw := append(json.RawMessage(nil), trimmed...)
	ms, _, err := parseObject(raw)
	if err != nil {
		return true, err
	}
	decodeMembers(k, raw, ms, fields, v, depth)
	return true, nil
}

// decodeValidFields is decodeFields for r, a value taken from a validated
// object: it is not validated again, and the value keeps r itself, which
// no one modifies, rather than a copy.
func decodeValidFields[T any](k *keep, r json.RawMessage, fields []field[T], v *T, depth int) (isObject bool) {
	if kindOf(r) != kindObject {
		*k = keep{raw: r, depth: depth}
		return false
	}
	decodeWalk(k, r, fields, v, depth)
	return true
}

// decodeWalk decodes the object at the start of obj, valid (and no larger
// than wire.MaxSpanned), into the fields of v as decodeValidFields does,
// and returns where it ended: obj may go on past it. The object is split
// as it is decoded, so that a member whose value is decoded as an object
// of this package (see prefixDecoder) is walked once, by its decoder,
// rather than skipped first.
func decodeWalk[T any](k *keep, obj []byte, fields []field[T], v *T, depth int) (end int) {
	var buf [8]wire.Span // the first members; the others, rarer, in more
	var more []wire.Span
	n := 0
	w := wire.WalkSpans(obj)
	for {
		m, ok := w.Next()
		if !ok {
			break
		}
		f := fieldOf(obj, m, fields)
		if start := m.ValueStart(); f != nil && f.decAt != nil && obj[start] == '{' {
			size := f.decAt(v, obj[start:], depth)
			m, ok = w.Done(m, start+size)
			ok = ok && size > 0 // 0: no valid object there, which a valid obj rules out
		} else if m, ok = w.Done(m, 0); ok && f != nil {
			f.dec(v, m.Value(obj), depth)
		}
		if !ok {
			break
		}
		if n < len(buf) {
			buf[n] = m
		} else {
			more = append(more, m)
		}
		n++
	}
	if end = w.End(); end == 0 {
		// Not an object that ends: only bytes changed in place after
		// they were checked (see Notification) come here, which are then
		// kept whole, so that no member lies outside what is kept.
		end = len(obj)
	}
	var ms []wire.Span // in a slice of their number, off the stack
	if n > 0 {
		ms = make([]wire.Span, n)
		copy(ms[copy(ms, buf[:min(n, len(buf))]):], more)
	}
	*k = keep{raw: obj[:end:end], ms: ms, depth: depth}
	return end
}

// fieldOf returns the field of member m of obj, or nil.
func fieldOf[T any](obj []byte, m wire.Span, fields []field[T]) *field[T] {
	if key, plain := m.PlainKey(obj); plain {
		for i := range fields {
			if fields[i].key == string(key) {
				return &fields[i]
			}
		}
		return nil
	}
	for i := range fields {
		if m.HasKey(obj, fields[i].key) {
			return &fields[i]
		}
	}
	return nil
}

// splitObject returns the members of obj, a valid object, in a slice of
// their number: the values that keep them are many and mostly small.
func splitObject(obj json.RawMessage) []wire.Span {
	var buf [16]wire.Span
	return keptSpans(buf[:], wire.FillSpans(buf[:], obj), obj)
}

// decodeMembers decodes the members ms of the object raw, bytes the value
// keeps (that no one modifies), into the fields of v, and records both in
// k.
func decodeMembers[T any](k *keep, raw json.RawMessage, ms []wire.Span, fields []field[T], v *T, depth int) {
	decodeEach(raw, ms, fields, v, depth, nil)
	*k = keep{raw: raw, ms: ms, depth: depth}
}

// decodeEach runs the decoder of each field on the members ms of obj of
// its key, in document order (so that the last a field accepts is what it
// holds). When asIs is not nil (one entry a field), asIs[i] is set to the
// member's value that field i then holds as is, if any.
func decodeEach[T any](obj []byte, ms []wire.Span, fields []field[T], v *T, depth int, asIs []json.RawMessage) {
	for _, m := range ms {
		for i := range fields {
			if !m.HasKey(obj, fields[i].key) {
				continue
			}
			value := m.Value(obj)
			h := fields[i].dec(v, value, depth)
			switch {
			case asIs == nil:
			case h == heldAsIs:
				asIs[i] = value
			case h == heldOther:
				asIs[i] = nil
			}
		}
	}
}

// snapshotOf is the encoding of the fields of a value decoded from k right
// after decoding. Decoding depends on nothing but the bytes and the depth
// k keeps, so the bytes are decoded again, into a fresh value with the
// same keep (some fields' presence depends on it).
func snapshotOf[T any, PT keeper[T]](k keep, fields []field[T]) []member {
	var fresh T
	*PT(&fresh).kept() = k
	if kindOf(k.raw) != kindObject {
		return snapshot(fields, &fresh, nil) // the fields of an empty object
	}
	var buf [16]json.RawMessage // the member each field holds as is, if any
	var asIs []json.RawMessage
	if len(fields) <= len(buf) {
		asIs = buf[:len(fields)]
	} else {
		asIs = make([]json.RawMessage, len(fields))
	}
	decodeEach(k.raw, k.ms, fields, &fresh, k.depth, asIs)
	return snapshot(fields, &fresh, asIs)
}

// snapshot is the encoding of the fields of v: asIs[i], when set, is the
// member's value that field i holds as is.
func snapshot[T any](fields []field[T], v *T, asIs []json.RawMessage) []member {
	out := make([]member, 0, len(fields))
	for i := range fields {
		if i < len(asIs) && asIs[i] != nil {
			out = append(out, member{key: fields[i].key, value: asIs[i], asIs: true})
		} else if e, ok := fields[i].enc(v); ok {
			out = append(out, member{key: fields[i].key, value: e})
		}
	}
	return out
}

// present returns the encoding enc makes when a member is present; an
// absent member is not encoded.
func present(ok bool, enc func() json.RawMessage) (json.RawMessage, bool) {
	if !ok {
		return nil, false
	}
	return enc(), true
}

func encodeMembers[T any](fields []field[T], v *T) []member {
	out := make([]member, 0, len(fields))
	for i := range fields {
		if e, ok := fields[i].enc(v); ok {
			out = append(out, member{key: fields[i].key, value: e})
		}
	}
	return out
}

// encodeFields encodes an object: the kept bytes when no known member
// changed since decoding, the kept bytes with only the changed members
// rewritten otherwise, and a fresh compact object (members in field order)
// for a value built in Go.
func encodeFields[T any, PT keeper[T]](fields []field[T], v PT) ([]byte, error) {
	k := *v.kept()
	now := encodeMembers(fields, (*T)(v))
	if k.raw == nil {
		return buildObject(now), nil
	}
	raw := k.raw
	if kindOf(raw) != kindObject {
		// A non-object decoded as params stands for an empty object: it
		// encodes as one, so that it decodes back to the same value.
		raw = json.RawMessage("{}")
	}
	then := snapshotOf[T, PT](k, fields)
	if sameMembers(then, now) {
		return raw, nil
	}
	known := map[string]bool{}
	for i := range fields {
		known[fields[i].key] = true
	}
	thenV, nowV := index(then), index(now)
	emitted := map[string]bool{}
	var out []member
	for _, km := range k.ms { // none when raw is not an object
		m := member{key: string(km.Key(k.raw, nil)), value: km.Value(k.raw)}
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
				out = append(out, member{key: m.key, value: nv})
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
		out[m.key] = m.encoded()
	}
	return out
}

func sameMembers(then, now []member) bool {
	if len(then) != len(now) {
		return false
	}
	for i := range then {
		if then[i].key != now[i].key || !bytes.Equal(then[i].encoded(), now[i].value) {
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
		b = appendQuoted(b, m.key)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// appendQuoted appends the JSON string of s, as JSON.stringify writes it
// (and encoding/json without HTML escaping).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = wire.AppendStringContent(b, []byte(s))
	return append(b, '"')
}

// marshal encodes v compactly without HTML escaping, as JSON.stringify does.
// It is used for strings, numbers, booleans and types of this package,
// which cannot fail to encode. The types the package encodes most are
// written here directly, as encoding/json would write them; the others,
// and output of MarshalJSON that encoding/json would refuse (which then
// panics with its error), go through wire.Stringify.
func marshal(v any) json.RawMessage {
	switch v := v.(type) {
	case string:
		return appendQuoted(nil, v)
	case int64:
		return strconv.AppendInt(nil, v, 10)
	case bool:
		return strconv.AppendBool(nil, v)
	case []int64:
		if v == nil {
			return json.RawMessage("null")
		}
		b := []byte{'['}
		for i, n := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, n, 10)
		}
		return append(b, ']')
	case []ContentBlock:
		if v == nil {
			return json.RawMessage("null")
		}
		b := []byte{'['}
		for i, blk := range v {
			e, err := blk.MarshalJSON()
			if err != nil || validate(e, maxDepth) != nil {
				return stringify(v)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, wire.Compact(e)...)
		}
		return append(b, ']')
	case json.Marshaler:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return json.RawMessage("null")
		}
		// encoding/json checks and compacts what MarshalJSON returns.
		if e, err := v.MarshalJSON(); err == nil && validate(e, maxDepth) == nil {
			return append(json.RawMessage(nil), wire.Compact(e)...)
		}
	}
	return stringify(v)
}

// stringify is marshal through encoding/json.
func stringify(v any) json.RawMessage {
	b, err := wire.Stringify(v)
	if err != nil {
		panic("sdkproto: " + err.Error())
	}
	return b
}

// Field constructors: each takes the key and the accessor of the Go field
// in a value of T. "req" members are always written (upstream always sends
// them); "opt" members are written only when set.

func reqString[T any](key string, p func(*T) *string) field[T] { return strWhen(key, p, nil) }

func optString[T any](key string, p func(*T) *string) field[T] {
	return strWhen(key, p, func(*T) bool { return false })
}

// strWhen is a string member written when when(v) holds (always, when nil)
// or it is non-empty.
func strWhen[T any](key string, p func(*T) *string, when func(*T) bool) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		s, canonical := memberStringAsIs(r)
		*p(v) = s
		if canonical && (when == nil || s != "") { // written as is
			return heldAsIs
		}
		return heldOther
	}, enc: func(v *T) (json.RawMessage, bool) {
		return present(when == nil || when(v) || *p(v) != "", func() json.RawMessage { return appendQuoted(nil, *p(v)) })
	}}
}

func reqInt[T any](key string, p func(*T) *int64) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		*p(v), _ = wire.NumberInt64(r)
		if canonicalInt(r) {
			return heldAsIs
		}
		return heldOther
	}, enc: func(v *T) (json.RawMessage, bool) { return strconv.AppendInt(nil, *p(v), 10), true }}
}

func optBool[T any](key string, p func(*T) *bool) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		*p(v), _ = asBool(r)
		if *p(v) {
			return heldAsIs // true, written as is; false is not written
		}
		return heldOther
	}, enc: func(v *T) (json.RawMessage, bool) {
		return present(*p(v), func() json.RawMessage { return json.RawMessage("true") })
	}}
}

// canonicalInt reports whether r is an integer written as marshal writes
// int64s: decimal digits, a minus sign, no leading zero, no -0, at most
// 18 digits (so that it fits).
func canonicalInt(r []byte) bool {
	d := r
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || d[0] == '0' && (len(d) > 1 || len(r) > 1) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func optBoolPtr[T any](key string, p func(*T) **bool) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		if b, ok := asBool(r); ok {
			*p(v) = &b
			return heldOther
		}
		return heldBefore
	}, enc: func(v *T) (json.RawMessage, bool) {
		if *p(v) == nil {
			return nil, false
		}
		return marshal(**p(v)), true
	}}
}

func optRaw[T any](key string, p func(*T) *json.RawMessage) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held { *p(v) = append(json.RawMessage(nil), r...); return heldAsIs },
		enc: func(v *T) (json.RawMessage, bool) { return compact(*p(v)), *p(v) != nil }}
}

// unmarshaler is a type of this package that decodes itself.
type unmarshaler[V any] interface {
	*V
	json.Unmarshaler
}

// validDecoder is a type of this package that decodes a value taken from
// a validated object as UnmarshalJSON would, without validating it again
// and keeping the bytes rather than a copy (see decodeValidFields). A
// value it refuses leaves it as it was, so that a field can be decoded
// in place.
type validDecoder interface {
	decodeValid(r json.RawMessage) error
}

// prefixDecoder is a validDecoder that also decodes the object at the
// start of bytes that go on past it, and returns its length, found by
// taking it apart: an object holding it, split as it is decoded
// (decodeWalk), then walks its bytes once rather than skipping them first.
type prefixDecoder interface {
	validDecoder
	decodeAt(obj []byte) (n int, err error)
}

// decodeMember decodes r, a member's value, into v.
func decodeMember(v json.Unmarshaler, r json.RawMessage) error {
	if d, ok := v.(validDecoder); ok {
		return d.decodeValid(r)
	}
	return v.UnmarshalJSON(r)
}

// value is a field whose Go type has its own JSON methods; present reports
// whether it is written. A value the type refuses leaves the field as it
// was.
func value[T, V any, PV unmarshaler[V]](key string, p func(*T) *V, present func(*T) bool) field[T] {
	f := field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		if d, ok := any(PV(p(v))).(validDecoder); ok {
			if d.decodeValid(r) != nil {
				return heldBefore
			}
			return heldAsIs
		}
		var x V
		if PV(&x).UnmarshalJSON(r) != nil {
			return heldBefore
		}
		*p(v) = x
		return heldAsIs
	}, enc: func(v *T) (json.RawMessage, bool) {
		if !present(v) {
			return nil, false
		}
		return marshal(*p(v)), true
	}}
	if _, ok := any(PV(new(V))).(prefixDecoder); ok {
		f.decAt = func(v *T, obj []byte, _ int) int {
			n, _ := any(PV(p(v))).(prefixDecoder).decodeAt(obj)
			return n
		}
	}
	return f
}

// optValue is value for a member held by pointer, written when set; null
// sets it to nil, as encoding/json decodes null into a pointer.
func optValue[T, V any, PV unmarshaler[V]](key string, p func(*T) **V) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, _ int) held {
		if kindOf(r) == kindNull {
			*p(v) = nil
			return heldOther
		}
		x := new(V)
		if decodeMember(PV(x), r) != nil {
			return heldBefore
		}
		*p(v) = x
		return heldAsIs
	}, enc: func(v *T) (json.RawMessage, bool) {
		if *p(v) == nil {
			return nil, false
		}
		return marshal(*p(v)), true
	}}
}

// compact returns r without white space outside its strings, or r itself
// when it is not valid JSON (nested at most maxDepth deep).
func compact(r json.RawMessage) json.RawMessage {
	if validate(r, maxDepth) != nil {
		return r
	}
	return wire.Compact(r)
}

// asString returns the string r holds, decoded as encoding/json decodes
// it (each byte of invalid UTF-8 read as U+FFFD); ok is false when r is not
// a valid JSON string.
func asString(r json.RawMessage) (string, bool) {
	if kindOf(r) != kindString || validate(r, maxDepth) != nil {
		return "", false
	}
	return memberString(r)
}

// memberString is asString for a value taken from a validated object.
func memberString(r json.RawMessage) (string, bool) {
	tok := bytes.TrimSpace(r)
	if wire.KindOf(tok) != kindString {
		return "", false
	}
	if s, ok := wire.StringContent(tok); ok && utf8.Valid(s) {
		return internString(s), true
	}
	return string(wire.AppendUnquoteUTF8(nil, tok)), true
}

// interned are the strings the protocol repeats in every other payload
// (event and chunk types, surface operations, roles, the root session's
// id), which decoding then takes from here rather than allocating them;
// by length, so that a lookup compares a string with the few of its
// length (cheaper than hashing it).
var interned = func() (byLen [32][]string) {
	add := func(s string) {
		if len(s) < len(byLen) {
			byLen[len(s)] = append(byLen[len(s)], s)
		}
	}
	for _, s := range []string{"append", "replace", "main", "user", "assistant", "text", "model"} {
		add(s)
	}
	for _, t := range knownEventTypes {
		add(string(t))
	}
	for _, t := range []ChunkType{ChunkBlockStart, ChunkTextDelta, ChunkReasoningDelta, ChunkToolCallDelta, ChunkBlockEnd, ChunkUsage, ChunkFinish} {
		add(string(t))
	}
	return byLen
}()

// internString returns the string of b, interned when it is one of the
// interned strings.
func internString(b []byte) string {
	if len(b) < len(interned) {
		for _, s := range interned[len(b)] {
			if string(b) == s {
				return s
			}
		}
	}
	return string(b)
}

// memberStringAsIs is memberString ("" unless r is a string), reporting
// also whether r is the string written as marshal writes it: without
// escapes, in valid UTF-8, without U+2028 or U+2029 (which it escapes).
func memberStringAsIs(r json.RawMessage) (s string, canonical bool) {
	if wire.KindOf(r) == kindString {
		if c, ok := wire.StringContent(r); ok {
			ascii := true
			for _, b := range c {
				if b >= utf8.RuneSelf {
					ascii = false
					break
				}
			}
			if ascii || utf8.Valid(c) && !bytes.Contains(c, []byte("\u2028")) && !bytes.Contains(c, []byte("\u2029")) {
				return internString(c), true
			}
		}
	}
	s, _ = memberString(r)
	return s, false
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
// not a valid array.
func splitArray(r json.RawMessage) (elems []json.RawMessage, ok bool) {
	if kindOf(r) != kindArray || validate(r, maxDepth) != nil {
		return nil, false
	}
	return elements(r), true
}

// elements returns the elements of r, a value taken from a validated
// object, or nil when it is not an array; they alias r. An empty array
// gives a non-nil empty slice.
func elements(r json.RawMessage) []json.RawMessage {
	if kindOf(r) != kindArray {
		return nil
	}
	elems := []json.RawMessage{}
	wire.Elements(bytes.TrimSpace(r), func(e []byte) bool {
		elems = append(elems, e)
		return true
	})
	return elems
}
