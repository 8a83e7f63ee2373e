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
//     cancellation, exit statuses).

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
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
	bin := buildLSP(t)
	return lspServer{"reference", []string{"node", "js/lsp_reference_server.mjs"}}, lspServer{"examples/lsp", []string{bin}}
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
