package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto/replay"
)

// recording returns the absolute path of a recorded transcript and the
// recording loaded from it.
func recording(t *testing.T, name string) (string, *replay.Recording) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "testdata", "transcripts", name+".ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := loadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, rec
}

// TestServeReplayDrivesRun: dshrpc run, with dshrpc serve-replay of a
// recorded transcript as its runtime, renders the recorded turn and exits
// as its end says; its own session id and cwd are not the recorded ones.
func TestServeReplayDrivesRun(t *testing.T) {
	for _, c := range []struct {
		name      string
		maxTokens string
		code      int
		want      []string
	}{
		{"text-turn", "4096", exitOK, []string{"hello from the fake model\n", "── turn completed · 10 input + 3 output tokens"}},
		{"reasoning-turn", "4096", exitOK, []string{"thinking: let me think about it", "the answer", "(5 reasoning)"}},
		{"tool-call", "4096", exitOK, []string{`→ bash {"command":"echo hi","description":"print hi"}`, "← bash: hi", "the command printed hi"}},
		{"tool-call-invalid-args", "4096", exitOK, []string{`✗ bash: Error: invalid arguments: missing required property "description"`}},
		{"subagent", "4096", exitOK, []string{"↳ subagent cde254d6 started", "  hi from the child", "← subagent: hi from the child", "the child said hi", "subagents 10 input + 3 output tokens"}},
		{"max-tokens", "16", exitFailed, []string{"this answer is cut", "── turn max-tokens"}},
		{"model-error", "4096", exitFailed, []string{"── turn error: fake model rejects this request (INVALID_REQUEST)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, rec := recording(t, c.name)
			r := dshrpc(t, "", "run", "--runtime", bin+" serve-replay '"+path+"'", "--max-tokens", c.maxTokens, rec.Prompts()[0].Text)
			r.wantCode(t, c.code)
			wantContains(t, "stdout", r.stdout, c.want...)
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
		})
	}
}

// TestServeReplayDrivesRunJSON: with --json, run prints the recorded
// notifications of the turn, with its own session id in place of "main".
func TestServeReplayDrivesRunJSON(t *testing.T) {
	path, rec := recording(t, "text-turn")
	r := dshrpc(t, "", "run", "--json", "--session", "mine", "--runtime", bin+" serve-replay '"+path+"'", "--max-tokens", "4096", "say hi")
	r.wantCode(t, exitOK)
	var want []string
	for _, f := range rec.Frames() {
		if f.Kind == replay.Notification && !strings.Contains(f.Text, `"permission/preset"`) &&
			!strings.Contains(f.Text, `"sandbox/mode"`) && !strings.Contains(f.Text, `"approval/policy"`) {
			want = append(want, f.Text)
		}
	}
	got := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d notifications printed, %d recorded from the receipt on:\n%s", len(got), len(want), r.stdout)
	}
	for i := range got {
		var g, w struct {
			Method string
			Params map[string]json.RawMessage
		}
		json.Unmarshal([]byte(got[i]), &g)
		json.Unmarshal([]byte(want[i]), &w)
		if g.Method != w.Method || string(g.Params["sessionId"]) != `"mine"` || string(g.Params["event"]) != string(w.Params["event"]) && !strings.Contains(want[i], "/tmp/") {
			t.Errorf("notification %d:\ngot  %.200s\nwant %.200s", i, got[i], want[i])
		}
	}
}

// TestServeReplayDeparture: a run that departs from the recording is
// refused with the line and what differed, and serve-replay says so.
func TestServeReplayDeparture(t *testing.T) {
	path, _ := recording(t, "text-turn")
	runtime := bin + " serve-replay '" + path + "'"
	r := dshrpc(t, "", "run", "--stderr", "--runtime", runtime, "--max-tokens", "4096", "say bye")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr,
		`dshrpc run: the runtime refused prompt: replay: the client departed from the recording at line 3 (a c2s session/prompt request): params.contentBlocks[0].text: recorded "say hi", got "say bye" (code -32603)`,
		"dshrpc serve-replay: "+path+`: the client departed from the recording at line 3 (a c2s session/prompt request): params.contentBlocks[0].text: recorded "say hi", got "say bye"`,
		`  the client sent: {"jsonrpc":"2.0","id":2,"method":"session/prompt"`)

	r = dshrpc(t, "", "run", "--runtime", runtime, "--max-tokens", "4096", "--model", "deepseek-v4-pro", "say hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr,
		`dshrpc run: the runtime refused initialize: replay: the client departed from the recording at line 1 (a c2s initialize request): params.model: recorded "deepseek-v4-flash", got "deepseek-v4-pro" (code -32603)`)
}

// clientFrames returns the recording's client frames, one a line.
func clientFrames(rec *replay.Recording, dir replay.Dir) []string {
	var out []string
	for _, f := range rec.Frames() {
		if f.Dir == dir {
			out = append(out, f.Text)
		}
	}
	return out
}

// TestServeReplayOnStdio: the recorded client frames on stdin get the
// recorded runtime frames on stdout, byte for byte, and exit 0.
func TestServeReplayOnStdio(t *testing.T) {
	for _, name := range []string{"text-turn", "errors", "two-sessions", "stdin-eof", "prompt-before-initialize"} {
		t.Run(name, func(t *testing.T) {
			path, rec := recording(t, name)
			in := strings.Join(clientFrames(rec, replay.ClientToRuntime), "\n") + "\n"
			r := dshrpc(t, in, "serve-replay", path)
			r.wantCode(t, exitOK)
			want := strings.Join(clientFrames(rec, replay.RuntimeToClient), "\n") + "\n"
			if r.stdout != want {
				t.Errorf("stdout:\n%.2000s\nwant\n%.2000s", r.stdout, want)
			}
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
		})
	}
}

func TestServeReplayDepartureOnStdio(t *testing.T) {
	path, rec := recording(t, "text-turn")
	frames := clientFrames(rec, replay.ClientToRuntime)
	replies := clientFrames(rec, replay.RuntimeToClient)

	r := dshrpc(t, frames[0]+"\n"+`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"say bye"}]}}`+"\n", "serve-replay", path)
	r.wantCode(t, exitFailed)
	want := replies[0] + "\n" + `{"jsonrpc":"2.0","id":"p","error":{"code":-32603,"message":"replay: the client departed from the recording at line 3 (a c2s session/prompt request): params.contentBlocks[0].text: recorded \"say hi\", got \"say bye\""}}` + "\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant\n%s", r.stdout, want)
	}
	wantContains(t, "stderr", r.stderr, "dshrpc serve-replay: "+path+": the client departed from the recording at line 3")

	r = dshrpc(t, frames[0]+"\n", "serve-replay", path)
	r.wantCode(t, exitFailed)
	if r.stdout != replies[0]+"\n" {
		t.Errorf("stdout: %s", r.stdout)
	}
	wantContains(t, "stderr", r.stderr, "dshrpc serve-replay: "+path+": the client departed from the recording at line 3 (a c2s session/prompt request): the client's input ended before it\n")
}

func TestServeReplayUsage(t *testing.T) {
	r := dshrpc(t, "", "-h")
	wantContains(t, "dshrpc -h", r.stdout, "dshrpc serve-replay FILE", "the client\n       departed from the recording (serve-replay)")
	for _, args := range [][]string{{"serve-replay", "-h"}, {"help", "serve-replay"}} {
		r := dshrpc(t, "", args...)
		r.wantCode(t, exitOK)
		wantContains(t, strings.Join(args, " "), r.stdout, "Usage: dshrpc serve-replay [--list] [--quiet] FILE", "Exit status:")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing FILE, the recording to serve"},
		{[]string{"a", "b"}, `unexpected argument "b": one recording is served`},
		{[]string{"-"}, "the recording cannot be read from stdin, which is the client's: name a FILE"},
		{[]string{"--bogus", "a"}, "flag provided but not defined: --bogus"},
	} {
		r := dshrpc(t, "", append([]string{"serve-replay"}, c.args...)...)
		r.wantCode(t, exitUsage)
		wantContains(t, "serve-replay "+strings.Join(c.args, " "), r.stderr, c.want, "Run 'dshrpc serve-replay -h' for usage.")
	}
}

func TestServeReplayBadRecording(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.ndjson")
	r := dshrpc(t, "", "serve-replay", missing)
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "dshrpc serve-replay: open "+missing)

	cut := filepath.Join(dir, "cut.ndjson")
	os.WriteFile(cut, []byte(`{"t":"x","dir":"c2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}"}`+"\n"+
		`{"t":"y","dir":"s2c","frame":"{\"jsonrpc\"","truncated":true,"size":40}`+"\n"), 0o644)
	r = dshrpc(t, "", "serve-replay", cut)
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "dshrpc serve-replay: "+cut+": line 2: the log cut this frame short")
}

func TestServeReplayList(t *testing.T) {
	path, _ := recording(t, "two-sessions")
	r := dshrpc(t, "", "serve-replay", "--list", path)
	r.wantCode(t, exitOK)
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		lines = append(lines, strings.SplitN(l, "\t", 2)[0])
	}
	if strings.Join(lines, ",") != "1,3,4,55" || !strings.Contains(r.stdout, "4\t"+`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"contentBlocks":[{"text":"beta question","type":"text"}],"sessionId":"s2"}}`) {
		t.Errorf("--list:\n%s", r.stdout)
	}
}
