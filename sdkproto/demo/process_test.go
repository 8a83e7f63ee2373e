package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// demoEnv makes the test binary serve the demo runtime on stdin/stdout,
// so that tests can run it as a real child process.
const demoEnv = "LINERPC_SDKPROTO_DEMO"

// wait bounds each test's run of the demo process: a real child process
// may hang where a pipe cannot. A failure bound, not a pace.
const wait = 30 * time.Second

func TestMain(m *testing.M) {
	linetest.ServeAsChild(demoEnv, func(r io.Reader, w io.Writer) error {
		return demo.Serve(context.Background(), r, w)
	})
	os.Exit(m.Run())
}

// demoProcess is the demo runtime as a child process, spoken to in raw
// lines through a rpctest.Peer so that the exact order of frames is
// observable. Its output ends (TryNext returns io.EOF) once the process
// has exited and all it wrote was taken in.
type demoProcess struct {
	*rpctest.Peer
	waited chan struct{} // closed once the process was waited for
	err    error         // of the wait
}

func startDemo(t *testing.T) *demoProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), demoEnv+"=1")
	cmd.Stderr = os.Stderr
	d := &demoProcess{waited: make(chan struct{})}
	// Registered before the peer's, so that it runs after the peer closed
	// its streams, which ends the copies to and from the process.
	t.Cleanup(func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
			<-d.waited
		}
	})
	d.Peer = rpctest.NewPeer(t)
	d.ReadAhead(nil) // takes every frame in as it comes, as a runtime's client does
	// The child's stdin is an os.Pipe fed from the peer: were it the peer's
	// io.Pipe, Wait would wait for exec's copy of it, which only the peer's
	// end of input ends.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = d.ConnOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := io.Copy(stdin, d.ConnIn)
		stdin.Close()
		d.ConnIn.CloseWithError(err) // a Send to a process gone fails
	}()
	bound := time.AfterFunc(wait, func() {
		d.ConnOut.CloseWithError(fmt.Errorf("the demo process still ran after %v", wait))
		cmd.Process.Kill()
	})
	t.Cleanup(func() { bound.Stop() })
	go func() {
		d.err = cmd.Wait()
		d.ConnOut.Close()
		close(d.waited)
	}()
	return d
}

// exit waits for the process to end and returns how it ended.
func (d *demoProcess) exit() error {
	<-d.waited
	return d.err
}

func (d *demoProcess) next(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	f := d.Next()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(f), &m); err != nil {
		t.Fatalf("bad frame %q: %v", f, err)
	}
	return m
}

// label names a frame: "result", "error", "status <s> <status>",
// "event <s> <seq> <type>[ <chunk type>]", or the notification's method.
func label(m map[string]json.RawMessage) string {
	switch {
	case m["result"] != nil:
		return "result"
	case m["error"] != nil:
		return "error " + string(m["error"])
	}
	var method string
	json.Unmarshal(m["method"], &method)
	switch method {
	case "session.status":
		var p sdkproto.SessionStatusParams
		json.Unmarshal(m["params"], &p)
		return fmt.Sprintf("status %s %s", p.SessionID, p.Status)
	case "session.event":
		var p sdkproto.SessionEventParams
		json.Unmarshal(m["params"], &p)
		s := fmt.Sprintf("event %s %d %s", p.SessionID, p.Event.Seq, p.Event.Type)
		if c, ok := p.Event.ChunkType(); ok {
			s += " " + string(c)
		}
		return s
	}
	return method
}

// collect reads frames until one whose label has the prefix stop.
func (d *demoProcess) collect(t *testing.T, stop string) (labels []string, frames []map[string]json.RawMessage) {
	t.Helper()
	for {
		m := d.next(t)
		labels = append(labels, label(m))
		frames = append(frames, m)
		if strings.HasPrefix(labels[len(labels)-1], stop) {
			return labels, frames
		}
	}
}

func TestDemoProcessTextTurn(t *testing.T) {
	d := startDemo(t)
	d.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/tmp","provider":"deepseek-official","model":"deepseek-v4-flash","maxTokens":4096}}`)
	if l := label(d.next(t)); l != "result" {
		t.Fatalf("initialize: %s", l)
	}
	d.Send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"say hi"}]}}`)
	labels, frames := d.collect(t, "status main idle")
	if !slices.Contains(labels, "result") {
		// The turn's events may overtake the reply all the way (docs/wire.md
		// §5.3): read on until it comes.
		l, f := d.collect(t, "result")
		labels, frames = append(labels, l...), append(frames, f...)
	}
	want := []string{
		"event main 0 agent/inbox/spliced", "status main running", "event main 1 turn/start",
		"event main 2 agent/inbox/spliced", "event main 3 step/start", "event main 4 user/message",
		"event main 5 request/header", "event main 6 assistant/chunk block-start",
		"event main 7 assistant/chunk text-delta", "event main 8 assistant/chunk text-delta",
		"event main 9 assistant/chunk block-end", "event main 10 assistant/chunk usage",
		"event main 11 assistant/chunk finish", "event main 12 assistant/message", "event main 13 step/end",
		"event main 14 turn/end", "status main idle",
	}
	// The reply follows the receipt, running, turn/start and the claim
	// (written before Prompt returns); the turn's own events run on and
	// may overtake it, as docs/wire.md §5.3 allows.
	at := slices.Index(labels, "result")
	if at < 4 {
		t.Fatalf("the result came before the claim:\n%s", strings.Join(labels, "\n"))
	}
	result := frames[at]
	labels = slices.Delete(labels, at, at+1)
	frames = slices.Delete(frames, at, at+1)
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sequence:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	var res sdkproto.SessionPromptResult
	json.Unmarshal(result["result"], &res)
	var receipt sdkproto.SessionEventParams
	json.Unmarshal(frames[0]["params"], &receipt)
	if !receipt.Event.ReceiptFor(res.MessageID) {
		t.Fatalf("receipt %s is not for %s", receipt.Event.Data, res.MessageID)
	}
	var msg sdkproto.SessionEventParams
	json.Unmarshal(frames[13]["params"], &msg)
	data, err := msg.Event.AssistantMessage()
	if err != nil || sdkproto.FinalText(data.Message.Content) != "say hi" || data.Usage == nil {
		t.Fatalf("assistant message %s: %v", msg.Event.Data, err)
	}
	if got := fmt.Sprint(msg.Event.SourceEventSeqs); got != "[6 7 8 9 10 11]" {
		t.Fatalf("sourceEventSeqs %s", got)
	}
	var end sdkproto.SessionEventParams
	json.Unmarshal(frames[15]["params"], &end)
	if kind, _ := end.Event.TurnEndReasonKind(); kind != sdkproto.TurnCompleted {
		t.Fatalf("turn/end %s", end.Event.Data)
	}

	d.Send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	if l := label(d.next(t)); l != "result" {
		t.Fatalf("shutdown: %s", l)
	}
	if f, err := d.TryNext(); err != io.EOF {
		t.Fatalf("after the shutdown reply: frame %q, error %v; want the output's end", f, err)
	}
	if err := d.exit(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

func TestDemoProcessSubagentAndFailure(t *testing.T) {
	d := startDemo(t)
	d.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/tmp","provider":"deepseek-official","model":"m"}}`)
	d.next(t)
	d.Send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"/subagent count to three"}]}}`)
	labels, frames := d.collect(t, "status main idle")
	if !slices.Contains(labels, "result") {
		// The turn's events may overtake the reply all the way (docs/wire.md
		// §5.3): read on until it comes.
		l, f := d.collect(t, "result")
		labels, frames = append(labels, l...), append(frames, f...)
	}
	text := strings.Join(labels, "\n")
	i := strings.Index(text, "tool/call")
	j := strings.Index(text, "subagent.started")
	k := strings.Index(text, "subagent.finished")
	l := strings.Index(text, "tool/result")
	if i < 0 || !(i < j && j < k && k < l) {
		t.Fatalf("order of tool/call, subagent.started, subagent.finished, tool/result:\n%s", text)
	}
	var child string
	for n, f := range frames {
		switch label(f) {
		case "subagent.started":
			var p sdkproto.SubagentStartedParams
			json.Unmarshal(f["params"], &p)
			child = p.ChildSessionID
			if want := "event " + child + " 0 agent/inbox/spliced"; label(frames[n+1]) != want {
				t.Fatalf("after subagent.started: %s, want %s", label(frames[n+1]), want)
			}
		case "subagent.finished":
			var p sdkproto.SubagentFinishedParams
			json.Unmarshal(f["params"], &p)
			if p.ParentSessionID != "main" || p.ChildSessionID != child || p.Status != sdkproto.RunOK ||
				sdkproto.FinalText(p.LastAssistantMessage) != "count to three" {
				t.Fatalf("subagent.finished %s", f["params"])
			}
			if want := "status " + child + " idle"; label(frames[n-1]) != want {
				t.Fatalf("before subagent.finished: %s, want %s", label(frames[n-1]), want)
			}
		}
	}

	d.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"/fail model exploded"}]}}`)
	labels, frames = d.collect(t, "status main idle")
	var end sdkproto.SessionEventParams
	json.Unmarshal(frames[slices.IndexFunc(labels, func(l string) bool { return strings.HasSuffix(l, "turn/end") })]["params"], &end)
	data, _ := end.Event.TurnEnd()
	if data.Reason.Kind != sdkproto.TurnError || data.Reason.Error.Message != "model exploded" {
		t.Fatalf("turn/end %s in\n%s", end.Event.Data, strings.Join(labels, "\n"))
	}
	d.CloseInput(nil) // EOF ends the Go runtime cleanly
	if err := d.exit(); err != nil {
		t.Fatalf("exit after EOF: %v", err)
	}
}
