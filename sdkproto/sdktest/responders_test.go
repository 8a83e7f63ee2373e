package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// An approval flow of the kind the protocol leaves room for: the runtime
// asks the client before it runs a tool.
type approvalParams struct {
	SessionID string `json:"sessionId"`
	Tool      string `json:"tool"`
}

type approvalResult struct {
	Approved bool `json:"approved"`
}

var approve = rpc.NewMethod[approvalParams, approvalResult]("approval/request")

// askTurn asks for approval (answered by the responder), asks what the
// client has no responder for, sends params the responder cannot decode,
// has the responder fail twice, and then answers.
func askTurn() *scripted.Turn {
	return scripted.NewTurn().
		Ask("approval/request", approvalParams{SessionID: "main", Tool: "bash"}).
		Ask("elicitation/create", map[string]string{"message": "name?"}).
		Ask("approval/request", map[string]int{"tool": 5}).
		Ask("approval/request", approvalParams{SessionID: "main", Tool: "fail"}).
		Ask("approval/request", approvalParams{SessionID: "main", Tool: "coded"}).
		Text("done")
}

// approver answers approval/request, recording what it was asked.
type approver struct {
	mu    sync.Mutex
	asked []approvalParams
}

func (a *approver) responder() sdkproto.Responder {
	return sdkproto.Respond(approve, func(ctx context.Context, p approvalParams) (approvalResult, error) {
		a.mu.Lock()
		a.asked = append(a.asked, p)
		a.mu.Unlock()
		switch p.Tool {
		case "fail":
			return approvalResult{}, errors.New("no approver at the desk")
		case "coded":
			return approvalResult{}, &rpc.Error{Code: 4001, Message: "denied by policy", Data: json.RawMessage(`{"policy":"strict"}`)}
		}
		return approvalResult{Approved: p.Tool == "bash"}, nil
	})
}

// checkAnswers checks the client's answers to askTurn.
func checkAnswers(t *testing.T, rt *sdktest.Runtime) {
	t.Helper()
	approvals := rt.Answers("approval/request")
	if len(approvals) != 4 {
		t.Fatalf("%d approval requests answered, want 4: %+v", len(approvals), approvals)
	}
	if a := approvals[0]; a.Error != nil || string(a.Result) != `{"approved":true}` {
		t.Errorf("approval: result %s, error %v", a.Result, a.Error)
	}
	for i, want := range []struct {
		code rpc.Code
		msg  string
		data string
	}{
		{rpc.CodeInvalidParams, "", ""},
		{rpc.CodeInternalError, "no approver at the desk", ""},
		{4001, "denied by policy", `{"policy":"strict"}`},
	} {
		a := approvals[i+1]
		if a.Error == nil || a.Error.Code != want.code || (want.msg != "" && a.Error.Message != want.msg) || string(a.Error.Data) != want.data {
			t.Errorf("approval %d: error %+v, want code %d %q", i+1, a.Error, want.code, want.msg)
		}
	}
	unknown := rt.Answers("elicitation/create")
	if len(unknown) != 1 || unknown[0].Error == nil || unknown[0].Error.Code != rpc.CodeMethodNotFound ||
		unknown[0].Error.Message != "method not found: elicitation/create" || unknown[0].Result != nil {
		t.Errorf("unknown method answered %+v", unknown)
	}
}

// A Client made by NewClient answers the runtime's requests with its
// responders, and the others as it always did.
func TestRespondersNewClient(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{askTurn()}})
	var a approver
	c := rt.ClientWith(&sdkproto.ClientOptions{Responders: []sdkproto.Responder{a.responder()}})
	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("go"))
	if err != nil || res.FinalResponse != "done" {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	checkAnswers(t, rt)
	rt.Check(t) // the requests the script asked are no finding
	if len(a.asked) != 3 || a.asked[0] != (approvalParams{SessionID: "main", Tool: "bash"}) {
		t.Errorf("the responder was asked %+v", a.asked)
	}
}

// So does a Client made by Launch, here of a runtime's process.
func TestRespondersLaunch(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{askTurn()}})
	var a approver
	c := launch(t, rt, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{a.responder()}})
	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("go"))
	if err != nil || res.FinalResponse != "done" {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	checkAnswers(t, rt)
}

// Without a responder for it, a request of the runtime's gets the answer
// of the wire vector catalogue-ts-client-has-no-request-handler, byte for
// byte but the id, from NewClient and Launch alike, with or without
// responders for other methods.
func TestUnknownRequestAnswerIsTheVectors(t *testing.T) {
	t.Parallel()
	vs, err := vectortest.Load("errors.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	var request map[string]json.RawMessage
	var reply string
	for _, v := range vs {
		if v.Name == "catalogue-ts-client-has-no-request-handler" {
			json.Unmarshal(v.Frame, &request)
			reply = string(v.Expect["reply"])
		}
	}
	if request == nil || reply == "" {
		t.Fatal("errors.ndjson has no vector catalogue-ts-client-has-no-request-handler")
	}
	var method string
	json.Unmarshal(request["method"], &method)
	other := sdkproto.Respond(rpc.NewMethod[approvalParams, approvalResult]("other/request"),
		func(context.Context, approvalParams) (approvalResult, error) { return approvalResult{}, nil })
	for _, tc := range []struct {
		name   string
		launch bool
		opts   *sdkproto.ClientOptions
	}{
		{"NewClient", false, nil},
		{"NewClient with a responder", false, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{other}}},
		{"Launch", true, nil},
		{"Launch with a responder", true, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{other}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
				scripted.NewTurn().Ask(method, request["params"]).Text("asked"),
			}})
			var c *sdkproto.Client
			if tc.launch {
				c = launch(t, rt, tc.opts)
			} else {
				c = rt.ClientWith(tc.opts)
			}
			if _, err := c.Run(t.Context(), "main", sdkproto.TextBlock("ask")); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil { // the frames of a process are complete once it exited
				t.Fatal(err)
			}
			answers := rt.Answers(method)
			if len(answers) != 1 || string(answers[0].Params) != string(request["params"]) {
				t.Fatalf("answers %+v", answers)
			}
			want := strings.Replace(reply, `"id":`+string(request["id"]), `"id":`+string(answers[0].ID), 1)
			if got := answerFrame(rt, answers[0].ID); got != want {
				t.Errorf("answer %s\nwant   %s", got, want)
			}
		})
	}
}

// answerFrame returns the client's response to the runtime's request id.
func answerFrame(rt *sdktest.Runtime, id json.RawMessage) string {
	for _, f := range rt.Frames() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if f.Dir == sdktest.ClientToRuntime && json.Unmarshal(f.Line, &m) == nil && m.Method == nil && string(m.ID) == string(id) {
			return string(f.Line)
		}
	}
	return "none"
}

// Launch refuses two responders for one method before it starts anything.
func TestRespondersTwiceForOneMethod(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{})
	var a approver
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "sdkproto: two Responders for approval/request") {
			t.Errorf("Launch with two responders for one method: recovered %v", r)
		}
	}()
	sdkproto.Launch(rt.Command(), &sdkproto.ClientOptions{Responders: []sdkproto.Responder{a.responder(), a.responder()}})
}
