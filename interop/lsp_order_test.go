package interop_test

// Scenario 5, continued: examples/lsp judged by a reference. The
// reference, js/lsp_reference_server.mjs, is examples/lsp written as a
// JavaScript language server writes it, on the real vscode-jsonrpc server
// MessageConnection: the same handlers, with vscode-jsonrpc deciding when
// each runs. Every message takes its place in one line in the order it
// arrived, and a handler starts once the ones before it have returned or
// awaited something (an async handler's await: a timer, a call to the
// client). A real vscode-jsonrpc client (js/lsp_order_client.mjs) drives
// both servers through the same sessions, and examples/lsp must answer as
// the reference does:
//   - TestLSPReferenceAnswersLikeExamplesLSP: one step at a time, where
//     ordering cannot matter, every response and notification the same
//     (the document model in UTF-16 positions, TODO diagnostics, words,
//     ranged changes, the life cycle's refusals, toy.wait and its
//     cancellation, exit statuses);
//   - TestLSPArrivalOrder: sessions whose answers depend on the order in
//     which handlers start, each lspOrderRuns times against each server;
//     the reference gives the same answers in every run, and examples/lsp
//     must give those in every run.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// lspOrderRuns is how many times each case of TestLSPArrivalOrder
	// runs against each server.
	lspOrderRuns = 50
	// lspOrderParallel is how many of a case's runs are under way at once
	// (each with a server process, or a connection, of its own).
	lspOrderParallel = 10
	// lspOrderWait bounds one client process's runs, every one of them:
	// each wait of a run is bounded by 20 s on the Node side, which
	// reports the one that timed out.
	lspOrderWait = 5 * time.Minute
)

// lspServer is a language server under test: the command line that
// serves one client on stdio, to which "-listen ADDR" adds a listener.
type lspServer struct {
	name string
	cmd  []string
}

// lspServers returns the reference and examples/lsp (built, with -race
// when the test binary has it).
func lspServers(t *testing.T) (ref, lsp lspServer) {
	t.Helper()
	bin := buildLSP(t)
	return lspServer{"reference", []string{"node", "js/lsp_reference_server.mjs"}}, lspServer{"examples/lsp", []string{bin}}
}

// listen starts s on a listener of network (unix or tcp) and returns the
// client's target for it. The server is ended with SIGTERM when the test
// ends, and must then exit 0.
func (s lspServer) listen(t *testing.T, network string) []string {
	t.Helper()
	addr := "tcp:127.0.0.1:0"
	if network == "unix" {
		addr = "unix:" + filepath.Join(t.TempDir(), "s")
	}
	cmd := exec.Command(s.cmd[0], append(s.cmd[1:], "-listen", addr)...)
	cmd.Dir = needPeers(t)
	srv, where := listenLSPCmd(t, cmd)
	t.Cleanup(func() {
		if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("SIGTERM to %s: %v", s.name, err)
		}
		srv.mustExit(lspWait, 0)
	})
	kind, address, _ := strings.Cut(where, ":")
	return []string{kind, address}
}

// lspRun is the report of one run (js/lsp_order_client.mjs).
type lspRun struct {
	// Transcript is what the server sent, as the client read it: the
	// answer to each request by label, the notifications of each method
	// in order, the server's requests, the order of the answers (when the
	// case compares it), the process's exit (on stdio).
	Transcript json.RawMessage `json:"transcript"`
	// Error says why the run stopped before its end (a wait that timed
	// out, naming what it waited for).
	Error string `json:"error"`
	// Stderr is what the server wrote on its stderr (on stdio).
	Stderr string `json:"stderr"`
	// Writes are the batches of frames written in one write each.
	Writes []struct {
		Frames []string `json:"frames"`
		Bytes  int      `json:"bytes"`
	} `json:"writes"`
}

// outcome is what runs are compared by: the transcript and the error, as
// canonical JSON.
func (r lspRun) outcome() string {
	var v any
	if err := json.Unmarshal(r.Transcript, &v); err != nil {
		v = string(r.Transcript)
	}
	b, _ := json.Marshal(map[string]any{"transcript": v, "error": r.Error})
	return string(b)
}

// decoded returns the transcript's members.
func (r lspRun) decoded() lspTranscript {
	var tr lspTranscript
	json.Unmarshal(r.Transcript, &tr)
	return tr
}

type lspTranscript struct {
	Answers        map[string]json.RawMessage   `json:"answers"`
	Order          []string                     `json:"order"`
	Notifications  map[string][]json.RawMessage `json:"notifications"`
	ServerRequests []struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"serverRequests"`
	Exit *lspExit `json:"exit"`
}

// hover returns the word the answer to label shows ("**word**"), or
// what it was instead: null, an error, unanswered.
func (tr lspTranscript) hover(label string) string {
	var a struct {
		Result *struct {
			Contents struct {
				Value string `json:"value"`
			} `json:"contents"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	raw, ok := tr.Answers[label]
	switch {
	case !ok:
		return "not asked"
	case json.Unmarshal(raw, &a) != nil:
		return string(raw) // "unanswered"
	case a.Error != nil:
		return "error " + string(a.Error)
	case a.Result == nil:
		return "null"
	}
	return a.Result.Contents.Value
}

// runLSPOrder runs js/lsp_order_client.mjs: the case script, runs times,
// against target (stdio and a server's command line, or a socket).
func runLSPOrder(t *testing.T, script string, runs int, target []string) []lspRun {
	t.Helper()
	var report struct {
		Runs []lspRun `json:"runs"`
		Ms   int      `json:"ms"`
	}
	args := append([]string{"js/lsp_order_client.mjs", script, strconv.Itoa(runs), strconv.Itoa(lspOrderParallel)}, target...)
	runNodeReport(t, &report, lspOrderWait, args...)
	if len(report.Runs) != runs {
		t.Fatalf("%d runs reported, want %d", len(report.Runs), runs)
	}
	return report.Runs
}

// checkStderr fails the test for each run in which the server wrote on
// its stderr (the race detector's reports among others).
func checkStderr(t *testing.T, who string, runs []lspRun) {
	t.Helper()
	for i, r := range runs {
		if r.Stderr != "" {
			t.Errorf("run %d: %s wrote on its stderr:\n%s", i, who, r.Stderr)
		}
	}
}

// differences lists where got differs from want (two runs' outcomes), at
// most max lines, each naming the member and what each side had:
// "transcript.answers.hover 3: reference X, examples/lsp Y".
func differences(want, got string, wantName, gotName string, max int) []string {
	d := diffOutcomes(want, got, wantName, gotName, max)
	return d.lines
}

func diffOutcomes(want, got string, wantName, gotName string, max int) *differ {
	var w, g any
	json.Unmarshal([]byte(want), &w)
	json.Unmarshal([]byte(got), &g)
	d := &differ{names: [2]string{wantName, gotName}, max: max}
	d.diff(nil, w, g)
	return d
}

// differ walks two JSON values and notes where they differ: the path of
// members and indices, and a line saying what each side had.
type differ struct {
	names [2]string
	max   int
	lines []string
	paths [][]string
}

func (d *differ) diff(path []string, want, got any) {
	if len(d.lines) >= d.max || reflect.DeepEqual(want, got) {
		return
	}
	child := func(k string) []string { return append(slices.Clip(path), k) }
	switch w := want.(type) {
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			keys := make([]string, 0, len(w)+len(g))
			for k := range w {
				keys = append(keys, k)
			}
			for k := range g {
				if _, ok := w[k]; !ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				d.diff(child(k), w[k], g[k])
			}
			return
		}
	case []any:
		if g, ok := got.([]any); ok && len(g) == len(w) {
			for i := range w {
				d.diff(child(strconv.Itoa(i)), w[i], g[i])
			}
			return
		}
	}
	d.paths = append(d.paths, path)
	d.lines = append(d.lines, fmt.Sprintf("%s: %s %.400s, %s %.400s", strings.Join(path, "."), d.names[0], compactJSON(want), d.names[1], compactJSON(got)))
}

// differingMembers names the members of two runs' transcripts that
// differ, two levels down ("answers.hover 3", "exit.code").
func differingMembers(want, got string) []string {
	var out []string
	for _, path := range diffOutcomes(want, got, "", "", 1000).paths {
		if len(path) > 0 && path[0] == "transcript" {
			path = path[1:]
		}
		m := strings.Join(path[:min(2, len(path))], ".")
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// countsByName shows counts as "name (n), ...", in the order of names.
func countsByName(counts map[string]int) string {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%d)", n, counts[n])
	}
	return b.String()
}

func compactJSON(v any) string {
	if v == nil {
		return "(absent or null)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The reference answers as examples/lsp does wherever the order in which
// handlers start cannot matter: the sessions of js/lsp_order_client.mjs
// that send each message once the answers to the ones before it came
// (requests sent together are all hovers, with no change between them).
// Every response and notification is compared, and how the process
// ended.
func TestLSPReferenceAnswersLikeExamplesLSP(t *testing.T) {
	ref, lsp := lspServers(t)
	for _, tc := range []struct{ name, script string }{
		// The document model (every position of texts with surrogate
		// pairs, combining marks, letters and digits of other scripts,
		// \n, \r\n and \r, TODOs side by side, a lone surrogate; ranged
		// changes), the life cycle (before initialize, initialize twice,
		// after shutdown), the configuration asked once, toy/add,
		// toy/fail, unknown methods and commands, toy.wait's refusals, its
		// log's numbers (%g) and its cancellation, exit after shutdown.
		{"Model", "model"},
		{"ExitWithoutShutdown", "exitWithoutShutdown"},
		{"InputEnds", "inputEnds"},
		{"InputEndsWithoutShutdown", "inputEndsWithoutShutdown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := runLSPOrder(t, tc.script, 1, append([]string{"stdio"}, ref.cmd...))[0]
			got := runLSPOrder(t, tc.script, 1, append([]string{"stdio"}, lsp.cmd...))[0]
			checkStderr(t, ref.name, []lspRun{want})
			checkStderr(t, lsp.name, []lspRun{got})
			if want.Error != "" {
				t.Fatalf("the reference's run stopped: %s", want.Error)
			}
			if w, g := want.outcome(), got.outcome(); w != g {
				t.Errorf("examples/lsp answered otherwise than the reference:\n%s", strings.Join(differences(w, g, "reference", "examples/lsp", 20), "\n"))
			}
			tr := want.decoded()
			t.Logf("%d answers, %d notifications compared", len(tr.Answers), len(tr.Notifications["textDocument/publishDiagnostics"])+len(tr.Notifications["window/logMessage"]))
		})
	}
}

// lspOrderCase is a case of TestLSPArrivalOrder: a script of
// js/lsp_order_client.mjs, driven over the servers' stdio (a process per
// run) or over a -listen socket (a connection per run), and what the case
// asks of the answers, checked on the reference's.
type lspOrderCase struct {
	name, script string
	network      string // "unix" or "tcp"; "" for stdio
	asks         func(tr lspTranscript) error
}

var lspOrderCases = []lspOrderCase{
	// (a) Typing: didOpen; then didChange (full text "change_i TODO") and
	// hover at 0:3, ten times, sent back to back without awaiting,
	// through vscode-jsonrpc's own writer (each frame's header and body in
	// writes of their own). Each hover must see the change before it.
	{name: "Typing", script: "typing", asks: func(tr lspTranscript) error {
		for i := 1; i <= 10; i++ {
			if got, want := tr.hover(fmt.Sprintf("hover %d", i)), fmt.Sprintf("**change_%d**", i); got != want {
				return fmt.Errorf("hover %d: %s, want %s", i, got, want)
			}
		}
		return exitZero(tr)
	}},
	// (b) A client with the workspace.configuration capability, as VS
	// Code: once initialize is answered, initialized, didOpen and hover in
	// ONE write. The hover must see the document (the server's
	// initialized awaits the client's answer to workspace/configuration
	// meanwhile), and the configuration request must be answered.
	{name: "ConfigurationThenHover", script: "configuration", asks: func(tr lspTranscript) error {
		if got := tr.hover("hover"); got != "**configured_world**" {
			return fmt.Errorf("hover: %s, want **configured_world**", got)
		}
		if len(tr.ServerRequests) != 1 || tr.ServerRequests[0].Method != "workspace/configuration" {
			return fmt.Errorf("the server's requests: %+v, want one workspace/configuration", tr.ServerRequests)
		}
		if logs := tr.Notifications["window/logMessage"]; len(logs) != 1 || !strings.Contains(string(logs[0]), "configuration toy: ") {
			return fmt.Errorf("logs: %s, want the configuration's", logs)
		}
		return exitZero(tr)
	}},
	// (c) Over a socket: hover, then didChange, in ONE write. The hover
	// must see the text from before the change.
	{name: "HoverThenChangeInOneWrite/unix", script: "hoverThenChange", network: "unix", asks: hoverBeforeChange},
	{name: "HoverThenChangeInOneWrite/tcp", script: "hoverThenChange", network: "tcp", asks: hoverBeforeChange},
	// (d) shutdown while toy.wait [3000] runs (it logged that it waits):
	// shutdown's answer must come first. A wait still running once either
	// is answered is then cancelled.
	{name: "ShutdownDuringWait", script: "shutdownDuringWait", asks: func(tr lspTranscript) error {
		s, w := slices.Index(tr.Order, "shutdown"), slices.Index(tr.Order, "toy.wait")
		if s < 0 || w < 0 || s > w {
			return fmt.Errorf("answers in the order %q, want shutdown's before toy.wait's", tr.Order)
		}
		return exitZero(tr)
	}},
	// (e) A whole session in ONE write: initialize, initialized, didOpen,
	// hover, didChange, hover, shutdown, exit. Every request answered,
	// each hover from the text before it, and the server exits 0.
	{name: "WholeSessionInOneWrite", script: "wholeSession", asks: func(tr lspTranscript) error {
		for label, raw := range tr.Answers {
			if string(raw) == `"unanswered"` {
				return fmt.Errorf("%s unanswered", label)
			}
		}
		if a, b := tr.hover("hover 1"), tr.hover("hover 2"); a != "**first_word**" || b != "**second_word**" {
			return fmt.Errorf("hovers %s and %s, want **first_word** and **second_word**", a, b)
		}
		return exitZero(tr)
	}},
}

func hoverBeforeChange(tr lspTranscript) error {
	if got := tr.hover("hover"); got != "**before_word**" {
		return fmt.Errorf("hover: %s, want **before_word**", got)
	}
	return nil
}

func exitZero(tr lspTranscript) error {
	if tr.Exit == nil || !tr.Exit.is(0) {
		return fmt.Errorf("the server ended with %v, want code 0", tr.Exit)
	}
	return nil
}

// Each case runs lspOrderRuns times against the reference, which must
// give the same answers in every run (and those the case asks for), then
// as many times against examples/lsp, which must give the reference's in
// every run. Each case's subtests say how many runs did; the cases run in
// parallel with one another. TestLSPArrivalOrder/.*/reference runs the
// reference alone.
func TestLSPArrivalOrder(t *testing.T) {
	ref, lsp := lspServers(t)
	for _, c := range lspOrderCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			target := func(t *testing.T, s lspServer) []string {
				if c.network != "" {
					return s.listen(t, c.network)
				}
				return append([]string{"stdio"}, s.cmd...)
			}
			// The reference's runs, made once, by the first subtest that
			// needs them.
			var (
				once    sync.Once
				refRuns []lspRun
			)
			reference := func(t *testing.T) []lspRun {
				once.Do(func() { refRuns = runLSPOrder(t, c.script, lspOrderRuns, target(t, ref)) })
				return refRuns
			}
			t.Run("reference", func(t *testing.T) {
				runs := reference(t)
				checkStderr(t, ref.name, runs)
				first := runs[0].outcome()
				var differ []string
				for i, r := range runs {
					if r.Error != "" {
						t.Errorf("run %d of the reference stopped: %s", i, r.Error)
					}
					if r.outcome() != first {
						differ = append(differ, fmt.Sprintf("run %d:\n  %s", i, strings.Join(differences(first, r.outcome(), "run 0", fmt.Sprintf("run %d", i), 8), "\n  ")))
					}
				}
				t.Logf("%s, reference: %d of %d runs gave the answers of its first run", c.name, len(runs)-len(differ), len(runs))
				if len(differ) > 0 {
					t.Errorf("the reference answered otherwise in %d of %d runs than in its first:\n%s", len(differ), len(runs), strings.Join(differ[:min(3, len(differ))], "\n"))
				}
				if err := c.asks(runs[0].decoded()); err != nil {
					t.Errorf("the reference does not answer as the case asks: %v\n%s", err, runs[0].Transcript)
				}
			})
			// The reference's answers are those of its first run (the
			// subtest above fails unless every run gave them).
			t.Run("examples-lsp", func(t *testing.T) {
				refs := reference(t)
				if len(refs) == 0 {
					t.Fatal("no runs of the reference to compare with")
				}
				want := refs[0].outcome()
				runs := runLSPOrder(t, c.script, lspOrderRuns, target(t, lsp))
				checkStderr(t, lsp.name, runs)
				var differ []int
				var shown []string
				members := map[string]int{} // the members that differ, and in how many runs
				for i, r := range runs {
					if r.outcome() == want {
						continue
					}
					differ = append(differ, i)
					for _, m := range differingMembers(want, r.outcome()) {
						members[m]++
					}
					if len(shown) < 3 {
						why := ""
						if err := c.asks(r.decoded()); err != nil {
							why = " (" + err.Error() + ")"
						}
						shown = append(shown, fmt.Sprintf("run %d%s:\n  %s", i, why, strings.Join(differences(want, r.outcome(), "reference", "examples/lsp", 8), "\n  ")))
					}
				}
				t.Logf("%s, examples/lsp: %d of %d runs gave the reference's answers", c.name, len(runs)-len(differ), len(runs))
				if len(differ) > 0 {
					t.Errorf("examples/lsp answered otherwise than the reference in %d of %d runs %v\nin these members (runs): %s\nthe first:\n%s",
						len(differ), len(runs), differ, countsByName(members), strings.Join(shown, "\n"))
				}
			})
		})
	}
}
