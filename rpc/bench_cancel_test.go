package rpc_test

import (
	"context"
	"net"
	"testing"

	"github.com/linerpc/linerpc/rpc"
)

// The round trip of BenchmarkRoundTrip with the features of the request's
// life that cost when set: cancellation on both ends (the Conn then
// tracks the peer's requests by id, and a call's context may send a
// cancel), and one interceptor, serving or calling, that passes each
// request on. Compare each with BenchmarkRoundTrip (none set).

func benchPairWith(b *testing.B, server, client *rpc.Options) *rpc.Conn {
	x, y := net.Pipe()
	s := rpc.NewConn(x, x, server)
	c := rpc.NewConn(y, y, client)
	s.Start()
	c.Start()
	b.Cleanup(func() {
		c.Close()
		s.Close()
		x.Close()
		y.Close()
		c.Wait()
		s.Wait()
	})
	return c
}

func benchRoundTrips(b *testing.B, ctx context.Context, client *rpc.Conn) {
	b.ReportAllocs()
	for b.Loop() {
		r, err := benchPrompt.Call(ctx, client, helloPrompt)
		if err != nil || r.MessageID != "m-1" {
			b.Fatal(r, err)
		}
	}
}

func BenchmarkRoundTripCancellation(b *testing.B) {
	client := benchPairWith(b,
		&rpc.Options{Handler: promptRegistry(), Cancellation: rpc.MCPCancellation()},
		&rpc.Options{Cancellation: rpc.MCPCancellation()})
	benchRoundTrips(b, context.Background(), client)
}

// BenchmarkRoundTripCancellableContext calls with a context that can end
// (as a caller with a deadline has), with cancellation on and off.
func BenchmarkRoundTripCancellableContext(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("off", func(b *testing.B) {
		benchRoundTrips(b, ctx, benchPairWith(b, &rpc.Options{Handler: promptRegistry()}, nil))
	})
	b.Run("on", func(b *testing.B) {
		client := benchPairWith(b,
			&rpc.Options{Handler: promptRegistry(), Cancellation: rpc.MCPCancellation()},
			&rpc.Options{Cancellation: rpc.MCPCancellation()})
		benchRoundTrips(b, ctx, client)
	})
}

func passServe(next rpc.ServeFunc) rpc.ServeFunc {
	return func(ctx context.Context, req *rpc.Request) (any, error) { return next(ctx, req) }
}

func passCall(next rpc.CallFunc) rpc.CallFunc {
	return func(ctx context.Context, call *rpc.Call) error { return next(ctx, call) }
}

func BenchmarkRoundTripServeInterceptor(b *testing.B) {
	client := benchPairWith(b, &rpc.Options{Handler: promptRegistry(), Intercept: passServe}, nil)
	benchRoundTrips(b, context.Background(), client)
}

func BenchmarkRoundTripCallInterceptor(b *testing.B) {
	client := benchPairWith(b, &rpc.Options{Handler: promptRegistry()}, &rpc.Options{InterceptCall: passCall})
	benchRoundTrips(b, context.Background(), client)
}
