package rpc_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/linerpc/linerpc/rpc"
)

// A language server's framing: each frame a Content-Length header and a
// body, read and written alike.
func ExampleContentLengthFraming() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":2,"B":3}}`
	in := strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	var out strings.Builder
	conn := rpc.NewConn(in, &out, &rpc.Options{Handler: reg, Framing: rpc.ContentLengthFraming})
	conn.Start()
	conn.Wait() // the input ends after the request, which is answered first
	fmt.Printf("%q\n", out.String())
	// Output: "Content-Length: 43\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"Sum\":5}}"
}

// A server that does not know its client answers each in the framing it
// spoke first.
func ExampleDetectFraming() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":2,"B":3}}`
	for _, input := range []string{
		body + "\n",
		fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body),
	} {
		var out strings.Builder
		conn := rpc.NewConn(strings.NewReader(input), &out, &rpc.Options{Handler: reg, Framing: rpc.DetectFraming})
		conn.Start()
		conn.Wait()
		fmt.Printf("%v: %q\n", conn.Framing(), out.String())
	}
	// Output:
	// newline: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"Sum\":5}}\n"
	// Content-Length: "Content-Length: 43\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"Sum\":5}}"
}

// A batch: calls and a notification in one frame, the responses matched
// to the calls by id.
func ExampleBatch() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	rpc.HandleNotification(reg, Progress, func(ctx context.Context, p ProgressParams) {})
	_, client, stop := connectWith(&rpc.Options{Handler: reg, Batches: true}, nil)
	defer stop()

	b := rpc.NewBatch(client)
	first := Add.InBatch(b, AddParams{A: 1, B: 2})
	Progress.InBatch(b, ProgressParams{Percent: 50})
	second := Add.InBatch(b, AddParams{A: 3, B: 4})
	if err := b.Send(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	r1, err1 := first.Result()
	r2, err2 := second.Result()
	fmt.Println(r1.Sum, err1, r2.Sum, err2)
	// Output: 3 <nil> 7 <nil>
}
