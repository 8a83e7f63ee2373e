package interop_test

// Scenario 5: the Language Server Protocol's JSON-RPC against the real
// vscode-jsonrpc (the MessageConnection under every VS Code language
// client and server), both ways:
//   - examples/lsp, a language server written with rpc, driven by a
//     vscode-jsonrpc client (js/lsp_client.mjs) over the server's stdio
//     and over its -listen sockets (unix and tcp), Content-Length framed;
//   - Go's rpc as the client of a vscode-jsonrpc server
//     (js/lsp_server.mjs) over the child's stdio, with
//     rpc.ContentLengthFraming and rpc.LSPCancellation, through
//     transport.StartChild.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/internal/peers"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// lspWait bounds each wait of these tests on the Go side (a call, a line
// on stderr, a process's exit). A run of js/lsp_client.mjs is bounded by
// lspRunWait: it is made of many waits, each bounded by a minute on the
// Node side, which reports the one that timed out.
const (
	lspWait    = time.Minute
	lspRunWait = 2 * time.Minute
)

// needVSCode is needPeers, with vscode-jsonrpc installed too.
func needVSCode(t *testing.T) {
	t.Helper()
	dir := needPeers(t)
	const f = "node_modules/vscode-jsonrpc/node.js"
	if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
		peers.Missing(t, errors.New("vscode-jsonrpc is not installed (interop/"+f+" is missing): run `make interop-install`"))
	}
}

// raceEnabled reports whether the test binary has the race detector: the
// server under test is then built with it too.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// buildLSP builds examples/lsp into a temporary folder.
func buildLSP(t *testing.T) string {
	t.Helper()
	needVSCode(t)
	bin := filepath.Join(t.TempDir(), "lsp")
	args := []string{"build", "-o", bin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", append(args, "../examples/lsp")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./examples/lsp: %v\n%s", err, out)
	}
	return bin
}

// runLSPClient runs js/lsp_client.mjs SCENARIO TARGET to its end and
// decodes its report into v. A failure on the Node side (its FAIL line
// and stack, the server's stderr, which it inherits on stdio) fails the
// test with the whole of its stderr.
func runLSPClient(t *testing.T, v any, scenario, target string) {
	t.Helper()
	runNodeReport(t, v, lspRunWait, "js/lsp_client.mjs", scenario, target)
}

// runNodeReport runs node with args to its end, within bound, and decodes
// into v the JSON report it prints on stdout. A failure on the Node side
// fails the test with the whole of its stderr.
func runNodeReport(t *testing.T, v any, bound time.Duration, args ...string) {
	t.Helper()
	ch := startChild(t, nil, args...)
	ch.stdin.Close()
	read := make(chan []byte, 1)
	go func() {
		out, _ := io.ReadAll(ch.stdout)
		read <- out
	}()
	start := time.Now()
	cmdline := "node " + strings.Join(args, " ")
	if !ch.waitExit(bound) {
		t.Fatalf("%s did not end within %v; its stderr:\n%s", cmdline, bound, ch.Stderr())
	}
	if code := ch.state.ExitCode(); code != 0 {
		t.Fatalf("%s failed (%v); its stderr:\n%s", cmdline, ch.state, ch.Stderr())
	}
	out := linetest.Within(t, read, "the report on stdout")
	t.Logf("%s: %v; report %.300s", cmdline, time.Since(start).Round(time.Millisecond), out)
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("the report of %s: %v\n%.2000s\nstderr:\n%s", cmdline, err, out, ch.Stderr())
	}
}

// exitReport is how the server process ended, as Node saw it.
type lspExit struct {
	Code   *int    `json:"code"`
	Signal *string `json:"signal"`
}

func (e lspExit) is(code int) bool { return e.Code != nil && *e.Code == code && e.Signal == nil }

func (e lspExit) String() string {
	return fmt.Sprintf("code %v, signal %v", deref(e.Code), deref(e.Signal))
}

// lspSession is the report of the session scenario.
type lspSession struct {
	Initialize struct {
		Capabilities struct {
			TextDocumentSync       int  `json:"textDocumentSync"`
			HoverProvider          bool `json:"hoverProvider"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	} `json:"initialize"`
	Diagnostics int             `json:"diagnostics"`
	Hover       json.RawMessage `json:"hover"`
	Add         float64         `json:"add"`
	Fail        struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"fail"`
	AfterShutdown struct {
		Code int `json:"code"`
	} `json:"afterShutdown"`
	Exit   *lspExit `json:"exit"`
	Errors []string `json:"errors"`
}

// check checks what the Go side can of the session's report (the Node
// side checked every exchange); exit is nil over a socket.
func (r lspSession) check(t *testing.T, exit bool) {
	t.Helper()
	init := r.Initialize
	if init.Capabilities.TextDocumentSync != 1 || !init.Capabilities.HoverProvider || len(init.Capabilities.ExecuteCommandProvider.Commands) != 1 ||
		init.ServerInfo.Name != "toy-lsp" {
		t.Errorf("initialize result: %+v", init)
	}
	if r.Diagnostics != 3 {
		t.Errorf("%d diagnostics, want 3", r.Diagnostics)
	}
	if !jsonEq(r.Hover, []byte(`{"contents":{"kind":"markdown","value":"**héllo_wörld**"},"range":{"start":{"line":0,"character":11},"end":{"line":0,"character":22}}}`)) {
		t.Errorf("hover: %s", r.Hover)
	}
	if r.Add != 6.5 {
		t.Errorf("toy/add: %v", r.Add)
	}
	if r.Fail.Code != 4001 || !jsonEq(r.Fail.Data, []byte(`{"params":{"why":"interop"},"hint":"toy/fail fails on purpose"}`)) {
		t.Errorf("toy/fail: %+v (data %s)", r.Fail, r.Fail.Data)
	}
	if r.AfterShutdown.Code != -32600 {
		t.Errorf("a request after shutdown: %+v", r.AfterShutdown)
	}
	if exit && (r.Exit == nil || !r.Exit.is(0)) {
		t.Errorf("the server's exit after shutdown and exit: %v", r.Exit)
	}
	if len(r.Errors) > 0 {
		t.Errorf("vscode-jsonrpc reported errors: %q", r.Errors)
	}
}

// The real vscode-jsonrpc client drives examples/lsp over its stdio, as
// an editor does: one server process per scenario.
func TestLSPServerWithVSCodeClientOverStdio(t *testing.T) {
	target := "stdio:" + buildLSP(t)

	// Every behaviour, in one session: initialize and the server's
	// workspace/configuration request answered by the client, text sync
	// and the diagnostics of each version, hover in UTF-16 positions,
	// params by position, an error with data, shutdown, a request refused
	// after it (-32600), exit: onClose fires and the server exits 0.
	t.Run("Session", func(t *testing.T) {
		var r lspSession
		runLSPClient(t, &r, "session", target)
		r.check(t, true)
	})
	t.Run("ExitWithoutShutdown", func(t *testing.T) {
		var r struct{ Exit lspExit }
		runLSPClient(t, &r, "exitWithoutShutdown", target)
		if !r.Exit.is(1) {
			t.Errorf("exit without shutdown: %v, want code 1", r.Exit)
		}
	})
	// A document of 8 MiB (in UTF-8; its positions counted in UTF-16 by
	// JavaScript), its diagnostics, and hovers in it.
	t.Run("LargeDocument", func(t *testing.T) {
		var r struct {
			Bytes, Lines, Diagnostics int
			Exit                      lspExit
		}
		runLSPClient(t, &r, "large", target)
		if r.Bytes < 8<<20 || r.Diagnostics != r.Lines/1000 || !r.Exit.is(0) {
			t.Errorf("large document: %+v", r)
		}
	})
	// 10,000 requests written without waiting: every one answered with
	// its own result.
	t.Run("Pipelined", func(t *testing.T) {
		var r struct {
			Answered int
			Exit     lspExit
		}
		runLSPClient(t, &r, "pipelined", target)
		if r.Answered != 10000 || !r.Exit.is(0) {
			t.Errorf("pipelined: %+v", r)
		}
	})
	// A CancellationTokenSource cancels toy.wait once it runs: the server
	// answers RequestCancelled (-32800), and serves on.
	t.Run("Cancellation", func(t *testing.T) {
		var r struct {
			Cancelled struct {
				Code int
			}
			Exit lspExit
		}
		runLSPClient(t, &r, "cancel", target)
		if r.Cancelled.Code != -32800 || !r.Exit.is(0) {
			t.Errorf("cancellation: %+v", r)
		}
	})
	// The client disposes its connection and ends the server's stdin with
	// a request running: the server cancels it and exits by itself, with
	// status 1 (no shutdown came).
	t.Run("ClientCloses", func(t *testing.T) {
		var r struct{ Exit lspExit }
		runLSPClient(t, &r, "clientCloses", target)
		if !r.Exit.is(1) {
			t.Errorf("after the client closed: %v, want code 1", r.Exit)
		}
	})
	// The server exits: the client's onClose fires, and its connection
	// refuses new requests.
	t.Run("ServerExits", func(t *testing.T) {
		var r struct {
			Exit   lspExit
			Closed bool
		}
		runLSPClient(t, &r, "serverExits", target)
		if !r.Exit.is(0) || !r.Closed {
			t.Errorf("after the server exited: %+v", r)
		}
	})
}

// listenLSP starts examples/lsp with -listen addr and returns the
// address it says it listens on.
func listenLSP(t *testing.T, bin, addr string) (*child, string) {
	t.Helper()
	return listenLSPCmd(t, exec.Command(bin, "-listen", addr))
}

// listenLSPCmd starts cmd, a language server given -listen, and returns
// the address it says it listens on ("lsp: listening on NETWORK:ADDRESS"
// on stderr).
func listenLSPCmd(t *testing.T, cmd *exec.Cmd) (*child, string) {
	t.Helper()
	ch := startCmd(t, cmd)
	deadline := time.After(lspWait)
	for {
		select {
		case line := <-ch.stderrLn:
			if a, ok := strings.CutPrefix(line, "lsp: listening on "); ok {
				return ch, a
			}
		case <-ch.exited:
			t.Fatalf("%v exited (%v); stderr:\n%s", cmd.Args, ch.state, ch.Stderr())
		case <-deadline:
			t.Fatalf("%v did not say where it listens within %v; stderr:\n%s", cmd.Args, lspWait, ch.Stderr())
		}
	}
}

// The vscode-jsonrpc client connects to examples/lsp over its -listen
// sockets (SocketMessageReader/Writer): a whole session, then two clients
// at once, each with its documents, exit ending one connection only. The
// server serves on until SIGTERM, which ends it with status 0.
func TestLSPServerWithVSCodeClientOverSockets(t *testing.T) {
	bin := buildLSP(t)
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			addr := "tcp:127.0.0.1:0"
			if network == "unix" {
				addr = "unix:" + filepath.Join(t.TempDir(), "lsp.sock")
			}
			srv, target := listenLSP(t, bin, addr)
			t.Run("Session", func(t *testing.T) {
				var r lspSession
				runLSPClient(t, &r, "session", target)
				r.check(t, false)
			})
			t.Run("TwoClients", func(t *testing.T) {
				var r struct{ OK bool }
				runLSPClient(t, &r, "twoClients", target)
				if !r.OK {
					t.Errorf("two clients: %+v", r)
				}
			})
			if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			srv.mustExit(lspWait, 0)
		})
	}
}

// vscodeServer is a Go rpc.Conn, as an LSP client, on the stdio of
// js/lsp_server.mjs (a vscode-jsonrpc server), started with
// transport.StartChild; its stderr lines come on a channel.
type vscodeServer struct {
	child   *transport.Child
	conn    *rpc.Conn
	stderr  chan string
	noted   chan json.RawMessage // the server's "noted" notifications
	late    chan string          // responses to calls given up (DropUnmatchedResponse)
	doubled chan number          // the params of each go/double call from the server
}

// lineWriter sends each line written to it on a channel, and keeps them
// all for error messages.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	all   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line) // an unfinished line: keep it
			return len(p), nil
		}
		select {
		case w.lines <- strings.TrimSuffix(line, "\n"):
		default:
		}
	}
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

var (
	vsEcho   = rpc.NewMethod[map[string]any, map[string]any]("echo")
	vsSum    = rpc.NewMethod[[]float64, float64]("sum")
	vsFail   = rpc.NewMethod[map[string]any, any]("fail")
	vsSlow   = rpc.NewMethod[rpc.NoParams, any]("slow")
	vsAskGo  = rpc.NewMethod[number, float64]("askGo")
	vsNotes  = rpc.NewMethod[rpc.NoParams, []json.RawMessage]("notes")
	vsNote   = rpc.NewNotification[json.RawMessage]("note")
	vsNoted  = rpc.NewNotification[json.RawMessage]("noted")
	vsDouble = rpc.NewMethod[number, float64]("go/double")
)

// number is the params of askGo and go/double: JSON-RPC's params are an
// object or an array (vscode-jsonrpc sends a lone number as [n]).
type number struct {
	X float64 `json:"x"`
}

func startVSCodeServer(t *testing.T) *vscodeServer {
	t.Helper()
	needVSCode(t)
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s := &vscodeServer{
		stderr:  make(chan string, 64),
		noted:   make(chan json.RawMessage, 64),
		late:    make(chan string, 8),
		doubled: make(chan number, 8),
	}
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, vsNoted, func(_ context.Context, p json.RawMessage) { s.noted <- p })
	rpc.Handle(reg, vsDouble, func(_ context.Context, n number) (float64, error) {
		s.doubled <- n
		return 2 * n.X, nil
	})
	errs := &lineWriter{lines: s.stderr}
	cmd := exec.Command("node", "js/lsp_server.mjs")
	cmd.Dir = dir
	cmd.Stderr = errs
	s.child, err = transport.StartChild(cmd, &transport.ChildOptions{Options: &rpc.Options{
		Framing:      rpc.ContentLengthFraming,
		Handler:      reg,
		Cancellation: rpc.LSPCancellation(),
		OnDrop: func(d rpc.Drop) {
			if d.Reason == rpc.DropUnmatchedResponse {
				s.late <- string(d.Line)
			}
		},
	}})
	if err != nil {
		t.Fatalf("starting node js/lsp_server.mjs: %v", err)
	}
	s.conn = s.child.Conn()
	t.Cleanup(func() {
		if err := s.child.Close(); err != nil {
			t.Errorf("closing the child: %v", err)
		}
		out := errs.String()
		if strings.Contains(out, `"error"`) {
			t.Errorf("vscode-jsonrpc reported errors:\n%s", out)
		}
		if t.Failed() {
			t.Logf("stderr of node js/lsp_server.mjs:\n%s", out)
		}
	})
	return s
}

// stderrJSON waits for the next stderr line that is a JSON object with
// the member key.
func (s *vscodeServer) stderrJSON(t *testing.T, key string) map[string]any {
	t.Helper()
	deadline := time.After(lspWait)
	for {
		select {
		case line := <-s.stderr:
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m[key] != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %q on the stderr of js/lsp_server.mjs", lspWait, key)
		}
	}
}

func lspCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), lspWait)
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(lspWait):
		t.Fatalf("timed out after %v waiting for %s", lspWait, what)
		panic("unreachable")
	}
}

// Go's rpc as the client of a vscode-jsonrpc server, over the child's
// stdio in Content-Length framing (transport.StartChild).
func TestLSPGoClientOfVSCodeServer(t *testing.T) {
	// Typed calls, params by name and by position, and a call of the
	// server's back to Go made while it serves one of Go's.
	t.Run("Calls", func(t *testing.T) {
		s := startVSCodeServer(t)
		ctx, cancel := lspCtx()
		defer cancel()
		in := map[string]any{"text": "héllo 😀 \u2028 <&>", "n": 1.5, "list": []any{1.0, "x", nil, true}, "inner": map[string]any{"k": "v"}}
		out, err := vsEcho.Call(ctx, s.conn, in)
		if err != nil || !jsonEq([]byte(mustJSON(in)), []byte(mustJSON(out))) {
			t.Errorf("echo: %v, %v", out, err)
		}
		if sum, err := vsSum.Call(ctx, s.conn, []float64{1, 2, 3.5}); err != nil || sum != 6.5 {
			t.Errorf("sum [1,2,3.5]: %v, %v", sum, err)
		}
		if got, err := vsAskGo.Call(ctx, s.conn, number{X: 21}); err != nil || got != 42 {
			t.Errorf("askGo {x:21}: %v, %v", got, err)
		}
		if n := waitFor(t, s.doubled, "the server's go/double call"); n.X != 21 {
			t.Errorf("go/double got %+v", n)
		}
	})
	// Notifications both ways, in order: each "note" of Go's is answered
	// with a "noted" of the server's, and the server saw them all in the
	// order sent.
	t.Run("Notifications", func(t *testing.T) {
		s := startVSCodeServer(t)
		ctx, cancel := lspCtx()
		defer cancel()
		const n = 100
		for i := range n {
			if err := vsNote.Notify(ctx, s.conn, json.RawMessage(fmt.Sprintf(`{"seq":%d}`, i))); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			if got := waitFor(t, s.noted, fmt.Sprintf("noted %d", i)); !jsonEq(got, fmt.Appendf(nil, `{"seq":%d}`, i)) {
				t.Fatalf("noted %d: %s", i, got)
			}
		}
		notes, err := vsNotes.Call(ctx, s.conn, rpc.NoParams{})
		if err != nil || len(notes) != n {
			t.Fatalf("notes: %d, %v", len(notes), err)
		}
		for i, p := range notes {
			if !jsonEq(p, fmt.Appendf(nil, `{"seq":%d}`, i)) {
				t.Errorf("note %d as the server saw it: %s", i, p)
			}
		}
	})
	// A ResponseError with data reaches Go as an *rpc.Error, data intact.
	t.Run("ErrorWithData", func(t *testing.T) {
		s := startVSCodeServer(t)
		ctx, cancel := lspCtx()
		defer cancel()
		_, err := vsFail.Call(ctx, s.conn, map[string]any{"why": "interop"})
		var e *rpc.Error
		if !errors.As(err, &e) || e.Code != 4242 || e.Message != "vscode-jsonrpc fails as asked" ||
			!jsonEq(e.Data, []byte(`{"echoed":{"why":"interop"},"list":[1,"x",null,true]}`)) {
			t.Fatalf("fail: %v (data %s)", err, errData(err))
		}
		// A method the server does not have.
		err = s.conn.Call(ctx, "no/such", nil, nil)
		if !errors.As(err, &e) || e.Code != rpc.CodeMethodNotFound {
			t.Errorf("an unknown method: %v", err)
		}
	})
	// A Go call whose context ends is cancelled with $/cancelRequest
	// (rpc.LSPCancellation): the server's token fires, and its answer,
	// RequestCancelled, comes for a call Go has given up (dropped). The
	// connection goes on.
	t.Run("Cancellation", func(t *testing.T) {
		s := startVSCodeServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := vsSlow.Call(ctx, s.conn, rpc.NoParams{})
			done <- err
		}()
		s.stderrJSON(t, "started")
		cancel()
		if err := waitFor(t, done, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call returned %v", err)
		}
		s.stderrJSON(t, "cancelled")
		if late := waitFor(t, s.late, "the server's answer to the cancelled call"); !strings.Contains(late, `"code":-32800`) {
			t.Errorf("the cancelled call was answered %s", late)
		}
		ctx2, cancel2 := lspCtx()
		defer cancel2()
		if sum, err := vsSum.Call(ctx2, s.conn, []float64{40, 2}); err != nil || sum != 42 {
			t.Errorf("sum after the cancellation: %v, %v", sum, err)
		}
	})
	// Go closes the server's input: vscode-jsonrpc's onClose fires, and
	// the server exits 0 by itself (no signal from Close's ladder); Go's
	// Conn sees its input end.
	t.Run("GoCloses", func(t *testing.T) {
		s := startVSCodeServer(t)
		ctx, cancel := lspCtx()
		defer cancel()
		if _, err := vsSum.Call(ctx, s.conn, []float64{1}); err != nil {
			t.Fatal(err)
		}
		s.child.CloseInput()
		waitFor(t, s.child.Exited(), "the server's exit after its input ended")
		if st := s.child.ProcessState(); st.ExitCode() != 0 {
			t.Errorf("the server ended with %v, want status 0", st)
		}
		waitFor(t, s.conn.Done(), "the end of Go's Conn")
		if err := s.conn.Err(); !errors.Is(err, rpc.ErrInputEnded) {
			t.Errorf("the Conn ended with %v, want ErrInputEnded", err)
		}
	})
}

func errData(err error) string {
	var e *rpc.Error
	if errors.As(err, &e) {
		return string(e.Data)
	}
	return ""
}
