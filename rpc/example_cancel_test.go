package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

type SearchParams struct {
	Query string `json:"query"`
}

type SearchResult struct {
	Hits []string `json:"hits"`
}

var Search = rpc.NewMethod[SearchParams, SearchResult]("tools/search")

// An MCP-style cancellable tool: with MCPCancellation on both ends, a
// caller whose context ends sends notifications/cancelled, and the
// handler's context ends with the peer's reason as its cause. The
// cancelled request gets no response.
func ExampleMCPCancellation() {
	started, stopped := make(chan struct{}), make(chan error, 1)
	tools := rpc.NewRegistry()
	rpc.Handle(tools, Search, func(ctx context.Context, p SearchParams) (SearchResult, error) {
		close(started)
		<-ctx.Done() // a long search, stopped by the client
		stopped <- context.Cause(ctx)
		return SearchResult{}, ctx.Err()
	})

	_, client, stop := connectWith(&rpc.Options{Handler: tools, Cancellation: rpc.MCPCancellation()}, &rpc.Options{Cancellation: rpc.MCPCancellation()})
	defer stop()

	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-started
		cancel(errors.New("the user pressed stop"))
	}()
	_, err := Search.Call(ctx, client, SearchParams{Query: "gophers"})
	fmt.Println("client:", err)
	fmt.Println("server:", <-stopped)
	// Output:
	// client: context canceled
	// server: rpc: request cancelled by the peer: the user pressed stop
}

// An access log with log/slog: a serving interceptor logs each request's
// method, id, outcome and duration.
func ExampleServeFunc_accessLog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{} // left out here, so that the output is the same every run
			}
			return a
		},
	}))
	accessLog := func(next rpc.ServeFunc) rpc.ServeFunc {
		return func(ctx context.Context, req *rpc.Request) (any, error) {
			start := time.Now()
			res, err := next(ctx, req)
			attrs := []slog.Attr{slog.String("method", req.Method), slog.Duration("duration", time.Since(start))}
			if !req.IsNotification() {
				attrs = append(attrs, slog.String("id", string(req.ID)))
			}
			level := slog.LevelInfo
			if err != nil {
				level = slog.LevelWarn
				attrs = append(attrs, slog.Any("error", err))
			}
			logger.LogAttrs(ctx, level, "rpc", attrs...)
			return res, err
		}
	}

	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		if p.A < 0 {
			return AddResult{}, &rpc.Error{Code: 1, Message: "negative"}
		}
		return AddResult{Sum: p.A + p.B}, nil
	})
	_, client, stop := connectWith(&rpc.Options{Handler: reg, Intercept: accessLog}, nil)
	defer stop()

	Add.Call(context.Background(), client, AddParams{A: 1, B: 2})
	Add.Call(context.Background(), client, AddParams{A: -1, B: 2})
	// Output:
	// level=INFO msg=rpc method=math/add id=1
	// level=WARN msg=rpc method=math/add id=2 error="jsonrpc error 1: negative"
}

// span stands for a tracing library's span (OpenTelemetry's trace.Span):
// it has a name, attributes and an end.
type span struct {
	name  string
	attrs []string
}

func (s *span) SetAttribute(k string, v any) { s.attrs = append(s.attrs, fmt.Sprintf("%s=%v", k, v)) }
func (s *span) End()                         { fmt.Println("span", s.name, s.attrs) }

type spanKey struct{}

// startSpan stands for tracer.Start: it returns a context carrying the
// new span.
func startSpan(ctx context.Context, name string) (context.Context, *span) {
	s := &span{name: name}
	return context.WithValue(ctx, spanKey{}, s), s
}

// Tracing in the manner of OpenTelemetry: a serving interceptor starts a
// span for each request, named and attributed as OpenTelemetry's
// semantic conventions for JSON-RPC say, and hands the handler its
// context; a calling interceptor does the same for outgoing calls.
func ExampleServeFunc_span() {
	serverSpans := func(next rpc.ServeFunc) rpc.ServeFunc {
		return func(ctx context.Context, req *rpc.Request) (any, error) {
			ctx, s := startSpan(ctx, req.Method+" server")
			defer s.End()
			s.SetAttribute("rpc.system", "jsonrpc")
			s.SetAttribute("rpc.jsonrpc.request_id", string(req.ID))
			res, err := next(ctx, req)
			var e *rpc.Error
			if errors.As(err, &e) {
				s.SetAttribute("rpc.jsonrpc.error_code", int64(e.Code))
			}
			return res, err
		}
	}
	clientSpans := func(next rpc.CallFunc) rpc.CallFunc {
		return func(ctx context.Context, call *rpc.Call) error {
			ctx, s := startSpan(ctx, call.Method+" client")
			defer s.End()
			s.SetAttribute("rpc.system", "jsonrpc")
			err := next(ctx, call)
			s.SetAttribute("rpc.jsonrpc.request_id", string(call.ID))
			return err
		}
	}

	reg := rpc.NewRegistry()
	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
		ctx.Value(spanKey{}).(*span).SetAttribute("sum", p.A+p.B) // the handler sees its span
		return AddResult{Sum: p.A + p.B}, nil
	})
	_, client, stop := connectWith(&rpc.Options{Handler: reg, Intercept: serverSpans}, &rpc.Options{InterceptCall: clientSpans})
	defer stop()

	res, _ := Add.Call(context.Background(), client, AddParams{A: 2, B: 3})
	fmt.Println("sum", res.Sum)
	// Output:
	// span math/add server [rpc.system=jsonrpc rpc.jsonrpc.request_id=1 sum=5]
	// span math/add client [rpc.system=jsonrpc rpc.jsonrpc.request_id=1]
	// sum 5
}
