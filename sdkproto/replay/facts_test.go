package replay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto/replay"
)

// transcriptPath is the path of a recorded transcript of testdata.
func transcriptPath(name string) string {
	return filepath.Join("..", "..", "testdata", "transcripts", name+".ndjson")
}

// load loads a recorded transcript of testdata.
func load(t testing.TB, name string) *replay.Recording {
	t.Helper()
	f, err := os.Open(transcriptPath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := replay.Load(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rec
}

// turn is what a recording says of one prompt and the interval it owns,
// worked out here from the frames, independently of the package.
type turn struct {
	line          int
	session, text string
	cwd           string // of the recording's initialize
	messageID     string
	final         string // the text of the last root assistant/message
	reason        string // data.reason.kind of the last root turn/end
	events        int    // root events from the receipt to the idle
	notifications int    // notifications of the session tree over that interval
	deltas        string // the root text deltas, joined
}

// wireFrame is a frame decoded loosely, for the facts.
type wireFrame struct {
	ID     json.RawMessage
	Method string
	Params struct {
		Cwd             string
		SessionID       string
		ParentSessionID string
		ChildSessionID  string
		Status          string
		ContentBlocks   []struct{ Type, Text string }
		Event           struct {
			Type string
			Data struct {
				Inserted []struct{ ID string }
				Message  struct {
					Content []struct{ Type, Text string }
				}
				Reason struct{ Kind string }
				Chunk  struct{ Type, Text string }
			}
		}
	}
	Result struct{ MessageID string }
}

// recordedTurn returns the facts of the recording's n-th prompt (from 0).
func recordedTurn(t testing.TB, rec *replay.Recording, n int) turn {
	t.Helper()
	frames := rec.Frames()
	dec := make([]wireFrame, len(frames))
	for i, f := range frames {
		json.Unmarshal([]byte(f.Text), &dec[i])
	}
	var tn turn
	prompt := -1
	for i, f := range frames {
		if f.Dir == replay.ClientToRuntime && f.Method == "initialize" && tn.cwd == "" {
			tn.cwd = dec[i].Params.Cwd
		}
		if f.Dir == replay.ClientToRuntime && f.Method == "session/prompt" {
			if n == 0 {
				prompt = i
				break
			}
			n--
		}
	}
	if prompt < 0 {
		t.Fatal("no such prompt in the recording")
	}
	p := dec[prompt]
	tn.line, tn.session = frames[prompt].Line, p.Params.SessionID
	for _, b := range p.Params.ContentBlocks {
		tn.text += b.Text
	}
	for i := prompt + 1; i < len(frames); i++ {
		if frames[i].Dir == replay.RuntimeToClient && frames[i].Kind == replay.Response && string(dec[i].ID) == string(p.ID) {
			tn.messageID = dec[i].Result.MessageID
			break
		}
	}
	tree := []string{tn.session}
	in := false
	for i := prompt + 1; i < len(frames); i++ {
		d := dec[i]
		if frames[i].Dir != replay.RuntimeToClient || frames[i].Kind != replay.Notification {
			continue
		}
		if d.Method == "subagent.started" && slices.Contains(tree, d.Params.ParentSessionID) {
			tree = append(tree, d.Params.ChildSessionID)
		}
		isRoot := d.Params.SessionID == tn.session
		if !in {
			in = isRoot && d.Params.Event.Type == "agent/inbox/spliced" &&
				slices.ContainsFunc(d.Params.Event.Data.Inserted, func(x struct{ ID string }) bool { return x.ID == tn.messageID })
			if !in {
				continue
			}
		}
		if !slices.Contains(tree, d.Params.SessionID) && !slices.Contains(tree, d.Params.ParentSessionID) {
			continue
		}
		tn.notifications++
		if isRoot && d.Method == "session.event" {
			tn.events++
			switch ev := d.Params.Event; ev.Type {
			case "assistant/message":
				tn.final = ""
				for _, c := range ev.Data.Message.Content {
					if c.Type == "text" {
						tn.final += c.Text
					}
				}
			case "turn/end":
				tn.reason = ev.Data.Reason.Kind
			case "assistant/chunk":
				if ev.Data.Chunk.Type == "text-delta" {
					tn.deltas += ev.Data.Chunk.Text
				}
			}
		}
		if isRoot && d.Method == "session.status" && d.Params.Status == "idle" {
			break
		}
	}
	if tn.messageID == "" || tn.events == 0 {
		t.Fatalf("the recording's prompt on line %d has no interval", tn.line)
	}
	return tn
}

// wantContains fails unless s contains every one of wants.
func wantContains(t testing.TB, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}
