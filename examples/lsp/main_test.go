package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// wait bounds every wait of these tests: reaching it means a hang.
const wait = time.Minute

// within returns what ch delivers, failing the test after wait.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out after %v waiting for %s; the goroutines:\n%s", wait, what, goroutines())
		panic("unreachable")
	}
}

// goroutines returns the stacks of every goroutine, to show where a wait
// that timed out was stuck.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// client is an LSP client written with rpc, talking to the server over a
// pair of pipes: what an editor does over the server's stdin and stdout.
type client struct {
	t     *testing.T
	conn  *rpc.Conn
	diags chan PublishDiagnosticsParams
	logs  chan LogMessageParams
	asked chan ConfigurationParams
	late  chan string // responses to calls given up (OnDrop)

	served   chan struct{} // closed when serveStdio has returned
	code     int           // what it returned, once served is closed
	toServer *os.File      // the client's end of the server's input
}

// startStdio runs serveStdio on pipes and connects a client speaking
// framing to it.
func startStdio(t *testing.T, framing rpc.Framing) *client {
	t.Helper()
	inR, inW, err := os.Pipe() // client -> server
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // server -> client
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	c.toServer = inW
	c.served = make(chan struct{})
	go func() {
		// Without SetReadDeadline, as os.Stdin: a read in progress cannot
		// be interrupted, and serveStdio must end all the same.
		c.code = serveStdio(struct{ io.Reader }{inR}, outW)
		outW.Close() // as the process's end closes its stdout
		close(c.served)
	}()
	c.conn = rpc.NewConn(outR, inW, c.options(framing))
	c.conn.Start()
	t.Cleanup(func() {
		c.conn.Close()
		inW.Close()
		select {
		case <-c.served:
		case <-time.After(wait):
			t.Errorf("the server did not end within %v of its input's end; the goroutines:\n%s", wait, goroutines())
		}
		c.conn.Wait()
		inR.Close()
		outR.Close()
	})
	return c
}

func newClient(t *testing.T) *client {
	return &client{
		t:     t,
		diags: make(chan PublishDiagnosticsParams, 16),
		logs:  make(chan LogMessageParams, 16),
		asked: make(chan ConfigurationParams, 1),
		late:  make(chan string, 16),
	}
}

// exitCode waits for serveStdio to return, and returns its status.
func (c *client) exitCode(what string) int {
	c.t.Helper()
	within(c.t, c.served, what)
	return c.code
}

// options are the client's: its handlers of the server's notifications
// and of workspace/configuration, which answers {"greeting": "hello"};
// LSP's cancellation; and the responses that came for calls given up.
func (c *client) options(framing rpc.Framing) *rpc.Options {
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, PublishDiagnostics, func(_ context.Context, p PublishDiagnosticsParams) { c.diags <- p })
	rpc.HandleNotification(reg, LogMessage, func(_ context.Context, p LogMessageParams) { c.logs <- p })
	rpc.Handle(reg, Configuration, func(_ context.Context, p ConfigurationParams) ([]json.RawMessage, error) {
		c.asked <- p
		return []json.RawMessage{json.RawMessage(`{"greeting":"hello"}`)}, nil
	})
	return &rpc.Options{
		Handler:      reg,
		Framing:      framing,
		Cancellation: rpc.LSPCancellation(),
		OnDrop: func(d rpc.Drop) {
			if d.Reason == rpc.DropUnmatchedResponse {
				c.late <- string(d.Line)
			}
		},
	}
}

// call makes a call bounded by wait.
func call[P, R any](c *client, m rpc.Method[P, R], p P) (R, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return m.Call(ctx, c.conn, p)
}

func mustCall[P, R any](c *client, m rpc.Method[P, R], p P) R {
	c.t.Helper()
	r, err := call(c, m, p)
	if err != nil {
		c.t.Fatalf("%s: %v", m.Name(), err)
	}
	return r
}

func notify[P any](c *client, n rpc.Notification[P], p P) {
	c.t.Helper()
	if err := n.Notify(context.Background(), c.conn, p); err != nil {
		c.t.Fatalf("%s: %v", n.Name(), err)
	}
}

// initialize runs the handshake, with workspace/configuration offered,
// and waits for the server's question and its log of the answer.
func (c *client) initialize() InitializeResult {
	c.t.Helper()
	var p InitializeParams
	p.Capabilities.Workspace.Configuration = true
	res := mustCall(c, Initialize, p)
	notify(c, Initialized, rpc.NoParams{})
	if got := within(c.t, c.asked, "workspace/configuration request"); !reflect.DeepEqual(got, ConfigurationParams{Items: []ConfigurationItem{{Section: "toy"}}}) {
		c.t.Errorf("workspace/configuration asked %+v", got)
	}
	if got := within(c.t, c.logs, "log of the configuration"); got.Message != `configuration toy: {"greeting":"hello"}` {
		c.t.Errorf("logMessage after the configuration: %+v", got)
	}
	return res
}

// open opens uri with text and returns the diagnostics published for it.
func (c *client) open(uri, text string) PublishDiagnosticsParams {
	c.t.Helper()
	notify(c, DidOpen, DidOpenParams{TextDocument: TextDocumentItem{URI: uri, LanguageID: "plaintext", Version: 1, Text: text}})
	return within(c.t, c.diags, "diagnostics of "+uri)
}

func (c *client) hover(uri string, line, char int) *Hover {
	c.t.Helper()
	return mustCall(c, HoverMethod, HoverParams{TextDocument: TextDocumentIdentifier{URI: uri}, Position: Position{Line: line, Character: char}})
}

// wantCode fails unless err is an *rpc.Error with code.
func wantCode(t *testing.T, err error, code rpc.Code) *rpc.Error {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got %v, want a JSON-RPC error %d", err, code)
	}
	return e
}

func rng(l1, c1, l2, c2 int) Range {
	return Range{Start: Position{Line: l1, Character: c1}, End: Position{Line: l2, Character: c2}}
}

// A whole session over stdio, in each framing the server detects: the
// handshake with the server's question to the client, diagnostics and
// hover in UTF-16 positions, a change, the two methods of its own, the
// cancellation of toy.wait, and shutdown then exit (status 0).
func TestLSPSessionOverStdio(t *testing.T) {
	for _, framing := range []rpc.Framing{rpc.ContentLengthFraming, rpc.NewlineFraming} {
		t.Run(framing.String(), func(t *testing.T) {
			c := startStdio(t, framing)
			init := c.initialize()
			want := InitializeResult{
				Capabilities: ServerCapabilities{TextDocumentSync: 1, HoverProvider: true, ExecuteCommandProvider: ExecuteCommandOptions{Commands: []string{"toy.wait"}}},
				ServerInfo:   ServerInfo{Name: "toy-lsp", Version: serverVersion},
			}
			if !reflect.DeepEqual(init, want) {
				t.Errorf("initialize: %+v", init)
			}

			// "😀" is two UTF-16 code units, "é" one: the word "héllo"
			// starts at character 3 of line 0.
			text := "😀 héllo TODO\r\nx_1 TODOTODO\n"
			d := c.open("file:///a.txt", text)
			wantDiags := []Range{rng(0, 9, 0, 13), rng(1, 4, 1, 8), rng(1, 8, 1, 12)}
			checkDiags(t, d, "file:///a.txt", 1, wantDiags)

			h := c.hover("file:///a.txt", 0, 5)
			if h == nil || h.Contents != (MarkupContent{Kind: "markdown", Value: "**héllo**"}) || *h.Range != rng(0, 3, 0, 8) {
				t.Errorf("hover in héllo: %+v", h)
			}
			if h := c.hover("file:///a.txt", 0, 1); h != nil { // inside the surrogate pair: the emoji is no word
				t.Errorf("hover on the emoji: %+v", h)
			}
			if h := c.hover("file:///a.txt", 1, 0); h == nil || h.Contents.Value != "**x_1**" || *h.Range != rng(1, 0, 1, 3) {
				t.Errorf("hover on x_1: %+v", h)
			}

			notify(c, DidChange, DidChangeParams{
				TextDocument:   VersionedTextDocumentIdentifier{URI: "file:///a.txt", Version: 2},
				ContentChanges: []ContentChange{{Text: "no work left\n"}},
			})
			// Right after the change, without waiting for its diagnostics:
			// the hover is served once the change is applied.
			if h := c.hover("file:///a.txt", 0, 4); h == nil || h.Contents.Value != "**work**" {
				t.Errorf("hover after the change: %+v", h)
			}
			checkDiags(t, within(t, c.diags, "diagnostics after the change"), "file:///a.txt", 2, nil)
			notify(c, DidClose, DidCloseParams{TextDocument: TextDocumentIdentifier{URI: "file:///a.txt"}})
			checkDiags(t, within(t, c.diags, "diagnostics cleared on close"), "file:///a.txt", -1, nil)
			if h := c.hover("file:///a.txt", 0, 4); h != nil {
				t.Errorf("hover in a closed document: %+v", h)
			}

			if sum := mustCall(c, Add, []float64{1, 2, 3.5}); sum != 6.5 {
				t.Errorf("toy/add [1,2,3.5] = %v", sum)
			}
			_, err := call(c, Fail, json.RawMessage(`{"why":"testing"}`))
			e := wantCode(t, err, CodeToyFailure)
			if !jsonEqual(e.Data, `{"params":{"why":"testing"},"hint":"toy/fail fails on purpose"}`) {
				t.Errorf("toy/fail data: %s", e.Data)
			}

			if _, err := call(c, ExecuteCommand, ExecuteCommandParams{Command: "toy.wait", Arguments: []json.RawMessage{json.RawMessage("0")}}); err != nil {
				t.Errorf("toy.wait [0]: %v", err)
			}
			within(t, c.logs, "the log of toy.wait [0]")
			c.cancelWait(t)

			if _, err := call(c, Shutdown, rpc.NoParams{}); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			_, err = call(c, Add, []float64{1})
			wantCode(t, err, rpc.CodeInvalidRequest)
			notify(c, Exit, rpc.NoParams{})
			if code := c.exitCode("the server's end after exit"); code != 0 {
				t.Errorf("exit after shutdown: status %d, want 0", code)
			}
		})
	}
}

// cancelWait starts toy.wait for a minute and, once the server said it
// is waiting, cancels the call's context: the client sends
// $/cancelRequest and gives the call up, and the server answers it
// RequestCancelled (-32800), a response the client drops.
func (c *client) cancelWait(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := ExecuteCommand.Call(ctx, c.conn, ExecuteCommandParams{Command: "toy.wait", Arguments: []json.RawMessage{json.RawMessage("60000")}})
		done <- err
	}()
	if got := within(t, c.logs, "the log of toy.wait [60000]"); got.Message != "toy.wait: waiting 60000 ms" {
		t.Fatalf("log: %+v", got)
	}
	cancel()
	if err := within(t, done, "the cancelled toy.wait to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	late := within(t, c.late, "the server's answer to the cancelled toy.wait")
	if !strings.Contains(late, `"error":{"code":-32800,`) {
		t.Errorf("the cancelled toy.wait was answered %s", late)
	}
}

func checkDiags(t *testing.T, d PublishDiagnosticsParams, uri string, version int, want []Range) {
	t.Helper()
	if d.URI != uri || (version >= 0 && (d.Version == nil || *d.Version != version)) || (version < 0 && d.Version != nil) {
		t.Errorf("diagnostics for %s version %v, want %s version %d", d.URI, d.Version, uri, version)
	}
	var got []Range
	for _, g := range d.Diagnostics {
		if g.Severity != SeverityWarning || g.Source != serverName || !strings.HasPrefix(g.Message, "TODO") {
			t.Errorf("diagnostic %+v", g)
		}
		got = append(got, g.Range)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostic ranges %v, want %v", got, want)
	}
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// exit without shutdown ends the process with status 1.
func TestLSPExitWithoutShutdown(t *testing.T) {
	c := startStdio(t, rpc.ContentLengthFraming)
	c.initialize()
	notify(c, Exit, rpc.NoParams{})
	if code := c.exitCode("the server's end after exit"); code != 1 {
		t.Errorf("exit without shutdown: status %d, want 1", code)
	}
}

// The end of the input ends the server too: 0 after shutdown, else 1.
func TestLSPInputEnds(t *testing.T) {
	for _, shut := range []bool{false, true} {
		t.Run(fmt.Sprintf("shutdown=%v", shut), func(t *testing.T) {
			c := startStdio(t, rpc.ContentLengthFraming)
			c.initialize()
			want := 1
			if shut {
				mustCall(c, Shutdown, rpc.NoParams{})
				want = 0
			}
			c.toServer.Close()
			if code := c.exitCode("the server's end after its input ended"); code != want {
				t.Errorf("status %d, want %d", code, want)
			}
		})
	}
}

// Before initialize, requests are answered ServerNotInitialized; a
// second initialize is refused.
func TestLSPLifecycle(t *testing.T) {
	c := startStdio(t, rpc.NewlineFraming)
	_, err := call(c, HoverMethod, HoverParams{})
	wantCode(t, err, CodeServerNotInitialized)
	c.initialize()
	_, err = call(c, Initialize, InitializeParams{})
	wantCode(t, err, rpc.CodeInvalidRequest)
	_, err = call(c, ExecuteCommand, ExecuteCommandParams{Command: "toy.nothing"})
	wantCode(t, err, rpc.CodeInvalidParams)
	_, err = call(c, Add, nil) // null params: no numbers, sum 0
	if err != nil {
		t.Errorf("toy/add null: %v", err)
	}
}

// With -listen, every client has a session of its own, and exit ends
// that client's connection only; the end of ctx (a signal) ends the
// server.
func TestLSPListen(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "lsp.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	logBuf := &lockedBuffer{ready: make(chan struct{}), want: "lsp: listening on unix:" + sock + "\n"}
	served := make(chan error, 1)
	go func() { served <- serveListener(ctx, "unix:"+sock, logBuf) }()
	within(t, logBuf.ready, "the server to say it listens")

	dial := func() *client {
		c := newClient(t)
		conn, err := transport.Dial(context.Background(), "unix", sock, c.options(rpc.ContentLengthFraming))
		if err != nil {
			t.Fatalf("dial %s: %v", sock, err)
		}
		c.conn = conn
		t.Cleanup(func() { conn.Close(); conn.Wait() })
		return c
	}
	a, b := dial(), dial()
	a.initialize()
	b.initialize()
	a.open("file:///only-a", "alpha")
	if h := a.hover("file:///only-a", 0, 0); h == nil || h.Contents.Value != "**alpha**" {
		t.Errorf("hover of a: %+v", h)
	}
	if h := b.hover("file:///only-a", 0, 0); h != nil {
		t.Errorf("b sees a's document: %+v", h)
	}
	mustCall(a, Shutdown, rpc.NoParams{})
	notify(a, Exit, rpc.NoParams{})
	within(t, a.conn.Done(), "the end of a's connection after exit")
	if sum := mustCall(b, Add, []float64{2, 3}); sum != 5 {
		t.Errorf("b after a's exit: toy/add = %v", sum)
	}
	stop()
	if err := within(t, served, "the server's end"); err != nil {
		t.Errorf("serveListener: %v", err)
	}
	within(t, b.conn.Done(), "the end of b's connection with the server")
}

// lockedBuffer keeps what is written to it, and closes ready once it
// holds want.
type lockedBuffer struct {
	mu    sync.Mutex
	buf   strings.Builder
	want  string
	ready chan struct{}
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := strings.Contains(b.buf.String(), b.want)
	b.buf.Write(p)
	if !seen && strings.Contains(b.buf.String(), b.want) {
		close(b.ready)
	}
	return len(p), nil
}

// A whole session in one write, exit included, as a script or a test
// harness may send it: every request is answered, in order, before exit
// ends the server with status 0, since each message is served in its turn.
func TestLSPWholeSessionInOneWrite(t *testing.T) {
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	session := strings.Join([]string{
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`),
		frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`),
		frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.txt","languageId":"plaintext","version":1,"text":"hello world"}}}`),
		frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.txt"},"position":{"line":0,"character":7}}}`),
		frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.txt","version":2},"contentChanges":[{"text":"goodbye"}]}}`),
		frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.txt"},"position":{"line":0,"character":1}}}`),
		frame(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`),
		frame(`{"jsonrpc":"2.0","method":"exit"}`),
	}, "")
	var out strings.Builder
	done := make(chan int, 1)
	go func() { done <- serveStdio(strings.NewReader(session), &out) }()
	if code := within(t, done, "the server's end after exit"); code != 0 {
		t.Errorf("status %d after shutdown and exit, want 0; wrote:\n%s", code, out.String())
	}
	var answers []string
	for rest := out.String(); rest != ""; {
		var n int
		if _, err := fmt.Sscanf(rest, "Content-Length: %d\r\n\r\n", &n); err != nil {
			t.Fatalf("not a frame: %q", rest)
		}
		start := strings.Index(rest, "\r\n\r\n") + 4
		body := rest[start : start+n]
		rest = rest[start+n:]
		if strings.Contains(body, `"id":`) {
			answers = append(answers, body)
		}
	}
	want := []string{`"id":1,"result":{"capabilities"`, `"id":2,"result":{"contents":`, `"id":3,"result":{"contents":`, `"id":4,"result":null`}
	if len(answers) != len(want) {
		t.Fatalf("answered %d requests, want %d:\n%s", len(answers), len(want), strings.Join(answers, "\n"))
	}
	for i, a := range answers {
		if !strings.Contains(a, want[i]) {
			t.Errorf("answer %d is %s, want %s…", i+1, a, want[i])
		}
	}
	if !strings.Contains(answers[1], "world") || !strings.Contains(answers[2], "goodbye") {
		t.Errorf("the hovers did not see the text of their time:\n%s\n%s", answers[1], answers[2])
	}
}
