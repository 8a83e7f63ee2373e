package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto/replay"
	"github.com/linerpc/linerpc/sdkproto/replay/replaytest"
)

// served is a Serve running for a test against a scripted peer.
type served struct {
	peer *rpctest.Peer
	done chan struct{}
	err  error
}

// servePeer serves rec to a scripted peer (rpctest.Peer) that the test
// plays frame by frame. When the test ends, the streams close and Serve
// must have returned, leaving no goroutine behind.
func servePeer(t *testing.T, rec *replay.Recording) *served {
	t.Helper()
	rpctest.CheckNoLeak(t)
	s := &served{peer: rpctest.NewPeer(t), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.err = rec.Serve(ctx, s.peer.ConnIn, s.peer.ConnOut)
		s.peer.ConnOut.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		cancel()
		s.peer.Close()
		s.wait(t)
	})
	return s
}

// wait returns what Serve returned, failing the test after a minute.
func (s *served) wait(t testing.TB) error {
	t.Helper()
	ctx := bound(t)
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		t.Fatalf("Serve did not return within %v", replaytest.MaxWait)
		return nil
	}
}

// withID returns a frame with its id member replaced.
func withID(t testing.TB, frame, id string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(frame), &m); err != nil {
		t.Fatal(err)
	}
	old := `"id":` + string(m["id"]) + `,`
	if !strings.Contains(frame, old) {
		t.Fatalf("no %s in %s", old, frame)
	}
	return strings.Replace(frame, old, `"id":`+id+`,`, 1)
}

// TestServePipelinedClientGetsRecordedOrder: a client that writes the
// frames of errors.ndjson at once, as the recorded client did, gets the
// recorded frames byte for byte and in the recorded order (the unknown
// method's error first), and Serve ends after the shutdown reply.
func TestServePipelinedClientGetsRecordedOrder(t *testing.T) {
	es := entries(t, "errors")
	s := servePeer(t, load(t, "errors"))
	var batch strings.Builder
	for _, e := range es[:10] {
		batch.WriteString(e.Frame + "\n")
	}
	s.peer.SendBytes([]byte(batch.String()))
	for _, e := range es[10:19] {
		if got := s.peer.Next(); got != e.Frame {
			t.Fatalf("got %s\nwant %s", got, e.Frame)
		}
	}
	s.peer.Send(es[19].Frame)
	if got := s.peer.Next(); got != es[20].Frame {
		t.Errorf("got %s\nwant %s", got, es[20].Frame)
	}
	if err := s.wait(t); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeSequentialClient: a client that awaits each reply before its
// next request, with ids of its own, gets each recorded reply with its
// id, byte for byte; blank lines are no frames.
func TestServeSequentialClient(t *testing.T) {
	es := entries(t, "errors")
	s := servePeer(t, load(t, "errors"))
	replies := map[string]string{} // recorded id → recorded reply
	for _, e := range es {
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(e.Frame), &m)
		if e.Dir == "s2c" {
			replies[string(m["id"])] = e.Frame
		}
	}
	ids := []string{`"x1"`, `200`, `"3"`, `4.0`, `-5`, `"six"`, `7e0`, `"u1"`, ``, `"x20"`, `21`}
	for i, e := range append(es[:10:10], es[19]) {
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(e.Frame), &m)
		if m["id"] == nil {
			s.peer.Send("  ")
			s.peer.Send(e.Frame) // the notification: nothing comes back
			continue
		}
		s.peer.Send(withID(t, e.Frame, ids[i]))
		want := withID(t, replies[string(m["id"])], ids[i])
		if got := s.peer.Next(); got != want {
			t.Fatalf("reply to %s:\ngot  %s\nwant %s", e.Frame, got, want)
		}
	}
	if err := s.wait(t); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeDepartingRequestIsAnswered: an unexpected request gets a
// -32603 error with the Departure's text and the client's id; a frame
// that is not a request gets no answer.
func TestServeDepartingRequestIsAnswered(t *testing.T) {
	es := entries(t, "text-turn")
	t.Run("request", func(t *testing.T) {
		s := servePeer(t, load(t, "text-turn"))
		s.peer.Send(es[0].Frame)
		s.peer.Expect(es[1].Frame)
		s.peer.Send(`{"jsonrpc":"2.0","id":"q<7>","method":"session/cancel","params":{"sessionId":"main"}}`)
		want := `replay: the client departed from the recording at line 3 (a c2s session/prompt request): method: recorded "session/prompt", got "session/cancel"`
		msg, _ := json.Marshal(want)
		if got := s.peer.Next(); got != `{"jsonrpc":"2.0","id":"q<7>","error":{"code":-32603,"message":`+string(msg)+`}}` {
			t.Errorf("answer: %s", got)
		}
		var d *replay.Departure
		if err := s.wait(t); !errors.As(err, &d) || d.Error() != want || d.Line != 3 {
			t.Errorf("serve: %v", err)
		}
		if f, err := s.peer.TryNext(); err == nil {
			t.Errorf("a frame after the departure: %s", f)
		}
	})
	for _, c := range []struct{ name, line, reason string }{
		{"notification", `{"jsonrpc":"2.0","method":"hello","params":{}}`, "a hello notification, not a request"},
		{"malformed", `{"jsonrpc":"2.0","id":1,"method":`, `not a JSON-RPC frame: {"jsonrpc":"2.0","id":1,"method":`},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, "a response, not a request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := servePeer(t, load(t, "text-turn"))
			s.peer.Send(c.line)
			var d *replay.Departure
			if err := s.wait(t); !errors.As(err, &d) || d.Line != 1 || d.Reason != c.reason || d.Got != c.line {
				t.Errorf("serve: %v, want a departure at line 1: %s", err, c.reason)
			}
			if f, err := s.peer.TryNext(); err == nil {
				t.Errorf("an answer: %s", f)
			}
		})
	}
}

// TestServeEndsWithItsContext: Serve returns ctx.Err() when ctx ends
// while it waits for the client.
func TestServeEndsWithItsContext(t *testing.T) {
	rpctest.CheckNoLeak(t)
	p := rpctest.NewPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- load(t, "text-turn").Serve(ctx, p.ConnIn, p.ConnOut) }()
	p.Send(entries(t, "text-turn")[0].Frame)
	p.Next()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("serve: %v, want context.Canceled", err)
		}
	case <-bound(t).Done():
		t.Fatal("Serve did not return within a minute of its context's end")
	}
	p.Close() // the reading goroutine ends with the input
}

// TestServeRecordingWithoutClientFrames: a recording of runtime frames
// only is written at once; Serve ends with the client's input.
func TestServeRecordingWithoutClientFrames(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"running"}}`,
		`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}`,
	}
	s := servePeer(t, loadString(t, strings.Join(frames, "\n")))
	for _, f := range frames {
		s.peer.Expect(f)
	}
	s.peer.CloseInput(nil)
	if err := s.wait(t); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeRewritesOnlyWhatTheClientChose: the session id is rewritten in
// the members that name sessions, not in text that happens to hold it;
// a subagent's child keeps its recorded id.
func TestServeRewritesOnlyWhatTheClientChose(t *testing.T) {
	es := entries(t, "subagent")
	s := servePeer(t, load(t, "subagent"))
	s.peer.ReadAhead(nil)
	var init struct{ Params struct{ Cwd string } }
	json.Unmarshal([]byte(es[0].Frame), &init)
	s.peer.Send(strings.Replace(es[0].Frame, init.Params.Cwd, "/elsewhere"+init.Params.Cwd, 1))
	s.peer.Next()
	s.peer.Send(strings.Replace(es[2].Frame, `"sessionId":"main"`, `"sessionId":"root"`, 1))
	var child string
	for i := 3; i < 63; i++ {
		got := s.peer.Next()
		want := strings.ReplaceAll(es[i].Frame, `"sessionId":"main"`, `"sessionId":"root"`)
		want = strings.ReplaceAll(want, `"parentSessionId":"main"`, `"parentSessionId":"root"`)
		if i == 15 || i == 35 { // request/header: the system prompt names the cwd
			wantContains(t, "the recorded request/header", es[i].Frame, "Your working directory is "+init.Params.Cwd+".")
		}
		want = strings.ReplaceAll(want, init.Params.Cwd, "/elsewhere"+init.Params.Cwd)
		if got != want {
			t.Fatalf("frame of line %d:\ngot  %.300s\nwant %.300s", i+1, got, want)
		}
		if strings.Contains(got, `"subagent.started"`) {
			var m struct {
				Params struct{ ChildSessionID string }
			}
			json.Unmarshal([]byte(got), &m)
			child = m.Params.ChildSessionID
		}
	}
	if child == "" || !strings.Contains(es[25].Frame, child) {
		t.Errorf("the child session %q is not the recorded one", child)
	}
	s.peer.Send(es[63].Frame)
	s.peer.Expect(es[64].Frame)
	if err := s.wait(t); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeClientFrameToARecordingWithout: a recording of runtime frames
// only takes no client frame: one is a departure.
func TestServeClientFrameToARecordingWithout(t *testing.T) {
	s := servePeer(t, loadString(t, `{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}`+"\n"))
	s.peer.Next()
	s.peer.Send(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	s.peer.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"replay: the client departed from the recording: the recording has no client frame, and the client sent a shutdown request"}}`)
	var d *replay.Departure
	if err := s.wait(t); !errors.As(err, &d) || d.Line != 0 {
		t.Errorf("serve: %v", err)
	}
}

// TestServeKeepsAShortCwd: a recorded cwd of "/" is not rewritten in the
// runtime's frames (its bytes are in every path); it is not compared
// either.
func TestServeKeepsAShortCwd(t *testing.T) {
	rec := loadString(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/","provider":"p","model":"m"}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"n/a","version":"/1"}}}`+"\n")
	s := servePeer(t, rec)
	s.peer.Send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"cwd":"/srv/x","provider":"p","model":"m"}}`)
	s.peer.Expect(`{"jsonrpc":"2.0","id":9,"result":{"serverInfo":{"name":"n/a","version":"/1"}}}`)
	s.peer.CloseInput(nil)
	if err := s.wait(t); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestServeBlankLineAfterAFrame: a frame written with a blank line after
// it is answered (the blank line ends what came together).
func TestServeBlankLineAfterAFrame(t *testing.T) {
	es := entries(t, "text-turn")
	s := servePeer(t, load(t, "text-turn"))
	s.peer.SendBytes([]byte(es[0].Frame + "\n \n"))
	s.peer.Expect(es[1].Frame)
}
