package openrpc

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Version is the OpenRPC version of the documents Describe writes.
const Version = "1.3.2"

// Document is an OpenRPC document: the description of a JSON-RPC API, as
// https://spec.open-rpc.org defines it. Describe writes one from method
// descriptors; a document read with encoding/json (such as the result of
// rpc.discover) fills the same fields.
type Document struct {
	// OpenRPC is the version of the OpenRPC specification, Version.
	OpenRPC string `json:"openrpc"`
	// Info describes the API.
	Info Info `json:"info"`
	// Servers lists where the API is served, if the document says.
	Servers []Server `json:"servers,omitempty"`
	// Methods lists the API's methods and notifications.
	Methods []Method `json:"methods"`
	// Components holds the schemas the methods refer to, by name
	// ("#/components/schemas/<name>").
	Components *Components `json:"components,omitempty"`
}

// JSONSchema describes a document, as the result of rpc.discover, by
// what OpenRPC requires of it; the OpenRPC meta-schema
// (https://meta.open-rpc.org) says the rest.
func (Document) JSONSchema() *Schema {
	return &Schema{
		Type:        Types{"object"},
		Description: "An OpenRPC document (https://spec.open-rpc.org).",
		Required:    []string{"openrpc", "info", "methods"},
		Properties: map[string]*Schema{
			"openrpc": {Type: Types{"string"}},
			"info":    {Type: Types{"object"}, Required: []string{"title", "version"}},
			"methods": {Type: Types{"array"}, Items: &Schema{Type: Types{"object"}, Required: []string{"name", "params"}}},
		},
	}
}

// Info describes an API: its title and version are required.
type Info struct {
	Title          string   `json:"title"`
	Version        string   `json:"version"`
	Description    string   `json:"description,omitempty"`
	TermsOfService string   `json:"termsOfService,omitempty"`
	Contact        *Contact `json:"contact,omitempty"`
	License        *License `json:"license,omitempty"`
}

// Contact says whom to reach about an API.
type Contact struct {
	Name  string `json:"name,omitempty"`
	URL   string `json:"url,omitempty"`
	Email string `json:"email,omitempty"`
}

// License names an API's license.
type License struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Server is a place where an API is served.
type Server struct {
	Name        string `json:"name,omitempty"`
	URL         string `json:"url"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
}

// Method describes one method or notification. A notification has no
// Result.
type Method struct {
	Name        string `json:"name"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
	Tags        []Tag  `json:"tags,omitempty"`
	// ParamStructure is "by-name" (params are an object), "by-position"
	// (an array) or "either", the default when empty.
	ParamStructure string              `json:"paramStructure,omitempty"`
	Params         []ContentDescriptor `json:"params"`
	Result         *ContentDescriptor  `json:"result,omitempty"`
	Errors         []Error             `json:"errors,omitempty"`
	Examples       []ExamplePairing    `json:"examples,omitempty"`
	Deprecated     bool                `json:"deprecated,omitempty"`
	// Extensions holds the method's x- members (see WholeParams).
	Extensions map[string]json.RawMessage `json:"-"`
}

// WholeParams is the extension member that marks a method whose params
// member is not an object of named params (a slice, a map, a number): its
// one param describes the whole params member. OpenRPC itself has no way
// to say so.
const WholeParams = "x-linerpc-whole-params"

// IsNotification reports whether m describes a notification: a method
// without a result.
func (m *Method) IsNotification() bool { return m.Result == nil }

// methodFields is Method without its methods, for encoding/json.
type methodFields Method

// MarshalJSON writes m with its Extensions beside its named members.
func (m Method) MarshalJSON() ([]byte, error) {
	return withExtensions(methodFields(m), m.Extensions)
}

// UnmarshalJSON reads a method object, keeping its x- members in
// Extensions.
func (m *Method) UnmarshalJSON(b []byte) error {
	var f methodFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	ext, err := extensionsOf(b)
	if err != nil {
		return err
	}
	f.Extensions = ext
	*m = Method(f)
	return nil
}

// Tag groups methods.
type Tag struct {
	Name        string `json:"name"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
}

// ContentDescriptor describes a param or a result: its name and schema.
type ContentDescriptor struct {
	Name        string  `json:"name"`
	Summary     string  `json:"summary,omitempty"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	Schema      *Schema `json:"schema"`
	Deprecated  bool    `json:"deprecated,omitempty"`
}

// Error describes an error a method answers with. Data, when set, is an
// example of the error's data; its schema is in the document's components
// (see Describe).
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ExamplePairing is an example call: its params and the result they
// produce.
type ExamplePairing struct {
	Name        string          `json:"name"`
	Summary     string          `json:"summary,omitempty"`
	Description string          `json:"description,omitempty"`
	Params      []ExampleObject `json:"params"`
	Result      *ExampleObject  `json:"result,omitempty"`
}

// ExampleObject is one example value.
type ExampleObject struct {
	Name    string          `json:"name"`
	Summary string          `json:"summary,omitempty"`
	Value   json.RawMessage `json:"value"`
}

// Components holds what a document's methods refer to. Describe writes
// the schemas of named struct types here, so that recursive types can be
// described.
type Components struct {
	Schemas map[string]*Schema `json:"schemas,omitempty"`
}

// withExtensions encodes v, an object, with the members of ext after its
// own, in key order; a member v has already is not written twice.
func withExtensions(v any, ext map[string]json.RawMessage) ([]byte, error) {
	b, err := marshal(v)
	if err != nil || len(ext) == 0 {
		return b, err
	}
	var own map[string]json.RawMessage
	if err := json.Unmarshal(b, &own); err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		if _, taken := own[k]; taken {
			continue
		}
		key, err := marshal(k)
		if err != nil {
			return nil, err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, key...), ':'), ext[k]...)
	}
	return append(b, '}'), nil
}

// marshal encodes v as encoding/json does, but for '<', '>' and '&',
// which it writes as they are, as JSON.stringify and the rpc package do.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// extensionsOf returns the x- members of the JSON object b, or nil.
func extensionsOf(b []byte) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	var ext map[string]json.RawMessage
	for k, v := range all {
		if len(k) > 2 && k[:2] == "x-" {
			if ext == nil {
				ext = map[string]json.RawMessage{}
			}
			ext[k] = v
		}
	}
	return ext, nil
}
