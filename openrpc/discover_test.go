package openrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/testservice"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// rpc.discover answers the document of the registry as it is when asked,
// without the methods OpenRPC reserves; the golden file is that answer.
func TestDiscover(t *testing.T) {
	s := testservice.New()
	client, _ := rpctest.Pair(t, nil, &rpc.Options{Handler: s.Registry})
	ctx := context.Background()
	doc, err := openrpc.Discover.Call(ctx, client, rpc.NoParams{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testservice.json", append(b, '\n'))
	for _, m := range doc.Methods {
		if strings.HasPrefix(m.Name, "rpc.") {
			t.Errorf("%s is in the document", m.Name)
		}
	}

	rpc.Handle(s.Registry, rpc.NewMethod[rpc.NoParams, int]("later"), func(context.Context, rpc.NoParams) (int, error) { return 0, nil })
	doc, err = openrpc.Discover.Call(ctx, client, rpc.NoParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(doc.Methods, func(m openrpc.Method) bool { return m.Name == "later" }) {
		t.Errorf("a method registered after HandleDiscover is not in the document")
	}

	// A method whose type has no schema, registered later, makes the
	// answer an internal error; one registered before is refused at once.
	rpc.Handle(s.Registry, rpc.NewMethod[chan int, int]("broken"), func(context.Context, chan int) (int, error) { return 0, nil })
	_, err = openrpc.Discover.Call(ctx, client, rpc.NoParams{})
	var rerr *rpc.Error
	if !errors.As(err, &rerr) || rerr.Code != rpc.CodeInternalError || strings.Contains(rerr.Message, "chan") {
		t.Errorf("discover with a broken method = %v", err)
	}
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[chan int, int]("broken"), func(context.Context, chan int) (int, error) { return 0, nil })
	if err := openrpc.HandleDiscover(reg, testservice.Info); err == nil || reg.Handles("rpc.discover") {
		t.Errorf("HandleDiscover = %v with a method no schema describes, and registered: %v", err, reg.Handles("rpc.discover"))
	}
}

// A server serves rpc.discover only when asked to.
func TestDiscoverIsOffByDefault(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, testservice.Add, func(context.Context, testservice.AddParams) (testservice.Sum, error) { return testservice.Sum{}, nil })
	client, _ := rpctest.Pair(t, nil, &rpc.Options{Handler: reg})
	_, err := openrpc.Discover.Call(context.Background(), client, rpc.NoParams{})
	var rerr *rpc.Error
	if !errors.As(err, &rerr) || rerr.Code != rpc.CodeMethodNotFound {
		t.Fatalf("rpc.discover without HandleDiscover = %v, want method not found", err)
	}
}
