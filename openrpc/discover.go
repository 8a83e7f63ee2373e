package openrpc

import (
	"context"
	"strings"

	"github.com/linerpc/linerpc/rpc"
)

// Discover is the descriptor of rpc.discover, the method by which OpenRPC
// tools ask a server for its document: it takes no params and returns
// the document. A client calls it as any method:
//
//	doc, err := openrpc.Discover.Call(ctx, conn, rpc.NoParams{})
var Discover = rpc.NewMethod[rpc.NoParams, Document]("rpc.discover").Describe(rpc.Doc{
	Summary: "Returns the OpenRPC document of this server.",
})

// HandleDiscover registers rpc.discover on reg, so that a server answers
// it with the document of reg's methods (see Describe), as they are when
// it is asked: methods registered after HandleDiscover are in it. Methods
// whose names begin with "rpc." are left out, rpc.discover included, as
// OpenRPC reserves them. A server does not serve rpc.discover unless
// HandleDiscover is called.
//
// The document is written at each call (a few microseconds a method).
// HandleDiscover returns Describe's error for the methods registered so
// far, and registers nothing then; a method registered later whose type
// no schema describes makes rpc.discover answer CodeInternalError, without
// the Go names of the error. Like rpc.Handle, it panics when reg serves
// rpc.discover already.
func HandleDiscover(reg *rpc.Registry, info Info) error {
	if _, err := describeRegistry(reg, info); err != nil {
		return err
	}
	rpc.Handle(reg, Discover, func(context.Context, rpc.NoParams) (Document, error) {
		doc, err := describeRegistry(reg, info)
		if err != nil {
			return Document{}, errNoDocument
		}
		return *doc, nil
	})
	return nil
}

// errNoDocument is rpc.discover's answer when a method registered since
// HandleDiscover has a type no schema describes; the program learns which
// from Describe.
var errNoDocument = &rpc.Error{Code: rpc.CodeInternalError, Message: "rpc.discover: a method of this server cannot be described"}

// describeRegistry describes the methods of reg but those OpenRPC reserves.
func describeRegistry(reg *rpc.Registry, info Info) (*Document, error) {
	all := reg.Methods()
	methods := all[:0]
	for _, m := range all {
		if !strings.HasPrefix(m.Name, "rpc.") {
			methods = append(methods, m)
		}
	}
	return Describe(info, methods...)
}
