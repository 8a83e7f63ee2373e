package sdkproto_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

type respAsk struct {
	Question string `json:"question"`
}

type respReply struct {
	Answer string `json:"answer"`
}

var respMethod = rpc.NewMethod[respAsk, respReply]("client/ask")

func respResponder(answer string) sdkproto.Responder {
	return sdkproto.Respond(respMethod, func(_ context.Context, p respAsk) (respReply, error) {
		return respReply{Answer: answer + " to " + p.Question}, nil
	})
}

// AttachConn installs the responders of its options on the caller's
// registry, beside the caller's own handlers, and answers with them.
func TestRespondersAttachConn(t *testing.T) {
	t.Parallel()
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	asked := make(chan respAsk, 1)
	served := make(chan error, 1)
	go func() {
		served <- scripted.Serve(context.Background(), scripted.Script{Turns: []*scripted.Turn{
			scripted.NewTurn().Ask("client/ask", respAsk{Question: "name"}).Text("asked"),
		}}, toRuntime, fromRuntime)
		fromRuntime.Close()
		toRuntime.Close()
	}()
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, string]("client/ping"), func(context.Context, rpc.NoParams) (string, error) { return "pong", nil })
	conn := rpc.NewConn(clientIn, clientOut, &rpc.Options{Handler: reg})
	c, err := sdkproto.AttachConn(conn, reg, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{
		sdkproto.Respond(respMethod, func(_ context.Context, p respAsk) (respReply, error) {
			asked <- p
			return respReply{Answer: "linerpc"}, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		clientOut.Close()
		clientIn.Close()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	if _, err := c.Initialize(t.Context(), sdktest.InitializeParams()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("hi"))
	if err != nil || res.FinalResponse != "asked" {
		t.Fatalf("Run: %v %+v", err, res)
	}
	if p := <-asked; p.Question != "name" {
		t.Errorf("the responder was asked %+v", p)
	}
	if !reg.Handles("client/ask") || !reg.Handles("client/ping") {
		t.Error("the registry lost a handler")
	}
}

// Two responders for one method are refused: AttachConn returns an error
// (as for a method its registry handles already) and changes nothing;
// NewClient panics, as rpc.Handle does.
func TestRespondersConflicts(t *testing.T) {
	t.Parallel()
	twice := &sdkproto.ClientOptions{Responders: []sdkproto.Responder{respResponder("a"), respResponder("b")}}
	reg := rpc.NewRegistry()
	_, err := sdkproto.AttachConn(rpc.NewConn(strings.NewReader(""), io.Discard, &rpc.Options{Handler: reg}), reg, twice)
	if err == nil || err.Error() != "sdkproto: two Responders for client/ask" {
		t.Errorf("AttachConn with two responders for one method: %v", err)
	}
	rpc.Handle(reg, respMethod, func(context.Context, respAsk) (respReply, error) { return respReply{}, nil })
	_, err = sdkproto.AttachConn(rpc.NewConn(strings.NewReader(""), io.Discard, &rpc.Options{Handler: reg}), reg,
		&sdkproto.ClientOptions{Responders: []sdkproto.Responder{respResponder("a")}})
	if err == nil || err.Error() != "sdkproto: AttachConn: the registry already handles client/ask, which a Responder answers" {
		t.Errorf("AttachConn with a responder for a handled method: %v", err)
	}
	if reg.HandlesUnknownNotifications() {
		t.Error("a refused AttachConn changed the registry")
	}

	r, w := io.Pipe()
	defer r.Close()
	defer w.Close()
	defer func() {
		if p := recover(); p == nil || p != "sdkproto: two Responders for client/ask" {
			t.Errorf("NewClient with two responders for one method: recovered %v", p)
		}
	}()
	sdkproto.NewClient(r, w, twice)
}

// A responder names its method; the zero Responder answers nothing and is
// skipped.
func TestResponderMethod(t *testing.T) {
	t.Parallel()
	if got := respResponder("a").Method(); got != "client/ask" {
		t.Errorf("Method() = %q", got)
	}
	if got := (sdkproto.Responder{}).Method(); got != "" {
		t.Errorf("zero Method() = %q", got)
	}
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Ask("client/ask", nil).Text("ok")}})
	c := rt.ClientWith(&sdkproto.ClientOptions{Responders: []sdkproto.Responder{{}}})
	if _, err := c.Run(t.Context(), "main", sdkproto.TextBlock("hi")); err != nil {
		t.Fatal(err)
	}
	if a := rt.Answers("client/ask"); len(a) != 1 || a[0].Error == nil || a[0].Error.Code != rpc.CodeMethodNotFound {
		t.Errorf("answers %+v", a)
	}
}
