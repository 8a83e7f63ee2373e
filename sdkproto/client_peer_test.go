package sdkproto_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// A scripted runtime over io.Pipe, driven step by step by a test: it hands
// the client's requests to the test (answering shutdown by itself, then
// ending its output as the real runtime exits) and writes whatever frames
// the test asks for, in that order.

const clWait = 10 * time.Second // failure bound for every wait in these tests

type clRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type clPeer struct {
	t    *testing.T
	reqs chan clRequest
	out  *io.PipeWriter // frames to the client

	// manualShutdown hands shutdown requests to the test instead of
	// answering them.
	manualShutdown atomic.Bool

	mu   sync.Mutex
	sent []string // every line the client wrote
	done chan struct{}
}

// newClPeer returns a client connected to a scripted peer; cleanup closes
// both and checks that the peer's goroutine ended.
func newClPeer(t *testing.T, opts *sdkproto.ClientOptions) (*sdkproto.Client, *clPeer) {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	p := &clPeer{t: t, reqs: make(chan clRequest, 64), out: s2cW, done: make(chan struct{})}
	go p.read(c2sR)
	c := sdkproto.NewClient(s2cR, c2sW, opts)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		s2cW.Close()
		select {
		case <-p.done:
		case <-time.After(clWait):
			t.Errorf("scripted peer did not end")
		}
	})
	return c, p
}

func (p *clPeer) read(r *io.PipeReader) {
	defer close(p.done)
	defer close(p.reqs)
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		p.mu.Lock()
		p.sent = append(p.sent, string(line[:len(line)-1]))
		p.mu.Unlock()
		var req clRequest
		if json.Unmarshal(line, &req) != nil {
			continue
		}
		if req.Method == sdkproto.Shutdown.Name() && !p.manualShutdown.Load() {
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{}}`, req.ID)
			p.out.Close() // the runtime exits after answering shutdown
			continue
		}
		p.reqs <- req
	}
}

// next returns the next request of the client. It may be called from a
// goroutine of the test: on failure it reports the error and ends the
// calling goroutine (the test then fails on its own wait).
func (p *clPeer) next() clRequest {
	p.t.Helper()
	select {
	case r, ok := <-p.reqs:
		if ok {
			return r
		}
		p.t.Error("client closed its output")
	case <-time.After(clWait):
		p.t.Error("no request from the client")
	}
	runtime.Goexit()
	return clRequest{}
}

// expect returns the next request, which must be for method.
func (p *clPeer) expect(method string) clRequest {
	p.t.Helper()
	r := p.next()
	if r.Method != method {
		p.t.Errorf("request %s, want %s", r.Method, method)
		runtime.Goexit()
	}
	return r
}

// send writes one frame (format and args as fmt.Sprintf), LF added. A
// client that is gone makes the write fail, which is fine.
func (p *clPeer) send(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	_, _ = p.out.Write([]byte(line + "\n"))
}

// sendRaw writes frames given as JSON values or strings.
func (p *clPeer) sendRaw(frames ...json.RawMessage) {
	for _, f := range frames {
		_, _ = p.out.Write(append(compactLine(f), '\n'))
	}
}

func compactLine(f json.RawMessage) []byte {
	var v any
	if json.Unmarshal(f, &v) != nil {
		return f
	}
	b, _ := json.Marshal(v)
	return b
}

func (p *clPeer) result(r clRequest, result string) {
	p.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, r.ID, result)
}

// Frame builders for the scripted runtime.

func clEvent(session, typ string, seq int, data string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":%q,"event":{"type":%q,"seq":%d,"time":1767225600000,"data":%s}}}`,
		session, typ, seq, data)
}

func clReceipt(session, msgID string, seq int) string {
	return clEvent(session, "agent/inbox/spliced", seq,
		fmt.Sprintf(`{"target":"next-turn","start":0,"inserted":[{"id":%q,"role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}]}`, msgID))
}

func clStatus(session, status string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":%q,"status":%q}}`, session, status)
}

func clAssistant(session, text string, seq int) string {
	return clEvent(session, "assistant/message", seq,
		fmt.Sprintf(`{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"text","text":%q}],"source":{"kind":"model","provider":"p","model":"m"}}}`, text))
}

func clDelta(session, text string, seq int) string {
	return clEvent(session, "assistant/chunk", seq,
		fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":%q}}`, text))
}

func clTurnEnd(session, kind string, seq int) string {
	return clEvent(session, "turn/end", seq, fmt.Sprintf(`{"turn":1,"reason":{"kind":%q}}`, kind))
}

// clTurn writes a whole text turn for session, answering the prompt
// request r after the first notifications, as the real runtime does.
func (p *clPeer) clTurn(r clRequest, session, msgID, text string) {
	p.send("%s", clReceipt(session, msgID, 3))
	p.send("%s", clStatus(session, "running"))
	p.send("%s", clEvent(session, "turn/start", 4, `{"turn":1}`))
	p.result(r, fmt.Sprintf(`{"messageId":%q}`, msgID))
	p.send("%s", clDelta(session, text, 5))
	p.send("%s", clAssistant(session, text, 6))
	p.send("%s", clTurnEnd(session, "completed", 7))
	p.send("%s", clStatus(session, "idle"))
}
