package transport_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// helperEnv, set to a role, makes the test binary a child process of
// these tests (TestHelperChild) instead of running them.
const helperEnv = "LINERPC_TRANSPORT_TEST_CHILD"

var (
	// childStarted is what the helper child's handlers notify once they
	// run: the request was read.
	childStarted = rpc.NewNotification[rpc.NoParams]("child/started")
	// untilEOF answers once the helper child's input has ended.
	untilEOF = rpc.NewMethod[linetest.EchoParams, linetest.EchoResult]("child/until-eof")
	// untilSignal answers once the helper child has received SIGTERM.
	untilSignal = rpc.NewMethod[linetest.EchoParams, linetest.EchoResult]("child/until-signal")
)

// TestHelperChild is not a test: run by helperCmd, it is a program that
// serves its stdio with ServeStdio until SIGTERM, and exits 0 when
// ServeStdio returns nil, 1 with its error on stderr otherwise.
func TestHelperChild(t *testing.T) {
	if os.Getenv(helperEnv) != "stdio" {
		t.Skip("the child process of the stdio and child tests")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	reg := linetest.EchoRegistry()
	rpc.Handle(reg, untilEOF, func(hctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		conn := rpc.ConnFromContext(hctx)
		childStarted.Notify(hctx, conn, rpc.NoParams{})
		<-conn.Done()
		return linetest.EchoResult{Echo: p.Text + " after EOF"}, nil
	})
	rpc.Handle(reg, untilSignal, func(hctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		childStarted.Notify(hctx, rpc.ConnFromContext(hctx), rpc.NoParams{})
		<-ctx.Done()
		return linetest.EchoResult{Echo: p.Text + " after SIGTERM"}, nil
	})
	fmt.Fprintln(os.Stderr, "serving")
	if err := transport.ServeStdio(ctx, &rpc.Options{Handler: reg}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helperCmd is the command that runs the test binary as TestHelperChild.
// Built with -race, the child would sleep a second at its exit (the race
// detector's atexit_sleep_ms) unless told not to.
func helperCmd() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), helperEnv+"=stdio", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	return cmd
}

// startHelper starts the helper child with StartChild; its handlers'
// childStarted notifications come to the channel returned. The Child is
// closed when the test ends.
func startHelper(t *testing.T, opts *transport.ChildOptions) (*transport.Child, *exec.Cmd, <-chan struct{}) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM")
	}
	started := make(chan struct{}, 4)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, childStarted, func(context.Context, rpc.NoParams) { started <- struct{}{} })
	if opts == nil {
		opts = &transport.ChildOptions{}
	}
	opts.Options = &rpc.Options{Handler: reg}
	cmd := helperCmd()
	ch, err := transport.StartChild(cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch, cmd, started
}

// exitedWith waits for the child to exit and checks its exit code.
func exitedWith(t *testing.T, ch *transport.Child, code int) {
	t.Helper()
	linetest.Within(t, ch.Exited(), "the child to exit")
	if st := ch.ProcessState(); st.ExitCode() != code {
		t.Errorf("the child exited with %v, want code %d; stderr:\n%q", st, code, ch.StderrTail())
	}
}

// ServeStdio serves until the input ends, answers the request it is
// running then, and returns nil: the child exits 0.
func TestStdioServesUntilInputEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	ch, _, started := startHelper(t, nil)
	if res := linetest.Within(t, linetest.Call(t.Context(), ch.Conn(), "hello"), "the echo"); res.Err != nil || res.Result.Echo != "hello" {
		t.Fatalf("echo: %+v", res)
	}
	res := make(chan linetest.CallResult, 1)
	go func() {
		r, err := untilEOF.Call(t.Context(), ch.Conn(), linetest.EchoParams{Text: "answered"})
		res <- linetest.CallResult{Result: r, Err: err}
	}()
	linetest.Within(t, started, "the handler to start")
	if err := ch.CloseInput(); err != nil {
		t.Fatal(err)
	}
	if r := linetest.Within(t, res, "the answer after the end of the input"); r.Err != nil || r.Result.Echo != "answered after EOF" {
		t.Errorf("call: %+v", r)
	}
	exitedWith(t, ch, 0)
	if err := ch.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// When its context ends (SIGTERM here), ServeStdio shuts the connection
// down: the request in flight is answered, and it returns nil.
func TestStdioShutdownWhenContextEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	ch, cmd, started := startHelper(t, nil)
	res := make(chan linetest.CallResult, 1)
	go func() {
		r, err := untilSignal.Call(t.Context(), ch.Conn(), linetest.EchoParams{Text: "answered"})
		res <- linetest.CallResult{Result: r, Err: err}
	}()
	linetest.Within(t, started, "the handler to start")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := linetest.Within(t, res, "the answer to the request in flight"); r.Err != nil || r.Result.Echo != "answered after SIGTERM" {
		t.Errorf("call: %+v", r)
	}
	exitedWith(t, ch, 0)
	if err := ch.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// serveStreamPeer runs ServeStream on a goroutine over pipes, and
// returns a client Conn over them and the channel of ServeStream's result.
func serveStreamPeer(ctx context.Context, opts *rpc.Options, grace time.Duration) (client *rpc.Conn, peerOut *io.PipeWriter, peerIn *io.PipeReader, served <-chan error) {
	connIn, peerOut := io.Pipe()
	peerIn, connOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStream(ctx, connIn, connOut, opts, grace)
		connOut.Close() // as a process's exit would
	}()
	client = rpc.NewConn(peerIn, peerOut, nil)
	client.Start()
	return client, peerOut, peerIn, done
}

// A handler that does not return within the grace after the context
// ended: ServeStdio closes the connection and says so.
func TestStdioGraceRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stuck := make(chan struct{})
		handlerStarted := make(chan struct{})
		reg := rpc.NewRegistry()
		rpc.Handle(reg, linetest.Block, func(ctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
			close(handlerStarted)
			<-stuck // ignores its context
			return linetest.EchoResult{}, nil
		})
		ctx, cancel := context.WithCancel(t.Context())
		client, peerOut, peerIn, served := serveStreamPeer(ctx, &rpc.Options{Handler: reg}, 3*time.Second)
		res := make(chan linetest.CallResult, 1)
		go func() {
			r, err := linetest.Block.Call(t.Context(), client, linetest.EchoParams{Text: "x"})
			res <- linetest.CallResult{Result: r, Err: err}
		}()
		<-handlerStarted
		start := time.Now()
		cancel()
		err := <-served
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ServeStream returned %v, want its grace's end", err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("returned %v after its context ended, want the grace, 3s", took)
		}
		if r := <-res; r.Err == nil {
			t.Errorf("the call was answered: %+v", r)
		}
		close(stuck)
		client.Close()
		peerOut.Close() // ends ServeStream's read loop, which a pipe cannot interrupt
		peerIn.Close()
		client.Wait()
	})
}

// ServeStream's results: nil when the input ends cleanly or when its
// context ends and the shutdown completes; the error when the output
// fails.
func TestStdioResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, peerOut, peerIn, served := serveStreamPeer(t.Context(), &rpc.Options{Handler: linetest.EchoRegistry()}, time.Second)
		if r := <-linetest.Call(t.Context(), client, "hi"); r.Err != nil {
			t.Fatal(r.Err)
		}
		peerOut.Close()
		if err := <-served; err != nil {
			t.Errorf("at the end of the input: %v", err)
		}
		client.Close()
		peerIn.Close()
		client.Wait()

		ctx, cancel := context.WithCancel(t.Context())
		client, peerOut, peerIn, served = serveStreamPeer(ctx, &rpc.Options{Handler: linetest.EchoRegistry()}, time.Second)
		if r := <-linetest.Call(t.Context(), client, "hi"); r.Err != nil {
			t.Fatal(r.Err)
		}
		cancel()
		if err := <-served; err != nil {
			t.Errorf("after its context ended: %v", err)
		}
		client.Close()
		peerOut.Close()
		peerIn.Close()
		client.Wait()

		client, peerOut, peerIn, served = serveStreamPeer(t.Context(), &rpc.Options{Handler: linetest.EchoRegistry()}, time.Second)
		broken := errors.New("stdout broken")
		peerIn.CloseWithError(broken) // ServeStream's writes fail, and so the client's reads
		// The client has failed: the request goes by hand.
		go io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`+"\n")
		if err := <-served; !errors.Is(err, broken) {
			t.Errorf("after the output failed: %v, want its error", err)
		}
		client.Close()
		peerOut.Close()
		client.Wait()
	})
}
