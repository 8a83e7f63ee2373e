package interop_test

// The DSH protocol's OpenRPC document (sdkproto.OpenRPCDocument, what
// dshrpc schema prints) against the OpenRPC tools of the npm registry:
// @open-rpc/schema-utils-js validates it as an OpenRPC 1.3 document, and
// ajv 8 judges every value the Go validator judges in the recorded
// transcripts (testdata/transcripts) and the wire vectors
// (testdata/vectors), with the same verdicts, and so the same counts.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/dshdoc"
	"github.com/linerpc/linerpc/internal/peers"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/sdkproto"
)

// dshNeedTools returns the interop folder when node and the pinned OpenRPC
// tools are there; otherwise it skips the test, or fails it when peers are
// required (LINERPC_REQUIRE_PEERS=1).
func dshNeedTools(t *testing.T) string {
	t.Helper()
	dir := needPeers(t)
	for _, f := range []string{
		"node_modules/ajv/package.json",
		"node_modules/ajv-formats/package.json",
		"node_modules/@open-rpc/schema-utils-js/package.json",
		"js/ajv-validate.mjs",
		"js/openrpc-validate.mjs",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			peers.Missing(t, fmt.Errorf("the OpenRPC tools are not installed (interop/%s is missing): run `make interop-install`", f))
		}
	}
	return dir
}

// dshNode runs node with args in dir, stdin given, within bound, and
// returns its stdout and exit status; stderr goes into the failure
// messages.
func dshNode(t *testing.T, dir string, stdin []byte, bound time.Duration, args ...string) ([]byte, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node %s did not end within %s; stderr:\n%s", strings.Join(args, " "), bound, errb.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("node %s: %d bytes in, exit %d, %v", strings.Join(args, " "), len(stdin), cmd.ProcessState.ExitCode(), time.Since(start).Round(time.Millisecond))
	return out.Bytes(), cmd.ProcessState.ExitCode(), errb.String()
}

// dshWriteJSON writes v, indented, to a file of the test's.
func dshWriteJSON(t *testing.T, name string, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDSHDocumentIsOpenRPC: @open-rpc/schema-utils-js validates the DSH
// document against the OpenRPC 1.3 meta-schema, dereferences it (it has no
// recursive schema, which the library could not dereference), validates
// it again and parses it: seven methods, the four notifications without a
// result, every component counted, no $ref left in the methods.
func TestDSHDocumentIsOpenRPC(t *testing.T) {
	dir := dshNeedTools(t)
	doc := sdkproto.OpenRPCDocument()
	path := dshWriteJSON(t, "dsh.openrpc.json", doc)
	out, code, stderr := dshNode(t, dir, nil, 2*testTimeout, "js/openrpc-validate.mjs", path)
	var r struct {
		Valid         bool              `json:"valid"`
		OpenRPC       string            `json:"openrpc"`
		Title         string            `json:"title"`
		Methods       int               `json:"methods"`
		Notifications []string          `json:"notifications"`
		Schemas       int               `json:"schemas"`
		RefsLeft      []string          `json:"refsLeft"`
		Circular      bool              `json:"circular"`
		Stage         string            `json:"stage"`
		Errors        []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("openrpc-validate printed %q (exit %d): %v\nstderr:\n%s", out, code, err, stderr)
	}
	if code != 0 || !r.Valid {
		t.Fatalf("schema-utils-js refuses the document (exit %d, stage %q): %s\nstderr:\n%s", code, r.Stage, r.Errors, stderr)
	}
	want := []string{"session.event", "session.status", "subagent.started", "subagent.finished"}
	if r.OpenRPC != openrpc.Version || r.Title != doc.Info.Title || r.Methods != len(doc.Methods) || !slices.Equal(r.Notifications, want) ||
		r.Schemas != len(doc.Components.Schemas) || len(r.RefsLeft) != 0 || r.Circular {
		t.Errorf("schema-utils-js read %s; want openrpc %s, title %q, %d methods, notifications %v, %d schemas, no ref left, not circular",
			out, openrpc.Version, doc.Info.Title, len(doc.Methods), want, len(doc.Components.Schemas))
	}
}

// dshCheckKey identifies a value to validate: its method, params or
// result, and its JSON text.
func dshCheckKey(c dshdoc.Check) string {
	kind := "params"
	if c.Result {
		kind = "result"
	}
	return c.Method + "\x00" + kind + "\x00" + string(dshValueLine(c))
}

// dshValueLine is the value of c on one line, as ajv is given it: absent
// params are no params, {} to a method with params by name, as the Go
// validator reads them.
func dshValueLine(c dshdoc.Check) []byte {
	if c.Value == nil {
		return []byte("{}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, c.Value); err != nil {
		return c.Value // not JSON: ajv says so, as the Go validator does
	}
	return buf.Bytes()
}

// dshPointer is the JSON pointer of c's schema in the document ajv is
// given: /x-frames/params/<method> or /x-frames/results/<method>.
func dshPointer(c dshdoc.Check) string {
	kind := "params"
	if c.Result {
		kind = "results"
	}
	return "/x-frames/" + kind + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(c.Method)
}

// TestDSHFramesAjvAgreesWithGo: every value the Go validator judges in the
// recorded transcripts and the vectors (params and results, each by the
// schema of its method) is judged alike by ajv 8 on the same document
// (draft-07, as ajv-validate.mjs compiles a pointer into a document); so
// the transcripts' counts and the vectors' verdicts, judged with ajv, are
// those of the Go test (sdkproto's TestOpenRPCDocumentTranscripts and
// TestOpenRPCDocumentVectors), and hold the tables of docs/sdkproto.md
// the same way.
func TestDSHFramesAjvAgreesWithGo(t *testing.T) {
	dir := dshNeedTools(t)
	doc := sdkproto.OpenRPCDocument()
	v, err := validator.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	goVerdict := func(c dshdoc.Check) error {
		if c.Result {
			return v.Result(c.Method, c.Value)
		}
		return v.Params(c.Method, c.Value)
	}

	// The Go verdicts, and every value they judged.
	checks := map[string]dshdoc.Check{}
	goVerdicts := map[string]error{}
	recording := func(c dshdoc.Check) error {
		key := dshCheckKey(c)
		err := goVerdict(c)
		checks[key], goVerdicts[key] = c, err
		return err
	}
	goCounts, goProblems, err := dshdoc.JudgeTranscripts(doc, recording)
	if err != nil {
		t.Fatal(err)
	}
	goVectors, err := dshdoc.JudgeVectors(doc, recording)
	if err != nil {
		t.Fatal(err)
	}

	// ajv's, one process per schema, on the document with each method's
	// params schema (as openrpc.Method.ParamsSchema assembles it from its
	// params by name) and result schema at a pointer of its own.
	var raw map[string]any
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	params, results := map[string]any{}, map[string]any{}
	for i := range doc.Methods {
		m := &doc.Methods[i]
		params[m.Name] = m.ParamsSchema()
		if m.Result != nil {
			results[m.Name] = m.Result.Schema
		}
	}
	raw["x-frames"] = map[string]any{"params": params, "results": results}
	path := dshWriteJSON(t, "dsh-frames.json", raw)

	byPointer := map[string][]string{} // pointer → keys, in the order given to ajv
	for key, c := range checks {
		byPointer[dshPointer(c)] = append(byPointer[dshPointer(c)], key)
	}
	pointers := make([]string, 0, len(byPointer))
	for p := range byPointer {
		pointers = append(pointers, p)
		sort.Strings(byPointer[p])
	}
	sort.Strings(pointers)
	ajvVerdicts := map[string]error{}
	var tally []string
	for _, p := range pointers {
		keys := byPointer[p]
		var in bytes.Buffer
		for _, key := range keys {
			in.Write(dshValueLine(checks[key]))
			in.WriteByte('\n')
		}
		out, code, stderr := dshNode(t, dir, in.Bytes(), 2*testTimeout, "js/ajv-validate.mjs", path, "--pointer", p)
		if code != 0 && code != 1 {
			t.Fatalf("ajv-validate --pointer %s: exit %d\nstderr:\n%s", p, code, stderr)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
		n, refused := 0, 0
		for sc.Scan() {
			var r struct {
				Line   int               `json:"line"`
				Valid  bool              `json:"valid"`
				Errors []json.RawMessage `json:"errors"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("ajv-validate --pointer %s printed %q: %v", p, sc.Bytes(), err)
			}
			if r.Line != n+1 || n >= len(keys) {
				t.Fatalf("ajv-validate --pointer %s answered line %d after %d answers, of %d values", p, r.Line, n, len(keys))
			}
			var verdict error
			if !r.Valid {
				refused++
				verdict = fmt.Errorf("ajv: %s", bytes.Join(func() [][]byte {
					var e [][]byte
					for _, x := range r.Errors {
						e = append(e, x)
					}
					return e
				}(), []byte(", ")))
			}
			ajvVerdicts[keys[n]] = verdict
			n++
		}
		if n != len(keys) {
			t.Fatalf("ajv-validate --pointer %s answered %d of %d values\nstderr:\n%s", p, n, len(keys), stderr)
		}
		tally = append(tally, fmt.Sprintf("%-38s %4d values, %3d refused", p, n, refused))
	}
	t.Logf("ajv judged %d distinct values:\n%s", len(checks), strings.Join(tally, "\n"))

	// Value by value, the same verdicts.
	agree := 0
	for key, c := range checks {
		goErr, ajvErr := goVerdicts[key], ajvVerdicts[key]
		if (goErr == nil) != (ajvErr == nil) {
			t.Errorf("%s %s: the Go validator says %v, ajv says %v; the value: %.300s", dshPointer(c), map[bool]string{true: "result", false: "params"}[c.Result],
				goErr, ajvErr, dshValueLine(c))
			continue
		}
		agree++
	}

	// The same counts and verdicts, frame by frame and vector by vector.
	ajvVerdict := func(c dshdoc.Check) error {
		err, ok := ajvVerdicts[dshCheckKey(c)]
		if !ok {
			t.Fatalf("a value ajv was not given: %s", dshCheckKey(c))
		}
		return err
	}
	ajvCounts, ajvProblems, err := dshdoc.JudgeTranscripts(doc, ajvVerdict)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ajvProblems {
		t.Errorf("with ajv: %s", p)
	}
	if len(goProblems) > 0 {
		t.Errorf("the Go validator finds problems in the transcripts (sdkproto's TestOpenRPCDocumentTranscripts says which): %d", len(goProblems))
	}
	var lines []string
	for i, c := range append(ajvCounts, dshdoc.Total(ajvCounts)) {
		g := dshdoc.Total(goCounts)
		if i < len(goCounts) {
			g = goCounts[i]
		}
		if c.String() != g.String() || !slices.Equal(dshWhere(c.Refused), dshWhere(g.Refused)) {
			t.Errorf("with ajv: %s\nwith Go:  %s", c, g)
		}
		lines = append(lines, c.String())
	}
	t.Logf("transcripts, judged with ajv:\n%s", strings.Join(lines, "\n"))

	ajvVectors, err := dshdoc.JudgeVectors(doc, ajvVerdict)
	if err != nil {
		t.Fatal(err)
	}
	for i, vv := range ajvVectors {
		if gv := goVectors[i]; (vv.Err == nil) != (gv.Err == nil) {
			t.Errorf("%s %s: ajv says %v, Go says %v", vv.File, vv.Name, vv.Err, gv.Err)
		}
	}
	exceptions, err := dshdoc.Exceptions()
	if err != nil {
		t.Fatal(err)
	}
	problems, counts := dshdoc.CompareVectors(ajvVectors, exceptions)
	for _, p := range problems {
		t.Errorf("with ajv: %s", p)
	}
	t.Logf("vectors, judged with ajv (%d of %d distinct values judged alike):\n%s", agree, len(checks), strings.Join(counts, "\n"))
}

// dshWhere cuts each of refused ("file:line method: why") to where it is,
// since the two validators word why differently.
func dshWhere(refused []string) []string {
	out := make([]string, len(refused))
	for i, r := range refused {
		out[i], _, _ = strings.Cut(r, ": ")
	}
	return out
}
