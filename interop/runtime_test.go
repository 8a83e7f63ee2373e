package interop_test

// Scenario 3: the Go sdkproto client driving a runtime written on the real
// TypeScript transport (js/runtime.mjs) that replays recorded real-runtime
// event sequences (testdata/transcripts), in the shape of docs/wire.md §5.3.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

// transcriptPrompt is what a transcript says about its one prompt.
type transcriptPrompt struct {
	init       map[string]any
	sessionID  string
	text       string
	messageID  string
	events     []string // root event types from the receipt to the idle
	finalText  string
	notifCount int // notifications of the tree from the receipt to the root idle
}

func readTranscript(t *testing.T, path string) transcriptPrompt {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tp transcriptPrompt
	var frames []map[string]json.RawMessage
	var dirs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct{ Dir, Frame string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(e.Frame), &m)
		frames, dirs = append(frames, m), append(dirs, e.Dir)
	}
	var promptID string
	for i, m := range frames {
		var method string
		json.Unmarshal(m["method"], &method)
		if dirs[i] == "c2s" && method == "initialize" {
			json.Unmarshal(m["params"], &tp.init)
		}
		if dirs[i] == "c2s" && method == "session/prompt" {
			var p struct {
				SessionID     string
				ContentBlocks []struct{ Text string }
			}
			json.Unmarshal(m["params"], &p)
			tp.sessionID, tp.text, promptID = p.SessionID, p.ContentBlocks[0].Text, string(m["id"])
		}
		if dirs[i] == "s2c" && method == "" && promptID != "" && string(m["id"]) == promptID {
			var r struct{ MessageID string }
			json.Unmarshal(m["result"], &r)
			tp.messageID = r.MessageID
		}
	}
	// The run's interval: from the receipt of messageId to the root idle.
	in := false
	for i, m := range frames {
		if dirs[i] != "s2c" {
			continue
		}
		var n struct {
			Method string
			Params struct {
				SessionID string
				Status    string
				Event     struct {
					Type string
					Data struct {
						Inserted []struct{ ID string }
						Message  struct {
							Content []struct{ Type, Text string }
						}
					}
				}
			}
		}
		line, _ := json.Marshal(m)
		json.Unmarshal(line, &n)
		root := n.Params.SessionID == tp.sessionID
		if !in && root && n.Method == "session.event" && n.Params.Event.Type == "agent/inbox/spliced" &&
			slices.ContainsFunc(n.Params.Event.Data.Inserted, func(x struct{ ID string }) bool { return x.ID == tp.messageID }) {
			in = true
		}
		if !in || n.Method == "" {
			continue
		}
		tp.notifCount++
		if root && n.Method == "session.event" {
			tp.events = append(tp.events, n.Params.Event.Type)
			if n.Params.Event.Type == "assistant/message" {
				var b strings.Builder
				for _, c := range n.Params.Event.Data.Message.Content {
					if c.Type == "text" {
						b.WriteString(c.Text)
					}
				}
				tp.finalText = b.String()
			}
		}
		if root && n.Method == "session.status" && n.Params.Status == "idle" {
			break
		}
	}
	if tp.messageID == "" || len(tp.events) == 0 {
		t.Fatalf("%s: no prompt interval found", path)
	}
	return tp
}

func TestGoClientDrivesTSRuntime(t *testing.T) {
	dir := needPeers(t)
	for _, name := range []string{"text-turn", "reasoning-turn", "tool-call", "subagent", "model-error"} {
		t.Run(name, func(t *testing.T) {
			rpctest.CheckNoLeak(t)
			path := filepath.Join(dir, "..", "testdata", "transcripts", name+".ndjson")
			tp := readTranscript(t, path)
			cmd := exec.Command("node", "js/runtime.mjs", path)
			cmd.Dir = dir
			c, err := sdkproto.Launch(cmd, &sdkproto.ClientOptions{RequestTimeout: testTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			p := sdkproto.InitializeParams{Cwd: tp.init["cwd"].(string), Provider: tp.init["provider"].(string), Model: tp.init["model"].(string)}
			res, err := c.Initialize(ctx, p)
			if err != nil || res.ServerInfo.Name != "deepseek-harness-sdk-runtime" {
				t.Fatalf("initialize: %+v %v", res, err)
			}
			run, err := c.Run(ctx, tp.sessionID, sdkproto.TextBlock(tp.text))
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var types []string
			for _, e := range run.Events {
				types = append(types, string(e.Type))
			}
			if run.MessageID != tp.messageID || !slices.Equal(types, tp.events) || run.FinalResponse != tp.finalText ||
				len(run.Notifications) != tp.notifCount {
				t.Errorf("run: message %q (want %q), %d notifications (want %d), final %q (want %q)\nevents %v\nwant   %v",
					run.MessageID, tp.messageID, len(run.Notifications), tp.notifCount, run.FinalResponse, tp.finalText, types, tp.events)
			}
			// Close: shutdown is answered, the TS runtime exits 0 by
			// itself. It has no SIGTERM handler, so a signal from the
			// ladder would show as a signalled exit, not status 0.
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			t.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
			if st := c.ProcessState(); st == nil || st.ExitCode() != 0 {
				t.Errorf("runtime ended with %v, want exit 0 by itself", st)
			}
		})
	}
}
