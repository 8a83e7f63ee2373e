// Package openrpc describes a JSON-RPC API by its method descriptors: it
// writes an OpenRPC 1.3 document (https://spec.open-rpc.org), with a JSON
// Schema for every params and result type derived from the Go types, and
// serves it as rpc.discover; package openrpc/validator validates params
// and results against it.
//
// A method is declared once, as an rpc.Method or rpc.Notification, with an
// optional description:
//
//	var Add = rpc.NewMethod[AddParams, int]("add").Describe(rpc.Doc{
//		Summary: "Adds two numbers.",
//		Errors:  []rpc.ErrorDoc{{Code: 1, Message: "overflow"}},
//	})
//
// Describe writes the document of descriptors, or of a registry's methods:
//
//	doc, err := openrpc.Describe(openrpc.Info{Title: "calc", Version: "1.0.0"}, reg.Methods()...)
//
// HandleDiscover serves it as rpc.discover, the method OpenRPC tools and
// linerpc's rpcurl command ask; it is off unless called:
//
//	openrpc.HandleDiscover(reg, openrpc.Info{Title: "calc", Version: "1.0.0"})
//
// Package openrpc/validator checks params against the document before the
// handler runs, answering CodeInvalidParams with the path that failed; it
// is off unless set as Options.CheckParams:
//
//	v, err := validator.New(doc)
//	opts := &rpc.Options{Handler: reg, CheckParams: v.CheckParams}
//
// # Schemas from Go types
//
// Describe and SchemaFor describe a type by the JSON encoding/json writes
// for it (see Describe for the rules), draft-07 JSON Schema as OpenRPC
// 1.3 uses. A type whose JSON its fields do not show (a union, a string
// with a pattern) gives its own schema by implementing Schemer.
//
// Package rpc does not import this package, and this package imports rpc
// alone: only a program that imports openrpc/validator depends on a JSON
// Schema validator.
package openrpc
