package sdkproto_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/sdkproto"
)

// TestClientVectors runs the client-side expectations of the wire vectors
// through a Client and a scripted peer: client-flows (delivered, run
// outcomes), notifications (delivery, lineage, rootRunValidation),
// session-events and content-blocks (runValidation, finalResponseText via
// Run), errors and requests (settle and client outcomes). It fails when
// fewer vectors ran than the files hold for revisions all/newer.
func TestClientVectors(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]int{}
	count := func(file string) {
		mu.Lock()
		ran[file]++
		mu.Unlock()
	}
	runners := map[string]func(t *testing.T, v vectortest.Vector) bool{
		"client-flows.ndjson":   clFlowVector,
		"notifications.ndjson":  clNotificationVector,
		"session-events.ndjson": clRunValidationVector,
		"content-blocks.ndjson": clRunValidationVector,
		"errors.ndjson":         clSettleVector,
		"requests.ndjson":       clSettleVector,
	}
	// The vectors of each file with client-side expectations.
	want := map[string]int{"client-flows.ndjson": 23, "notifications.ndjson": 30, "session-events.ndjson": 56,
		"content-blocks.ndjson": 13, "errors.ndjson": 23, "requests.ndjson": 11}
	t.Run("files", func(t *testing.T) {
		for file, run := range runners {
			vs, err := vectortest.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if !v.Targets() {
					continue
				}
				t.Run(strings.TrimSuffix(file, ".ndjson")+"/"+v.Name, func(t *testing.T) {
					t.Parallel()
					if run(t, v) {
						count(file)
					}
				})
			}
		}
	})
	for file, n := range want {
		if ran[file] < n {
			t.Errorf("%s: %d vectors ran, want %d", file, ran[file], n)
		}
	}
	t.Logf("client vectors run: %v", ran)
}

// clMarker is a notification that no session tree accepts; reading it from
// a catch-all subscription proves every earlier frame was dispatched.
const clMarker = `{"jsonrpc":"2.0","method":"test.marker","params":{}}`

// clSync writes the marker and reads all until it; it returns the
// notifications read before it.
func clSync(t *testing.T, p *clPeer, all *sdkproto.Subscription) []sdkproto.Notification {
	t.Helper()
	p.send(clMarker)
	var got []sdkproto.Notification
	for {
		n, err := all.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n.Method == "test.marker" {
			return got
		}
		got = append(got, n)
	}
}

func clFlowVector(t *testing.T, v vectortest.Vector) bool {
	c, p := newClPeer(t, nil)
	all := c.Subscribe(nil)
	if root := v.GivenString("subscribeSessionTree"); root != "" {
		var pre []json.RawMessage
		_ = json.Unmarshal(v.Given["preFrames"], &pre)
		p.sendRaw(pre...)
		clSync(t, p, all)
		tree := c.SubscribeSessionTree(root)
		p.sendRaw(v.Frames...)
		seen := clSync(t, p, all)
		if len(seen) != len(v.Frames) {
			t.Fatalf("%d of %d frames dispatched", len(seen), len(v.Frames))
		}
		delivered := make([]bool, len(seen))
		for {
			n, ok := tree.TryNext()
			if !ok {
				break
			}
			delivered[n.Index-seen[0].Index] = true
		}
		got, _ := json.Marshal(delivered)
		if err := vectortest.Match(v.Expect["delivered"], got); err != nil {
			t.Errorf("delivered: %v", err)
		}
		return true
	}
	var run struct{ SessionID, MessageID string }
	_ = json.Unmarshal(v.Given["run"], &run)
	var first uint64
	var collected []int // written by RunFunc's goroutine until it returns
	runFunc := clGo(func() (*sdkproto.RunResult, error) {
		return c.RunFunc(t.Context(), run.SessionID, func(n sdkproto.Notification) error {
			if first == 0 {
				// Index of frame 0: the frames are the only notifications.
				first = 1
			}
			collected = append(collected, int(n.Index-first))
			return nil
		}, sdkproto.TextBlock("hi"))
	})
	r := p.expect("session/prompt")
	p.result(r, fmt.Sprintf(`{"messageId":%q}`, run.MessageID))
	p.sendRaw(v.Frames...)
	res, err := runFunc()
	var exp struct {
		Collected     []int           `json:"collected"`
		Events        []string        `json:"events"`
		FinalResponse string          `json:"finalResponse"`
		StopAt        int             `json:"stopAt"`
		Error         json.RawMessage `json:"error"`
		Python        struct {
			FinishReason json.RawMessage `json:"finishReason"`
		} `json:"python"`
	}
	raw, _ := json.Marshal(v.Expect)
	_ = json.Unmarshal(raw, &exp)
	if len(exp.Error) > 0 && string(exp.Error) != "null" {
		var e struct{ Class, Message, MessagePrefix string }
		_ = json.Unmarshal(exp.Error, &e)
		var pe *sdkproto.ProtocolError
		if !errors.As(err, &pe) || (e.Message != "" && pe.Message != e.Message) || !strings.HasPrefix(pe.Message, e.MessagePrefix) {
			t.Fatalf("error %v, want %s", err, exp.Error)
		}
		for _, i := range collected {
			if i >= exp.StopAt {
				t.Errorf("frame %d collected after the failing frame %d", i, exp.StopAt)
			}
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range res.Events {
		types = append(types, string(e.Type))
	}
	if fmt.Sprint(collected) != fmt.Sprint(exp.Collected) || fmt.Sprint(types) != fmt.Sprint(exp.Events) ||
		res.FinalResponse != exp.FinalResponse || collected[len(collected)-1] != exp.StopAt {
		t.Errorf("collected %v events %v final %q; want %v %v %q stop at %d",
			collected, types, res.FinalResponse, exp.Collected, exp.Events, exp.FinalResponse, exp.StopAt)
	}
	if f := exp.Python.FinishReason; f != nil {
		want := ""
		_ = json.Unmarshal(f, &want)
		if want == "SdkProtocolError" {
			want = "" // Python raises; Run reports no reason, as TypeScript has none
		}
		if string(res.FinishReason) != want {
			t.Errorf("finish reason %q, want %q", res.FinishReason, want)
		}
	}
	return true
}

func clNotificationVector(t *testing.T, v vectortest.Vector) bool {
	c, p := newClPeer(t, nil)
	all := c.Subscribe(nil)
	p.sendRaw(v.Frame)
	seen := clSync(t, p, all)
	if len(seen) != 1 {
		t.Fatalf("%d notifications delivered, want 1", len(seen))
	}
	method, _ := expectString(v, "method")
	if seen[0].Method != method {
		t.Errorf("method %q, want %q", seen[0].Method, method)
	}
	if err := vectortest.Match(v.Expect["params"], seen[0].Params); err != nil {
		t.Errorf("params: %v", err)
	}
	if raw, ok := v.Expect["lineage"]; ok {
		var l struct {
			Recorded      bool
			Child, Parent string
		}
		_ = json.Unmarshal(raw, &l)
		started, _ := seen[0].SubagentStarted()
		child := started.ChildSessionID
		if l.Recorded {
			child = l.Child
		}
		parent, ok := c.ParentOf(child)
		if ok != l.Recorded || parent != l.Parent {
			t.Errorf("lineage of %q: %q, %v; want %s", child, parent, ok, raw)
		}
	}
	if _, ok := v.Expect["rootRunValidation"]; ok {
		sid, _ := seen[0].SessionID()
		clRunCheck(t, v, "rootRunValidation", sid, v.Frame)
	}
	return true
}

// clRunValidationVector wraps the frame as [receipt, frame, idle] for the
// root session and runs it (vectors README, "Running the vectors").
func clRunValidationVector(t *testing.T, v vectortest.Vector) bool {
	if _, ok := v.Expect["runValidation"]; !ok || v.Direction != "server->client" {
		return false
	}
	clRunCheck(t, v, "runValidation", v.GivenString("rootSession"), v.Frame)
	return true
}

func clRunCheck(t *testing.T, v vectortest.Vector, key, root string, frame json.RawMessage) {
	c, p := newClPeer(t, nil)
	run := clGo(func() (*sdkproto.RunResult, error) { return c.Run(t.Context(), root, sdkproto.TextBlock("hi")) })
	r := p.expect("session/prompt")
	p.result(r, `{"messageId":"m-1"}`)
	p.send("%s", clReceipt(root, "m-1", 0))
	p.sendRaw(frame)
	p.send("%s", clStatus(root, "idle"))
	res, err := run()
	want, _ := expectString(v, key)
	if want == "ok" {
		if err != nil {
			t.Fatalf("%s: %v, want ok", key, err)
		}
		if text, ok := expectString(v, "finalResponseText"); ok && res.FinalResponse != text {
			t.Errorf("finalResponseText %q, want %q", res.FinalResponse, text)
		}
		return
	}
	var pe *sdkproto.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %v, want a *ProtocolError", key, err)
	}
	if prefix, ok := expectString(v, "errorPrefix"); ok && !strings.HasPrefix(pe.Message, prefix) {
		t.Errorf("message %q, want prefix %q", pe.Message, prefix)
	}
	if msg, ok := expectString(v, "errorMessage"); ok && pe.Message != msg {
		t.Errorf("message %q, want %q", pe.Message, msg)
	}
}

// clSettleVector answers one request of the client with the vector's
// response frame, its id replaced by the request's when it names the
// pending id, and checks the typed outcome.
func clSettleVector(t *testing.T, v vectortest.Vector) bool {
	var pending []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if raw, ok := v.Given["pending"]; ok {
		_ = json.Unmarshal(raw, &pending)
	} else if raw, ok := v.Expect["pending"]; ok {
		pending = make([]struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}, 1)
		_ = json.Unmarshal(raw, &pending[0])
	}
	aborted := v.Given["aborted"] != nil
	if len(pending) == 0 && !aborted {
		return false
	}
	method := "initialize"
	var pendingID json.RawMessage
	if len(pending) > 0 {
		method, pendingID = pending[0].Method, pending[0].ID
	}
	var frame map[string]json.RawMessage
	if err := json.Unmarshal(v.Frame, &frame); err != nil {
		t.Fatal(err)
	}
	settle, hasSettle := v.Expect["settle"]
	unmatched := (hasSettle && string(settle) == "null") || aborted
	timeout := time.Duration(0)
	if unmatched {
		timeout = 150 * time.Millisecond
	}
	c, p := newClPeer(t, &sdkproto.ClientOptions{RequestTimeout: timeout, ShutdownTimeout: 50 * time.Millisecond})
	p.manualShutdown.Store(method == "shutdown")
	call := clGo(func() (struct{}, error) {
		ctx := t.Context()
		var err error
		switch method {
		case "initialize":
			_, err = c.Initialize(ctx, clInitParams())
		case "session/prompt":
			_, err = c.Prompt(ctx, "main", sdkproto.TextBlock("hi"))
		case "shutdown":
			err = c.Shutdown(ctx)
		}
		return struct{}{}, err
	})
	r := p.expect(method)
	var err error
	if aborted {
		// The request is abandoned (it timed out) before its answer comes.
		_, err = call()
	}
	if string(frame["id"]) == string(pendingID) || aborted {
		frame["id"] = r.ID
	}
	b, _ := json.Marshal(frame)
	p.sendRaw(b)
	if v.Expect["then"] != nil {
		p.sendRaw(b)
	}
	if !aborted {
		_, err = call()
	}
	if unmatched {
		var te *sdkproto.TimeoutError
		if !errors.As(err, &te) {
			t.Errorf("got %v, want no settlement (a timeout)", err)
		}
		return true
	}
	var s struct {
		Reject *struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"reject"`
	}
	_ = json.Unmarshal(settle, &s)
	var client struct{ Outcome, Message string }
	_ = json.Unmarshal(v.Expect["client"], &client)
	switch {
	case s.Reject != nil:
		var re *sdkproto.ResponseError
		if !errors.As(err, &re) || re.Message != s.Reject.Message {
			t.Fatalf("got %v, want a *ResponseError %q", err, s.Reject.Message)
		}
		code := string(s.Reject.Code)
		switch {
		case code == "null" || code == "1.5":
			// 1.5: a Go integer code cannot hold it; it counts as missing.
			if !re.CodeMissing {
				t.Errorf("code %d, want missing", re.Code)
			}
		case re.CodeMissing || fmt.Sprint(re.Code) != code:
			t.Errorf("code %d (missing %v), want %s", re.Code, re.CodeMissing, code)
		}
		gotData := json.RawMessage(re.Data)
		if err := vectortest.Match(s.Reject.Data, gotData); err != nil {
			t.Errorf("data: %v", err)
		}
	case client.Outcome == "SdkProtocolError":
		var pe *sdkproto.ProtocolError
		if !errors.As(err, &pe) || pe.Message != client.Message {
			t.Errorf("got %v, want protocol error %q", err, client.Message)
		}
	default:
		if err != nil {
			t.Errorf("got %v, want success", err)
		}
	}
	return true
}
