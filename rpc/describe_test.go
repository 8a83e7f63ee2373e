package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

type describedParams struct {
	A int `json:"a"`
}

func TestDescribeAndInfo(t *testing.T) {
	doc := rpc.Doc{
		Summary: "Adds.",
		Tags:    []string{"math"},
		Errors:  []rpc.ErrorDoc{{Code: 7, Message: "overflow", Data: describedParams{}}},
	}
	plain := rpc.NewMethod[describedParams, int]("add")
	m := plain.Describe(doc)
	doc.Tags[0] = "changed" // the descriptor keeps a copy of its own

	info := m.Info()
	want := rpc.MethodInfo{
		Name:   "add",
		Params: reflect.TypeFor[describedParams](),
		Result: reflect.TypeFor[int](),
		Doc: rpc.Doc{Summary: "Adds.", Tags: []string{"math"},
			Errors: []rpc.ErrorDoc{{Code: 7, Message: "overflow", Data: describedParams{}}}},
	}
	if !reflect.DeepEqual(info, want) {
		t.Fatalf("Info() = %+v\nwant %+v", info, want)
	}
	info.Doc.Tags[0] = "mutated" // nor does a caller of Info share them
	if got := m.Info().Doc.Tags[0]; got != "math" {
		t.Fatalf("Info's Tags are shared with the descriptor: %q", got)
	}
	if got := plain.Info(); !reflect.DeepEqual(got.Doc, rpc.Doc{}) || got.Name != "add" {
		t.Fatalf("Describe changed the original descriptor: %+v", got)
	}

	n := rpc.NewNotification[rpc.NoParams]("ping").Describe(rpc.Doc{Summary: "Pings."})
	ni := n.Info()
	if !ni.Notification || ni.Params != nil || ni.Result != nil || ni.Doc.Summary != "Pings." {
		t.Fatalf("notification Info() = %+v", ni)
	}
	if got := rpc.NewMethod[rpc.NoParams, string]("now").Info(); got.Params != nil || got.Result != reflect.TypeFor[string]() {
		t.Fatalf("NoParams method Info() = %+v", got)
	}
}

func TestRegistryMethods(t *testing.T) {
	reg := rpc.NewRegistry()
	if got := reg.Methods(); len(got) != 0 {
		t.Fatalf("empty registry lists %v", got)
	}
	rpc.Handle(reg, rpc.NewMethod[describedParams, int]("b/add").Describe(rpc.Doc{Summary: "Adds."}),
		func(context.Context, describedParams) (int, error) { return 0, nil })
	rpc.HandleNotification(reg, rpc.NewNotification[string]("a/log"), func(context.Context, string) {})
	reg.HandleUnknown(func(context.Context, string, json.RawMessage) (any, error) { return nil, nil })

	got := reg.Methods()
	if len(got) != 2 || got[0].Name != "a/log" || !got[0].Notification || got[1].Name != "b/add" || got[1].Doc.Summary != "Adds." {
		t.Fatalf("Methods() = %+v", got)
	}
	var nilReg *rpc.Registry
	if nilReg.Methods() != nil {
		t.Fatal("a nil registry lists methods")
	}
}

// CheckParams runs on decoded params of registered methods only, and its
// refusal is answered (a request) or dropped (a notification).
func TestCheckParams(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[describedParams, int]("add"), func(_ context.Context, p describedParams) (int, error) { return p.A, nil })
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, int]("zero"), func(context.Context, rpc.NoParams) (int, error) { return 0, nil })
	notified := make(chan int, 4)
	rpc.HandleNotification(reg, rpc.NewNotification[describedParams]("note"), func(_ context.Context, p describedParams) { notified <- p.A })
	reg.HandleUnknown(func(_ context.Context, method string, _ json.RawMessage) (any, error) { return method, nil })

	var mu sync.Mutex
	var checked []string
	var drops []rpc.Drop
	opts := &rpc.Options{
		Handler: reg,
		CheckParams: func(method string, params json.RawMessage) error {
			mu.Lock()
			checked = append(checked, method+" "+string(params))
			mu.Unlock()
			switch {
			case strings.Contains(string(params), `"a":13`):
				return &rpc.Error{Code: 4, Message: "unlucky"}
			case strings.Contains(string(params), `"a":-`):
				return errors.New("/a: must be at least 0")
			}
			return nil
		},
		OnDrop: func(d rpc.Drop) { mu.Lock(); drops = append(drops, d); mu.Unlock() },
	}
	_, peer := rpctest.Start(t, opts)

	peer.Send(`{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":-1}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: /a: must be at least 0"}}`)
	peer.Send(`{"jsonrpc":"2.0","id":2,"method":"add","params":{"a":13}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":4,"message":"unlucky"}}`)
	peer.Send(`{"jsonrpc":"2.0","id":3,"method":"add","params":{"a":5}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":3,"result":5}`)
	// Params that do not decode are refused before any check.
	peer.Send(`{"jsonrpc":"2.0","id":4,"method":"add","params":{"a":"x"}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"{{string}}"}}`)
	peer.Send(`{"jsonrpc":"2.0","method":"note","params":{"a":-2}}`)
	peer.Send(`{"jsonrpc":"2.0","method":"note","params":{"a":2}}`)
	peer.Send(`{"jsonrpc":"2.0","id":5,"method":"zero"}`)
	peer.Expect(`{"jsonrpc":"2.0","id":5,"result":0}`)
	peer.Send(`{"jsonrpc":"2.0","id":6,"method":"other","params":{"a":-1}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":6,"result":"other"}`)
	if got := <-notified; got != 2 {
		t.Fatalf("the notification served was a=%d, want the one with a=2", got)
	}

	mu.Lock()
	defer mu.Unlock()
	wantChecked := []string{`add {"a":-1}`, `add {"a":13}`, `add {"a":5}`, `note {"a":-2}`, `note {"a":2}`, `zero `}
	if !reflect.DeepEqual(checked, wantChecked) {
		t.Fatalf("checked %q\nwant %q", checked, wantChecked)
	}
	var refused []string
	for _, d := range drops {
		if d.Reason == rpc.DropInvalidParams {
			refused = append(refused, d.Method)
		}
	}
	if want := []string{"add", "add", "add", "note"}; !reflect.DeepEqual(refused, want) {
		t.Fatalf("DropInvalidParams reported for %q, want %q", refused, want)
	}
}

// A CheckParams that returns a nil *Error, or panics, does not take the
// Conn down: the first refuses as any error does, the second is
// recovered and answered CodeInternalError.
func TestCheckParamsMisbehaving(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[describedParams, int]("add"), func(_ context.Context, p describedParams) (int, error) { return p.A, nil })
	rpc.HandleNotification(reg, rpc.NewNotification[describedParams]("note"), func(context.Context, describedParams) {})
	var mu sync.Mutex
	var drops []rpc.Drop
	_, peer := rpctest.Start(t, &rpc.Options{
		Handler: reg,
		CheckParams: func(_ string, params json.RawMessage) error {
			switch {
			case strings.Contains(string(params), `"a":1`):
				var e *rpc.Error
				return e
			case strings.Contains(string(params), `"a":2`):
				panic("the check broke")
			}
			return nil
		},
		OnDrop: func(d rpc.Drop) { mu.Lock(); drops = append(drops, d); mu.Unlock() },
	})
	peer.Send(`{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":1}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: a nil *rpc.Error was returned as an error"}}`)
	peer.Send(`{"jsonrpc":"2.0","id":2,"method":"add","params":{"a":2}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal error"}}`)
	peer.Send(`{"jsonrpc":"2.0","method":"note","params":{"a":2}}`)
	peer.Send(`{"jsonrpc":"2.0","id":3,"method":"add","params":{"a":3}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":3,"result":3}`)
	mu.Lock()
	defer mu.Unlock()
	if len(drops) != 3 || fmt.Sprint(drops[1].Err) == "" || !strings.Contains(fmt.Sprint(drops[1].Err), "the check broke") || !strings.Contains(fmt.Sprint(drops[2].Err), "the check broke") {
		t.Fatalf("drops %v: want three, the last two the panic's", drops)
	}
}
