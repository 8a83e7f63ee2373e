package openrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
)

// Schema is a JSON Schema (draft-07, the dialect of OpenRPC 1.3). Its
// fields are the keywords a description of Go types uses; Extra holds any
// other keyword, so that a schema read from a document is written back
// whole. The zero Schema, {}, accepts every value.
//
// A type gives its own schema by implementing Schemer.
type Schema struct {
	Ref         string `json:"$ref,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is the type, or the types, a value may have: "null",
	// "boolean", "object", "array", "number", "integer" or "string". It is
	// written as a string when it has one element.
	Type                 Types              `json:"type,omitempty"`
	Enum                 []json.RawMessage  `json:"enum,omitempty"`
	Const                json.RawMessage    `json:"const,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	MinProperties        *int               `json:"minProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	UniqueItems          bool               `json:"uniqueItems,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Format               string             `json:"format,omitempty"`
	ContentEncoding      string             `json:"contentEncoding,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	If                   *Schema            `json:"if,omitempty"`
	Then                 *Schema            `json:"then,omitempty"`
	Else                 *Schema            `json:"else,omitempty"`
	Default              json.RawMessage    `json:"default,omitempty"`
	Examples             []json.RawMessage  `json:"examples,omitempty"`
	// Extra holds the keywords the fields above do not name, each with
	// its JSON value.
	Extra map[string]json.RawMessage `json:"-"`

	// never marks the schema false, which no value matches.
	never bool
}

// Types is the type keyword of a Schema: one type or several.
type Types []string

// MarshalJSON writes one type as a string, several as an array.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// UnmarshalJSON reads a type as a string or an array of strings.
func (t *Types) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = Types{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("openrpc: a schema's type is neither a string nor an array of strings")
	}
	*t = many
	return nil
}

// False returns the schema false, which no value matches: as
// additionalProperties, it allows no member but those of Properties.
func False() *Schema { return &Schema{never: true} }

// IsFalse reports whether s is the schema false.
func (s *Schema) IsFalse() bool { return s != nil && s.never }

// schemaFields is Schema without its methods, for the encoding/json
// default of the named fields.
type schemaFields Schema

// MarshalJSON writes s as a JSON Schema object (false for False()), its
// Extra keywords after the named ones, in key order.
func (s *Schema) MarshalJSON() ([]byte, error) {
	if s.never {
		return []byte("false"), nil
	}
	return withExtensions((*schemaFields)(s), s.Extra)
}

// UnmarshalJSON reads a JSON Schema: an object, or the booleans true (the
// schema {}) and false.
func (s *Schema) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*s = Schema{}
		return nil
	case "false":
		*s = Schema{never: true}
		return nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	// items as an array of schemas (draft-07's tuple) has no field of its
	// own: it stays in Extra, and Items is nil.
	var tuple json.RawMessage
	if items := bytes.TrimSpace(all["items"]); len(items) > 0 && items[0] == '[' {
		tuple = items
		delete(all, "items")
		var err error
		if b, err = json.Marshal(all); err != nil {
			return err
		}
	}
	var named schemaFields
	if err := json.Unmarshal(b, &named); err != nil {
		return err
	}
	for k := range all {
		if knownKeywords[k] {
			delete(all, k)
		}
	}
	if tuple != nil {
		all["items"] = tuple
	}
	if len(all) > 0 {
		named.Extra = all
	}
	*s = Schema(named)
	return nil
}

// knownKeywords are the JSON names of Schema's fields.
var knownKeywords = func() map[string]bool {
	known := map[string]bool{}
	b, _ := json.Marshal(schemaFields{
		Ref: "x", Title: "x", Description: "x", Type: Types{"x"}, Enum: []json.RawMessage{[]byte("1")}, Const: []byte("1"),
		Properties: map[string]*Schema{"x": {}}, Required: []string{"x"}, AdditionalProperties: &Schema{}, MinProperties: new(int),
		Items: &Schema{}, MinItems: new(int), MaxItems: new(int), UniqueItems: true, Minimum: new(float64), Maximum: new(float64),
		MinLength: new(int), MaxLength: new(int), Pattern: "x", Format: "x", ContentEncoding: "x",
		OneOf: []*Schema{{}}, AnyOf: []*Schema{{}}, AllOf: []*Schema{{}}, Not: &Schema{}, If: &Schema{}, Then: &Schema{}, Else: &Schema{},
		Default: []byte("1"), Examples: []json.RawMessage{[]byte("1")},
	})
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	for k := range m {
		known[k] = true
	}
	return known
}()

// Clone returns a deep copy of s: nothing of it is shared but the bytes
// of raw JSON values (Enum's, Examples', Extra's), which are read-only.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Type = slices.Clone(s.Type)
	c.Enum = slices.Clone(s.Enum)
	c.Required = slices.Clone(s.Required)
	c.Examples = slices.Clone(s.Examples)
	c.Extra = maps.Clone(s.Extra)
	c.Const, c.Default = slices.Clone(s.Const), slices.Clone(s.Default)
	for _, p := range []**int{&c.MinProperties, &c.MinItems, &c.MaxItems, &c.MinLength, &c.MaxLength} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	for _, p := range []**float64{&c.Minimum, &c.Maximum} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = p.Clone()
		}
	}
	for _, p := range []**Schema{&c.AdditionalProperties, &c.Items, &c.Not, &c.If, &c.Then, &c.Else} {
		*p = (*p).Clone()
	}
	for _, list := range []*[]*Schema{&c.OneOf, &c.AnyOf, &c.AllOf} {
		if *list != nil {
			cl := make([]*Schema, len(*list))
			for i, x := range *list {
				cl[i] = x.Clone()
			}
			*list = cl
		}
	}
	return &c
}
