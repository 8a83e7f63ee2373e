package sdkproto_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/dshdoc"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// documentJSON returns the document as dshrpc schema prints it.
func documentJSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.MarshalIndent(sdkproto.OpenRPCDocument(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var documentValidator = sync.OnceValues(func() (*validator.Validator, error) {
	return validator.New(sdkproto.OpenRPCDocument())
})

func documentChecker(t testing.TB) *validator.Validator {
	t.Helper()
	v, err := documentValidator()
	if err != nil {
		t.Fatalf("validator.New(OpenRPCDocument()): %v", err)
	}
	return v
}

// goVerdict is the Go validator's verdict on a check.
func goVerdict(v *validator.Validator) dshdoc.Verdict {
	return func(c dshdoc.Check) error {
		if c.Result {
			return v.Result(c.Method, c.Value)
		}
		return v.Params(c.Method, c.Value)
	}
}

// TestOpenRPCDocumentDeterministic: every call gives a new document with
// the same bytes, from any goroutine; changing one changes no other; the
// bytes read back into the same document, and compile into a Validator.
func TestOpenRPCDocumentDeterministic(t *testing.T) {
	first := documentJSON(t)
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() { got[i] = documentJSON(t) })
	}
	wg.Wait()
	for i, b := range got {
		if !bytes.Equal(b, first) {
			t.Fatalf("call %d wrote other bytes than the first", i+1)
		}
	}

	d := sdkproto.OpenRPCDocument()
	d.Methods[0].Name = "changed"
	d.Methods[0].Extensions[sdkproto.DirectionExtension] = json.RawMessage(`"nowhere"`)
	d.Components.Schemas["ContentBlock"].OneOf[0].Required[0] = "changed"
	d.Info.Title = "changed"
	if !bytes.Equal(documentJSON(t), first) {
		t.Fatal("changing a document changed the next one")
	}

	var back openrpc.Document
	if err := json.Unmarshal(first, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.MarshalIndent(&back, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, first) {
		t.Fatalf("the document does not read back whole:\n%s", again)
	}
	if _, err := validator.New(&back); err != nil {
		t.Fatalf("the document read back does not compile: %v", err)
	}
	documentChecker(t)
}

// TestOpenRPCDocumentMethods: the three requests and the four
// notifications, in docs/wire.md §1's order, each marked with its
// direction and described; the requests answer only -32603; the
// notifications have no result; every schema reference resolves.
func TestOpenRPCDocumentMethods(t *testing.T) {
	d := sdkproto.OpenRPCDocument()
	want := []struct {
		name, dir string
		params    []string
	}{
		{"initialize", sdkproto.DirectionClientToRuntime, []string{"cwd", "provider", "model", "reasoningEffort", "maxTokens"}},
		{"session/prompt", sdkproto.DirectionClientToRuntime, []string{"sessionId", "contentBlocks"}},
		{"shutdown", sdkproto.DirectionClientToRuntime, nil},
		{"session.event", sdkproto.DirectionRuntimeToClient, []string{"sessionId", "event"}},
		{"session.status", sdkproto.DirectionRuntimeToClient, []string{"sessionId", "status"}},
		{"subagent.started", sdkproto.DirectionRuntimeToClient, []string{"parentSessionId", "childSessionId"}},
		{"subagent.finished", sdkproto.DirectionRuntimeToClient, []string{"provider", "agentId", "parentSessionId", "childSessionId", "status", "stopReason", "lastAssistantMessage"}},
	}
	if d.OpenRPC != openrpc.Version || d.Info.Title == "" || d.Info.Version != sdkproto.ServerVersion || len(d.Methods) != len(want) {
		t.Fatalf("document %q %q %q with %d methods", d.OpenRPC, d.Info.Title, d.Info.Version, len(d.Methods))
	}
	for i, w := range want {
		m := d.Methods[i]
		var names []string
		for _, p := range m.Params {
			names = append(names, p.Name)
		}
		if m.Name != w.name || string(m.Extensions[sdkproto.DirectionExtension]) != `"`+w.dir+`"` || !slices.Equal(names, w.params) ||
			m.ParamStructure != "by-name" || m.Summary == "" || m.Description == "" || len(m.Examples) == 0 {
			t.Errorf("method %d: %s %s params %v structure %q summary %q, %d examples; want %s %s params %v, by-name, described",
				i, m.Name, m.Extensions[sdkproto.DirectionExtension], names, m.ParamStructure, m.Summary, len(m.Examples), w.name, w.dir, w.params)
		}
		if notification := w.dir == sdkproto.DirectionRuntimeToClient; m.IsNotification() != notification || (len(m.Errors) > 0) == notification {
			t.Errorf("%s: notification %v with %d errors", m.Name, m.IsNotification(), len(m.Errors))
		}
		for _, e := range m.Errors {
			if e.Code != int64(rpc.CodeInternalError) || e.Message == "" || e.Data != nil {
				t.Errorf("%s: error %+v; the runtime answers -32603 and a message, without data (docs/wire.md §2.6)", m.Name, e)
			}
		}
	}
	// Every $ref names a component; every component is referred to.
	b := documentJSON(t)
	refs := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				refs[strings.TrimPrefix(r, "#/components/schemas/")] = true
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var all any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	walk(all)
	for name := range refs {
		if d.Components.Schemas[name] == nil {
			t.Errorf("$ref to %q, which the components lack", name)
		}
	}
	for name := range d.Components.Schemas {
		if !refs[name] {
			t.Errorf("component %q is referred to by nothing", name)
		}
	}
}

// TestOpenRPCDocumentExamples: each method's example is a frame of the
// transcript its summary names, verbatim (as JSON values): the params of
// a call of the method, and for a request the result the runtime answered
// it with; and the document accepts it.
func TestOpenRPCDocumentExamples(t *testing.T) {
	v := documentChecker(t)
	for _, m := range sdkproto.OpenRPCDocument().Methods {
		for _, ex := range m.Examples {
			params := map[string]json.RawMessage{}
			for _, p := range ex.Params {
				params[p.Name] = p.Value
			}
			var paramsJSON json.RawMessage // none, as shutdown's example has
			if len(params) > 0 {
				paramsJSON, _ = json.Marshal(params)
			}
			if err := v.Params(m.Name, paramsJSON); err != nil {
				t.Errorf("%s example %q: params refused: %v", m.Name, ex.Name, err)
			}
			if ex.Result != nil {
				if err := v.Result(m.Name, ex.Result.Value); err != nil {
					t.Errorf("%s example %q: result refused: %v", m.Name, ex.Name, err)
				}
			}
			frames, err := dshdoc.ReadTranscript(filepath.Join(dshdoc.Root(), ex.Summary))
			if err != nil {
				t.Errorf("%s example %q: its summary names no transcript: %v", m.Name, ex.Name, err)
				continue
			}
			if !recorded(t, frames, m.Name, paramsJSON, ex.Result) {
				t.Errorf("%s example %q: no such call in %s (params %s)", m.Name, ex.Name, ex.Summary, paramsJSON)
			}
		}
	}
}

// recorded reports whether frames hold a call of method with params (nil:
// none) whose response, for a request, has the result of want.
func recorded(t *testing.T, frames []dshdoc.Frame, method string, params json.RawMessage, want *openrpc.ExampleObject) bool {
	var ids []json.RawMessage
	for _, f := range frames {
		var fr struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(f.Raw, &fr); err != nil {
			t.Fatal(err)
		}
		switch {
		case fr.Method == method && sameJSON(fr.Params, params):
			if want == nil {
				return true
			}
			ids = append(ids, fr.ID)
		case fr.Method == "" && fr.Result != nil && slices.ContainsFunc(ids, func(id json.RawMessage) bool { return sameJSON(id, fr.ID) }):
			if want != nil && sameJSON(fr.Result, want.Value) {
				return true
			}
		}
	}
	return false
}

func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	cx, _ := json.Marshal(x) // map keys sorted
	cy, _ := json.Marshal(y)
	return bytes.Equal(cx, cy)
}

// TestOpenRPCDocumentTranscripts: every frame the real runtime wrote in
// the recorded transcripts (testdata/transcripts) is accepted by the
// document: each notification's params by its method's schema, each
// result by its request's result schema (matched by id). Every request
// the recording client wrote is accepted too, except those that the
// runtime refused with an error response (errors.ndjson sends bad
// maxTokens on purpose): the document refuses no frame the runtime
// accepted. The counts are logged (go test -v).
func TestOpenRPCDocumentTranscripts(t *testing.T) {
	counts, problems, err := dshdoc.JudgeTranscripts(sdkproto.OpenRPCDocument(), goVerdict(documentChecker(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	total := dshdoc.Total(counts)
	var report strings.Builder
	for _, c := range append(counts, total) {
		fmt.Fprintln(&report, c)
	}
	keys := make([]string, 0, len(total.ByMethod))
	for k := range total.ByMethod {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&report, "  %-32s %d\n", k, total.ByMethod[k])
	}
	for _, r := range total.Refused {
		fmt.Fprintf(&report, "  refused: %s\n", r)
	}
	t.Logf("transcripts:\n%s", report.String())
	if total.Notifications == 0 || total.Results == 0 || total.Requests == 0 || len(total.Refused) == 0 {
		t.Fatal("the transcripts hold no frames of some kind")
	}
}

// TestOpenRPCDocumentVectors: the document refuses every invalid vector
// (testdata/vectors, every revision) and accepts every valid one, but for
// the vectors docs/sdkproto.md lists, with the reason: invalid vectors
// whose rule no schema of the document states (the test fails if the
// document refuses one, so that the list stays true), and valid vectors
// whose flag is of another layer than payloads (a catalogue of replies,
// a flow of frames) and which carry a payload the document refuses.
func TestOpenRPCDocumentVectors(t *testing.T) {
	exceptions, err := dshdoc.Exceptions()
	if err != nil {
		t.Fatal(err)
	}
	verdicts, err := dshdoc.JudgeVectors(sdkproto.OpenRPCDocument(), goVerdict(documentChecker(t)))
	if err != nil {
		t.Fatal(err)
	}
	problems, counts := dshdoc.CompareVectors(verdicts, exceptions)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("vectors:\n%s", strings.Join(counts, "\n"))
}

// TestOpenRPCDocumentErrorCodes: every error response of the recorded
// runtime to a method of the document has a code the document lists for
// that method.
func TestOpenRPCDocumentErrorCodes(t *testing.T) {
	codes := map[string][]int64{}
	for _, m := range sdkproto.OpenRPCDocument().Methods {
		for _, e := range m.Errors {
			codes[m.Name] = append(codes[m.Name], e.Code)
		}
	}
	paths, err := dshdoc.Transcripts()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range paths {
		frames, err := dshdoc.ReadTranscript(path)
		if err != nil {
			t.Fatal(err)
		}
		j := dshdoc.NewJudge(sdkproto.OpenRPCDocument())
		for _, f := range frames {
			jd := j.Frame(f.Dir, f.Raw)
			if jd.Kind != dshdoc.Error || codes[jd.Method] == nil {
				continue
			}
			var fr struct {
				Error struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(f.Raw, &fr); err != nil {
				t.Fatal(err)
			}
			n++
			if !slices.Contains(codes[jd.Method], fr.Error.Code) {
				t.Errorf("%s:%d: %s answered with code %d, which the document does not list", filepath.Base(path), f.Line, jd.Method, fr.Error.Code)
			}
		}
	}
	if n == 0 {
		t.Fatal("no error response of a method of the document in the transcripts")
	}
}

// TestWireTypesInAnotherDocument: the wire types describe themselves in
// the document of another API too, once it carries the components of
// OpenRPCDocument, as their JSONSchema methods say.
func TestWireTypesInAnotherDocument(t *testing.T) {
	type forward struct {
		Blocks []sdkproto.ContentBlock `json:"blocks"`
		Event  sdkproto.Event          `json:"event"`
	}
	doc, err := openrpc.Describe(openrpc.Info{Title: "relay", Version: "1"},
		rpc.NewMethod[forward, sdkproto.Message]("relay/forward").Info(),
		rpc.NewMethod[sdkproto.InitializeParams, sdkproto.InitializeResult]("relay/initialize").Info())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Components == nil {
		doc.Components = &openrpc.Components{Schemas: map[string]*openrpc.Schema{}}
	}
	for name, s := range sdkproto.OpenRPCDocument().Components.Schemas {
		doc.Components.Schemas[name] = s
	}
	v, err := validator.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, params string
		ok             bool
	}{
		{"relay/forward", `{"blocks":[{"type":"text","text":"hi"}],"event":{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}}`, true},
		{"relay/forward", `{"blocks":[{"type":"text","text":5}],"event":{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}}`, false},
		{"relay/forward", `{"blocks":[],"event":{"type":"turn/end","seq":0,"time":1,"data":{"turn":1}}}`, false},
		{"relay/initialize", `{"cwd":"/w","provider":"p","model":"m","maxTokens":4096}`, true},
		{"relay/initialize", `{"cwd":"/w","provider":"p","model":"m","maxTokens":0}`, false},
	} {
		if err := v.Params(c.method, json.RawMessage(c.params)); (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want accepted %v", c.method, c.params, err, c.ok)
		}
	}
	msg := `{"id":"m","role":"assistant","content":[{"type":"text","text":"x"}],"source":{"kind":"model","provider":"p","model":"m"}}`
	if err := v.Result("relay/forward", json.RawMessage(msg)); err != nil {
		t.Errorf("result %s: %v", msg, err)
	}
	if err := v.Result("relay/forward", json.RawMessage(`{"id":"m"}`)); err == nil {
		t.Error("a message without role, content and source is accepted")
	}
}
