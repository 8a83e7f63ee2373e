package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

// echoParams exercise go-json's decoding of numbers, strings, arrays,
// objects and interfaces.
type echoParams struct {
	Text string         `json:"text"`
	N    float64        `json:"n"`
	I    int64          `json:"i"`
	L    []any          `json:"l"`
	M    map[string]any `json:"m"`
	P    *echoParams    `json:"p"`
}

var (
	echoMethod   = rpc.NewMethod[echoParams, echoParams]("echo")
	rawMethod    = rpc.NewMethod[json.RawMessage, json.RawMessage]("raw")
	failMethod   = rpc.NewMethod[json.RawMessage, struct{}]("fail")
	plainMethod  = rpc.NewMethod[echoParams, struct{}]("plain")
	panicMethod  = rpc.NewMethod[any, struct{}]("panic")
	noneMethod   = rpc.NewMethod[rpc.NoParams, string]("none")
	noteNotif    = rpc.NewNotification[echoParams]("note")
	anyNoteNotif = rpc.NewNotification[any]("anynote")
)

// serverRegistry serves a method of every kind: typed params of each JSON
// type, raw params, errors with data, plain errors, panics, no params, and
// the sdkproto server methods, whose payload types decode leniently.
func serverRegistry(unknown bool) *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echoMethod, func(_ context.Context, p echoParams) (echoParams, error) { return p, nil })
	rpc.Handle(reg, rawMethod, func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	rpc.Handle(reg, failMethod, func(_ context.Context, p json.RawMessage) (struct{}, error) {
		return struct{}{}, &rpc.Error{Code: 7, Message: "failed", Data: p}
	})
	rpc.Handle(reg, plainMethod, func(_ context.Context, p echoParams) (struct{}, error) {
		return struct{}{}, errors.New(p.Text)
	})
	rpc.Handle(reg, panicMethod, func(_ context.Context, p any) (struct{}, error) { panic(p) })
	rpc.Handle(reg, noneMethod, func(context.Context, rpc.NoParams) (string, error) { return "none", nil })
	rpc.Handle(reg, sdkproto.Initialize, func(_ context.Context, p sdkproto.InitializeParams) (sdkproto.InitializeResult, error) {
		if err := p.Validate(); err != nil {
			return sdkproto.InitializeResult{}, err
		}
		return sdkproto.DefaultInitializeResult(), nil
	})
	rpc.Handle(reg, sdkproto.SessionPrompt, func(_ context.Context, p sdkproto.SessionPromptParams) (sdkproto.SessionPromptResult, error) {
		return sdkproto.SessionPromptResult{MessageID: p.SessionID + sdkproto.FinalText(p.ContentBlocks)}, nil
	})
	rpc.HandleNotification(reg, noteNotif, func(context.Context, echoParams) {})
	rpc.HandleNotification(reg, anyNoteNotif, func(context.Context, any) {})
	if unknown {
		reg.HandleUnknown(func(_ context.Context, method string, params json.RawMessage) (any, error) {
			return map[string]any{"method": method, "params": params}, nil
		})
		reg.HandleUnknownNotification(func(context.Context, string, json.RawMessage) {})
	}
	return reg
}

const probe = `{"jsonrpc":"2.0","id":"probe-7f3a","method":"echo","params":{"text":"still alive"}}`

// FuzzDispatch feeds arbitrary lines, then a good request, to a Conn
// serving a registry. Every line that the wire rules make a request must
// get exactly one well-formed response whose id is the request's raw id
// byte for byte; every other line gets nothing; and the good request that
// follows is still answered, with its result.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a","l":[1,"b",null],"m":{"x":{}}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"fail","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":2.50,"method":"panic","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"plain","params":{"text":"boom"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"none","params":7}`,
		`{"jsonrpc":"2.0","id":4,"method":"nosuch"}`,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"cwd":"/","provider":"p","model":"m","maxTokens":1.5}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"x"},7]}}`,
		`{"jsonrpc":"2.0","method":"note","params":{"text":5}}`,
		`{"id":"\ud800","method":"echo"}` + "\n" + `{"id":1e999,"method":"raw","params":1e999}`,
		// members after params (see wire.Scanner.ParamsToEnd)
		`{"jsonrpc":"2.0","method":"echo","params":{"text":"a"},"id":9}`,
		`{"jsonrpc":"2.0","id":10,"method":"echo","params":{"text":"a"},"params":[1,]}`,
		`{"jsonrpc":"2.0","id":11,"method":"note","params":{"text":"a"},"method":"echo"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, unknown bool) {
		complete, tail := splitLines(data)
		complete = append(complete, tail)
		var want []string
		for _, l := range complete {
			if c := classify(l); c.class == classRequest {
				want = append(want, string(c.id.Raw))
			}
		}
		want = append(want, `"probe-7f3a"`)

		checkAnswers(t, data, &rpc.Options{Handler: serverRegistry(unknown), MaxConcurrentRequests: 2}, want)
	})
}

// checkAnswers serves data, then the probe, on a Conn made with opts,
// and fails t unless every frame written is a well-formed response, the
// ids answered are want (in any order; want includes the probe's), and
// the probe is answered with its result.
func checkAnswers(t *testing.T, data []byte, opts *rpc.Options, want []string) {
	t.Helper()
	w := &rpctest.Recorder{}
	in := append(append(append([]byte(nil), data...), '\n'), probe+"\n"...)
	c := rpc.NewConn(bytes.NewReader(in), w, opts)
	c.Start()
	waitOrFail(t, c)

	var got []string
	probed := false
	for _, fr := range w.Frames(t) {
		id, isErr, problem := checkResponseFrame(fr)
		if problem != "" {
			t.Fatalf("frame %q: %s", fr, problem)
		}
		got = append(got, string(id))
		if string(id) == `"probe-7f3a"` && !isErr && bytes.Contains(fr, []byte(`"result":{"text":"still alive"`)) {
			probed = true
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("answered ids\n%q\nwant\n%q", got, want)
	}
	if !probed {
		t.Fatalf("the good request after the input was not answered with its result: %q", w.Frames(t))
	}
}

// waitOrFail waits for the Conn to finish reading and answering, failing
// the test (a hang) after 10 seconds.
func waitOrFail(t *testing.T, c *rpc.Conn) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if !errors.Is(err, rpc.ErrInputEnded) {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(waitBound):
		c.Close()
		t.Fatal("the Conn did not finish within 10s")
	}
}
