package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto/replay"
)

// badLines are lines a client in another language may write by mistake,
// each with the report a serve command writes for it on stderr, after
// "dshrpc COMMAND: ".
var badLines = []struct{ line, report string }{
	{"hello", "ignored an input line (malformed JSON: "},
	{"[1,2]", "ignored an input line (not a JSON object): [1,2]"},
	{`{"jsonrpc":"2.0","id":1,"meth`, "ignored an input line (malformed JSON: "},
	{`{"jsonrpc":"2.0","method":"note"}`, `ignored an input line (notification without a handler, method note): {"jsonrpc":"2.0","method":"note"}`},
	{`{"jsonrpc":"2.0","id":41,"result":{}}`, `ignored an input line (response to no pending call): {"jsonrpc":"2.0","id":41,"result":{}}`},
	{"\x1b[31mred\tline", "ignored an input line (malformed JSON: "},
	{`{"x":"` + strings.Repeat("é", 60) + `"}`, "ignored an input line (neither request, response nor notification): "},
}

// badLineEnds are how the reports of badLines end: the start of the line,
// legible and bounded.
var badLineEnds = []string{
	"): hello",
	"): [1,2]",
	`): {"jsonrpc":"2.0","id":1,"meth`,
	`): {"jsonrpc":"2.0","method":"note"}`,
	`): {"jsonrpc":"2.0","id":41,"result":{}}`,
	`): \x1b[31mred\tline`,
	`): {"x":"` + strings.Repeat("é", 37) + "… (128 bytes)",
}

const (
	serveInit     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/srv","provider":"deepseek-official","model":"deepseek-v4-flash"}}`
	serveShutdown = `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
)

// wantReports checks stderr, line by line, against the reports of
// badLines, then of the unterminated tail, each after "dshrpc cmd: ".
func wantReports(t *testing.T, cmd, stderr, tail string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	want := len(badLines)
	if tail != "" {
		want++
	}
	if len(got) != want || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("stderr has %d lines, want %d (one for each line not served):\n%s", len(got), want, stderr)
	}
	for i, b := range badLines {
		prefix := "dshrpc " + cmd + ": " + b.report
		if !strings.HasPrefix(got[i], prefix) || !strings.HasSuffix(got[i], badLineEnds[i]) {
			t.Errorf("stderr line %d:\n%s\nwant it to start with\n%s\nand end with\n%s", i+1, got[i], prefix, badLineEnds[i])
		}
	}
	if tail != "" {
		if want := "dshrpc " + cmd + ": ignored an input line (unterminated line at end of input): " + tail; got[len(got)-1] != want {
			t.Errorf("stderr's last line:\n%s\nwant\n%s", got[len(got)-1], want)
		}
	}
}

// serveInput is badLines, then initialize, then shutdown, or, when there
// is a tail, the tail, which no LF ends (the end of the input ends
// serving, after the tail was read; a shutdown would end it before).
func serveInput(tail string) string {
	var b strings.Builder
	for _, l := range badLines {
		b.WriteString(l.line + "\n")
	}
	b.WriteString(serveInit + "\n")
	if tail == "" {
		b.WriteString(serveShutdown + "\n")
	}
	b.WriteString(tail)
	return b.String()
}

// TestServeReportsDroppedLines: serve-demo and serve-script answer none of
// the lines that are not served, as the runtime does, and report each on
// stderr, in the order they came, with why and how the line starts
// (control characters escaped, 80 bytes at most); the line that the input
// ends without its LF too; the lines they serve are answered as ever, and
// they exit 0. With --quiet, stderr stays empty.
func TestServeReportsDroppedLines(t *testing.T) {
	script := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(script, []byte(`{"turns": [[{"kind": "text", "parts": ["hello"]}]]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		args []string
		tail string
	}{
		{"serve-demo", nil, ""},
		{"serve-demo", nil, `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`},
		{"serve-script", []string{script}, ""},
		{"serve-script", []string{script}, "bye"},
	} {
		t.Run(c.cmd+map[bool]string{true: "/tail", false: ""}[c.tail != ""], func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				args := append([]string{c.cmd}, c.args...)
				if quiet {
					args = append(args, "--quiet")
				}
				r := dshrpc(t, serveInput(c.tail), args...)
				r.wantCode(t, exitOK)
				out := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
				want := []string{`{"jsonrpc":"2.0","id":1,"result":{"serverInfo":`}
				if c.tail == "" {
					want = append(want, `{"jsonrpc":"2.0","id":2,"result":{}}`)
				}
				if len(out) != len(want) || !strings.HasPrefix(out[0], want[0]) || len(want) > 1 && out[1] != want[1] {
					t.Errorf("%q: stdout:\n%s\nwant the answers to initialize (and shutdown) alone", args, r.stdout)
				}
				if quiet {
					if r.stderr != "" {
						t.Errorf("%q: stderr:\n%s\nwant nothing", args, r.stderr)
					}
					continue
				}
				wantReports(t, c.cmd, r.stderr, c.tail)
			}
		})
	}
}

// TestServeReplayReportsDroppedLines: serve-replay, whose client departs
// from the recording with a line that is not a frame, says so with the
// line's start made legible; a line that the input ends without its LF is
// reported (unless --quiet) before the departure it makes, or alone when
// the client had followed the recording to its end.
func TestServeReplayReportsDroppedLines(t *testing.T) {
	t.Run("not a frame", func(t *testing.T) {
		path, _ := recording(t, "text-turn")
		r := dshrpc(t, "\x1b[31mred\tline\n", "serve-replay", path)
		r.wantCode(t, exitFailed)
		want := "dshrpc serve-replay: " + path + `: the client departed from the recording at line 1 (a c2s initialize request): not a JSON-RPC frame: \x1b[31mred\tline` + "\n" +
			`  the client sent: \x1b[31mred\tline` + "\n"
		if r.stdout != "" || r.stderr != want {
			t.Errorf("stdout:\n%s\nstderr:\n%s\nwant no stdout, stderr:\n%s", r.stdout, r.stderr, want)
		}
	})
	t.Run("unterminated", func(t *testing.T) {
		path, rec := recording(t, "text-turn")
		frames := clientFrames(rec, replay.ClientToRuntime) // initialize, prompt, shutdown
		in := frames[0] + "\n" + frames[1] + "\n" + frames[2]
		departure := "dshrpc serve-replay: " + path + ": the client departed from the recording at line 29 (a c2s shutdown request): the client's input ended before it\n"
		r := dshrpc(t, in, "serve-replay", path)
		r.wantCode(t, exitFailed)
		if want := "dshrpc serve-replay: ignored an input line (unterminated line at end of input): " + frames[2] + "\n" + departure; r.stderr != want {
			t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, want)
		}
		r = dshrpc(t, in, "serve-replay", "--quiet", path)
		r.wantCode(t, exitFailed)
		if r.stderr != departure {
			t.Errorf("--quiet: stderr:\n%s\nwant\n%s", r.stderr, departure)
		}
	})
	t.Run("after the end", func(t *testing.T) {
		path, rec := recording(t, "stdin-eof") // no shutdown: the input's end ends it
		tail := strings.Repeat("x", 100)
		r := dshrpc(t, strings.Join(clientFrames(rec, replay.ClientToRuntime), "\n")+"\n"+tail, "serve-replay", path)
		r.wantCode(t, exitOK)
		if want := "dshrpc serve-replay: ignored an input line (unterminated line at end of input): " + tail[:80] + "… (100 bytes)\n"; r.stderr != want {
			t.Errorf("stderr:\n%s\nwant\n%s", r.stderr, want)
		}
	})
}

// TestServeQuietInUsage: each serve command's -h shows --quiet.
func TestServeQuietInUsage(t *testing.T) {
	for _, cmd := range []string{"serve-demo", "serve-replay", "serve-script"} {
		r := dshrpc(t, "", cmd, "-h")
		r.wantCode(t, exitOK)
		wantContains(t, cmd+" -h", r.stdout, "[--quiet]", "  --quiet  do not report on stderr the input lines that are not served")
	}
}

// TestShown: the start of a line as a report shows it.
func TestShown(t *testing.T) {
	for _, c := range []struct {
		line []byte
		size int64
		want string
	}{
		{[]byte("plain"), 5, "plain"},
		{[]byte("tab\there\r"), 9, `tab\there\r`},
		{[]byte("esc\x1b[0m nul\x00 del\x7f"), 16, `esc\x1b[0m nul\x00 del\x7f`},
		{[]byte("bad \xff utf8, c1 \u0085, \"quotes\" and \\ kept"), 38, `bad \xff utf8, c1 \u0085, "quotes" and \ kept`},
		{[]byte(strings.Repeat("a", 100)), 100, strings.Repeat("a", 80) + "… (100 bytes)"},
		{[]byte(strings.Repeat("a", 79) + "€€"), 85, strings.Repeat("a", 79) + "… (85 bytes)"},
		{[]byte("head"), 1000, "head… (1000 bytes)"},
		{nil, 70000000, "70000000 bytes, not shown"},
		{nil, 0, "an empty line"},
	} {
		if got := shown(c.line, c.size); got != c.want {
			t.Errorf("shown(%q, %d) = %q, want %q", c.line, c.size, got, c.want)
		}
	}
}

// TestDropReport: a Drop as a report line: its reason, method and error,
// and, for a line that was answered (Drop.Reply), the error code it was
// answered with; a nil reporter (--quiet) reports nothing.
func TestDropReport(t *testing.T) {
	var buf strings.Builder
	d := newDropReporter(&env{stderr: &buf}, "serve-x", false)
	d.drop(rpc.Drop{Reason: rpc.DropInvalidParams, Method: "m", Err: errors.New("json: cannot unmarshal\tnumber"),
		Line: []byte(`{"id":1,"method":"m","params":3}`), Size: 32, Reply: &rpc.Error{Code: rpc.CodeInvalidParams}})
	d.drop(rpc.Drop{Reason: rpc.DropOversize, Size: 1 << 30})
	want := "dshrpc serve-x: answered an input line with error -32602 (params do not decode, method m: json: cannot unmarshal\\tnumber): " + `{"id":1,"method":"m","params":3}` + "\n" +
		"dshrpc serve-x: ignored an input line (line longer than the maximum frame size): 1073741824 bytes, not shown\n"
	if buf.String() != want {
		t.Errorf("reports:\n%s\nwant\n%s", buf.String(), want)
	}
	quiet := newDropReporter(&env{stderr: &buf}, "serve-x", true)
	if quiet.onDrop() != nil {
		t.Error("a quiet reporter has an OnDrop")
	}
	quiet.unterminated()
	if r := strings.NewReader("x"); quiet.watch(r) != r {
		t.Error("a quiet reporter watches the input")
	}
}
