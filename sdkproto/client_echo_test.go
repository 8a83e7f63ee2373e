package sdkproto_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// echoWait bounds the calls of the echo tests: a Client that missed the
// echo would get an answer (its own, echoed), not hang, but a bound keeps
// any regression from hanging the test.
const echoWait = 10 * time.Second

// echoClient returns a Client whose peer echoes every frame it writes: one
// io.Pipe, its reader given to the Client as the runtime's output, as cat
// would be.
func echoClient(t *testing.T) *sdkproto.Client {
	t.Helper()
	r, w := io.Pipe()
	c := sdkproto.NewClient(r, w, nil)
	t.Cleanup(func() {
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(echoWait):
			t.Errorf("Close did not return within %v", echoWait)
		}
	})
	return c
}

// TestClientEchoingPeer: a peer that echoes the Client's frames sends it
// the Client's own request, which a runtime never does; the request in
// flight fails with an error matching ErrEchoingPeer that names it, not
// with the "method not found" of the Client's own answer echoed back, and
// every later request fails the same way at once.
func TestClientEchoingPeer(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"initialize", "session/prompt"} {
		t.Run(strings.ReplaceAll(first, "/", "-"), func(t *testing.T) {
			t.Parallel()
			c := echoClient(t)
			ctx, cancel := context.WithTimeout(t.Context(), echoWait)
			defer cancel()
			var err error
			if first == "initialize" {
				_, err = c.Initialize(ctx, clInitParams())
			} else {
				_, err = c.Run(ctx, "main", sdkproto.TextBlock("hi"))
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: waited %v: %v", first, echoWait, err)
			}
			if !errors.Is(err, sdkproto.ErrEchoingPeer) {
				t.Fatalf("%s: %v, want ErrEchoingPeer", first, err)
			}
			want := "sdkproto: the peer echoed our " + first + " request back: is it a DSH runtime (such as dsh --profile sdk)?"
			if err.Error() != want {
				t.Errorf("%s: %q, want %q", first, err.Error(), want)
			}
			var resp *sdkproto.ResponseError
			if errors.As(err, &resp) {
				t.Errorf("%s: the echoed answer was taken for the runtime's: %v", first, resp)
			}
			// Later requests fail the same way, naming the first echo.
			if err := c.Shutdown(ctx); !errors.Is(err, sdkproto.ErrEchoingPeer) || !strings.Contains(err.Error(), "our "+first+" request") {
				t.Errorf("Shutdown after the echo: %v", err)
			}
		})
	}
}

// TestClientResponderOwnsMethod: a Responder for one of the Client's own
// methods (a program that really serves it) keeps that method from the
// echo detection: the request is answered by the Responder, and the
// Client's call of it is settled by the answer.
func TestClientResponderOwnsMethod(t *testing.T) {
	t.Parallel()
	served := make(chan struct{}, 1)
	r, w := io.Pipe()
	c := sdkproto.NewClient(r, w, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{
		sdkproto.Respond(rpc.NewMethod[rpc.NoParams, struct{}]("shutdown"), func(context.Context, rpc.NoParams) (struct{}, error) {
			served <- struct{}{}
			return struct{}{}, nil
		}),
	}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), echoWait)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown to a peer whose Responder answers it: %v", err)
	}
	select {
	case <-served:
	default:
		t.Error("the Responder did not serve the shutdown request")
	}
}
