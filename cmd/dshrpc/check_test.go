package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/transcript"
)

// The recorded transcripts check as the rules say (internal/transcript
// tests which finding each gives): the exit status fails on problems, and
// on warnings only with --strict.
func TestCheckRecordedTranscripts(t *testing.T) {
	dir := "../../testdata/transcripts/"
	for name, code := range map[string]int{
		"errors.ndjson":                   exitFailed, // problems
		"prompt-before-initialize.ndjson": exitOK,     // a warning
		"subagent.ndjson":                 exitOK,
		"text-turn.ndjson":                exitOK,
	} {
		r := dshrpc(t, "", "check", dir+name)
		r.wantCode(t, code)
	}
	r := dshrpc(t, "", "check", "--strict", dir+"prompt-before-initialize.ndjson")
	r.wantCode(t, exitFailed)
	// What the real runtime does passes --strict: the subagent child's
	// first forwarded event has seq 2 (docs/wire.md §5.5).
	for _, name := range []string{"subagent.ndjson", "text-turn.ndjson"} {
		r = dshrpc(t, "", "check", "--strict", dir+name)
		r.wantCode(t, exitOK)
		if !strings.HasSuffix(r.stdout, ": ok\n") {
			t.Errorf("summary: %s", r.stdout)
		}
	}
}

var findingRE = regexp.MustCompile(`(?m)^[^\n]*?:(\d+): (?:warning: )?([a-z-]+): `)

// findingsOf extracts "line kind" of every finding check printed.
func findingsOf(out string) []string {
	var got []string
	for _, m := range findingRE.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	return got
}

// Findings are printed as found, "FILE:LINE: [warning: ]KIND: message",
// then the summary of the file; stdin reads the same.
func TestCheckOutput(t *testing.T) {
	in := tInit + "\n" + tInitOK + "\n" +
		"not json at all\n" +
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[]}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/start","seq":3,"time":1,"data":{"turn":1}}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session.status"` // unterminated
	path := filepath.Join(t.TempDir(), "bad.ndjson")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dshrpc(t, "", "check", path)
	r.wantCode(t, exitFailed)
	if got, want := strings.Join(findingsOf(r.stdout), ","), "3 malformed,5 seq-gap,6 malformed,4 unanswered-request"; got != want {
		t.Errorf("findings %s, want %s:\n%s", got, want, r.stdout)
	}
	wantContains(t, "check", r.stdout,
		path+":3: malformed: not valid JSON",
		path+":5: warning: seq-gap: session s: its first event (turn/start) has seq 3, not 0",
		path+":4: unanswered-request: c2s request \"session/prompt\" (id 5) got no response",
		path+": raw frames, 6 lines, 5 frames (2 requests, 1 response, 1 notification): 3 problems, 1 warning (malformed 2, seq-gap 1, unanswered-request 1)\n")
	r2 := dshrpc(t, in, "check")
	r2.wantCode(t, exitFailed)
	if strings.ReplaceAll(r2.stdout, "<stdin>", path) != r.stdout {
		t.Errorf("stdin output differs:\n%s", r2.stdout)
	}
}

func TestCheckUsage(t *testing.T) {
	r := dshrpc(t, "", "check", "--max-frame-size", "0")
	r.wantCode(t, exitUsage)
	// A file that cannot be read is an I/O failure, not a usage error.
	r = dshrpc(t, "", "check", "/no/such/transcript")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "no such file or directory")
	r = dshrpc(t, "", "check")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "<stdin>: empty, 0 lines")
}

// TestCheckUsageNamesTheRules: check -h says what the rules are, for
// someone with the binary alone, and lists every kind of finding; the
// pointer to docs/wire.md comes only after the rules, as an addition.
func TestCheckUsageNamesTheRules(t *testing.T) {
	r := dshrpc(t, "", "check", "-h")
	r.wantCode(t, exitOK)
	rules := []string{
		"one JSON-RPC 2.0 object on a line of its\nown, ended by LF",
		"three requests, initialize, session/prompt and shutdown",
		"the runtime (s2c) sends no requests, answers each request\nonce",
		"session.event, session.status, subagent.started and subagent.finished",
		"come with rising seqs",
	}
	wantContains(t, "check -h", r.stdout, rules...)
	for _, k := range []transcript.Kind{transcript.Malformed, transcript.UnknownMethod, transcript.BadPayload,
		transcript.UnmatchedResponse, transcript.UnansweredRequest, transcript.SeqOrder,
		transcript.SeqGap, transcript.EarlyPrompt, transcript.RunUnfinished, transcript.NotChecked} {
		if !strings.Contains(r.stdout, "\n  "+string(k)+" ") {
			t.Errorf("check -h does not describe the finding %s", k)
		}
	}
	doc := strings.Index(r.stdout, "docs/wire.md")
	if doc < 0 || doc < strings.Index(r.stdout, "Each broken rule is one of these findings") {
		t.Errorf("check -h points to docs/wire.md before it states the rules (or not at all):\n%s", r.stdout)
	}
}
