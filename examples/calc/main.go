// Command calc shows package rpc between two real processes: it starts a
// copy of itself as a child, serving arithmetic on its stdin and stdout, and
// calls it. The child reports progress with notifications and asks the
// parent to confirm a division with a request of its own.
//
//	go run ./examples/calc
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/linerpc/linerpc/rpc"
)

// The protocol: two methods served by the child, one notification and one
// method served by the parent.
type Operands struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type Result struct {
	Value float64 `json:"value"`
}

type Step struct {
	Text string `json:"text"`
}

var (
	Add      = rpc.NewMethod[Operands, Result]("calc/add")
	Divide   = rpc.NewMethod[Operands, Result]("calc/divide")
	Progress = rpc.NewNotification[Step]("calc/progress")
	Confirm  = rpc.NewMethod[Step, bool]("ui/confirm")
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve()
		return
	}
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// serve is the child: it answers on stdout until stdin ends.
func serve() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p Operands) (Result, error) {
		Progress.Notify(ctx, rpc.ConnFromContext(ctx), Step{fmt.Sprintf("adding %g and %g", p.A, p.B)})
		return Result{p.A + p.B}, nil
	})
	rpc.Handle(reg, Divide, func(ctx context.Context, p Operands) (Result, error) {
		if p.B == 0 {
			return Result{}, &rpc.Error{Code: 1, Message: "division by zero"}
		}
		ok, err := Confirm.Call(ctx, rpc.ConnFromContext(ctx), Step{fmt.Sprintf("divide %g by %g?", p.A, p.B)})
		if err != nil {
			return Result{}, err
		}
		if !ok {
			return Result{}, errors.New("the caller declined")
		}
		return Result{p.A / p.B}, nil
	})
	conn := rpc.NewConn(os.Stdin, os.Stdout, &rpc.Options{Handler: reg})
	conn.Start()
	conn.Wait()
}

// run is the parent: it starts the child and calls it.
func run() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}

	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, Progress, func(ctx context.Context, s Step) {
		fmt.Println("  progress:", s.Text)
	})
	rpc.Handle(reg, Confirm, func(ctx context.Context, s Step) (bool, error) {
		fmt.Println("  child asks:", s.Text, "yes")
		return true, nil
	})
	conn := rpc.NewConn(stdout, stdin, &rpc.Options{Handler: reg})
	conn.Start()
	ctx := context.Background()

	sum, err := Add.Call(ctx, conn, Operands{A: 2, B: 3})
	fmt.Println("2 + 3 =", sum.Value, err)
	q, err := Divide.Call(ctx, conn, Operands{A: 1, B: 4})
	fmt.Println("1 / 4 =", q.Value, err)
	_, err = Divide.Call(ctx, conn, Operands{A: 1, B: 0})
	var rpcErr *rpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Printf("1 / 0 fails: code %d, %q\n", rpcErr.Code, rpcErr.Message)
	}

	// Closing the child's stdin ends it; then the Conn sees its output end.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return err
	}
	conn.Close()
	conn.Wait()
	return nil
}
