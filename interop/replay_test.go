package interop_test

// Scenario 6: the real TypeScript HarnessClient and DeepSeekHarness.run()
// driving `dshrpc serve-replay` of recorded real-runtime transcripts
// (package sdkproto/replay), started by the TS client as its runtime
// command.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto/replay"
)

// buildDshrpc builds cmd/dshrpc into a temporary folder.
func buildDshrpc(t *testing.T) string {
	t.Helper()
	needPeers(t)
	bin := filepath.Join(t.TempDir(), "dshrpc")
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/dshrpc").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/dshrpc: %v\n%s", err, out)
	}
	return bin
}

// replayReport is what js/replay.mjs reports.
type replayReport struct {
	Initialize struct {
		OK    bool
		Value struct {
			ServerInfo struct{ Name, Version string }
		}
	}
	Prompt struct {
		OK      bool
		Value   string // the messageId
		Message string
	}
	LowLevel struct {
		Notifications int
		Sessions      []string
	}
	Run struct {
		OK bool
		runSummary
		Message string
	}
	Departure                          errReport
	LowClose, RunClose, DepartureClose exitReport
}

func TestTSClientsDriveServeReplay(t *testing.T) {
	bin := buildDshrpc(t)
	for _, name := range []string{"text-turn", "reasoning-turn", "tool-call", "subagent", "model-error"} {
		t.Run(name, func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join("..", "testdata", "transcripts", name+".ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			tp := readTranscript(t, path)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := replay.Load(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			init, _ := rec.InitializeParams()
			spec := map[string]any{"provider": init.Provider, "model": init.Model, "prompt": tp.text}
			if n, ok := init.MaxTokens.Int64(); ok {
				spec["maxTokens"] = n
			}
			specJSON, _ := json.Marshal(spec)

			var r replayReport
			runReport(t, &r, "js/replay.mjs", bin, path, string(specJSON))

			// HarnessClient: the handshake, the recorded message id, the
			// session tree's notifications on a session id of its own.
			if !r.Initialize.OK || r.Initialize.Value.ServerInfo.Name != "deepseek-harness-sdk-runtime" {
				t.Errorf("initialize: %+v", r.Initialize)
			}
			if !r.Prompt.OK || r.Prompt.Value != tp.messageID {
				t.Errorf("prompt: %+v, want message id %s", r.Prompt, tp.messageID)
			}
			if r.LowLevel.Notifications != tp.notifCount || !slices.Contains(r.LowLevel.Sessions, "low-level-session") || slices.Contains(r.LowLevel.Sessions, tp.sessionID) {
				t.Errorf("HarnessClient collected %d notifications of sessions %q; recorded %d", r.LowLevel.Notifications, r.LowLevel.Sessions, tp.notifCount)
			}

			// DeepSeekHarness.run(): a minted session id, the recorded
			// interval and final response.
			run := r.Run
			if !run.OK || !strings.HasPrefix(run.SessionID, "session-") || run.FinalResponse != tp.finalText ||
				!slices.Equal(run.EventTypes, tp.events) || len(run.Methods) != tp.notifCount {
				t.Errorf("run(): ok %v %q, session %q, final %q (recorded %q), %d notifications (recorded %d)\nevents %v\nrecorded %v",
					run.OK, run.Message, run.SessionID, run.FinalResponse, tp.finalText, len(run.Methods), tp.notifCount, run.EventTypes, tp.events)
			}

			// A prompt the recording does not have: refused with the line
			// and what differed; serve-replay exits 1 and says so.
			line := rec.Prompts()[0].Line
			want := `replay: the client departed from the recording at line ` + itoa(line) + ` (a c2s session/prompt request): params.contentBlocks[0].text: recorded ` +
				quote(tp.text) + `, got "a prompt the recording does not have"`
			d := r.Departure
			if d.OK || !d.IsResponseError || d.Code == nil || *d.Code != -32603 || d.Message != want {
				t.Errorf("departure: %v\nwant JsonRpcResponseError -32603 %q", d, want)
			}
			if dc := r.DepartureClose; dc.ExitCode == nil || *dc.ExitCode != 1 || !strings.Contains(strings.Join(dc.Stderr, "\n"), "dshrpc serve-replay: "+path+": the client departed from the recording at line "+itoa(line)) {
				t.Errorf("after the departure: %v, stderr %q; want exit 1 and the departure on stderr", dc, dc.Stderr)
			}

			// Both clean closes: shutdown is the recording's last client
			// frame; serve-replay answers it and exits 0 by itself.
			for _, c := range []struct {
				what string
				e    exitReport
			}{{"HarnessClient.close", r.LowClose}, {"DeepSeekHarness.close", r.RunClose}} {
				t.Logf("%s: %v", c.what, c.e)
				if c.e.ExitCode == nil || *c.e.ExitCode != 0 || c.e.Signal != nil || len(c.e.LadderSignals) > 0 || len(c.e.Stderr) > 0 {
					t.Errorf("%s: %v, stderr %q; want exit 0 by itself, nothing on stderr", c.what, c.e, c.e.Stderr)
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
