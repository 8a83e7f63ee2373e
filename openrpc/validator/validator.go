// Package validator checks params and results against the schemas of an
// OpenRPC document (package openrpc), with a full JSON Schema draft-07
// validator (santhosh-tekuri/jsonschema, which passes the
// JSON-Schema-Test-Suite). It is a package of its own so that a program
// that writes or serves documents, and not validates, does not depend on
// that validator.
//
// A server checks the params of every request before its handler runs
// with rpc.Options.CheckParams:
//
//	v, err := validator.New(doc)
//	...
//	conn := rpc.NewConn(r, w, &rpc.Options{Handler: reg, CheckParams: v.CheckParams})
//
// The schemas say what encoding/json writes, so validation is stricter
// than decoding, which matches member names without regard to case, takes
// null for any member and needs none: a peer that relied on those is
// refused once validation is on.
//
// A refusal is answered -32602 with the JSON pointer of what failed:
//
//	{"code":-32602,"message":"invalid params: /label: missing property 'text'","data":{"path":"/label","reason":"missing property 'text'"}}
package validator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validator checks params and results against the schemas of a document.
// It is safe for concurrent use.
type Validator struct {
	params  map[string]*jsonschema.Schema
	results map[string]*jsonschema.Schema
	// absent is what Params answers, per method, for params absent: nil
	// when its schema takes no params ({} or []), the refusal of {}
	// otherwise. The answer is the same at every call.
	absent map[string]error
}

// Error reports a value its schema refuses: which method, where in the
// value (a JSON pointer, empty for the value itself) and why.
type Error struct {
	Method string
	// Result reports that the value was a result, not params.
	Result bool
	// Path is a JSON pointer to the part refused, such as "/items/0/name".
	Path   string
	Reason string
}

// Error returns "path: reason", or the reason alone for the whole value.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// New compiles the params and result schemas of every method of doc. The
// params schema of a method is assembled from its params as OpenRPC lays
// them out (see openrpc.Method.ParamsSchema). It returns an error for a
// schema that does not compile, such as a reference to a schema the
// document does not have.
func New(doc *openrpc.Document) (*Validator, error) {
	root := map[string]any{}
	if doc.Components != nil {
		root["components"] = doc.Components
	}
	params, results := map[string]any{}, map[string]any{}
	for i, m := range doc.Methods {
		key := strconv.Itoa(i)
		params[key] = m.ParamsSchema()
		if m.Result != nil && m.Result.Schema != nil {
			results[key] = m.Result.Schema
		}
	}
	root["x-params"], root["x-results"] = params, results
	raw, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("validator: New: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("validator: New: %w", err)
	}
	const url = "mem:///openrpc.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(url, inst); err != nil {
		return nil, fmt.Errorf("validator: New: %w", err)
	}
	v := &Validator{params: map[string]*jsonschema.Schema{}, results: map[string]*jsonschema.Schema{}, absent: map[string]error{}}
	for i, m := range doc.Methods {
		key := strconv.Itoa(i)
		if v.params[m.Name], err = c.Compile(url + "#/x-params/" + key); err != nil {
			return nil, fmt.Errorf("validator: New: method %q: params: %w", m.Name, err)
		}
		v.absent[m.Name] = absentParams(v.params[m.Name], m.Name)
		if _, ok := results[key]; ok {
			if v.results[m.Name], err = c.Compile(url + "#/x-results/" + key); err != nil {
				return nil, fmt.Errorf("validator: New: method %q: result: %w", m.Name, err)
			}
		}
	}
	return v, nil
}

// Params checks the params member of a call of method (nil when absent,
// which is valid when no param is required). It returns nil for a method
// the document does not describe, and an *Error for params the schema
// refuses.
func (v *Validator) Params(method string, params json.RawMessage) error {
	s := v.params[method]
	if s == nil {
		return nil
	}
	if params == nil {
		if e, ok := v.absent[method].(*Error); ok {
			c := *e // the caller's own
			return &c
		}
		return nil
	}
	return validate(s, method, false, params)
}

// Result checks the result of a call of method. It returns nil for a
// method without a result schema, and an *Error for a result the schema
// refuses.
func (v *Validator) Result(method string, result json.RawMessage) error {
	s := v.results[method]
	if s == nil {
		return nil
	}
	return validate(s, method, true, result)
}

// CheckParams is Params with the answer a server sends: it has
// the signature of rpc.Options.CheckParams, and returns an *rpc.Error with
// CodeInvalidParams, the message "invalid params: <path>: <reason>" and
// the data {"path": <path>, "reason": <reason>}.
func (v *Validator) CheckParams(method string, params json.RawMessage) error {
	err := v.Params(method, params)
	if err == nil {
		return nil
	}
	var ve *Error
	if !errors.As(err, &ve) {
		return err
	}
	data, _ := json.Marshal(struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	}{ve.Path, ve.Reason})
	return &rpc.Error{Code: rpc.CodeInvalidParams, Message: "invalid params: " + ve.Error(), Data: data}
}

// absentParams returns the answer to absent params for the params schema
// s of method: absent params are no params, by name or by position.
func absentParams(s *jsonschema.Schema, method string) error {
	if s.Validate([]any{}) == nil {
		return nil
	}
	err := validate(s, method, false, json.RawMessage("{}"))
	if ve, ok := err.(*Error); ok {
		ve.Reason = "params absent: " + ve.Reason
	}
	return err
}

// decodeInstance decodes raw as the validator wants values: numbers as
// json.Number, so that none loses precision. go-json does it in a third of
// encoding/json's time.
func decodeInstance(raw []byte) (any, error) {
	d := gojson.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

// validate checks raw against s.
func validate(s *jsonschema.Schema, method string, result bool, raw json.RawMessage) error {
	inst, err := decodeInstance(raw)
	if err != nil {
		return &Error{Method: method, Result: result, Reason: "not JSON: " + err.Error()}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &Error{Method: method, Result: result, Reason: err.Error()}
	}
	path, leaf := deepest(ve)
	return &Error{Method: method, Result: result, Path: pointer(path), Reason: leaf.ErrorKind.LocalizedString(printer)}
}

var printer = message.NewPrinter(language.English)

// deepest returns the most precise account of what is wrong in e: the
// cause that reaches deepest into the value and, among alternatives (of
// anyOf, oneOf) as deep, one that is not a mere type mismatch; with the
// deepest location on the way to it (a cause about a member's name, as
// propertyNames gives, has none of its own).
func deepest(e *jsonschema.ValidationError) ([]string, *jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		return e.InstanceLocation, e
	}
	var path []string
	var leaf *jsonschema.ValidationError
	for _, c := range e.Causes {
		p, l := deepest(c)
		if leaf == nil || len(p) > len(path) || len(p) == len(path) && precision(l) > precision(leaf) {
			path, leaf = p, l
		}
	}
	if len(path) < len(e.InstanceLocation) {
		path = e.InstanceLocation
	}
	return path, leaf
}

// precision ranks what a cause says of a value, among alternatives as
// deep: a type mismatch says less than any other refusal, and one that
// wants null alone (the other branch of a pointer's schema) least.
func precision(e *jsonschema.ValidationError) int {
	t, mismatch := e.ErrorKind.(*kind.Type)
	switch {
	case !mismatch:
		return 2
	case len(t.Want) == 1 && t.Want[0] == "null":
		return 0
	}
	return 1
}

// pointer writes a location as a JSON pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}
