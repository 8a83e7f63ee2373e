package interop_test

// Scenario 2: the real TypeScript HarnessClient / DeepSeekHarness driving
// the Go demo runtime (cmd/demoruntime, demo.Serve on stdio).

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildDemoRuntime builds cmd/demoruntime into a temporary folder.
func buildDemoRuntime(t *testing.T) string {
	t.Helper()
	needPeers(t)
	bin := filepath.Join(t.TempDir(), "demoruntime")
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/demoruntime").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./interop/cmd/demoruntime: %v\n%s", err, out)
	}
	return bin
}

// runReport runs a Node program to completion, requiring exit status 0,
// and decodes its one-line JSON report into v.
func runReport(t *testing.T, v any, args ...string) {
	t.Helper()
	out, code := runScript(t, nil, args...)
	if code != 0 {
		t.Fatalf("%v exited with status %d\n%s", args, code, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("report of %v: %v\n%s", args, err, out)
	}
}

type errReport struct {
	OK              bool
	Name            string
	IsResponseError bool
	Code            *int
	Message         string
}

type runSummary struct {
	SessionID     string
	FinalResponse string
	EventTypes    []string
	Methods       []string
	Sessions      []string
	TurnEnd       []map[string]any
	Observed      int
	Started       []map[string]string
	Finished      []map[string]string
}

type exitReport struct {
	MS            int
	ExitCode      *int
	Signal        *string
	Stderr        []string
	LadderSignals []string // what the client's teardown ladder had to send
}

func (e exitReport) String() string {
	return fmt.Sprintf("exit code %v, signal %v, after %d ms, ladder signals %q", deref(e.ExitCode), deref(e.Signal), e.MS, e.LadderSignals)
}

func (e errReport) String() string {
	return fmt.Sprintf("{OK:%v Name:%q IsResponseError:%v Code:%v Message:%q}", e.OK, e.Name, e.IsResponseError, deref(e.Code), e.Message)
}

func TestHarnessClientDrivesGoRuntime(t *testing.T) {
	bin := buildDemoRuntime(t)
	var r struct {
		EarlyPrompt, BadProvider, UnknownMethod, AfterClose errReport
		Initialize                                          struct {
			OK    bool
			Value struct {
				ServerInfo struct{ Name, Version string }
			}
		}
		Prompt                            struct{ OK bool }
		BeforeReply                       [][]string
		LowClose, HarnessClose            exitReport
		RunA, RunB, RunA2, Subagent, Fail runSummary
		CloseMidTurn                      exitReport `json:"close-mid-turn"`
		StdinEOF                          exitReport `json:"stdin-eof"`
		Sigterm                           exitReport `json:"sigterm"`
	}
	runReport(t, &r, "js/harness.mjs", bin)

	wantErr := func(what string, e errReport, code int, msg string) {
		t.Helper()
		if e.OK || !e.IsResponseError || e.Code == nil || *e.Code != code || e.Message != msg {
			t.Errorf("%s: %v, want JsonRpcResponseError %d %q", what, e, code, msg)
		}
	}
	// Initialize, and the error surfaces as the TS client types them.
	if !r.Initialize.OK || r.Initialize.Value.ServerInfo.Name != "deepseek-harness-sdk-runtime" {
		t.Errorf("initialize: %+v", r.Initialize)
	}
	wantErr("prompt before initialize", r.EarlyPrompt, -32603, "SDK server is not initialized")
	wantErr("initialize with an unknown provider", r.BadProvider, -32603, `no adapter registered for provider "nope"`)
	wantErr("unknown method", r.UnknownMethod, -32603, "unknown DeepSeek Harness SDK runtime method: no/such")
	if r.AfterClose.OK || r.AfterClose.Name != "TransportClosedError" {
		t.Errorf("run after close: %v", r.AfterClose)
	}
	// The receipt and running precede the session/prompt reply (§5.3).
	if !r.Prompt.OK || len(r.BeforeReply) != 2 || !slices.Equal(r.BeforeReply[0], []string{"session.event", "agent/inbox/spliced"}) ||
		!slices.Equal(r.BeforeReply[1], []string{"session.status", "running"}) {
		t.Errorf("before the prompt reply: %v", r.BeforeReply)
	}

	// run() on two sessions at once, then a second turn with a tool.
	checkRun := func(what string, s runSummary, session, final string) {
		t.Helper()
		if s.SessionID != session || s.FinalResponse != final || len(s.EventTypes) == 0 || s.EventTypes[0] != "agent/inbox/spliced" ||
			s.EventTypes[len(s.EventTypes)-1] != "turn/end" || s.Methods[len(s.Methods)-1] != "session.status" {
			t.Errorf("%s: %+v", what, s)
		}
	}
	checkRun("run on s-a", r.RunA, "s-a", "hello from a")
	checkRun("run on s-b", r.RunB, "s-b", "hello from b")
	checkRun("second run on s-a", r.RunA2, "s-a", "tool said: echoed")
	if !slices.Contains(r.RunB.EventTypes, "assistant/chunk") || !slices.Contains(r.RunA2.EventTypes, "tool/result") {
		t.Errorf("missing events: %v / %v", r.RunB.EventTypes, r.RunA2.EventTypes)
	}
	for _, s := range []runSummary{r.RunA, r.RunB, r.RunA2} {
		if len(s.Sessions) != 1 {
			t.Errorf("run on %s collected other sessions: %v", s.SessionID, s.Sessions)
		}
	}

	// The subagent: subagent.started, the child's events and
	// subagent.finished all reach the TS session-tree subscriber.
	sa := r.Subagent
	checkRun("subagent run", sa, "s-sub", "subagent said: child task")
	if len(sa.Started) != 1 || sa.Started[0]["parentSessionId"] != "s-sub" || len(sa.Sessions) != 2 ||
		!slices.Contains(sa.Sessions, sa.Started[0]["childSessionId"]) {
		t.Errorf("subagent lineage: started %v, sessions %v", sa.Started, sa.Sessions)
	}
	if len(sa.Finished) != 1 || sa.Finished[0]["status"] != "ok" || sa.Finished[0]["stopReason"] != "completed" {
		t.Errorf("subagent.finished: %v", sa.Finished)
	}
	if sa.Observed != len(sa.Methods) {
		t.Errorf("onNotification saw %d, run collected %d", sa.Observed, len(sa.Methods))
	}
	// A failing turn: turn/end {kind: error} with the failure, no text.
	if len(r.Fail.TurnEnd) != 1 || r.Fail.TurnEnd[0]["kind"] != "error" || r.Fail.FinalResponse != "" {
		t.Errorf("failing run: %+v", r.Fail)
	}

	// Every teardown ends the Go runtime by itself with status 0: the
	// client's ladder never had to send SIGTERM or SIGKILL (the SIGTERM
	// rung sends its own, which is not the ladder's). How long each took
	// is reported, not judged: speed belongs in benchmarks.
	for _, c := range []struct {
		what string
		e    exitReport
	}{{"HarnessClient.close", r.LowClose}, {"DeepSeekHarness.close", r.HarnessClose},
		{"close mid-turn", r.CloseMidTurn}, {"stdin EOF mid-turn", r.StdinEOF}, {"SIGTERM mid-turn", r.Sigterm}} {
		t.Logf("%s: %v", c.what, c.e)
		if c.e.ExitCode == nil || *c.e.ExitCode != 0 || c.e.Signal != nil || len(c.e.LadderSignals) > 0 {
			t.Errorf("%s: %v, want exit 0 by itself, no signal from the ladder", c.what, c.e)
		}
		if len(c.e.Stderr) > 0 {
			t.Errorf("%s: stderr tail %q", c.what, strings.Join(c.e.Stderr, "\n"))
		}
	}
}

// TestShutdownReplyCoalesced is the regression test of a bug found here
// (README.md, "Disagreements and bugs"): when the reply to shutdown left in
// the same Write as other replies (rpc's writer coalesces queued frames),
// the Server's byte-watching replyWatch missed it, Serve never returned,
// and the Go runtime ignored stdin EOF and SIGTERM until the TS ladder
// SIGKILLed it. The runtime must exit 0 by itself after answering.
func TestShutdownReplyCoalesced(t *testing.T) {
	bin := buildDemoRuntime(t)
	var rounds []struct {
		Reply          string
		ExitedByItself bool
		ExitCode       *int
		Signal         *string
	}
	runReport(t, &rounds, "js/burst.mjs", bin, "3", "500")
	for i, r := range rounds {
		if r.Reply != "ok" || !r.ExitedByItself || r.ExitCode == nil || *r.ExitCode != 0 {
			t.Errorf("round %d: shutdown reply %q, exited by itself %v, exit code %v, signal %v",
				i, r.Reply, r.ExitedByItself, deref(r.ExitCode), deref(r.Signal))
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
