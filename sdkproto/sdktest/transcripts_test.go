package sdktest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// The recorded real turns that a scripted turn imitates: the prompt the
// recording sent on session main, and the script of the same turn.
var imitations = []struct {
	file   string
	prompt string
	turn   *sdktest.Turn
}{
	{"text-turn", "say hi", sdktest.NewTurn().Text("hello fr", "om the f", "ake model")},
	{"reasoning-turn", "think first", sdktest.NewTurn().
		Reasoning("let me ", "think a", "bout it").
		Text("the", " an", "swer").
		Usage(sdkproto.TokenUsage{InputTokens: 20, OutputTokens: 9, ReasoningTokens: ptr(int64(5))})},
	{"tool-call", "run echo hi", sdktest.NewTurn().
		ToolCall(sdktest.ToolCall{Name: "bash", Arguments: `{"command":"echo hi","description":"print hi"}`, Output: "hi\n"}).
		Text("the com", "mand pr", "inted hi")},
	{"tool-call-invalid-args", "run echo hi", sdktest.NewTurn().
		ToolCall(sdktest.ToolCall{Name: "bash", Arguments: `{"command":"echo hi"}`,
			Output:  `Error: invalid arguments: missing required property "description"`,
			IsError: true, Error: &sdkproto.ToolError{Name: "ToolArgsError", Code: "INVALID_ARGS"}}).
		Text("the com", "mand pr", "inted hi")},
	{"subagent", "delegate a greeting", sdktest.NewTurn().
		Subagent("say hi", "Reply with the word hi.", sdktest.NewTurn().Text("hi fr", "om the", " child")).
		Text("the c", "hild s", "aid hi")},
	{"model-error", "this will fail", sdktest.NewTurn().
		ModelError(sdkproto.LLMFailure{Message: "fake model rejects this request", Code: "INVALID_REQUEST", Status: ptr(400)})},
	{"max-tokens", "write a long essay", sdktest.NewTurn().Text("this a", "nswer ", "is cut").MaxTokens()},
}

func ptr[T any](v T) *T { return &v }

// A scripted turn and the recorded real turn it imitates are alike: the
// transcript checker accepts both without a finding and counts the same
// frames; the runtime sends the same notifications (methods, sessions,
// event types and seqs, chunks, statuses, reasons); and Client.Run
// returns results of the same shape from both.
func TestScriptedTurnsImitateRecordings(t *testing.T) {
	for _, im := range imitations {
		t.Run(im.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("..", "..", "testdata", "transcripts", im.file+".ndjson")
			recorded := readRecording(t, path)
			wantCounts := checkFrames(t, "recorded", recorded)
			wantRun := replayRun(t, recorded, im.prompt)

			rt := sdktest.NewRuntime(t, sdktest.Script{Turns: []*sdktest.Turn{im.turn}})
			c := rt.Client()
			res, err := c.Run(t.Context(), "main", sdkproto.TextBlock(im.prompt))
			if err != nil {
				t.Fatalf("scripted Run: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			scripted := rt.Frames()
			gotCounts := checkFrames(t, "scripted", scripted)
			if gotCounts.Frames != wantCounts.Frames || gotCounts.Requests != wantCounts.Requests ||
				gotCounts.Responses != wantCounts.Responses || gotCounts.Notifications != wantCounts.Notifications {
				t.Errorf("checker counts: scripted %+v, recorded %+v", gotCounts, wantCounts)
			}
			diffLines(t, "notifications", notificationShapes(recorded), notificationShapes(scripted))
			diffLines(t, "Run result", runShape(wantRun), runShape(res))
		})
	}
}

// readRecording reads a transcript of testdata/transcripts.
func readRecording(t *testing.T, path string) []sdktest.Frame {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var frames []sdktest.Frame
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Dir   sdktest.Dir `json:"dir"`
			Frame string      `json:"frame"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		frames = append(frames, sdktest.Frame{Dir: l.Dir, Line: []byte(l.Frame)})
	}
	return frames
}

// checkFrames runs the transcript checker on frames, fails t on any
// finding, warnings included, and returns the counts.
func checkFrames(t *testing.T, what string, frames []sdktest.Frame) transcript.Counts {
	t.Helper()
	c := transcript.New(rpc.DefaultMaxFrameSize)
	for i, f := range frames {
		for _, finding := range c.Frame(i+1, transcript.Dir(f.Dir), f.Line) {
			t.Errorf("%s frame %d: %s: %s", what, finding.Line, finding.Kind, finding.Message)
		}
	}
	for _, finding := range c.Finish() {
		t.Errorf("%s: %s: %s", what, finding.Kind, finding.Message)
	}
	return c.Counts()
}

// replayRun plays the runtime's side of a recording to a Client that
// initializes, runs prompt on main and closes, and returns what Run
// returned: the frames the runtime wrote go out as recorded (the ids of
// responses made the client's), and each frame the client writes must be
// a request for the method recorded at that point.
func replayRun(t *testing.T, frames []sdktest.Frame, prompt string) *sdkproto.RunResult {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	replayed := make(chan error, 1)
	go func() {
		err := replay(frames, bufio.NewReader(c2sR), s2cW)
		s2cW.Close() // the runtime exits
		c2sR.CloseWithError(errors.New("replay ended"))
		replayed <- err
	}()
	c := sdkproto.NewClient(s2cR, c2sW, nil)
	ctx, cancel := context.WithTimeout(t.Context(), sdktest.MaxWait)
	defer cancel()
	_, err := c.Initialize(ctx, sdktest.InitializeParams())
	var res *sdkproto.RunResult
	if err == nil {
		res, err = c.Run(ctx, "main", sdkproto.TextBlock(prompt))
	}
	closeErr := c.Close()
	if rerr := <-replayed; rerr != nil {
		t.Fatalf("replay: %v", rerr)
	}
	if err != nil || closeErr != nil {
		t.Fatalf("replayed Run: %v; Close: %v", err, closeErr)
	}
	return res
}

func replay(frames []sdktest.Frame, client *bufio.Reader, out io.Writer) error {
	ids := map[string]json.RawMessage{} // recorded id -> the client's
	for i, f := range frames {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(f.Line, &m); err != nil {
			return fmt.Errorf("frame %d: %v", i+1, err)
		}
		if f.Dir == sdktest.ClientToRuntime {
			line, err := client.ReadBytes('\n')
			if err != nil {
				return fmt.Errorf("frame %d: the client wrote nothing: %v", i+1, err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(line, &got); err != nil || string(got["method"]) != string(m["method"]) {
				return fmt.Errorf("frame %d: the client wrote %s, where the recording has %s", i+1, line, f.Line)
			}
			ids[string(m["id"])] = got["id"]
			continue
		}
		if _, ok := m["method"]; !ok {
			m["id"] = ids[string(m["id"])]
		}
		line, _ := json.Marshal(m)
		if _, err := out.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("frame %d: %v", i+1, err)
		}
	}
	return nil
}

// sessionRoles names sessions by role: main, then child1, child2, ... in
// the order they appear, as child session ids are random.
type sessionRoles map[string]string

func (r sessionRoles) of(id string) string {
	if id == "main" {
		return id
	}
	if r[id] == "" {
		r[id] = fmt.Sprintf("child%d", len(r)+1)
	}
	return r[id]
}

// notificationShapes describes each notification the runtime wrote by
// what a client reads of it, without ids, uuids and times.
func notificationShapes(frames []sdktest.Frame) []string {
	roles := sessionRoles{}
	var out []string
	for _, f := range frames {
		var n struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if f.Dir != sdktest.RuntimeToClient || json.Unmarshal(f.Line, &n) != nil || n.Method == "" || n.ID != nil {
			continue
		}
		out = append(out, shape(roles, sdkproto.Notification{Method: n.Method, Params: n.Params}))
	}
	return out
}

// shape describes one notification.
func shape(roles sessionRoles, n sdkproto.Notification) string {
	switch n.Method {
	case sdkproto.SessionEvent.Name():
		p, err := n.SessionEvent()
		if err != nil {
			return "undecodable " + string(n.Params)
		}
		return roles.of(p.SessionID) + " " + eventShape(p.Event)
	case sdkproto.SessionStatus.Name():
		p, _ := n.SessionStatus()
		return fmt.Sprintf("%s status %s", roles.of(p.SessionID), p.Status)
	case sdkproto.SubagentStarted.Name():
		p, _ := n.SubagentStarted()
		return fmt.Sprintf("subagent.started %s > %s", roles.of(p.ParentSessionID), roles.of(p.ChildSessionID))
	case sdkproto.SubagentFinished.Name():
		p, _ := n.SubagentFinished()
		return fmt.Sprintf("subagent.finished %s > %s %s %s %q agent=child:%v", roles.of(p.ParentSessionID), roles.of(p.ChildSessionID),
			p.Status, p.StopReason, sdkproto.FinalText(p.LastAssistantMessage), p.AgentID == p.ChildSessionID)
	}
	return n.Method
}

// eventShape describes an event: its type and seq, and what a client
// reads of the chunks, messages, tool calls and turn ends.
func eventShape(e sdkproto.Event) string {
	s := fmt.Sprintf("%d %s", e.Seq, e.Type)
	switch e.Type {
	case sdkproto.EventAssistantChunk:
		d, _ := e.AssistantChunk()
		c := d.Chunk
		s += fmt.Sprintf(" %d/%d %s %d", d.Turn, d.Step, c.Type, c.Index)
		switch {
		case c.BlockType != "":
			s += " " + c.BlockType
		case c.Block != nil:
			s += fmt.Sprintf(" %s %q", c.Block.Type, c.Block.Text+c.Block.Arguments)
		case c.Usage != nil:
			u, _ := json.Marshal(c.Usage)
			s += " " + string(u)
		case c.Reason != nil:
			r, _ := json.Marshal(c.Reason)
			s += " " + string(r)
		default:
			s += fmt.Sprintf(" %q", c.Text+c.ArgumentsDelta)
		}
	case sdkproto.EventAssistantMessage:
		d, _ := e.AssistantMessage()
		u, _ := json.Marshal(d.Usage)
		var types []string
		for _, b := range d.Message.Content {
			types = append(types, b.Type)
		}
		s += fmt.Sprintf(" %d/%d %v %q usage %s sources %d", d.Turn, d.Step, types, sdkproto.FinalText(d.Message.Content), u, len(e.SourceEventSeqs))
	case sdkproto.EventToolCall:
		d, _ := e.ToolCall()
		s += fmt.Sprintf(" %s %s", d.Name, d.Arguments)
	case sdkproto.EventToolResult:
		d, _ := e.ToolResult()
		b := d.Message.Content[0]
		s += fmt.Sprintf(" %q error=%v %v sources %v", sdkproto.FinalText(b.Content), *b.IsError, d.Error, e.SourceEventSeqs)
	case sdkproto.EventTurnEnd:
		d, _ := e.TurnEnd()
		r, _ := json.Marshal(d.Reason)
		s += " " + string(r)
	case sdkproto.EventUserMessage, sdkproto.EventSessionTitle:
		if e.SurfaceOp != nil {
			s += " surface"
		}
	}
	return s
}

// runShape describes a Run result by what its callers read: the finish
// reason, the final response, and the shape of every event and
// notification collected.
func runShape(r *sdkproto.RunResult) []string {
	out := []string{fmt.Sprintf("finish %s, final %q, %d events, %d notifications", r.FinishReason, r.FinalResponse, len(r.Events), len(r.Notifications))}
	roles := sessionRoles{}
	for _, e := range r.Events {
		out = append(out, "event "+eventShape(e))
	}
	for _, n := range r.Notifications {
		out = append(out, "notification "+shape(roles, n))
	}
	return out
}

// diffLines fails t at the first difference of two descriptions.
func diffLines(t *testing.T, what string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("%s differ at %d of %d (recorded) and %d (scripted):\nrecorded %s\nscripted %s", what, i, len(want), len(got), w, g)
			return
		}
	}
}
