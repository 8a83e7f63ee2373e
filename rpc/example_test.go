package rpc_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/linerpc/linerpc/rpc"
)

type AddParams struct{ A, B int }
type AddResult struct{ Sum int }
type ProgressParams struct{ Percent int }

var (
	Add      = rpc.NewMethod[AddParams, AddResult]("math/add")
	Progress = rpc.NewNotification[ProgressParams]("progress")
	Confirm  = rpc.NewMethod[string, bool]("ui/confirm")
)

// connect joins a client and a server Conn over an in-memory pipe and
// returns a function that closes both and waits for their goroutines.
func connect(server, client *rpc.Registry) (s, c *rpc.Conn, stop func()) {
	return connectWith(&rpc.Options{Handler: server}, &rpc.Options{Handler: client})
}

// connectWith is connect with the options of each end.
func connectWith(server, client *rpc.Options) (s, c *rpc.Conn, stop func()) {
	x, y := net.Pipe()
	s, c = rpc.NewConn(x, x, server), rpc.NewConn(y, y, client)
	s.Start()
	c.Start()
	return s, c, func() {
		c.Close()
		s.Close()
		x.Close()
		y.Close()
		c.Wait()
		s.Wait()
	}
}

// A typed call: the compiler checks the params and result types against
// the descriptor.
func ExampleMethod_Call() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	_, client, stop := connect(reg, nil)
	defer stop()

	res, err := Add.Call(context.Background(), client, AddParams{A: 2, B: 3})
	fmt.Println(res.Sum, err)
	// Output: 5 <nil>
}

// A handler serving a stream: here, requests written by hand on one line
// each, answered on the writer.
func ExampleHandle() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		if p.A < 0 {
			return AddResult{}, &rpc.Error{Code: 1, Message: "negative numbers are not supported"}
		}
		return AddResult{Sum: p.A + p.B}, nil
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":40,"B":2}}` + "\n")
	conn := rpc.NewConn(in, os.Stdout, &rpc.Options{Handler: reg})
	conn.Start()
	conn.Wait() // the input ended and the handler has answered
	// Output: {"jsonrpc":"2.0","id":1,"result":{"Sum":42}}
}

// Notifications arrive in the order they were sent.
func ExampleNotification_Notify() {
	done := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, Progress, func(ctx context.Context, p ProgressParams) {
		fmt.Println("progress", p.Percent)
		if p.Percent == 100 {
			close(done)
		}
	})
	sender, _, stop := connect(nil, reg) // the server end notifies the client end
	defer stop()

	for _, pct := range []int{25, 50, 100} {
		Progress.Notify(context.Background(), sender, ProgressParams{Percent: pct})
	}
	<-done
	// Output:
	// progress 25
	// progress 50
	// progress 100
}

// A server calls its client back while serving the client's request: both
// ends of a Conn serve and call.
func ExampleConnFromContext() {
	server := rpc.NewRegistry()
	rpc.Handle(server, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		ok, err := Confirm.Call(ctx, rpc.ConnFromContext(ctx), fmt.Sprintf("add %d and %d?", p.A, p.B))
		if err != nil || !ok {
			return AddResult{}, fmt.Errorf("not confirmed")
		}
		return AddResult{Sum: p.A + p.B}, nil
	})
	client := rpc.NewRegistry()
	rpc.Handle(client, Confirm, func(ctx context.Context, question string) (bool, error) {
		fmt.Println("asked:", question)
		return true, nil
	})
	_, c, stop := connect(server, client)
	defer stop()

	res, err := Add.Call(context.Background(), c, AddParams{A: 1, B: 2})
	fmt.Println(res.Sum, err)
	// Output:
	// asked: add 1 and 2?
	// 3 <nil>
}
