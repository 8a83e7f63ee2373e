package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

func TestWrapperWrapsAtWordsWithIndent(t *testing.T) {
	var b bytes.Buffer
	w := &wrapper{w: &b, width: 20, indent: 2}
	// Streamed in pieces that split words, as deltas do.
	for _, part := range []string{"the quick bro", "wn fox jumps over ", "the lazy dog and keeps", " running\nnew para"} {
		w.text(part, plain)
	}
	w.endLine()
	want := "  the quick brown\n  fox jumps over the\n  lazy dog and keeps\n  running\n  new para\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if len(l) > 20 {
			t.Errorf("line longer than 20: %q", l)
		}
	}
}

func TestWrapperPlainWritesThrough(t *testing.T) {
	var b bytes.Buffer
	w := &wrapper{w: &b}
	w.text("a very long line that is never wrapped when the output is not a terminal", plain)
	w.line("→ tool args", cyan)
	if strings.Contains(b.String(), "\x1b") || strings.Count(b.String(), "\n") != 2 {
		t.Errorf("got %q", b.String())
	}
}

// renderDemo renders a demo turn for prompt, in-process, with colour.
func renderDemo(t *testing.T, prompt string, color bool, width int) string {
	t.Helper()
	r, w, wait := serveInProcess(0)
	c := sdkproto.NewClient(r, w, nil)
	defer func() { c.Close(); wait() }()
	if _, err := c.Initialize(t.Context(), sdkproto.InitializeParams{Cwd: "/", Provider: "deepseek-official", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rd := newRenderer(&b, color, width, "main", c.ParentOf)
	if _, err := c.RunFunc(t.Context(), "main", func(n sdkproto.Notification) error { rd.notification(n); return nil }, sdkproto.TextBlock(prompt)); err != nil {
		t.Fatal(err)
	}
	rd.finish()
	return b.String()
}

func TestRenderColour(t *testing.T) {
	out := renderDemo(t, "/think deep thoughts", true, 80)
	wantContains(t, "coloured output", out,
		"\x1b[2;3mThinking about: deep thoughts\x1b[0m\n", // reasoning dimmed (no "thinking:" label with colour)
		"\x1b[1;32m── turn completed")
	if strings.Contains(out, "thinking: ") {
		t.Errorf("label with colour on: %q", out)
	}
	out = renderDemo(t, "/fail nope", true, 80)
	wantContains(t, "coloured failure", out, "\x1b[1;31m── turn error: nope (DEMO_FAILURE)")
	out = renderDemo(t, "/tool x", true, 80)
	wantContains(t, "coloured tools", out, "\x1b[36m→ echo {\"text\":\"x\"}\x1b[0m", "\x1b[32m← echo: x\x1b[0m")
}

func TestRenderWrapsSubagentOutputIndented(t *testing.T) {
	out := renderDemo(t, "/subagent "+strings.Repeat("word ", 12), false, 24)
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, "  word") && len(l) > 24 {
			t.Errorf("child line not wrapped at 24: %q", l)
		}
	}
	if strings.Count(out, "\n  word") < 3 {
		t.Errorf("child output not wrapped and indented:\n%s", out)
	}
}

func TestOutputStyle(t *testing.T) {
	env := func(stdout any, vars map[string]string) *env {
		e := &env{getenv: func(k string) string { return vars[k] }}
		if f, ok := stdout.(*os.File); ok {
			e.stdout = f
		} else {
			e.stdout = &bytes.Buffer{}
		}
		return e
	}
	if c, w := outputStyle(env(nil, nil), false); c || w != 0 {
		t.Errorf("buffer: colour %v width %d", c, w)
	}
	// /dev/null is a character device like a terminal, which is all that
	// isTerminal can see without x/term: it stands in for one here.
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	if c, w := outputStyle(env(tty, map[string]string{"COLUMNS": "100"}), false); !c || w != 100 {
		t.Errorf("tty: colour %v width %d", c, w)
	}
	if c, _ := outputStyle(env(tty, map[string]string{"NO_COLOR": "1"}), false); c {
		t.Error("NO_COLOR ignored")
	}
	if c, w := outputStyle(env(tty, nil), true); c || w != 80 {
		t.Errorf("--no-color: colour %v width %d", c, w)
	}
}
