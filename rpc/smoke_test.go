package rpc_test

import (
	"context"
	"net"
	"testing"

	"github.com/linerpc/linerpc/rpc"
)

type addParams struct{ A, B int }
type addResult struct{ Sum int }

var add = rpc.NewMethod[addParams, addResult]("add")

func TestSmoke(t *testing.T) {
	a, b := net.Pipe()
	reg := rpc.NewRegistry()
	rpc.Handle(reg, add, func(ctx context.Context, p addParams) (addResult, error) { return addResult{p.A + p.B}, nil })
	srv := rpc.NewConn(a, a, &rpc.Options{Handler: reg})
	cli := rpc.NewConn(b, b, nil)
	srv.Start()
	cli.Start()
	r, err := add.Call(context.Background(), cli, addParams{2, 3})
	if err != nil || r.Sum != 5 {
		t.Fatal(r, err)
	}
	cli.Close()
	srv.Close()
}
