package interop_test

// The OpenRPC documents linerpc writes, and the servers that serve them,
// against the OpenRPC tools of the npm registry: @open-rpc/schema-utils-js
// validates the documents, @open-rpc/test-coverage calls every method of
// a Go server over HTTP from its document, @open-rpc/client-js calls it
// from nothing but the document, and ajv agrees with the Go validator.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/internal/testservice"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// runScript runs a Node program of interop/js with stdin, and returns its
// stdout and exit status once it has exited (within 2×testTimeout). Its
// stderr is logged should the test fail.
func runScript(t *testing.T, stdin []byte, args ...string) (string, int) {
	t.Helper()
	ch := startChild(t, nil, args...)
	go func() {
		ch.stdin.Write(stdin)
		ch.stdin.Close()
	}()
	rec := &rpctest.Recorder{Stream: true}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := ch.stdout.Read(buf)
			rec.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	if !ch.waitExit(2 * testTimeout) {
		t.Fatalf("%v did not exit within %s\nstderr:\n%s", args, 2*testTimeout, ch.Stderr())
	}
	linetest.Within(t, done, "the output of "+strings.Join(args, " "))
	return rec.String(), ch.state.ExitCode()
}

// writeDoc writes doc to a file of the test's and returns its path.
func writeDoc(t *testing.T, name string, doc any) string {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// discover asks conn for its document.
func discover(t *testing.T, conn *rpc.Conn) openrpc.Document {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	doc, err := openrpc.Discover.Call(ctx, conn, rpc.NoParams{})
	if err != nil {
		t.Fatalf("rpc.discover: %v", err)
	}
	return doc
}

// testServiceOverHTTP serves the test service over HTTP and returns it,
// its URL and the document its rpc.discover answers.
func testServiceOverHTTP(t *testing.T) (*testservice.Service, string, openrpc.Document) {
	t.Helper()
	svc := testservice.New()
	srv := httptest.NewServer(transport.NewHTTPHandler(&rpc.Options{Handler: svc.Registry}))
	t.Cleanup(srv.Close)
	conn, err := transport.DialHTTP(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return svc, srv.URL, discover(t, conn)
}

// calcDocument builds examples/calc and asks its child, over stdio, for
// its document.
func calcDocument(t *testing.T) openrpc.Document {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "calc")
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../examples/calc").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/calc: %v\n%s", err, out)
	}
	ch, err := transport.StartChild(exec.Command(bin, "serve"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return discover(t, ch.Conn())
}

type validateReport struct {
	Valid         bool
	OpenRPC       string
	Title         string
	Methods       int
	Notifications []string
	RefsLeft      []string
	Stage         string
	Errors        json.RawMessage
}

// The documents of the test service and of examples/calc, as their
// rpc.discover answers them, pass schema-utils-js: validated, dereferenced
// (no reference left), validated again and parsed.
func TestOpenRPCDocumentsPassSchemaUtils(t *testing.T) {
	needPeers(t)
	_, _, svcDoc := testServiceOverHTTP(t)
	for _, c := range []struct {
		name string
		doc  openrpc.Document
	}{{"testservice", svcDoc}, {"calc", calcDocument(t)}} {
		t.Run(c.name, func(t *testing.T) {
			path := writeDoc(t, c.name+".json", c.doc)
			out, code := runScript(t, nil, "js/openrpc-validate.mjs", path)
			var r validateReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("report: %v\n%s", err, out)
			}
			t.Logf("schema-utils-js: %s", strings.TrimSpace(out))
			var notes []string
			for _, m := range c.doc.Methods {
				if m.IsNotification() {
					notes = append(notes, m.Name)
				}
			}
			if code != 0 || !r.Valid || r.OpenRPC != openrpc.Version || r.Methods != len(c.doc.Methods) ||
				len(r.RefsLeft) != 0 || !slices.Equal(r.Notifications, notes) {
				t.Fatalf("exit %d, report %+v; want valid, %d methods, notifications %v", code, r, len(c.doc.Methods), notes)
			}
		})
	}
}

// A document schema-utils-js refuses is reported as refused: the check
// can fail.
func TestOpenRPCValidateRefusesABrokenDocument(t *testing.T) {
	needPeers(t)
	_, _, doc := testServiceOverHTTP(t)
	doc.Methods[0].Params[0].Name = "" // OpenRPC wants a name
	out, code := runScript(t, nil, "js/openrpc-validate.mjs", writeDoc(t, "broken.json", doc))
	var r validateReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if code != 1 || r.Valid || r.Stage != "validate" {
		t.Fatalf("exit %d, report %+v; want refused at the validate stage", code, r)
	}
}

type coverageReport struct {
	Passed, Failed int
	Skipped        []struct{ Method, Reason string }
	Methods        []struct {
		Name           string
		Passed, Failed int
		Calls          []struct {
			Rule   string
			Params json.RawMessage
			Result json.RawMessage
			Error  json.RawMessage
			Valid  bool
			Reason string
		}
	}
}

// test-coverage calls every method of the test service over HTTP, with
// params generated from the document's schemas and with its examples, and
// checks every result against its schema: no failure. Notifications are
// left out by the script (test-coverage cannot call them); client-js
// sends one below.
func TestOpenRPCTestCoverage(t *testing.T) {
	needPeers(t)
	_, url, doc := testServiceOverHTTP(t)
	out, code := runScript(t, nil, "js/openrpc-coverage.mjs", writeDoc(t, "testservice.json", doc), url, "--error-fails")
	var r coverageReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	called := map[string]int{}
	for _, m := range r.Methods {
		called[m.Name] = len(m.Calls)
		t.Logf("%s: %d passed, %d failed", m.Name, m.Passed, m.Failed)
		for _, c := range m.Calls {
			if !c.Valid {
				t.Errorf("%s (%s) params %s: result %s error %s: %s", m.Name, c.Rule, c.Params, c.Result, c.Error, c.Reason)
			}
		}
	}
	if code != 0 || r.Failed != 0 || r.Passed == 0 {
		t.Errorf("exit %d: %d passed, %d failed", code, r.Passed, r.Failed)
	}
	for _, m := range doc.Methods {
		if !m.IsNotification() && called[m.Name] == 0 {
			t.Errorf("test-coverage did not call %s", m.Name)
		}
	}
	if len(r.Skipped) != 1 || r.Skipped[0].Method != "log" {
		t.Errorf("skipped %+v, want the notification log alone", r.Skipped)
	}
}

type clientReport struct {
	Method        string
	Params        json.RawMessage
	Result        json.RawMessage
	ResultValid   bool
	Notification  bool
	Error         *struct{ Code int64 }
	ErrorDeclared bool
}

// client-js calls the Go server over HTTP from the document alone: the
// params are laid out as the document says, and the results match their
// schemas.
func TestOpenRPCClientJS(t *testing.T) {
	needPeers(t)
	svc, url, doc := testServiceOverHTTP(t)
	path := writeDoc(t, "testservice.json", doc)
	cases := []struct {
		method, params string
		code           int
		result         string
	}{
		{"add", `{"a":2,"b":3}`, 0, `{"sum":5}`},
		{"rect/area", `{"rect":{"min":{"x":1,"y":1},"max":{"x":4,"y":3}},"label":"r"}`, 0, `{"area":6,"label":"r"}`},
		{"paint", `{"color":"green","tags":["a","b"]}`, 0, `{"color":"green","note":"a,b"}`},
		{"now", `{}`, 0, `"2026-12-05T00:00:00Z"`},
		{"add", fmt.Sprintf(`{"a":%d,"b":1}`, testservice.MaxSum), 3, ""},
		{"log", `{"level":"info","message":"from client-js"}`, 0, ""},
	}
	for _, c := range cases {
		out, code := runScript(t, nil, "js/openrpc-client.mjs", path, url, c.method, c.params)
		var r clientReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: report: %v\n%s", c.method, err, out)
		}
		t.Logf("client-js %s %s: %s", c.method, c.params, strings.TrimSpace(out))
		if code != c.code {
			t.Errorf("%s %s: exit %d, want %d", c.method, c.params, code, c.code)
			continue
		}
		switch {
		case c.code == 3:
			if r.Error == nil || r.Error.Code != testservice.CodeOverflow || !r.ErrorDeclared {
				t.Errorf("%s: error %+v, declared %v; want the declared code %d", c.method, r.Error, r.ErrorDeclared, testservice.CodeOverflow)
			}
		case c.result == "":
			if !r.Notification {
				t.Errorf("%s was not sent as a notification", c.method)
			}
		default:
			var got, want any
			json.Unmarshal(r.Result, &got)
			json.Unmarshal([]byte(c.result), &want)
			if !r.ResultValid || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: result %s (valid %v), want %s", c.method, r.Result, r.ResultValid, c.result)
			}
		}
	}
	if logs := svc.Logs(); len(logs) != 1 || logs[0].Message != "from client-js" {
		t.Errorf("the service logged %+v", logs)
	}
}

// ajv and the Go validator give the same verdict on the same params,
// valid and not, against the params schema each assembles from the
// document.
func TestAjvAgreesWithTheGoValidator(t *testing.T) {
	needPeers(t)
	_, _, doc := testServiceOverHTTP(t)
	v, err := validator.New(&doc)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{
		"add":       `{"a":1,"b":2}|{"a":1}|{"a":"1","b":2}|{"a":1,"b":2,"c":3}|[1,2]|{"a":1.5,"b":2}|null`,
		"rect/area": `{"rect":{"min":{"x":0,"y":0},"max":{"x":1,"y":1}}}|{"rect":{"min":{"x":0},"max":{"x":1,"y":1}}}|{"rect":null}|{"label":"x"}`,
		"paint":     `{"color":"red"}|{"color":"pink"}|{"color":"red","tags":null}|{"color":"red","tags":[1]}|{"color":"blue","strong":null}`,
		"log":       `{"level":"a","message":"b"}|{"level":"a"}|{}`,
	}
	root := map[string]any{"components": doc.Components}
	schemas := map[string]any{}
	for i := range doc.Methods {
		m := &doc.Methods[i]
		schemas[strings.ReplaceAll(m.Name, "/", "_")] = m.ParamsSchema()
	}
	root["x-params"] = schemas
	path := writeDoc(t, "params.json", root)
	for method, list := range params {
		lines := strings.Split(list, "|")
		out, _ := runScript(t, []byte(strings.Join(lines, "\n")+"\n"), "js/ajv-validate.mjs", path, "--pointer", "/x-params/"+strings.ReplaceAll(method, "/", "_"))
		verdicts := strings.Split(strings.TrimSpace(out), "\n")
		if len(verdicts) != len(lines) {
			t.Fatalf("%s: ajv gave %d verdicts for %d lines:\n%s", method, len(verdicts), len(lines), out)
		}
		for i, line := range lines {
			var r struct{ Valid bool }
			if err := json.Unmarshal([]byte(verdicts[i]), &r); err != nil {
				t.Fatalf("%s: %v: %s", method, err, verdicts[i])
			}
			goErr := v.Params(method, json.RawMessage(line))
			if r.Valid != (goErr == nil) {
				t.Errorf("%s %s: ajv says valid=%v, Go says %v", method, line, r.Valid, goErr)
			}
		}
	}
}
