package rpctest_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

type AddParams struct{ A, B int }
type AddResult struct{ Sum int }

var Add = rpc.NewMethod[AddParams, AddResult]("math/add")

// registry is the service under test.
func registry() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	return reg
}

// A test of a server: a scripted peer sends requests and expects the
// answers. (Go runs an Example without a *testing.T: inTest plays go test
// here; in a test file, the body is a test function.)
func ExampleStart() {
	fmt.Println(inTest(func(t testing.TB) {
		_, peer := rpctest.Start(t, &rpc.Options{Handler: registry()})
		peer.Send(`{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":2,"B":3}}`)
		peer.Expect(`{"jsonrpc":"2.0","id":1,"result":{"Sum":5}}`)
		peer.Send(`{"jsonrpc":"2.0","id":"x","method":"math/sub"}`)
		peer.Expect(`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"{{string}}"}}`)
	}))
	fmt.Println(inTest(func(t testing.TB) {
		_, peer := rpctest.Start(t, &rpc.Options{Handler: registry()})
		peer.Send(`{"jsonrpc":"2.0","id":2,"method":"math/add","params":{"A":2,"B":2}}`)
		peer.Expect(`{"jsonrpc":"2.0","id":2,"result":{"Sum":5}}`)
	}))
	// Output:
	// PASS
	// FAIL
}

// A test of a client: the peer takes its request and answers it.
func ExamplePeer_NextCall() {
	fmt.Println(inTest(func(t testing.TB) {
		conn, peer := rpctest.Start(t, nil)
		sum := make(chan int, 1)
		go func() {
			r, _ := Add.Call(context.Background(), conn, AddParams{A: 20, B: 22})
			sum <- r.Sum
		}()
		req := peer.NextCall()
		if req.Method != "math/add" {
			t.Fatalf("method %q", req.Method)
		}
		peer.Answer(req, `{"Sum":42}`)
		if got := <-sum; got != 42 {
			t.Errorf("sum %d", got)
		}
	}))
	// Output: PASS
}

// Both ends in process: a client Conn and the server it calls.
func ExamplePair() {
	fmt.Println(inTest(func(t testing.TB) {
		client, _ := rpctest.Pair(t, nil, &rpc.Options{Handler: registry()})
		r, err := Add.Call(context.Background(), client, AddParams{A: 1, B: 2})
		if err != nil || r.Sum != 3 {
			t.Errorf("Add: %v, %v", r, err)
		}
	}))
	// Output: PASS
}

// inTest runs test as go test runs a test function, and says how it
// went: PASS, or FAIL.
func inTest(test func(t testing.TB)) string {
	t := &exampleT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.cleanup()
		test(t)
	}()
	<-done
	if t.failed {
		return "FAIL"
	}
	return "PASS"
}

// exampleT is the testing.TB of an Example, as far as rpctest uses one.
type exampleT struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func (t *exampleT) Helper()                   {}
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(string, ...any)     { t.failed = true }
func (t *exampleT) Error(...any)              { t.failed = true }
func (t *exampleT) Fatalf(f string, a ...any) { t.Errorf(f, a...); runtime.Goexit() }
func (t *exampleT) Fatal(a ...any)            { t.Error(a...); runtime.Goexit() }

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
