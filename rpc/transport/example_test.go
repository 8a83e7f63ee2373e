package transport_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

type AddParams struct{ A, B int }
type AddResult struct{ Sum int }

var Add = rpc.NewMethod[AddParams, AddResult]("math/add")

// A Server on a unix socket: every connection is served with the same
// Registry; Shutdown answers what was read, then closes.
func ExampleServer() {
	dir, err := os.MkdirTemp("", "rpc-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "math.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		log.Fatal(err)
	}

	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	srv := &transport.Server{Options: &rpc.Options{Handler: reg}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	ctx := context.Background()
	conn, err := transport.Dial(ctx, "unix", socket, nil)
	if err != nil {
		log.Fatal(err)
	}
	res, err := Add.Call(ctx, conn, AddParams{A: 2, B: 3})
	fmt.Println(res.Sum, err)

	fmt.Println("Shutdown:", srv.Shutdown(ctx))
	fmt.Println("Serve:", <-served)
	<-conn.Done() // the server closed the connection
	fmt.Println("client:", conn.Wait())
	// Output:
	// 5 <nil>
	// Shutdown: <nil>
	// Serve: transport: Server closed
	// client: rpc: input ended
}

type connNumberKey struct{}

var whoAmI = rpc.NewMethod[rpc.NoParams, string]("whoami")

// Dial a TCP server whose ConnState gives each connection's handlers a
// value of its own, in the context of the connection's Options: here,
// the connection's number.
func ExampleDial() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	reg := rpc.NewRegistry()
	rpc.Handle(reg, whoAmI, func(ctx context.Context, _ rpc.NoParams) (string, error) {
		return fmt.Sprintf("connection %d", ctx.Value(connNumberKey{})), nil
	})
	var accepted atomic.Int64
	srv := &transport.Server{
		Options: &rpc.Options{Handler: reg},
		ConnState: func(c *transport.ServerConn, state transport.ConnState) {
			if state == transport.StateNew { // c.Options is this connection's own
				c.Options.BaseContext = context.WithValue(c.Options.BaseContext, connNumberKey{}, accepted.Add(1))
			}
		},
	}
	go srv.Serve(l)
	defer srv.Close()

	ctx := context.Background()
	for range 2 {
		conn, err := transport.Dial(ctx, "tcp", l.Addr().String(), nil)
		if err != nil {
			log.Fatal(err)
		}
		who, err := whoAmI.Call(ctx, conn, rpc.NoParams{})
		fmt.Println(who, err)
		conn.Close() // and its net.Conn, once its goroutines have exited
	}
	// Output:
	// connection 1 <nil>
	// connection 2 <nil>
}

var welcome = rpc.NewNotification[string]("welcome")

// ConnState follows every connection: it keeps the live ones, greets
// each client once its Conn has started, and hears why each one ended.
// Shutdown returns once every connection has been seen at StateClosed.
func ExampleServer_ConnState() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	live := map[*transport.ServerConn]bool{}
	srv := &transport.Server{
		ConnState: func(c *transport.ServerConn, state transport.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			switch state {
			case transport.StateActive:
				live[c] = true
				// Notify only queues the frame; a call, which waits for
				// the client's answer, would go on a goroutine of its own.
				welcome.Notify(context.Background(), c.Conn, fmt.Sprintf("welcome, you are one of %d", len(live)))
			case transport.StateClosed:
				delete(live, c)
				fmt.Println("ended:", c.Err)
			}
		},
	}
	go srv.Serve(l)

	heard := make(chan string, 1)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, welcome, func(_ context.Context, text string) { heard <- text })
	ctx := context.Background()
	conn, err := transport.Dial(ctx, "tcp", l.Addr().String(), &rpc.Options{Handler: reg})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-heard)

	fmt.Println("Shutdown:", srv.Shutdown(ctx))
	mu.Lock()
	fmt.Println("live:", len(live))
	mu.Unlock()
	fmt.Println("client:", conn.Wait())
	// Output:
	// welcome, you are one of 1
	// ended: rpc: connection closed
	// Shutdown: <nil>
	// live: 0
	// client: rpc: input ended
}

// StartConn owns a net.Conn made elsewhere: here each end of net.Pipe.
// The client's Close ends its Conn, which then closes its end of the pipe:
// the server sees its input end, and closes the other end.
func ExampleStartConn() {
	serverEnd, clientEnd := net.Pipe()
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	server := transport.StartConn(serverEnd, &rpc.Options{Handler: reg})
	client := transport.StartConn(clientEnd, nil)

	res, err := Add.Call(context.Background(), client, AddParams{A: 1, B: 2})
	fmt.Println(res.Sum, err)
	client.Close()
	fmt.Println("server:", server.Wait())
	fmt.Println("client:", client.Wait())
	// Output:
	// 3 <nil>
	// server: rpc: input ended
	// client: rpc: connection closed
}

var greeting = rpc.NewNotification[string]("greeting")

// A child process spoken to over its stdio. Here the child is cat, which
// writes back what it reads: the notification sent comes back. Close
// closes its stdin, and cat exits; a child that would not would get
// SIGTERM, then SIGKILL.
func ExampleStartChild() {
	heard := make(chan string, 1)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, greeting, func(ctx context.Context, text string) { heard <- text })

	child, err := transport.StartChild(exec.Command("cat"), &transport.ChildOptions{Options: &rpc.Options{Handler: reg}})
	if err != nil {
		log.Fatal(err)
	}
	greeting.Notify(context.Background(), child.Conn(), "hello, child")
	fmt.Println(<-heard)

	fmt.Println("Close:", child.Close())
	fmt.Println(child.ProcessState())
	// Output:
	// hello, child
	// Close: <nil>
	// exit status 0
}

// A program that is the child of its peer (a language server, an MCP
// server) serves its stdio until its input ends, or until SIGTERM.
func ExampleServeStdio() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		return AddResult{Sum: p.A + p.B}, nil
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := transport.ServeStdio(ctx, &rpc.Options{Handler: reg}); err != nil {
		log.Fatal(err)
	}
}
