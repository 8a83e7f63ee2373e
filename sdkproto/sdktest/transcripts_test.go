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

// The scripts of testdata/scripts imitate the recorded real turns of
// testdata/transcripts, each the one of the same name: one turn a script,
// played for the prompt that the recording sent. They are the one copy of
// the imitations, which cmd/dshrpc serves with dshrpc serve-script too.
var (
	scriptsDir     = filepath.Join("..", "..", "testdata", "scripts")
	transcriptsDir = filepath.Join("..", "..", "testdata", "transcripts")
)

// An imitation written with the builders: MarshalJSON writes it as its
// file reads, so the Go and the JSON forms of a turn cannot drift apart.
var invalidArgs = sdktest.NewTurn().
	ToolCall(sdktest.ToolCall{Name: "bash", Arguments: `{"command":"echo hi"}`,
		Output:  `Error: invalid arguments: missing required property "description"`,
		IsError: true, Error: &sdkproto.ToolError{Name: "ToolArgsError", Code: "INVALID_ARGS"}}).
	Text("the com", "mand pr", "inted hi")

// The builders' imitation of tool-call-invalid-args is the script of its
// file: both marshal to the same bytes (the file's arguments, an object,
// read as their compact text, as the builder takes them).
func TestScriptFileIsTheBuilders(t *testing.T) {
	want, err := sdktest.Script{Turns: []*sdktest.Turn{invalidArgs}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	file, err := sdktest.LoadScript(filepath.Join(scriptsDir, "tool-call-invalid-args.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := file.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("testdata/scripts/tool-call-invalid-args.json marshals to\n%s\nthe builders' imitation to\n%s", got, want)
	}
}

// A scripted turn and the recorded real turn it imitates are alike: the
// transcript checker accepts both without a finding and counts the same
// frames; the runtime sends the same notifications (methods, sessions,
// event types and seqs, chunks, statuses, reasons); and Client.Run
// returns results of the same shape from both.
func TestScriptedTurnsImitateRecordings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scriptsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no script in %s", scriptsDir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			script, err := sdktest.LoadScript(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(script.Turns) != 1 {
				t.Fatalf("%s: %d turns, want the one it imitates", file, len(script.Turns))
			}
			recorded := readRecording(t, filepath.Join(transcriptsDir, name+".ndjson"))
			prompt := recordedPrompt(t, recorded)
			wantCounts := checkFrames(t, "recorded", recorded)
			wantRun := replayRun(t, recorded, prompt)

			rt := sdktest.NewRuntime(t, script)
			c := rt.Client()
			res, err := c.Run(t.Context(), "main", sdkproto.TextBlock(prompt))
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

// recordedPrompt returns the text of the one session/prompt that a
// recording sent, on session main.
func recordedPrompt(t *testing.T, frames []sdktest.Frame) string {
	t.Helper()
	var prompts []sdkproto.SessionPromptParams
	for _, f := range frames {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if f.Dir != sdktest.ClientToRuntime || json.Unmarshal(f.Line, &req) != nil || req.Method != sdkproto.SessionPrompt.Name() {
			continue
		}
		var p sdkproto.SessionPromptParams
		if err := p.UnmarshalJSON(req.Params); err != nil {
			t.Fatalf("the recorded prompt: %v", err)
		}
		prompts = append(prompts, p)
	}
	if len(prompts) != 1 || prompts[0].SessionID != "main" {
		t.Fatalf("the recording sent %d prompts (%+v), want one on session main", len(prompts), prompts)
	}
	return sdkproto.FinalText(prompts[0].ContentBlocks)
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
