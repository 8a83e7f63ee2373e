package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/peers"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// testTimeout bounds every single exchange with a child; the whole suite
// runs in well under a minute, so hitting it means a hang.
const testTimeout = 30 * time.Second

// bulkTimeout bounds the exchanges of 10,000 frames or of 8 MiB ones, which
// take tens of seconds under -race on a loaded 2-core machine (the time
// each took is logged).
const bulkTimeout = 4 * testTimeout

// needPeers returns the interop folder when the pinned peers and node are
// there; otherwise it skips the test with what is missing and the make
// target that installs it, or fails it when peers are required
// (LINERPC_REQUIRE_PEERS=1, internal/peers).
func needPeers(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd() // go test runs in the package folder: interop/
	if err != nil {
		t.Fatal(err)
	}
	peers.Missing(t, findPeers(dir))
	return dir
}

// findPeers says what is missing for the interop tests to run in dir.
func findPeers(dir string) error {
	for _, f := range []string{
		"node_modules/.linerpc-install-stamp",
		"node_modules/@deepseek-ai/dsh-sdk-protocol/lib/index.js",
		"node_modules/@deepseek-ai/dsh-sdk-client/lib/index.js",
	} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("the TypeScript peers are not installed (interop/%s is missing): run `make interop-install`", f)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is not on PATH: the interop tests need Node >= 20 (%v); then run `make interop-install`", err)
	}
	return nil
}

// child is a Node program of ours, started over stdio. Cleanup kills and
// reaps it whatever happened.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *os.File // our end of its stdin
	stdout *os.File // our end of its stdout
	exited chan struct{}
	state  *os.ProcessState

	stderrMu sync.Mutex
	stderr   bytes.Buffer
	stderrLn chan string // every stderr line, for acks (buffered, lossy when full)
	stderrWG sync.WaitGroup
}

// startChild starts node with args in the interop folder, extra env added.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	dir := needPeers(t)
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	return startCmd(t, cmd)
}

// startCmd starts cmd with pipes from os.Pipe: their reads can be
// interrupted by a deadline, which rpc.Conn.Close uses.
func startCmd(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	c := &child{t: t, cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{}), stderrLn: make(chan string, 1024)}
	c.stderrWG.Add(1)
	go func() {
		defer c.stderrWG.Done()
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			c.stderrMu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.stderrMu.Unlock()
			select {
			case c.stderrLn <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		cmd.Wait()
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		if !c.waitExit(5 * time.Second) {
			cmd.Process.Kill()
			c.waitExit(5 * time.Second)
		}
		c.stdout.Close()
		c.stderrWG.Wait()
		if t.Failed() {
			t.Logf("stderr of %v:\n%s", cmd.Args, c.Stderr())
		}
	})
	return c
}

// waitExit waits up to d for the child to be reaped.
func (c *child) waitExit(d time.Duration) bool {
	select {
	case <-c.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// mustExit fails unless the child exits within d with status code.
func (c *child) mustExit(d time.Duration, code int) {
	c.t.Helper()
	if !c.waitExit(d) {
		c.t.Fatalf("%v did not exit within %v", c.cmd.Args, d)
	}
	if got := c.state.ExitCode(); got != code {
		c.t.Fatalf("%v exited with %v, want code %d; stderr:\n%s", c.cmd.Args, c.state, code, c.Stderr())
	}
}

// Stderr returns what the child wrote to stderr so far.
func (c *child) Stderr() string {
	c.stderrMu.Lock()
	defer c.stderrMu.Unlock()
	return c.stderr.String()
}

// waitAck waits for the peer's "ack N" stderr line with N >= n.
func (c *child) waitAck(n int) {
	c.t.Helper()
	deadline := time.After(testTimeout)
	for {
		select {
		case line := <-c.stderrLn:
			var got int
			if _, err := fmt.Sscanf(line, "ack %d", &got); err == nil && got >= n {
				return
			}
		case <-deadline:
			c.t.Fatalf("no ack of %d bytes on stderr:\n%s", n, c.Stderr())
		}
	}
}

// waitContains waits until the bytes rec recorded contain s.
func waitContains(t *testing.T, rec *rpctest.Recorder, s string) {
	t.Helper()
	rec.WaitFor(t, func(data []byte) bool { return bytes.Contains(data, []byte(s)) })
}

// tapReader records what the Conn reads; it keeps SetReadDeadline, so
// Close can still interrupt a blocked read.
type tapReader struct {
	f   *os.File
	rec *rpctest.Recorder
	// onRead, when set, is told the total number of bytes read so far.
	onRead func(total int)
	total  int
}

func (r *tapReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if n > 0 {
		r.rec.Write(p[:n])
		r.total += n
		if r.onRead != nil {
			r.onRead(r.total)
		}
	}
	return n, err
}

func (r *tapReader) SetReadDeadline(t time.Time) error { return r.f.SetReadDeadline(t) }

// tapWriter records the Conn's writes and checks the byte-level promise:
// one Write, one compact frame, one LF. raw writes bypass the check.
type tapWriter struct {
	mu  sync.Mutex // also serialises raw writes with the Conn's
	w   io.Writer
	rec *rpctest.Recorder
	bad []string // Write calls that were not whole compact frames
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !isWholeFrames(p) && len(w.bad) < 10 {
		w.bad = append(w.bad, string(p[:min(len(p), 200)]))
	}
	w.rec.Write(p)
	return w.w.Write(p)
}

// raw writes bytes that are not one frame (a frame cut in parts).
func (w *tapWriter) raw(p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rec.Write(p)
	_, err := w.w.Write(p)
	return err
}

// isWholeFrames: one or more compact frames, each LF-terminated. The
// rpc.Conn may coalesce frames queued behind a Write in progress into one
// Write (rpc/writer.go); what must never happen is a frame cut across
// Writes or two frames on one line.
func isWholeFrames(p []byte) bool {
	if len(p) == 0 || p[len(p)-1] != '\n' {
		return false
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if !isOneCompactFrame(p[:i+1]) {
			return false
		}
		p = p[i+1:]
	}
	return true
}

// isOneCompactFrame: one JSON object in compact form, then LF, nothing else.
// Lines over validateLimit are not run through json.Valid: the receiving
// peer parsed them already (the test's calls succeeded), and under -race a
// validation costs seconds per 8 MiB frame.
func isOneCompactFrame(p []byte) bool {
	body, ok := bytes.CutSuffix(p, []byte("\n"))
	if !ok || len(body) == 0 || body[0] != '{' || body[len(body)-1] != '}' {
		return false
	}
	if len(body) <= validateLimit && !json.Valid(body) {
		return false
	}
	return compact(body)
}

const validateLimit = 1 << 20

// compact reports whether valid JSON has no insignificant whitespace: no
// space, tab, CR or LF outside strings (inside strings, the controls are
// escaped, so a raw LF anywhere means two lines). A byte scan rather than
// json.Compact keeps the check cheap on 8 MiB frames.
func compact(body []byte) bool {
	inString, escaped := false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			case '\n':
				return false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			return false
		}
	}
	return true
}

// frame is one line of a recorded stream, classified as the peers do.
type frame struct {
	line   string
	id     json.RawMessage // exact bytes of the id, nil when absent
	method *string
}

// frames splits a recorded stream into lines and checks that each is one
// compact frame; an unterminated tail is an error (no frame may be split).
func frames(t *testing.T, rec *rpctest.Recorder, who string) []frame {
	t.Helper()
	data := rec.Bytes()
	var out []frame
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			t.Errorf("%s: %d bytes after the last LF: a frame was left unterminated", who, len(data))
			break
		}
		line := data[:i+1]
		data = data[i+1:]
		if !isOneCompactFrame(line) {
			t.Errorf("%s: line is not one compact frame: %.200s", who, line)
			continue
		}
		id, method, err := head(line)
		if err != nil {
			t.Errorf("%s: %v: %.200s", who, err, line)
			continue
		}
		f := frame{line: string(line[:min(len(line)-1, 300)]), id: id, method: method}
		out = append(out, f)
	}
	return out
}

// head returns the id (raw) and method of a frame. It reads members in
// order and stops at the first payload member (params, result, error),
// which both peers write after id and method, so that an 8 MiB payload is
// not decoded; a frame with another order is decoded whole.
func head(line []byte) (id json.RawMessage, method *string, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		switch key, _ := tok.(string); key {
		case "id":
			if err := dec.Decode(&id); err != nil {
				return nil, nil, err
			}
		case "method":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, nil, err
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				method = &s
			}
		case "params", "result", "error":
			if id != nil || method != nil {
				return id, method, nil
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			err := json.Unmarshal(line, &m)
			return m.ID, m.Method, err
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
		}
	}
	return id, method, nil
}

// checkIDs checks that every response in answers carries, byte for byte,
// the id of a request in asks, and answers it once.
func checkIDs(t *testing.T, asks, answers []frame, who string) {
	t.Helper()
	open := map[string]bool{}
	for _, f := range asks {
		if f.id != nil && f.method != nil {
			open[string(f.id)] = true
		}
	}
	for _, f := range answers {
		if f.id == nil || f.method != nil {
			continue
		}
		id := string(f.id)
		if !open[id] {
			t.Errorf("%s answered id %s, which was not an open request (or was answered twice): %.200s", who, id, f.line)
			continue
		}
		delete(open, id)
	}
}

// link is a Go rpc.Conn talking to the peer program over its stdio, with
// both directions recorded.
type link struct {
	*child
	conn     *rpc.Conn
	out      *tapWriter        // Go -> node
	in       *tapReader        // node -> Go
	sent     *rpctest.Recorder // every byte the Conn wrote
	received *rpctest.Recorder // every byte it read
	timeout  time.Duration     // of each call; zero means testTimeout
}

// startLink starts js/peer.mjs in mode with a Conn serving reg.
func startLink(t *testing.T, mode string, reg *rpc.Registry, env ...string) *link {
	t.Helper()
	return startLinkWith(t, mode, reg, nil, env...)
}

// startLinkWith is startLink, with onRead told the total number of bytes
// the Conn has read after every read.
func startLinkWith(t *testing.T, mode string, reg *rpc.Registry, onRead func(int), env ...string) *link {
	t.Helper()
	ch := startChild(t, env, "js/peer.mjs", mode)
	l := &link{child: ch, sent: &rpctest.Recorder{Stream: true}, received: &rpctest.Recorder{Stream: true}}
	l.out = &tapWriter{w: ch.stdin, rec: l.sent}
	l.in = &tapReader{f: ch.stdout, rec: l.received, onRead: onRead}
	l.conn = rpc.NewConn(l.in, l.out, &rpc.Options{Handler: reg, MaxConcurrentRequests: 20000})
	// Registered after startChild's cleanup, so it runs first: the Conn is
	// closed and drained before the child is reaped; then the byte checks.
	t.Cleanup(func() {
		l.conn.Close()
		ch.stdin.Close()
		if !ch.waitExit(testTimeout) {
			ch.cmd.Process.Kill()
		}
		waitOrFail(t, "the Conn's goroutines", testTimeout, func() { l.conn.Wait() })
		l.checkBytes(t)
	})
	l.conn.Start()
	return l
}

// checkBytes runs the byte-level checks on both recorded directions.
func (l *link) checkBytes(t *testing.T) {
	t.Helper()
	l.out.mu.Lock()
	bad := l.out.bad
	l.out.mu.Unlock()
	for _, b := range bad {
		t.Errorf("Go wrote something other than whole compact frames in one Write: %q", b)
	}
	fromNode := frames(t, l.received, "TS transport")
	fromGo := frames(t, l.sent, "Go rpc.Conn")
	checkIDs(t, fromGo, fromNode, "TS transport")
	checkIDs(t, fromNode, fromGo, "Go rpc.Conn")
}

// call is a Call on the link bounded by testTimeout.
func (l *link) call(method string, params, result any) error {
	d := l.timeout
	if d == 0 {
		d = testTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.conn.Call(ctx, method, params, result)
}

// mustCall fails the test when the call fails.
func (l *link) mustCall(method string, params, result any) {
	l.t.Helper()
	if err := l.call(method, params, result); err != nil {
		l.t.Fatalf("%s: %v", method, err)
	}
}

// stats returns the peer's own byte bookkeeping.
type peerStats struct {
	Writes      int      `json:"writes"`
	BadWrites   []string `json:"badWrites"`
	InChunks    int      `json:"inChunks"`
	InBytes     int      `json:"inBytes"`
	SplitChunks int      `json:"splitChunks"`
}

func (l *link) stats() peerStats {
	l.t.Helper()
	var s peerStats
	l.mustCall("stats", nil, &s)
	if len(s.BadWrites) > 0 {
		l.t.Errorf("the TS transport wrote something other than one compact frame per write: %q", s.BadWrites)
	}
	return s
}

// outcome is how one call of the TS transport to Go settled (peer.mjs).
type outcome struct {
	OK              bool            `json:"ok"`
	Result          json.RawMessage `json:"result"`
	Name            string          `json:"name"`
	IsResponseError bool            `json:"isResponseError"`
	Code            json.RawMessage `json:"code"`
	Message         string          `json:"message"`
	Data            json.RawMessage `json:"data"`
}

// String shows the raw JSON members as text, so that failures print them
// readably rather than as bytes.
func (o outcome) String() string {
	return fmt.Sprintf("{OK:%v Result:%s Name:%q IsResponseError:%v Code:%s Message:%q Data:%s}",
		o.OK, o.Result, o.Name, o.IsResponseError, o.Code, o.Message, o.Data)
}

// waitOrFail runs f and fails the test if it does not return within d.
func waitOrFail(t *testing.T, what string, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("%s did not finish within %v", what, d)
	}
}

// jsonEq reports whether two JSON texts denote the same value.
func jsonEq(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
