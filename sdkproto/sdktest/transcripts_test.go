package sdktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay"
	"github.com/linerpc/linerpc/sdkproto/replay/replaytest"
	"github.com/linerpc/linerpc/sdkproto/scripted"
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
var invalidArgs = scripted.NewTurn().
	ToolCall(scripted.ToolCall{Name: "bash", Arguments: `{"command":"echo hi"}`,
		Output:  `Error: invalid arguments: missing required property "description"`,
		IsError: true, Error: &sdkproto.ToolError{Name: "ToolArgsError", Code: "INVALID_ARGS"}}).
	Text("the com", "mand pr", "inted hi")

// The builders' imitation of tool-call-invalid-args is the script of its
// file: both marshal to the same bytes (the file's arguments, an object,
// read as their compact text, as the builder takes them).
func TestScriptFileIsTheBuilders(t *testing.T) {
	want, err := scripted.Script{Turns: []*scripted.Turn{invalidArgs}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	file, err := scripted.LoadScript(filepath.Join(scriptsDir, "tool-call-invalid-args.json"))
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
// event types and seqs, chunks, statuses, reasons); Client.Run returns
// results of the same shape from both; and Client.Stream yields the same
// notifications from both, those Run collected, and ends alike. The
// recorded side is the recording served by sdkproto/replay, a fresh
// replay for each call, as the scripted side is a fresh runtime.
//
// The subtests do not run in parallel: replaytest.Start checks that no
// goroutine outlives the test, by counting the process's.
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
			imitates(t, file, filepath.Join(transcriptsDir, name+".ndjson"))
		})
	}
}

// imitates compares the one-turn script of scriptFile with the recording
// of recordingFile, as TestScriptedTurnsImitateRecordings describes.
func imitates(t *testing.T, scriptFile, recordingFile string) {
	t.Helper()
	script, err := scripted.LoadScript(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(script.Turns) != 1 {
		t.Fatalf("%s: %d turns, want the one it imitates", scriptFile, len(script.Turns))
	}
	rec := loadRecording(t, recordingFile)
	prompt := recordedPrompt(t, rec)
	recorded := recordingFrames(rec)
	wantCounts := checkFrames(t, "recorded", recorded)

	// The recording first: replaytest.Start's leak check then counts the
	// goroutines from before both sides, and runs after their cleanups.
	var wantRun *sdkproto.RunResult
	replayed(t, rec, func(ctx context.Context, c *sdkproto.Client) {
		var err error
		if wantRun, err = c.Run(ctx, "main", sdkproto.TextBlock(prompt)); err != nil {
			t.Fatalf("replayed Run: %v", err)
		}
	})
	var wantStream []string
	replayed(t, rec, func(ctx context.Context, c *sdkproto.Client) {
		wantStream = streamShape(c.Stream(ctx, "main", sdkproto.TextBlock(prompt)))
	})

	var res *sdkproto.RunResult
	scripted := playScript(t, script, func(ctx context.Context, c *sdkproto.Client) {
		var err error
		if res, err = c.Run(ctx, "main", sdkproto.TextBlock(prompt)); err != nil {
			t.Fatalf("scripted Run: %v", err)
		}
	})
	var gotStream []string
	playScript(t, script, func(ctx context.Context, c *sdkproto.Client) {
		gotStream = streamShape(c.Stream(ctx, "main", sdkproto.TextBlock(prompt)))
	})

	gotCounts := checkFrames(t, "scripted", scripted)
	if gotCounts.Frames != wantCounts.Frames || gotCounts.Requests != wantCounts.Requests ||
		gotCounts.Responses != wantCounts.Responses || gotCounts.Notifications != wantCounts.Notifications {
		t.Errorf("checker counts: scripted %+v, recorded %+v", gotCounts, wantCounts)
	}
	diffLines(t, "notifications", "recorded", notificationShapes(recorded), "scripted", notificationShapes(scripted))
	diffLines(t, "Run result", "recorded", runShape(wantRun), "scripted", runShape(res))
	diffLines(t, "Stream", "recorded", wantStream, "scripted", gotStream)
	diffLines(t, "recorded Run and Stream", "Run", collectedShapes(wantRun), "Stream", wantStream)
	diffLines(t, "scripted Run and Stream", "Run", collectedShapes(res), "Stream", gotStream)
}

// loadRecording loads a transcript of testdata/transcripts.
func loadRecording(t *testing.T, path string) *replay.Recording {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := replay.Load(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec
}

// recordingFrames returns the frames of a recording, as sdktest's.
func recordingFrames(rec *replay.Recording) []sdktest.Frame {
	var frames []sdktest.Frame
	for _, f := range rec.Frames() {
		frames = append(frames, sdktest.Frame{Dir: sdktest.Dir(f.Dir), Line: []byte(f.Text)})
	}
	return frames
}

// recordedPrompt returns the text of the one session/prompt that a
// recording sent, on session main.
func recordedPrompt(t *testing.T, rec *replay.Recording) string {
	t.Helper()
	prompts := rec.Prompts()
	var requests int
	for _, f := range rec.ClientFrames() {
		if f.Method == sdkproto.SessionPrompt.Name() {
			requests++
		}
	}
	if requests != 1 || len(prompts) != 1 || prompts[0].SessionID != "main" {
		t.Fatalf("the recording sent %d prompts (%+v), want one on session main", requests, prompts)
	}
	return prompts[0].Text
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

// replayed serves rec to a new Client (replaytest.Start), initializes it with
// the recorded params, hands it to use with a context bounded by
// sdktest.MaxWait, closes it, and fails t unless the client followed the
// recording to its end (its shutdown included).
func replayed(t *testing.T, rec *replay.Recording, use func(context.Context, *sdkproto.Client)) {
	t.Helper()
	params, ok := rec.InitializeParams()
	if !ok {
		t.Fatal("the recording has no initialize to send again")
	}
	r := replaytest.Start(t, rec, nil)
	ctx, cancel := context.WithTimeout(t.Context(), sdktest.MaxWait)
	defer cancel()
	if _, err := r.Client.Initialize(ctx, params); err != nil {
		t.Fatalf("replayed initialize: %v", err)
	}
	use(ctx, r.Client)
	if err := r.Client.Close(); err != nil {
		t.Fatalf("replayed Close: %v", err)
	}
	if err := r.Wait(); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// playScript plays script on a new sdktest runtime, hands its initialized
// Client to use with a context bounded by sdktest.MaxWait, closes it, and
// returns the frames that went across.
func playScript(t *testing.T, script scripted.Script, use func(context.Context, *sdkproto.Client)) []sdktest.Frame {
	t.Helper()
	rt := sdktest.NewRuntime(t, script)
	c := rt.Client()
	ctx, cancel := context.WithTimeout(t.Context(), sdktest.MaxWait)
	defer cancel()
	use(ctx, c)
	if err := c.Close(); err != nil {
		t.Fatalf("scripted Close: %v", err)
	}
	return rt.Frames()
}

// streamShape describes what a Stream yielded: each notification, as
// runShape describes those Run collected, then its failure, if any.
func streamShape(stream iter.Seq2[sdkproto.Notification, error]) []string {
	roles := sessionRoles{}
	var out []string
	for n, err := range stream {
		if err != nil {
			if n.Method != "" {
				out = append(out, "notification "+shape(roles, n))
			}
			out = append(out, fmt.Sprintf("failed: %v", err))
			continue
		}
		out = append(out, "notification "+shape(roles, n))
	}
	return out
}

// collectedShapes describes the notifications a Run collected, as
// runShape does.
func collectedShapes(r *sdkproto.RunResult) []string {
	roles := sessionRoles{}
	var out []string
	for _, n := range r.Notifications {
		out = append(out, "notification "+shape(roles, n))
	}
	return out
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
	for _, e := range r.Events {
		out = append(out, "event "+eventShape(e))
	}
	return append(out, collectedShapes(r)...)
}

// diffLines fails t at the first difference of two descriptions, want
// (of wantName) and got (of gotName).
func diffLines(t *testing.T, what, wantName string, want []string, gotName string, got []string) {
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
			t.Errorf("%s differ at %d of %d (%s) and %d (%s):\n%s %s\n%s %s", what, i, len(want), wantName, len(got), gotName, wantName, w, gotName, g)
			return
		}
	}
}
