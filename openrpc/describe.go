package openrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/linerpc/linerpc/rpc"
)

// Describe writes the OpenRPC document of methods, the descriptors' Info
// (Method.Info, Notification.Info) or a registry's (Registry.Methods), in
// the order given:
//
//	doc, err := openrpc.Describe(openrpc.Info{Title: "calc", Version: "1.0.0"}, reg.Methods()...)
//
// Each method's params and result are described by JSON Schema from their
// Go types, as encoding/json writes them (reading is laxer: see
// openrpc/validator):
//   - a struct's members are its exported fields, named by their json
//     tags, those of embedded structs promoted; a member is required
//     unless tagged omitempty or omitzero, and members the struct does
//     not name are allowed, as decoding ignores them;
//   - a pointer, a slice and a map may be null as well; []byte is a
//     base64 string; json.RawMessage and interfaces are any JSON value;
//     time.Time is a date-time string;
//   - a named struct type is described once, in the document's
//     components ("#/components/schemas/<name>"), and referred to, so that
//     a recursive type is described;
//   - a type that implements Schemer gives its own schema; another type
//     with its own MarshalJSON, not a struct, is any JSON value, and one
//     with MarshalText a string.
//
// A method whose params are a struct takes its params by name: each
// member is one param of the document, required as above. NoParams is no
// params. Params of another type (a slice, a map) are described as one
// param, "params", holding the whole params member, and the method is
// marked with the WholeParams extension. A notification is a method
// without a result.
//
// The Doc of each method gives its summary, description, tags, deprecation,
// errors (with an example of their data, whose type's schema joins the
// components) and examples. Describe returns an error for a duplicate or
// empty name, a missing Info title or version, and a type no JSON Schema
// describes (a *DeriveError).
func Describe(info Info, methods ...rpc.MethodInfo) (*Document, error) {
	if info.Title == "" || info.Version == "" {
		return nil, errors.New("openrpc: Describe: Info needs a Title and a Version, as OpenRPC requires")
	}
	doc := &Document{OpenRPC: Version, Info: info, Methods: make([]Method, 0, len(methods))}
	d := newDeriver()
	seen := map[string]bool{}
	for _, mi := range methods {
		if mi.Name == "" {
			return nil, errors.New("openrpc: Describe: a method has no name")
		}
		if seen[mi.Name] {
			return nil, fmt.Errorf("openrpc: Describe: method %q given twice", mi.Name)
		}
		seen[mi.Name] = true
		m, err := d.method(mi)
		if err != nil {
			return nil, err
		}
		doc.Methods = append(doc.Methods, m)
	}
	if len(d.defs) > 0 {
		doc.Components = &Components{Schemas: d.defs}
	}
	return doc, nil
}

// method describes one method.
func (d *deriver) method(mi rpc.MethodInfo) (Method, error) {
	m := Method{
		Name: mi.Name, Summary: mi.Doc.Summary, Description: mi.Doc.Description,
		Deprecated: mi.Doc.Deprecated, Params: []ContentDescriptor{},
	}
	for _, tag := range mi.Doc.Tags {
		m.Tags = append(m.Tags, Tag{Name: tag})
	}
	whole := false
	if mi.Params != nil {
		ps, err := d.params(mi.Params)
		if err != nil {
			return Method{}, fmt.Errorf("openrpc: method %q: params: %w", mi.Name, err)
		}
		if props, required, ok := d.members(ps); ok {
			m.ParamStructure = "by-name"
			for _, name := range d.order(mi.Params, props) {
				m.Params = append(m.Params, ContentDescriptor{
					Name: name, Required: required[name], Schema: props[name],
					Description: props[name].Description,
				})
			}
		} else {
			whole = true
			name := mi.Doc.ParamsName
			if name == "" {
				name = "params"
			}
			m.Params = []ContentDescriptor{{Name: name, Required: true, Schema: ps}}
			m.Extensions = map[string]json.RawMessage{WholeParams: json.RawMessage("true")}
		}
	} else {
		m.ParamStructure = "by-name"
	}
	if !mi.Notification {
		rs, err := d.schema(mi.Result)
		if err != nil {
			return Method{}, fmt.Errorf("openrpc: method %q: result: %w", mi.Name, err)
		}
		name := mi.Doc.ResultName
		if name == "" {
			name = resultName(mi.Result)
		}
		m.Result = &ContentDescriptor{Name: name, Schema: rs}
		for _, e := range mi.Doc.Errors {
			oe := Error{Code: e.Code, Message: e.Message}
			if e.Data != nil {
				data, err := json.Marshal(e.Data)
				if err != nil {
					return Method{}, fmt.Errorf("openrpc: method %q: error %d: data: %w", mi.Name, e.Code, err)
				}
				oe.Data = data
				if err := d.dataSchema(mi.Name, e); err != nil {
					return Method{}, err
				}
			}
			m.Errors = append(m.Errors, oe)
		}
	}
	for i, ex := range mi.Doc.Examples {
		p, err := d.example(m, whole, ex, i)
		if err != nil {
			return Method{}, fmt.Errorf("openrpc: method %q: example %d: %w", mi.Name, i+1, err)
		}
		m.Examples = append(m.Examples, p)
	}
	return m, nil
}

// params returns the schema of params of type t: a struct's is written
// in place, not in the components, as its members become the method's
// params.
func (d *deriver) params(t reflect.Type) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isSchemer(t) || t.Kind() != reflect.Struct || d.names[t] != "" {
		return d.schema(t)
	}
	d.path = append(d.path[:0], t.String())
	defer func() { d.path = d.path[:0] }()
	return d.object(t)
}

// members returns the members of an object schema s (following a
// reference to the components), and which are required; ok is false when
// s is not an object with members.
func (d *deriver) members(s *Schema) (props map[string]*Schema, required map[string]bool, ok bool) {
	for s.Ref != "" {
		next, found := d.defs[strings.TrimPrefix(s.Ref, refPrefix)]
		if !found {
			return nil, nil, false
		}
		s = next
	}
	// Only an object of members and which are required splits into
	// params: anything more said of the whole (additionalProperties,
	// minProperties, a combinator, an unknown keyword) would be lost.
	bare := Schema{Type: s.Type, Properties: s.Properties, Required: s.Required, Title: s.Title, Description: s.Description}
	if len(s.Type) != 1 || s.Type[0] != "object" || len(s.Properties) == 0 || !reflect.DeepEqual(*s, bare) {
		return nil, nil, false
	}
	required = map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	return s.Properties, required, true
}

// order returns the names of props in the order of t's fields, when t is a
// struct (or a pointer to one), then the others sorted.
func (d *deriver) order(t reflect.Type, props map[string]*Schema) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	if t.Kind() == reflect.Struct {
		for _, f := range jsonFields(t) {
			if _, ok := props[f.name]; ok {
				names = append(names, f.name)
			}
		}
	}
	if len(names) == len(props) {
		return names
	}
	names = names[:0]
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// dataSchema adds the schema of an error's data to the components, under
// its type's name (a named struct is there already) or, for another type,
// "<method>.error<code>".
func (d *deriver) dataSchema(method string, e rpc.ErrorDoc) error {
	t := reflect.TypeOf(e.Data)
	s, err := d.schema(t)
	if err != nil {
		return fmt.Errorf("openrpc: method %q: error %d: data: %w", method, e.Code, err)
	}
	if s.Ref == "" {
		name := componentName(method) + ".error" + strconv.FormatInt(e.Code, 10)
		for i := 2; d.taken[name] != nil || d.defs[name] != nil; i++ {
			name = componentName(method) + ".error" + strconv.FormatInt(e.Code, 10) + "_" + strconv.Itoa(i)
		}
		d.defs[name] = s
	}
	return nil
}

// example describes the i-th example of m: its params split by name as
// m's params are, or whole.
func (d *deriver) example(m Method, whole bool, ex rpc.Example, i int) (ExamplePairing, error) {
	name := ex.Name
	if name == "" {
		name = "example " + strconv.Itoa(i+1)
	}
	p := ExamplePairing{Name: name, Summary: ex.Summary, Params: []ExampleObject{}}
	if ex.Params != nil && len(m.Params) > 0 {
		raw, err := json.Marshal(ex.Params)
		if err != nil {
			return p, err
		}
		if whole {
			p.Params = append(p.Params, ExampleObject{Name: m.Params[0].Name, Value: raw})
		} else {
			var members map[string]json.RawMessage
			if err := json.Unmarshal(raw, &members); err != nil {
				return p, fmt.Errorf("params are not an object: %w", err)
			}
			for _, cd := range m.Params {
				if v, ok := members[cd.Name]; ok {
					p.Params = append(p.Params, ExampleObject{Name: cd.Name, Value: v})
				}
			}
		}
	}
	if m.Result != nil && ex.Result != nil {
		raw, err := json.Marshal(ex.Result)
		if err != nil {
			return p, err
		}
		p.Result = &ExampleObject{Name: m.Result.Name, Value: raw}
	}
	return p, nil
}

// resultName names a result of type t: its type's name, with a lower-case
// first letter, or "result".
func resultName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := componentName(t.Name())
	if name == "" || t.PkgPath() == "" {
		return "result"
	}
	return strings.ToLower(name[:1]) + name[1:]
}
