// Command calc shows package rpc between two real processes: it starts a
// copy of itself as a child, serving arithmetic on its stdin and stdout, and
// calls it. The child reports progress with notifications and asks the
// parent to confirm a division with a request of its own. It describes its
// methods (rpc.Doc) and serves their OpenRPC document as rpc.discover, so
// that a generic client such as rpcurl can list, describe and check them.
//
//	go run ./examples/calc                             # the parent and its child
//	go run ./examples/calc serve                       # the child alone, on stdin/stdout
//	go run ./examples/calc listen tcp:127.0.0.1:7000   # every client of a listener
//	go run ./examples/calc listen unix:/tmp/calc.sock
//
// listen says where it listens on stderr ("calc: listening on
// tcp:127.0.0.1:7000", the port chosen for port 0) and serves until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// The protocol: two methods and a notification served by the child, one
// notification and one method served by the parent.
type Operands struct {
	A float64 `json:"a" jsonschema:"The first operand."`
	B float64 `json:"b" jsonschema:"The second operand (the divisor of calc/divide)."`
}

type Result struct {
	Value float64 `json:"value"`
}

type Step struct {
	Text string `json:"text"`
}

// The errors of calc/divide.
const (
	CodeDivisionByZero = 1
	CodeNotConfirmed   = 2
)

var (
	Add = rpc.NewMethod[Operands, Result]("calc/add").Describe(rpc.Doc{
		Summary:  "Adds a and b.",
		Tags:     []string{"arithmetic"},
		Examples: []rpc.Example{{Name: "two and three", Params: Operands{A: 2, B: 3}, Result: Result{Value: 5}}},
	})
	Divide = rpc.NewMethod[Operands, Result]("calc/divide").Describe(rpc.Doc{
		Summary:     "Divides a by b, once the caller confirms.",
		Description: "Before dividing, the server asks the caller to confirm with a request of its own, ui/confirm, which the caller answers true to go on.",
		Tags:        []string{"arithmetic"},
		Errors: []rpc.ErrorDoc{
			{Code: CodeDivisionByZero, Message: "division by zero"},
			{Code: CodeNotConfirmed, Message: "the caller did not confirm (it declined, or does not serve ui/confirm)"},
		},
	})
	Log = rpc.NewNotification[Step]("calc/log").Describe(rpc.Doc{
		Summary: "Writes text on the server's stderr.",
	})
	Progress = rpc.NewNotification[Step]("calc/progress")
	Confirm  = rpc.NewMethod[Step, bool]("ui/confirm")
)

// info is what the document says of the API.
var info = openrpc.Info{Title: "calc", Version: "1.0.0", Description: "The arithmetic of linerpc's examples/calc."}

func main() {
	log.SetFlags(0)
	log.SetPrefix("calc: ")
	switch {
	case len(os.Args) > 1 && os.Args[1] == "serve":
		serve()
		return
	case len(os.Args) > 1 && os.Args[1] == "listen":
		if len(os.Args) != 3 {
			log.Fatal("usage: calc listen tcp:HOST:PORT|unix:PATH")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := listen(ctx, os.Args[2], os.Stderr); err != nil {
			log.Fatal(err)
		}
		return
	case len(os.Args) > 1:
		log.Fatalf("unknown command %q: want serve, listen ADDR, or none", os.Args[1])
	}
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// newRegistry returns the child's handlers, rpc.discover among them.
// logTo is where calc/log writes.
func newRegistry(logTo io.Writer) *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p Operands) (Result, error) {
		Progress.Notify(ctx, rpc.ConnFromContext(ctx), Step{fmt.Sprintf("adding %g and %g", p.A, p.B)})
		return Result{p.A + p.B}, nil
	})
	rpc.Handle(reg, Divide, func(ctx context.Context, p Operands) (Result, error) {
		if p.B == 0 {
			return Result{}, &rpc.Error{Code: CodeDivisionByZero, Message: "division by zero"}
		}
		ok, err := Confirm.Call(ctx, rpc.ConnFromContext(ctx), Step{fmt.Sprintf("divide %g by %g?", p.A, p.B)})
		if err != nil {
			why := err.Error()
			var refused *rpc.Error
			if errors.As(err, &refused) {
				why = refused.Message
			}
			return Result{}, &rpc.Error{Code: CodeNotConfirmed, Message: "the caller did not confirm: " + why}
		}
		if !ok {
			return Result{}, &rpc.Error{Code: CodeNotConfirmed, Message: "the caller declined"}
		}
		return Result{p.A / p.B}, nil
	})
	rpc.HandleNotification(reg, Log, func(ctx context.Context, s Step) {
		fmt.Fprintf(logTo, "calc: log: %s\n", s.Text)
	})
	if err := openrpc.HandleDiscover(reg, info); err != nil {
		panic(err) // the types above all have a schema
	}
	return reg
}

// serve is the child: it answers on stdout until stdin ends.
func serve() {
	conn := rpc.NewConn(os.Stdin, os.Stdout, &rpc.Options{Handler: newRegistry(os.Stderr)})
	conn.Start()
	conn.Wait()
}

// listen serves every client that connects to addr (tcp:HOST:PORT or
// unix:PATH) until ctx ends, and says on logTo where it listens.
func listen(ctx context.Context, addr string, logTo io.Writer) error {
	network, address, _ := strings.Cut(addr, ":")
	if (network != "tcp" && network != "unix") || address == "" {
		return fmt.Errorf("listen %q: want tcp:HOST:PORT or unix:PATH", addr)
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return err
	}
	srv := &transport.Server{Options: &rpc.Options{Handler: newRegistry(logTo)}}
	fmt.Fprintf(logTo, "calc: listening on %s:%s\n", network, l.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		srv.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, transport.ErrServerClosed) {
		return err
	}
	return nil
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
