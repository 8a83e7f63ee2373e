package rpc

import (
	"reflect"
	"slices"
	"strings"
)

// A description of a method is what a document of the API needs beyond the
// method's name and types: a summary, the errors it answers with, examples.
// It is optional and costs a call nothing: Describe attaches one to a
// descriptor, Info reports it with the types, and Registry.Methods lists
// the registered methods' Info for a package that writes a document from
// them (such as linerpc's openrpc, which writes OpenRPC and JSON Schema).

// Doc is the optional description of a method or a notification. Every
// field may be left empty.
type Doc struct {
	// Summary is a short, one-line account of what the method does.
	Summary string
	// Description is a longer account; documents may render it as
	// CommonMark.
	Description string
	// Tags group related methods in a document.
	Tags []string
	// Deprecated marks a method that new callers should not use.
	Deprecated bool
	// ParamsName names the params in a document when they are described
	// as one param (params that are not a struct, whose members would
	// each be one); empty means "params".
	ParamsName string
	// ResultName names the result in a document; empty means the result
	// type's name with a lower-case first letter, or "result" for a type
	// without a name of its own.
	ResultName string
	// Errors lists the errors the method answers with, besides the
	// protocol's own (such as CodeInvalidParams).
	Errors []ErrorDoc
	// Examples pair params with the result they produce.
	Examples []Example
}

// ErrorDoc describes an error a method may answer with.
type ErrorDoc struct {
	// Code is the error's code, as sent in Error.Code.
	Code int64
	// Message is the error's message, or the gist of it.
	Message string
	// Data is a value of the type of the error's data member (its zero
	// value will do): a document describes the data with that type's
	// schema. Nil means the error carries no data.
	Data any
}

// Example is one call of a method, as a document shows it.
type Example struct {
	// Name identifies the example; it is required by OpenRPC.
	Name string
	// Summary says what the example shows.
	Summary string
	// Params are the example's params: a value of the method's params
	// type, or anything that encodes to the JSON the peer sends.
	Params any
	// Result is the result they produce (nil for a notification).
	Result any
}

// MethodInfo is what a descriptor, or a registered handler, tells of its
// method: its name, kind, Go types and description. It is a plain value,
// built by Method.Info, Notification.Info and Registry.Methods.
type MethodInfo struct {
	// Name is the method's name on the wire.
	Name string
	// Notification reports a notification: it has no result and no
	// response.
	Notification bool
	// Params is the Go type the params decode into, or nil for NoParams:
	// the params member is omitted.
	Params reflect.Type
	// Result is the Go type of the result, nil for a notification.
	Result reflect.Type
	// Doc is the description given with Describe (a copy), zero without one.
	Doc Doc
}

// Describe returns a copy of m that carries doc, for documents of the API
// (see Info). It does not change what m sends or accepts. The copy keeps
// its own copy of doc's slices.
//
//	var Add = rpc.NewMethod[AddParams, int]("add").Describe(rpc.Doc{Summary: "Adds two numbers."})
func (m Method[P, R]) Describe(doc Doc) Method[P, R] {
	m.doc = cloneDoc(&doc)
	return m
}

// Info returns what m tells of its method: its name, its types and the Doc
// given with Describe.
func (m Method[P, R]) Info() MethodInfo {
	return MethodInfo{
		Name:   m.name,
		Params: paramsType[P](m.omitParams),
		Result: reflect.TypeFor[R](),
		Doc:    docOf(m.doc),
	}
}

// Describe returns a copy of n that carries doc, as Method.Describe does.
// A notification has no result: doc's Errors and the Result of its
// Examples are not used.
func (n Notification[P]) Describe(doc Doc) Notification[P] {
	n.doc = cloneDoc(&doc)
	return n
}

// Info returns what n tells of its notification: its name, its params type
// and the Doc given with Describe.
func (n Notification[P]) Info() MethodInfo {
	return MethodInfo{
		Name:         n.name,
		Notification: true,
		Params:       paramsType[P](n.omitParams),
		Doc:          docOf(n.doc),
	}
}

// Methods returns the Info of every method and notification registered on
// r with Handle or HandleNotification, sorted by name. Handlers of unknown
// methods (HandleUnknown) have no name and are not listed.
func (r *Registry) Methods() []MethodInfo {
	v := r.view()
	if v == nil {
		return nil
	}
	infos := make([]MethodInfo, 0, len(v.methods))
	for _, e := range v.methods {
		info := e.info
		info.Doc = docOf(&info.Doc)
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b MethodInfo) int { return strings.Compare(a.Name, b.Name) })
	return infos
}

// paramsType returns P's type, or nil when the params member is omitted.
func paramsType[P any](omit bool) reflect.Type {
	if omit {
		return nil
	}
	return reflect.TypeFor[P]()
}

// docOf returns a copy of *d whose slices are its own, or the zero Doc.
func docOf(d *Doc) Doc {
	if d == nil {
		return Doc{}
	}
	return *cloneDoc(d)
}

// cloneDoc copies d and its slices, so that no caller shares them.
func cloneDoc(d *Doc) *Doc {
	c := *d
	c.Tags = slices.Clone(d.Tags)
	c.Errors = slices.Clone(d.Errors)
	c.Examples = slices.Clone(d.Examples)
	return &c
}
