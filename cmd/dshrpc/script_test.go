package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scriptPath returns the absolute path of a script of testdata/scripts,
// at the root of the repository, beside the transcripts they imitate.
func scriptPath(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "testdata", "scripts", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServeScriptImitatesRecordings: each script of testdata/scripts
// imitates the recorded turn of the same name (testdata/transcripts).
// dshrpc run renders the turn that serve-script plays as it renders the
// recorded one that serve-replay plays, and exits alike; with --json it
// prints the same notifications, once what a new run does not keep is
// set aside (see comparable). Every script of the directory is run.
func TestServeScriptImitatesRecordings(t *testing.T) {
	cases := []struct {
		name      string
		maxTokens string
		code      int
		want      string // in the rendered turn, so that it cannot be empty alike
	}{
		{"text-turn", "4096", exitOK, "hello from the fake model\n── turn completed · 10 input + 3 output tokens"},
		{"reasoning-turn", "4096", exitOK, "(5 reasoning)"},
		{"tool-call", "4096", exitOK, "← bash: hi"},
		{"tool-call-invalid-args", "4096", exitOK, `✗ bash: Error: invalid arguments: missing required property "description"`},
		{"subagent", "4096", exitOK, "  hi from the child"},
		{"max-tokens", "16", exitFailed, "── turn max-tokens"},
		{"model-error", "4096", exitFailed, "── turn error: fake model rejects this request (INVALID_REQUEST)"},
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "scripts", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inDir, inTable []string
	for _, f := range files {
		inDir = append(inDir, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for _, c := range cases {
		inTable = append(inTable, c.name)
	}
	slices.Sort(inDir)
	slices.Sort(inTable)
	if !slices.Equal(inDir, inTable) {
		t.Errorf("testdata/scripts holds %q; the cases run %q", inDir, inTable)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recorded, rec := recording(t, c.name)
			script := scriptPath(t, c.name)
			prompt := rec.Prompts()[0].Text
			for _, flags := range [][]string{nil, {"--json", "--session", "mine"}} {
				run := func(runtime string) result {
					args := append([]string{"run", "--runtime", runtime, "--max-tokens", c.maxTokens}, flags...)
					r := dshrpc(t, "", append(args, prompt)...)
					r.wantCode(t, c.code)
					if r.stderr != "" {
						t.Errorf("%s: stderr: %s", runtime, r.stderr)
					}
					return r
				}
				want := run(bin + " serve-replay '" + recorded + "'")
				got := run(bin + " serve-script '" + script + "'")
				json := len(flags) > 0
				if !json {
					wantContains(t, "the rendered turn", got.stdout, c.want)
				}
				w, g := comparable(t, want.stdout, json), comparable(t, got.stdout, json)
				for i := range max(len(w), len(g)) {
					var wl, gl string
					if i < len(w) {
						wl = w[i]
					}
					if i < len(g) {
						gl = g[i]
					}
					if wl != gl {
						t.Fatalf("run %q: line %d of %d (replayed) and %d (scripted) differ:\nreplayed %s\nscripted %s", flags, i+1, len(w), len(g), wl, gl)
					}
				}
			}
		})
	}
}

// childID is a child session's id as a rendered turn shows it.
var childID = regexp.MustCompile(`subagent [0-9a-f]{8} `)

// uuid is a message's or a child session's id.
var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// comparable returns the lines of what run printed, without what a new
// run of the same turn does not keep: the times of events, the ids that
// the runtime and the model choose (messages, child sessions, tool
// calls), each replaced by its rank among them so that the references
// between frames are still compared; and the real runtime's system prompt
// and tool list in request/header, which a script does not imitate.
func comparable(t *testing.T, out string, isJSON bool) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !isJSON {
		for i, l := range lines {
			lines[i] = childID.ReplaceAllString(l, "subagent <child> ")
		}
		return lines
	}
	ids := map[string]string{}
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "time")
			for k, x := range v {
				v[k] = walk(k, x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk("", x)
			}
		case string:
			if uuid.MatchString(v) || (key == "id" || key == "callId" || key == "toolCallId") && strings.HasPrefix(v, "call") {
				if ids[v] == "" {
					ids[v] = fmt.Sprintf("<id %d>", len(ids)+1)
				}
				return ids[v]
			}
		}
		return v
	}
	for i, l := range lines {
		var f struct {
			Params struct {
				Event struct {
					Type string
					Data struct{ Header map[string]any }
				}
			}
		}
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil || json.Unmarshal([]byte(l), &f) != nil {
			t.Fatalf("line %d is not a frame: %v\n%s", i+1, err, l)
		}
		if f.Params.Event.Type == "request/header" {
			header := v.(map[string]any)["params"].(map[string]any)["event"].(map[string]any)["data"].(map[string]any)["header"].(map[string]any)
			delete(header, "system")
			delete(header, "tools")
		}
		b, _ := json.Marshal(walk("", v)) // its members sorted
		lines[i] = string(b)
	}
	return lines
}

// TestServeScriptOnStdio: serve-script answers a client on its stdin and
// stdout and exits at the end of its input: 0 when every prompt had its
// turn; when prompts came past the script, it answers each with -32603
// and exits 1, naming the first on stderr.
func TestServeScriptOnStdio(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/srv","provider":"p","model":"m"}}` + "\n"
	prompt := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"hi"}]}}`+"\n", id)
	}
	for _, c := range []struct {
		name, script, input string
		code                int
		stdout              []string
		stderr              string
	}{
		{"served", `{"turns": [[{"kind": "text", "parts": ["hello"]}]]}`, initialize + prompt(2), exitOK,
			[]string{`{"jsonrpc":"2.0","id":2,"result":{"messageId":`}, ""},
		// Prompts sent at once are numbered in the order they are served:
		// either of the two is prompt 1, the first.
		{"past", `{"turns": []}`, initialize + prompt(2) + prompt(3), exitFailed,
			[]string{
				`"error":{"code":-32603,"message":"scripted: no turn scripted for prompt 1 (session main), past the script's 0 turns"}}`,
				`"error":{"code":-32603,"message":"scripted: no turn scripted for prompt 2 (session main), past the script's 0 turns"}}`,
			},
			"dshrpc serve-script: no turn scripted for prompt 1 (session main), past the script's 0 turns (and 1 more prompt after it)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), c.name+".json")
			if err := os.WriteFile(script, []byte(c.script), 0o644); err != nil {
				t.Fatal(err)
			}
			r := dshrpc(t, c.input, "serve-script", script)
			r.wantCode(t, c.code)
			wantContains(t, "stdout", r.stdout, append([]string{`{"jsonrpc":"2.0","id":1,"result":{"serverInfo":`}, c.stdout...)...)
			if r.stderr != c.stderr {
				t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, c.stderr)
			}
		})
	}
}

// TestServeScriptSIGTERM: SIGTERM in the middle of a turn ends
// serve-script with 0, as it ends the real runtime; with 1 when a prompt
// came past the script before it, which serve-script names.
func TestServeScriptSIGTERM(t *testing.T) {
	for _, c := range []struct {
		name   string
		past   bool // a second prompt, past the script, before SIGTERM
		code   int
		stderr string
	}{
		{"mid-turn", false, exitOK, ""},
		{"past the script", true, exitFailed, "dshrpc serve-script: no turn scripted for prompt 2 (session s2), past the script's 1 turn\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "long.json")
			if err := os.WriteFile(script, []byte(`{"turns": [[{"kind": "text", "parts": ["before"]}, {"kind": "pause", "duration": "1h"}]]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "serve-script", script)
			// The input is held open (Wait closes it): its end would end
			// serving before SIGTERM does.
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.WaitDelay = 5 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/srv","provider":"p","model":"m"}}`+"\n"+
				`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"hi"}]}}`+"\n")
			readUntil(t, stdout, `"text":"before"`, testTimeout) // the turn is in its pause
			if c.past {
				io.WriteString(stdin, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s2","contentBlocks":[{"type":"text","text":"more"}]}}`+"\n")
				readUntil(t, stdout, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"scripted: no turn scripted for prompt 2 (session s2), past the script's 1 turn"}}`, testTimeout)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			new(bytes.Buffer).ReadFrom(stdout)
			err = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("serve-script did not exit within %s of its start, SIGTERM included; stderr:\n%s", testTimeout, stderr.String())
			}
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || stderr.String() != c.stderr {
				t.Fatalf("exit status %d, stderr:\n%s\nwant %d, stderr:\n%s", code, stderr.String(), c.code, c.stderr)
			}
		})
	}
}

func TestServeScriptUsage(t *testing.T) {
	r := dshrpc(t, "", "-h")
	wantContains(t, "dshrpc -h", r.stdout, "dshrpc serve-script FILE", "a script (serve-script)")
	for _, args := range [][]string{{"serve-script", "-h"}, {"help", "serve-script"}} {
		r := dshrpc(t, "", args...)
		r.wantCode(t, exitOK)
		wantContains(t, strings.Join(args, " "), r.stdout, "Usage: dshrpc serve-script [--quiet] FILE", `{"kind": "text", "parts": ["Hel", "lo"]}`, "Exit status:")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing FILE, the script to serve"},
		{[]string{"a", "b"}, `unexpected argument "b": one script is served`},
		{[]string{"-"}, "the script cannot be read from stdin, which is the client's: name a FILE"},
		{[]string{"--bogus", "a"}, "flag provided but not defined: --bogus"},
	} {
		r := dshrpc(t, "", append([]string{"serve-script"}, c.args...)...)
		r.wantCode(t, exitUsage)
		wantContains(t, "serve-script "+strings.Join(c.args, " "), r.stderr, c.want, "Run 'dshrpc serve-script -h' for usage.")
	}
}

// TestServeScriptBadScript: a script that cannot be read exits 3 and
// says where it is wrong, before reading a frame.
func TestServeScriptBadScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	missing := filepath.Join(dir, "missing.json")
	kind := write("kind.json", `{"turns": [[], [{"kind": "text"}, {"kind": "max-tokens"}, {"kind": "txt"}]]}`)
	late := write("late.json", `{"turns": [[{"kind": "max-tokens"}, {"kind": "text", "parts": ["late"]}]]}`)
	syntax := write("syntax.json", "{\"turns\": [\n  [{\"kind\": \"text\"},]\n]}\n")
	for path, want := range map[string]string{
		missing: "dshrpc serve-script: open " + missing + ": ",
		kind:    "dshrpc serve-script: " + kind + `: turns[1][2]: unknown kind "txt" (one of text, reasoning,`,
		late:    "dshrpc serve-script: " + late + ": turns[0][1]: text after the turn ended",
		syntax:  "dshrpc serve-script: " + syntax + ":2:21: invalid character ']' looking for beginning of value",
	} {
		r := dshrpc(t, `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`+"\n", "serve-script", path)
		r.wantCode(t, exitRuntime)
		if !strings.HasPrefix(r.stderr, want) || r.stdout != "" {
			t.Errorf("serve-script %s: stdout %q, stderr:\n%s\nwant it to start with\n%s", filepath.Base(path), r.stdout, r.stderr, want)
		}
	}
}
