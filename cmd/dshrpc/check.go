package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/rpc"
)

const checkUsage = `Usage: dshrpc check [--strict] [--max-frame-size N] [FILE|-]...

Read transcripts of a DSH SDK connection (the frames a client and a runtime
wrote to each other) and report every frame that breaks the rules below,
with its line number, as it is found; then a summary per file, and a total
when there are several. With no FILE, or "-", read stdin. A file holds one
of:

  - raw frames, one JSON-RPC line each (directions are then inferred);
  - a transcript: {"dir":"c2s"|"s2c","frame":"<the exact line>"} per line,
    the format of testdata/transcripts and of 'dshrpc tap' logs (which add
    "t", a timestamp; "frame" may also be the frame as a JSON object).

The rules checked: every frame is one JSON-RPC 2.0 object on a line of its
own, ended by LF, no longer than the maximum frame size. The client (c2s)
sends three requests, initialize, session/prompt and shutdown, and no
notifications; the runtime (s2c) sends no requests, answers each request
once with a response carrying its id, and sends four notifications,
session.event, session.status, subagent.started and subagent.finished.
Params, results, error objects and event envelopes and data have the
members and types the protocol gives them (those that package sdkproto
decodes and validates: a maxTokens that is a positive safe integer, a
reasoningEffort that is a non-empty string, image uploads in canonical
base64, events whose seq and time are integers and whose data is an
object, ...). Each session's events come with rising seqs. Each broken
rule is one of these findings:

Problems (each makes the exit status 1):
  malformed           a line that is not valid JSON, not an object, neither a
                      request, a response nor a notification; a frame longer
                      than the maximum frame size (a reader skips it); a bad
                      transcript line; an unterminated last line
  unknown-method      a method that the sender's side of the protocol lacks:
                      a c2s request other than the three, any c2s
                      notification, any s2c request, an s2c notification
                      other than the four
  bad-payload         params or a result that do not decode or validate
                      (initialize params, prompt content, results, error
                      objects, notification params, event envelopes and data)
  unmatched-response  a response that answers no pending request
  unanswered-request  a request that got no response by the end
  seq-order           an event whose seq is not above the session's last one
Warnings (exit status 1 only with --strict):
  seq-gap             a session's events skip seqs, or a session the client
                      created with its prompt does not start at seq 0 (the
                      real runtime forwards a session's events from its
                      first on, and those of a session it created for a
                      prompt from 0; a subagent child's may start later)
  early-prompt        session/prompt before any initialize succeeded
  run-unfinished      a prompt was answered, but the transcript ends (without
                      a shutdown) before what a client's run awaits: the
                      receipt of the message, then the session's idle
  not-checked         a frame a tap log holds cut short ("truncated":true):
                      its id, method, session and seq still count where
                      its logged first bytes hold them (a response then
                      answers its request); what they do not show leaves
                      the frames it could have matched unjudged

The whole contract, with the reasons for each rule, is docs/wire.md in the
linerpc repository (§2 framing and envelope, §3-§5 methods, payloads and
events, §5.5 subagent seqs, §6.3 what a run awaits).

Exit status: 0 no problem found (no warning either, with --strict); 1
problems found; 2 usage error; 3 a FILE could not be opened or read (the
others are still checked).

Memory is bounded whatever the size of the input: lines are read up to
twice the maximum frame size (transcript lines quote their frame), and the
tables of ids and sessions keep the latest 65536 entries (a request still
unanswered when it is forgotten is reported then).

Flags:
  --strict              warnings count as problems
  --max-frame-size N    the longest frame a reader accepts, in bytes
                        (default 67108864, the rpc default)
`

func checkCmd(e *env, args []string) int {
	fs := newFlagSet("check")
	strict := fs.Bool("strict", false, "")
	maxFrame := fs.Int("max-frame-size", rpc.DefaultMaxFrameSize, "")
	pos, code, err := parseArgs(e, "check", checkUsage, fs, args, true)
	if err != nil {
		return code
	}
	if *maxFrame <= 0 {
		return usageError(e, "check", fmt.Errorf("--max-frame-size must be positive, got %d", *maxFrame))
	}
	if len(pos) == 0 {
		pos = []string{"-"}
	}
	var total transcript.Counts
	status, checked := exitOK, 0
	for _, name := range pos {
		label, in := "<stdin>", e.stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				fmt.Fprintf(e.stderr, "dshrpc check: %v\n", err)
				status = exitRuntime
				continue
			}
			label, in = name, f
		}
		format, counts, err := checkFile(e.stdout, label, in, *maxFrame)
		if f, ok := in.(*os.File); ok && name != "-" {
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "dshrpc check: reading %s: %v\n", label, err)
			status = exitRuntime
			continue
		}
		printSummary(e.stdout, label, format, counts)
		total.Add(counts)
		checked++
		if status == exitOK && (counts.Problems() > 0 || *strict && counts.Warnings() > 0) {
			status = exitFailed
		}
	}
	if len(pos) > 1 {
		printSummary(e.stdout, "total", fmt.Sprintf("%d %s", checked, plural(checked, "file")), total)
	}
	return status
}

// checkFile checks one transcript, printing each finding as it is found.
func checkFile(w io.Writer, label string, in io.Reader, maxFrame int) (string, transcript.Counts, error) {
	return transcript.Read(in, maxFrame, func(f transcript.Finding) {
		warn := ""
		if f.Kind.Warning() {
			warn = "warning: "
		}
		fmt.Fprintf(w, "%s:%d: %s%s: %s\n", label, f.Line, warn, f.Kind, f.Message)
	})
}

// printSummary prints the summary line of a transcript, or of the total.
func printSummary(w io.Writer, label, format string, c transcript.Counts) {
	fmt.Fprintf(w, "%s: %s, %d %s, %d %s (%d %s, %d %s, %d %s): ", label, format,
		c.Lines, plural(c.Lines, "line"), c.Frames, plural(c.Frames, "frame"), c.Requests, plural(c.Requests, "request"),
		c.Responses, plural(c.Responses, "response"), c.Notifications, plural(c.Notifications, "notification"))
	p, wn := c.Problems(), c.Warnings()
	if p+wn == 0 {
		fmt.Fprintln(w, "ok")
		return
	}
	var parts []string
	for _, k := range c.Kinds() {
		parts = append(parts, fmt.Sprintf("%s %d", k, c.Findings[k]))
	}
	fmt.Fprintf(w, "%d %s, %d %s (%s)\n", p, plural(p, "problem"), wn, plural(wn, "warning"), strings.Join(parts, ", "))
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
