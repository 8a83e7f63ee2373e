package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
)

// runtimeCatalogue lists the errors.ndjson vectors whose replies come from
// the DSH runtime's own logic (validation, handshake state, teardown), not
// from the transport: the sdkproto server runs them. The transport-level
// ones (unknown method, peer without request handler) run here.
var runtimeCatalogue = map[string]bool{
	"catalogue-maxTokens":           true,
	"catalogue-no-adapter":          true,
	"catalogue-shutting-down":       true,
	"catalogue-agent-disposed":      true,
	"catalogue-not-initialized":     true,
	"catalogue-reasoningEffort":     true,
	"catalogue-no-attachment-store": true,
	"catalogue-teardown-aggregate":  true,
}

func TestErrorVectors(t *testing.T) {
	ran := 0
	for _, v := range loadVectors(t, "errors.ndjson") {
		if !v.Targets() || runtimeCatalogue[v.Name] {
			continue
		}
		ran++
		t.Run(v.Name, func(t *testing.T) {
			if v.Given["pending"] != nil || v.Given["aborted"] != nil {
				runSettleVector(t, v)
			} else {
				runFramingVector(t, v)
			}
		})
	}
	if ran != 33-len(runtimeCatalogue) {
		t.Fatalf("ran %d error vectors, want %d", ran, 33-len(runtimeCatalogue))
	}
}

// frameWatcher is a writer that hands each written frame to a channel.
type frameWatcher struct{ frames chan []byte }

func (w *frameWatcher) Write(p []byte) (int, error) {
	w.frames <- append([]byte(nil), p...)
	return len(p), nil
}

type callOutcome struct {
	result json.RawMessage
	err    error
}

// runSettleVector registers the vector's pending (and aborted) requests as
// real calls of a Conn, rewrites the response frame's id to the id of the
// matching call (the vectors name ids of their own; the Conn allocates
// integers), feeds it, and checks how the call settles.
func runSettleVector(t *testing.T, v vectortest.Vector) {
	type idSpec struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var pending []idSpec
	var aborted []json.RawMessage
	if raw := v.Given["pending"]; raw != nil {
		mustUnmarshal(t, raw, &pending)
	}
	if raw := v.Given["aborted"]; raw != nil {
		mustUnmarshal(t, raw, &aborted)
	}

	drops := make(chan rpc.Drop, 4)
	in, feed := io.Pipe()
	out := &frameWatcher{frames: make(chan []byte, 4)}
	c := rpc.NewConn(in, out, &rpc.Options{OnDrop: func(d rpc.Drop) { drops <- d }})
	c.Start()
	defer func() {
		c.Close()
		feed.Close()
		c.Wait()
	}()

	// sent maps a vector id (its JSON text) to the id the Conn wrote.
	sent := map[string]json.RawMessage{}
	outcomes := map[string]chan callOutcome{}
	startCall := func(vectorID json.RawMessage, method string, ctx context.Context) {
		done := make(chan callOutcome, 1)
		go func() {
			var res json.RawMessage
			err := c.Call(ctx, method, struct{}{}, &res)
			done <- callOutcome{res, err}
		}()
		var req struct{ ID json.RawMessage }
		mustUnmarshal(t, <-out.frames, &req)
		sent[string(vectorID)] = req.ID
		outcomes[string(vectorID)] = done
	}
	for _, p := range pending {
		startCall(p.ID, p.Method, context.Background())
	}
	for _, id := range aborted {
		ctx, cancel := context.WithCancel(context.Background())
		startCall(id, "initialize", ctx)
		cancel()
		if o := <-outcomes[string(id)]; !errors.Is(o.err, context.Canceled) {
			t.Fatalf("aborted call ended with %v, want context.Canceled", o.err)
		}
	}

	frame := rewriteID(t, v.Frame, sent)
	feedFrame := func() {
		if _, err := feed.Write(append(frame, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	feedFrame()

	var settle map[string]json.RawMessage
	if raw := v.Expect["settle"]; raw != nil && string(raw) != "null" {
		mustUnmarshal(t, raw, &settle)
	}
	if settle == nil {
		// Nothing may settle: the frame is dropped as unmatched, and every
		// pending call is still waiting.
		expectDrop(t, drops, rpc.DropUnmatchedResponse)
		for id, done := range outcomes {
			select {
			case o := <-done:
				if isAborted(aborted, id) {
					continue
				}
				t.Fatalf("call %s settled with %+v, want still pending", id, o)
			default:
			}
		}
		return
	}
	if len(pending) != 1 {
		t.Fatalf("settle vectors have one pending call, got %d", len(pending))
	}
	o := <-outcomes[string(pending[0].ID)]
	if resolve, ok := settle["resolve"]; ok {
		if o.err != nil {
			t.Fatalf("call failed with %v, want it resolved with %s", o.err, resolve)
		}
		var got json.RawMessage
		if len(o.result) > 0 {
			got = o.result
		}
		if err := vectortest.Match(resolve, got); err != nil {
			t.Fatalf("result: %v", err)
		}
	} else {
		checkReject(t, v, settle["reject"], o.err)
	}
	if v.Expect["then"] != nil {
		feedFrame() // a duplicate response: dropped, nothing settles twice
		expectDrop(t, drops, rpc.DropUnmatchedResponse)
	}
}

func checkReject(t *testing.T, v vectortest.Vector, raw json.RawMessage, err error) {
	t.Helper()
	var want struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	mustUnmarshal(t, raw, &want)
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("call ended with %v, want an *rpc.Error", err)
	}
	if e.Message != want.Message {
		t.Fatalf("message %q, want %q", e.Message, want.Message)
	}
	var code json.Number
	if string(want.Code) != "null" {
		mustUnmarshal(t, want.Code, &code)
	}
	wantCode, intErr := code.Int64()
	switch {
	case code == "" || intErr != nil:
		// Absent upstream, or a fractional code that a Go integer cannot
		// hold: the vector's strict verdict is to treat it as absent.
		if !e.CodeMissing {
			t.Fatalf("code %d, want missing", e.Code)
		}
	case e.CodeMissing || int64(e.Code) != wantCode:
		t.Fatalf("code %d (missing %v), want %d", e.Code, e.CodeMissing, wantCode)
	}
	var data json.RawMessage
	if e.Data != nil {
		data = json.RawMessage(e.Data)
	}
	if err := vectortest.Match(want.Data, data); err != nil {
		t.Fatalf("data: %v", err)
	}
}

// rewriteID replaces the frame's id by the id the Conn sent for the same
// vector id, when the frame's id is one of them (same JSON type and value).
func rewriteID(t *testing.T, frame json.RawMessage, sent map[string]json.RawMessage) []byte {
	t.Helper()
	var members map[string]json.RawMessage
	mustUnmarshal(t, frame, &members)
	if id, ok := members["id"]; ok {
		if ours, ok := sent[string(id)]; ok {
			members["id"] = ours
		}
	}
	b, err := json.Marshal(members)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

func isAborted(aborted []json.RawMessage, id string) bool {
	for _, a := range aborted {
		if string(a) == id {
			return true
		}
	}
	return false
}

func expectDrop(t *testing.T, drops <-chan rpc.Drop, reason rpc.DropReason) {
	t.Helper()
	if d := <-drops; d.Reason != reason {
		t.Fatalf("dropped for %v, want %v", d.Reason, reason)
	}
}
