package openrpc

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schemer is implemented by a type that gives its own JSON Schema, in
// place of the one its Go type would be described with: a union of
// several shapes, a string with a pattern, a type with its own MarshalJSON.
// JSONSchema is called on the type's zero value (on a pointer to it, for
// a pointer receiver), each time the type is described, and its result is
// copied.
type Schemer interface {
	JSONSchema() *Schema
}

// SchemaFor returns the JSON Schema of the JSON that encoding/json (and
// go-json) write for a value of type t, and the schemas of the named
// struct types it refers to, by name, as Describe puts them in a
// document's components ("#/components/schemas/<name>"). See Describe for
// how Go types are described.
func SchemaFor(t reflect.Type) (*Schema, map[string]*Schema, error) {
	d := newDeriver()
	s, err := d.schema(t)
	if err != nil {
		return nil, nil, err
	}
	return s, d.defs, nil
}

// deriver describes Go types as JSON Schema, writing the schemas of named
// struct types once, in defs, and referring to them: a recursive type is
// described by a schema that refers to itself.
type deriver struct {
	defs  map[string]*Schema
	names map[reflect.Type]string // a named struct type → its name in defs
	taken map[string]reflect.Type // a name in defs → its type
	path  []string                // where the type being described is, for errors
}

func newDeriver() *deriver {
	return &deriver{defs: map[string]*Schema{}, names: map[reflect.Type]string{}, taken: map[string]reflect.Type{}}
}

var (
	schemerType         = reflect.TypeFor[Schemer]()
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	timeType            = reflect.TypeFor[time.Time]()
	bigIntType          = reflect.TypeFor[big.Int]()
	bigFloatType        = reflect.TypeFor[big.Float]()
	bigRatType          = reflect.TypeFor[big.Rat]()
	numberType          = reflect.TypeFor[json.Number]()
)

// refPrefix is where a document's named schemas are.
const refPrefix = "#/components/schemas/"

// DeriveError reports a Go type that no JSON Schema describes: a channel,
// a function, a complex number, an unsafe pointer, or a map whose keys
// are none of those encoding/json writes.
type DeriveError struct {
	// Type is the type refused.
	Type reflect.Type
	// Path says where it was found: the outer type, then each field,
	// element or value, as "Params.Items[].Callback".
	Path string
}

func (e *DeriveError) Error() string {
	return fmt.Sprintf("openrpc: %s: the type %s has no JSON form", e.Path, e.Type)
}

// schema returns the schema of t.
func (d *deriver) schema(t reflect.Type) (*Schema, error) {
	if len(d.path) == 0 {
		d.path = append(d.path, t.String())
		defer func() { d.path = d.path[:0] }()
	}
	if s, ok := d.given(t); ok {
		return s, nil
	}
	if t.Kind() == reflect.Pointer {
		s, err := d.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	}
	switch t {
	case rawMessageType:
		return &Schema{}, nil
	case timeType:
		return &Schema{Type: Types{"string"}, Format: "date-time"}, nil
	case bigIntType, bigFloatType, bigRatType, numberType:
		// big.Int writes a number; the others a string or a number.
		if t == bigIntType {
			return &Schema{Type: Types{"integer"}}, nil
		}
		return &Schema{Type: Types{"string", "number"}}, nil
	}
	// A type with its own MarshalJSON or UnmarshalJSON writes and reads
	// what it likes: a struct is taken to write its fields, as it usually
	// does, unless the method is an embedded field's, promoted (a struct
	// embedding time.Time is a time); another type is any value (a Schemer
	// says what it is). MarshalText and UnmarshalText read and write a
	// string.
	switch {
	case ownJSON(t) && (t.Kind() != reflect.Struct || promotesJSON(t) || len(jsonFields(t)) == 0):
		return &Schema{}, nil
	case !ownJSON(t) && ownText(t):
		return &Schema{Type: Types{"string"}}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: Types{"boolean"}}, nil
	case reflect.Int, reflect.Int64:
		return &Schema{Type: Types{"integer"}}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return &Schema{Type: Types{"integer"}, Minimum: ptr(-math.Pow(2, float64(bits-1))), Maximum: ptr(math.Pow(2, float64(bits-1)) - 1)}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: Types{"integer"}, Minimum: ptr(0.0)}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: Types{"integer"}, Minimum: ptr(0.0), Maximum: ptr(math.Pow(2, float64(t.Bits())) - 1)}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: Types{"number"}}, nil
	case reflect.String:
		return &Schema{Type: Types{"string"}}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !ownJSON(e) && !ownText(e) {
			// []byte is written as base64, and nil as null.
			return &Schema{Type: Types{"string", "null"}, ContentEncoding: "base64"}, nil
		}
		items, err := d.within("[]", t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"array", "null"}, Items: items}, nil // nil is written as null
	case reflect.Array:
		items, err := d.within("[]", t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"array"}, Items: items, MinItems: ptr(t.Len()), MaxItems: ptr(t.Len())}, nil
	case reflect.Map:
		if !jsonMapKey(t.Key()) {
			return nil, &DeriveError{Type: t, Path: strings.Join(d.path, "")}
		}
		values, err := d.within("[key]", t.Elem())
		if err != nil {
			return nil, err
		}
		if k := t.Key(); k.Kind() != reflect.String && !k.Implements(textMarshalerType) {
			// Integer keys are written as decimal strings. (Said with
			// patternProperties rather than propertyNames, whose errors
			// the validator cannot place.)
			pattern, err := json.Marshal(map[string]*Schema{"^-?[0-9]+$": values})
			if err != nil {
				return nil, err
			}
			return &Schema{Type: Types{"object", "null"}, AdditionalProperties: False(),
				Extra: map[string]json.RawMessage{"patternProperties": pattern}}, nil
		}
		return &Schema{Type: Types{"object", "null"}, AdditionalProperties: values}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return d.object(t)
		}
		return d.ref(t)
	}
	return nil, &DeriveError{Type: t, Path: strings.Join(d.path, "")}
}

// given returns the schema t gives through Schemer, if it does.
func (d *deriver) given(t reflect.Type) (*Schema, bool) {
	if !isSchemer(t) {
		return nil, false
	}
	v := reflect.New(t) // JSONSchema has a pointer receiver, or a value one that *T has too
	s := v.Interface().(Schemer).JSONSchema()
	if s == nil {
		return &Schema{}, true
	}
	return s.Clone(), true
}

// isSchemer reports whether t gives its own schema: t, not a pointer or
// an interface, implements Schemer, itself or through a pointer to it.
func isSchemer(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(schemerType)
}

// within describes t, the type of a part of the type being described (a
// field, elements, values), named part for errors.
func (d *deriver) within(part string, t reflect.Type) (*Schema, error) {
	d.path = append(d.path, part)
	defer func() { d.path = d.path[:len(d.path)-1] }()
	return d.schema(t)
}

// ref returns a reference to the schema of the named struct type t, which
// it writes in defs the first time.
func (d *deriver) ref(t reflect.Type) (*Schema, error) {
	if name, ok := d.names[t]; ok {
		return &Schema{Ref: refPrefix + name}, nil
	}
	name := d.nameFor(t)
	d.names[t], d.taken[name] = name, t
	d.defs[name] = &Schema{} // a placeholder, for the recursive references
	s, err := d.object(t)
	if err != nil {
		return nil, err
	}
	d.defs[name] = s
	return &Schema{Ref: refPrefix + name}, nil
}

// nameFor returns the name t takes in defs: its own, made of the
// characters a JSON pointer and the OpenRPC components keep, qualified by
// its package when another type has it.
func (d *deriver) nameFor(t reflect.Type) string {
	base := componentName(t.Name())
	if other, taken := d.taken[base]; !taken || other == t {
		return base
	}
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := componentName(pkg) + "." + base
	for i := 2; ; i++ {
		if _, taken := d.taken[name]; !taken {
			return name
		}
		name = componentName(pkg) + "." + base + strconv.Itoa(i)
	}
}

// componentName keeps letters, digits, '_', '.' and '-' of name, replacing
// the others (the brackets of a generic type's name) with '_'.
func componentName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, name)
}

// object describes the struct type t by its fields, as encoding/json
// writes them.
func (d *deriver) object(t reflect.Type) (*Schema, error) {
	s := &Schema{Type: Types{"object"}}
	for _, f := range jsonFields(t) {
		fs, err := d.within("."+f.goName, f.typ)
		if err != nil {
			return nil, err
		}
		if f.quoted {
			fs = &Schema{Type: Types{"string"}}
			if f.typ.Kind() == reflect.Pointer {
				fs = nullable(fs) // a nil pointer is written null, unquoted
			}
		}
		if f.doc != "" {
			if fs.Ref != "" {
				fs = &Schema{AllOf: []*Schema{fs}}
			}
			fs.Description = f.doc
		}
		if s.Properties == nil {
			s.Properties = map[string]*Schema{}
		}
		s.Properties[f.name] = fs
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// nullable returns s allowing null as well, as a pointer to its type does.
func nullable(s *Schema) *Schema {
	switch {
	case s.Ref != "" || len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Const != nil:
		return &Schema{AnyOf: []*Schema{{Type: Types{"null"}}, s}}
	case len(s.Type) == 0:
		if s.Enum != nil {
			s.Enum = append(s.Enum, json.RawMessage("null"))
		}
		return s // any type, null included
	}
	for _, typ := range s.Type {
		if typ == "null" {
			return s
		}
	}
	s.Type = append(s.Type, "null")
	if s.Enum != nil {
		s.Enum = append(s.Enum, json.RawMessage("null"))
	}
	return s
}

// jsonMapKey reports whether encoding/json writes maps with keys of type k.
func jsonMapKey(k reflect.Type) bool {
	switch k.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return k.Implements(textMarshalerType) // not through a pointer: a map key is not addressable
}

// ownJSON reports whether t, or a pointer to it, has a MarshalJSON or an
// UnmarshalJSON method.
func ownJSON(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(marshalerType) || p.Implements(marshalerType) || p.Implements(unmarshalerType)
}

// ownText reports whether t, or a pointer to it, has a MarshalText or an
// UnmarshalText method.
func ownText(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(textMarshalerType) || p.Implements(textMarshalerType) || p.Implements(textUnmarshalerType)
}

// promotesJSON reports whether the struct t has its JSON methods from an
// embedded field.
func promotesJSON(t reflect.Type) bool {
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && ownJSON(f.Type) {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
