package replay_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto/replay"
)

// transcriptNames lists the recorded transcripts of testdata.
func transcriptNames(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "transcripts", "*.ndjson"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".ndjson"))
	}
	return names
}

// entry is one line of a transcript.
type entry struct {
	Dir   string `json:"dir"`
	Frame string `json:"frame"`
}

// entries reads a recorded transcript line by line.
func entries(t testing.TB, name string) []entry {
	t.Helper()
	f, err := os.Open(transcriptPath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// rawFrames renders a transcript as raw frames, one a line, each with
// the prefix that prefix returns for its direction.
func rawFrames(es []entry, prefix func(dir string) string) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(prefix(e.Dir) + e.Frame + "\n")
	}
	return b.String()
}

// tapLog renders a transcript as dshrpc tap logs it.
func tapLog(es []entry) string {
	var b strings.Builder
	for i, e := range es {
		line, _ := json.Marshal(map[string]any{"t": fmt.Sprintf("2026-01-01T00:00:%02d.000000001Z", i%60), "dir": e.Dir, "frame": e.Frame})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func loadString(t testing.TB, s string) *replay.Recording {
	t.Helper()
	rec, err := replay.Load(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestLoadFormats loads every transcript as a transcript, as a tap log and
// as raw frames, with directions inferred and given: the frames and their
// directions are those of the file in each form.
func TestLoadFormats(t *testing.T) {
	for _, name := range transcriptNames(t) {
		es := entries(t, name)
		none := func(string) string { return "" }
		short := func(d string) string { return d + " " }
		arrows := func(d string) string { return map[string]string{"c2s": "C→S ", "s2c": "S→C "}[d] }
		for _, c := range []struct {
			form   string
			format replay.Format
			rec    *replay.Recording
		}{
			{"transcript", replay.FormatTranscript, load(t, name)},
			{"tap log", replay.FormatTapLog, loadString(t, tapLog(es))},
			{"raw frames, directions inferred", replay.FormatRaw, loadString(t, rawFrames(es, none))},
			{"raw frames, c2s and s2c", replay.FormatRaw, loadString(t, rawFrames(es, short))},
			{"raw frames, C→S and S→C", replay.FormatRaw, loadString(t, rawFrames(es, arrows))},
		} {
			if got := c.rec.Format(); got != c.format {
				t.Errorf("%s as %s: format %q, want %q", name, c.form, got, c.format)
			}
			frames := c.rec.Frames()
			if len(frames) != len(es) {
				t.Errorf("%s as %s: %d frames, want %d", name, c.form, len(frames), len(es))
				continue
			}
			for i, f := range frames {
				if f.Line != i+1 || string(f.Dir) != es[i].Dir || f.Text != es[i].Frame {
					t.Errorf("%s as %s: frame %d is line %d %s %.80s, want line %d %s %.80s", name, c.form, i, f.Line, f.Dir, f.Text, i+1, es[i].Dir, es[i].Frame)
					break
				}
			}
		}
	}
}

func TestLoadClassifies(t *testing.T) {
	rec := load(t, "errors")
	var kinds []string
	for _, f := range rec.ClientFrames() {
		kinds = append(kinds, fmt.Sprintf("%d %s %s", f.Line, f.Kind, f.Method))
	}
	want := "1 request initialize|2 request initialize|3 request initialize|4 request initialize|5 request initialize|" +
		"6 request initialize|7 request initialize|8 request session/cancel|9 notification no/such/notification|" +
		"10 request initialize|20 request shutdown"
	if got := strings.Join(kinds, "|"); got != want {
		t.Errorf("client frames of errors:\n%s\nwant\n%s", got, want)
	}
	p, ok := load(t, "max-tokens").InitializeParams()
	if n, set := p.MaxTokens.Int64(); !ok || p.Provider != "deepseek-official" || p.Model != "deepseek-v4-flash" || !set || n != 16 {
		t.Errorf("InitializeParams of max-tokens: %+v %v", p, ok)
	}
	if _, ok := load(t, "prompt-before-initialize").InitializeParams(); !ok {
		t.Error("prompt-before-initialize: no initialize params")
	}
	if _, ok := loadString(t, `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`+"\n").InitializeParams(); ok {
		t.Error("a recording without initialize has initialize params")
	}
	ps := load(t, "two-sessions").Prompts()
	if len(ps) != 2 || ps[0].Line != 3 || ps[0].SessionID != "s1" || ps[0].Text != "alpha question" ||
		ps[1].Line != 4 || ps[1].SessionID != "s2" || ps[1].Text != "beta question" || len(ps[1].Blocks) != 1 {
		t.Errorf("prompts of two-sessions: %+v", ps)
	}
}

// TestLoadBlankLinesAndLastLine: blank lines are skipped (line numbers
// still count them), and a last line without LF is read.
func TestLoadBlankLinesAndLastLine(t *testing.T) {
	rec := loadString(t, "\n  \n"+`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`+"\n\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`)
	fs := rec.Frames()
	if len(fs) != 2 || fs[0].Line != 3 || fs[0].Dir != replay.ClientToRuntime || fs[1].Line != 5 || fs[1].Dir != replay.RuntimeToClient || fs[1].Kind != replay.Response {
		t.Errorf("frames: %+v", fs)
	}
}

func TestLoadErrors(t *testing.T) {
	prompt := `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`
	for _, c := range []struct{ name, in, want string }{
		{"empty", "\n \n", "replay: the recording holds no frame"},
		{"cut by tap", `{"t":"x","dir":"c2s","frame":"{\"jsonrpc\"","truncated":true,"size":900}` + "\n",
			"replay: line 1: the log cut this frame short"},
		{"bad transcript line", `{"dir":"c2s","frame":"{}"}` + "\n" + `{"dir":"sideways","frame":"{}"}` + "\n",
			`replay: line 2: a transcript line without dir "c2s" or "s2c"`},
		{"not JSON in a transcript", `{"dir":"c2s","frame":"{}"}` + "\nnot json\n", "replay: line 2: not a transcript line"},
		{"frame missing", `{"dir":"c2s","frame":"{}"}` + "\n" + `{"dir":"c2s","t":"x"}` + "\n", "replay: line 2: a transcript line without frame"},
		{"raw garbage", prompt + "\nhello there\n", "replay: line 2: not a JSON-RPC frame, so its direction cannot be told"},
		{"raw response unasked", prompt + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
			"replay: line 2: a response to id 2, which no request before it awaits, so its direction cannot be told"},
	} {
		_, err := replay.Load(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// With its direction given, garbage and an unasked response load.
	rec := loadString(t, prompt+"\ns2c hello there\ns2c "+`{"jsonrpc":"2.0","id":2,"result":{}}`+"\n")
	if fs := rec.Frames(); len(fs) != 3 || fs[1].Kind != replay.Malformed || fs[2].Kind != replay.Response {
		t.Errorf("frames: %+v", fs)
	}
	// A tap log's unterminated last line is left out: no reader takes it.
	rec = loadString(t, `{"t":"x","dir":"c2s","frame":"`+strings.ReplaceAll(prompt, `"`, `\"`)+`"}`+"\n"+
		`{"t":"y","dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,","unterminated":true}`+"\n")
	if fs := rec.Frames(); rec.Format() != replay.FormatTapLog || len(fs) != 1 {
		t.Errorf("tap log with an unterminated line: %s, %+v", rec.Format(), fs)
	}
}
