package realruntime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/fakemodel"
	"github.com/linerpc/linerpc/internal/peers"
)

// waitTimeout bounds every wait for a frame or an exit; it is a failure
// bound, not a pacing delay.
const waitTimeout = 30 * time.Second

// requireRuntime skips the test with the Available error (which names
// `make realruntime`), or fails it when peers are required (peers.Env).
func requireRuntime(t *testing.T) {
	t.Helper()
	peers.Missing(t, Available())
}

// rpcError is a JSON-RPC error object, with "data" kept raw so that its
// presence can be checked.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// frame is one line read from the runtime's stdout, decoded.
type frame struct {
	idx  int    // position in the stdout stream
	line string // exact bytes, LF removed

	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`

	p map[string]any // params, generic
}

func (f *frame) sessionID() string { s, _ := f.p["sessionId"].(string); return s }
func (f *frame) status() string    { s, _ := f.p["status"].(string); return s }
func (f *frame) event() map[string]any {
	e, _ := f.p["event"].(map[string]any)
	return e
}
func (f *frame) eventType() string { s, _ := f.event()["type"].(string); return s }
func (f *frame) data() map[string]any {
	d, _ := f.event()["data"].(map[string]any)
	return d
}
func (f *frame) str(key string) string { s, _ := f.p[key].(string); return s }

// dig walks nested objects by keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func (f *frame) String() string {
	if len(f.line) > 300 {
		return fmt.Sprintf("#%d %s…", f.idx, f.line[:300])
	}
	return fmt.Sprintf("#%d %s", f.idx, f.line)
}

// transcriptEntry is one line of a transcript file.
type transcriptEntry struct {
	Dir   string `json:"dir"`
	Frame string `json:"frame"`
}

// peer is one running real runtime driven over raw JSON-RPC lines.
type peer struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *os.File // read end of stdout
	home  string
	work  string // workspace used as initialize cwd
	fake  *fakemodel.Server

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every new frame, EOF and exit
	frames     []*frame
	eof        bool
	exited     bool
	state      *os.ProcessState
	transcript []transcriptEntry
	readDone   chan struct{}
	waitDone   chan struct{}
	stdinOpen  bool
	started    time.Time
}

// startPeer starts a runtime talking to fake; cleanup kills and reaps it
// (then closes fake) at test end.
func startPeer(t *testing.T, fake *fakemodel.Server, extraEnv ...string) *peer {
	t.Helper()
	t.Cleanup(fake.Close) // runs after the process cleanup below
	p := &peer{
		t:        t,
		home:     t.TempDir(),
		work:     t.TempDir(),
		fake:     fake,
		changed:  make(chan struct{}),
		readDone: make(chan struct{}),
		waitDone: make(chan struct{}),
	}
	p.cmd = Command(fake.URL(), p.home, extraEnv...)
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = w
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("start runtime: %v", err)
	}
	w.Close()
	p.stdin, p.out, p.stdinOpen = stdin, r, true
	go p.readLoop()
	go func() {
		_ = p.cmd.Wait()
		p.mu.Lock()
		p.exited, p.state = true, p.cmd.ProcessState
		p.notifyLocked()
		p.mu.Unlock()
		close(p.waitDone)
	}()
	t.Cleanup(p.cleanup)
	return p
}

func (p *peer) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *peer) readLoop() {
	defer close(p.readDone)
	br := bufio.NewReaderSize(p.out, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
			p.add(string(line))
		} else if len(line) > 0 {
			p.t.Logf("runtime stdout ended with an unterminated line: %q", line)
		}
		if err != nil {
			p.mu.Lock()
			p.eof = true
			p.notifyLocked()
			p.mu.Unlock()
			return
		}
	}
}

func (p *peer) add(line string) {
	f := &frame{line: line}
	if err := json.Unmarshal([]byte(line), f); err != nil {
		p.t.Errorf("runtime wrote a non-JSON stdout line: %q", line)
	}
	if len(f.Params) > 0 {
		_ = json.Unmarshal(f.Params, &f.p)
	}
	p.mu.Lock()
	f.idx = len(p.frames)
	p.frames = append(p.frames, f)
	p.transcript = append(p.transcript, transcriptEntry{"s2c", line})
	p.notifyLocked()
	p.mu.Unlock()
	if testing.Verbose() && os.Getenv("LINERPC_DUMP") == "1" {
		p.t.Logf("S→C %s", f)
	}
}

func (p *peer) cleanup() {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if !exited {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.waitDone:
	case <-time.After(waitTimeout):
		p.t.Errorf("runtime pid %d not reaped after SIGKILL", p.cmd.Process.Pid)
	}
	p.out.Close() // unblocks the reader if a grandchild still holds stdout
	<-p.readDone
	if p.t.Failed() {
		p.t.Logf("runtime stderr:\n%s", tail(StderrOf(p.cmd), 4000))
		for i, r := range p.fake.Requests() {
			p.t.Logf("model request %d: %s", i, tail(string(r.Raw), 600))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// send writes one line (LF appended) to the runtime's stdin and records it.
func (p *peer) send(line string) {
	p.t.Helper()
	p.mu.Lock()
	p.transcript = append(p.transcript, transcriptEntry{"c2s", line})
	p.mu.Unlock()
	if testing.Verbose() && os.Getenv("LINERPC_DUMP") == "1" {
		p.t.Logf("C→S %s", line)
	}
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write to runtime: %v", err)
	}
}

// request builds and sends a request frame; params nil sends no params.
func (p *peer) request(id any, method string, params any) {
	p.t.Helper()
	req := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", id, method, params}
	b, err := json.Marshal(req)
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(string(b))
}

// closeStdin closes the runtime's stdin (EOF for the runtime).
func (p *peer) closeStdin() {
	p.mu.Lock()
	p.stdinOpen = false
	p.mu.Unlock()
	_ = p.stdin.Close()
}

// await returns the first frame after index `after` matching pred, waiting
// up to waitTimeout. It fails the test when the stream ends or the time is up.
func (p *peer) await(after int, desc string, pred func(*frame) bool) *frame {
	p.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	next := after + 1
	for {
		p.mu.Lock()
		for ; next < len(p.frames); next++ {
			if f := p.frames[next]; pred(f) {
				p.mu.Unlock()
				return f
			}
		}
		eof, ch := p.eof, p.changed
		p.mu.Unlock()
		if eof {
			p.t.Fatalf("runtime stdout ended while waiting for %s (exit: %v)", desc, p.exitState())
		}
		select {
		case <-ch:
		case <-deadline.C:
			p.t.Fatalf("timed out after %v waiting for %s", waitTimeout, desc)
		}
	}
}

// find returns the first frame after index `after` matching pred among the
// frames received so far, or nil.
func (p *peer) find(after int, pred func(*frame) bool) *frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := after + 1; i < len(p.frames); i++ {
		if pred(p.frames[i]) {
			return p.frames[i]
		}
	}
	return nil
}

// all returns the frames received so far.
func (p *peer) all() []*frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*frame(nil), p.frames...)
}

func (p *peer) exitState() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// awaitExit waits for the process to exit and returns its exit code.
func (p *peer) awaitExit(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.waitDone:
	case <-time.After(within):
		p.t.Fatalf("runtime did not exit within %v", within)
	}
	st := p.exitState()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.t.Logf("runtime killed by signal %v", ws.Signal())
		return -1
	}
	return st.ExitCode()
}

// exitedWithin reports whether the process exits within d, without failing.
// Only used where the absence of an exit is the fact under test.
func (p *peer) exitedWithin(d time.Duration) bool {
	select {
	case <-p.waitDone:
		return true
	case <-time.After(d):
		return false
	}
}

// record writes the transcript to testdata/transcripts/<name>.ndjson when
// LINERPC_RECORD=1 and the test has not failed.
func (p *peer) record(name string) {
	p.t.Helper()
	if os.Getenv("LINERPC_RECORD") != "1" || p.t.Failed() {
		return
	}
	// Let the reader drain what the runtime wrote before it exited.
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited {
		<-p.readDone
	}
	dir, err := Dir()
	if err != nil {
		p.t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(dir), "testdata", "transcripts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		p.t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	p.mu.Lock()
	for _, e := range p.transcript {
		if err := enc.Encode(e); err != nil {
			p.mu.Unlock()
			p.t.Fatal(err)
		}
	}
	p.mu.Unlock()
	file := filepath.Join(out, name+".ndjson")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("recorded %s", file)
}

// ---- predicates ----

func isResponse(id int) func(*frame) bool {
	want := fmt.Sprint(id)
	return func(f *frame) bool { return f.Method == "" && string(f.ID) == want }
}

func isEvent(session, typ string) func(*frame) bool {
	return func(f *frame) bool {
		return f.Method == "session.event" && f.sessionID() == session && f.eventType() == typ
	}
}

func isStatus(session, status string) func(*frame) bool {
	return func(f *frame) bool {
		return f.Method == "session.status" && f.sessionID() == session && f.status() == status
	}
}

func isMethod(m string) func(*frame) bool {
	return func(f *frame) bool { return f.Method == m }
}

// isReceipt matches the agent/inbox/spliced event whose inserted messages
// include messageID.
func isReceipt(session, messageID string) func(*frame) bool {
	return func(f *frame) bool {
		if !isEvent(session, "agent/inbox/spliced")(f) {
			return false
		}
		ins, _ := f.data()["inserted"].([]any)
		for _, m := range ins {
			if id, _ := dig(m, "id").(string); id == messageID {
				return true
			}
		}
		return false
	}
}

// ---- common steps ----

// initParams returns the usual initialize params for the peer.
func (p *peer) initParams() map[string]any {
	return map[string]any{
		"cwd":       p.work,
		"provider":  "deepseek-official",
		"model":     "deepseek-v4-flash",
		"maxTokens": 4096,
	}
}

// initialize sends initialize and checks the server identity.
func (p *peer) initialize(id int, params map[string]any) *frame {
	p.t.Helper()
	p.request(id, "initialize", params)
	f := p.await(-1, fmt.Sprintf("initialize response id %d", id), isResponse(id))
	if f.Error != nil {
		p.t.Fatalf("initialize failed: %s", f.line)
	}
	var res struct {
		ServerInfo struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(f.Result, &res); err != nil || res.ServerInfo.Name == nil || res.ServerInfo.Version == nil {
		p.t.Fatalf("initialize result without server identity: %s", f.line)
	}
	if *res.ServerInfo.Name != "deepseek-harness-sdk-runtime" || *res.ServerInfo.Version != "0.0.1" {
		p.t.Errorf("serverInfo %s / %s", *res.ServerInfo.Name, *res.ServerInfo.Version)
	}
	return f
}

// prompt sends session/prompt with one text block.
func (p *peer) prompt(id int, session, text string) {
	p.t.Helper()
	p.request(id, "session/prompt", map[string]any{
		"sessionId":     session,
		"contentBlocks": []any{map[string]any{"type": "text", "text": text}},
	})
}

// promptResult waits for the session/prompt response and returns it and
// its messageId.
func (p *peer) promptResult(id int) (*frame, string) {
	p.t.Helper()
	f := p.await(-1, fmt.Sprintf("session/prompt response id %d", id), isResponse(id))
	var res struct {
		MessageID string `json:"messageId"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &res) != nil || res.MessageID == "" {
		p.t.Fatalf("session/prompt failed: %s", f.line)
	}
	return f, res.MessageID
}

// turn is what one prompt produced on the wire.
type turn struct {
	result, receipt, running, turnEnd, idle *frame
	messageID                               string
}

// runTurn prompts session and waits for the receipt, the response, the
// turn/end and the following idle, checking the receipt-before-result rule.
func (p *peer) runTurn(id int, session, text string) turn {
	p.t.Helper()
	p.prompt(id, session, text)
	return p.collectTurn(id, session)
}

func (p *peer) collectTurn(id int, session string) turn {
	p.t.Helper()
	var tr turn
	tr.result, tr.messageID = p.promptResult(id)
	tr.receipt = p.await(-1, "receipt of "+tr.messageID, isReceipt(session, tr.messageID))
	if tr.receipt.idx > tr.result.idx {
		p.t.Errorf("receipt %d arrived after the prompt result %d", tr.receipt.idx, tr.result.idx)
	}
	tr.running = p.find(tr.receipt.idx, isStatus(session, "running"))
	if tr.running == nil || tr.running.idx > tr.result.idx {
		p.t.Errorf("session.status running not between receipt and prompt result")
	}
	tr.turnEnd = p.await(tr.receipt.idx, "turn/end of "+session, isEvent(session, "turn/end"))
	tr.idle = p.await(tr.turnEnd.idx, "idle of "+session, isStatus(session, "idle"))
	return tr
}

// shutdown sends shutdown and expects {} then exit status 0.
func (p *peer) shutdown(id int) *frame {
	p.t.Helper()
	p.request(id, "shutdown", nil)
	f := p.await(-1, "shutdown response", isResponse(id))
	if f.Error != nil || string(f.Result) != "{}" {
		p.t.Errorf("shutdown response %s, want result {}", f.line)
	}
	if code := p.awaitExit(waitTimeout); code != 0 {
		p.t.Errorf("exit code %d after shutdown, want 0", code)
	}
	<-p.readDone
	if last := p.all(); len(last) > 0 && last[len(last)-1].idx != f.idx {
		p.t.Errorf("frames after the shutdown response: %s", last[len(last)-1])
	}
	return f
}

// reasonKind returns turn/end data.reason.kind.
func reasonKind(f *frame) string { s, _ := dig(f.data(), "reason", "kind").(string); return s }

// assistantText returns the concatenated text blocks of an assistant/message event.
func assistantText(f *frame) string {
	content, _ := dig(f.data(), "message", "content").([]any)
	var b strings.Builder
	for _, c := range content {
		if dig(c, "type") == "text" {
			s, _ := dig(c, "text").(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// eventTypes lists "type" of the session's events (or statuses, as
// "status:<s>") between two frame indexes, for logs and README facts.
func eventTypes(frames []*frame, session string) []string {
	var out []string
	for _, f := range frames {
		switch {
		case f.Method == "session.event" && f.sessionID() == session:
			out = append(out, f.eventType())
		case f.Method == "session.status" && f.sessionID() == session:
			out = append(out, "status:"+f.status())
		case f.Method == "" && f.sessionID() == "":
			out = append(out, "response:"+string(f.ID))
		}
	}
	return out
}

// checkSeqs checks that event seq values of each session increase by one.
func checkSeqs(t *testing.T, frames []*frame) {
	t.Helper()
	last := map[string]float64{}
	for _, f := range frames {
		if f.Method != "session.event" {
			continue
		}
		seq, ok := f.event()["seq"].(float64)
		if !ok {
			t.Errorf("event without numeric seq: %s", f)
			continue
		}
		if prev, ok := last[f.sessionID()]; ok && seq != prev+1 {
			t.Errorf("session %s seq %v after %v", f.sessionID(), seq, prev)
		}
		last[f.sessionID()] = seq
		if _, ok := f.event()["time"].(float64); !ok {
			t.Errorf("event without numeric time: %s", f)
		}
	}
}
