package sdkproto_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

// clPeer is a scripted runtime (a rpctest.Peer) driven step by step by a
// test: it answers shutdown by itself, then ends its output as the real
// runtime exits, and hands every other frame of the client to the test.
// The test's goroutine plays the runtime; a call of the client that waits
// for the runtime runs on a goroutine of its own (clGo).
type clPeer struct {
	*rpctest.Peer
	t testing.TB

	// manualShutdown hands shutdown requests to the test instead of
	// answering them.
	manualShutdown atomic.Bool
}

// newClPeer returns a client connected to a scripted peer; cleanup closes
// the client, then the peer's streams, and waits for the peer's reader.
func newClPeer(t *testing.T, opts *sdkproto.ClientOptions) (*sdkproto.Client, *clPeer) {
	t.Helper()
	p := &clPeer{Peer: rpctest.NewPeer(t), t: t}
	p.ReadAhead(func(lp *rpctest.Peer, f string) bool {
		r, err := rpctest.ParseCall(f)
		if err != nil || r.Method != sdkproto.Shutdown.Name() || p.manualShutdown.Load() {
			return false
		}
		_ = lp.TrySend(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{}}`)
		lp.CloseInput(nil) // the runtime exits after answering shutdown
		return true
	})
	c := sdkproto.NewClient(p.ConnIn, p.ConnOut, opts)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c, p
}

// clGo runs f, a call of the client, on a goroutine of its own, so that
// the test's goroutine can play the runtime meanwhile; the returned func
// waits for f's results. A test that fails first leaves f to end with the
// test's context or the client's Close.
func clGo[T any](f func() (T, error)) func() (T, error) {
	type outcome struct {
		v   T
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		v, err := f()
		ch <- outcome{v, err}
	}()
	return func() (T, error) {
		o := <-ch
		return o.v, o.err
	}
}

// expect takes the next frame of the client, which must be a request for
// method; it fails the test otherwise.
func (p *clPeer) expect(method string) rpctest.Call {
	p.t.Helper()
	r := p.NextCall()
	if r.Method != method {
		p.t.Fatalf("request %s, want %s", r.Method, method)
	}
	return r
}

// tryExpect is expect for a goroutine of the test: it returns the failure.
func (p *clPeer) tryExpect(method string) (rpctest.Call, error) {
	f, err := p.TryNext()
	if err != nil {
		return rpctest.Call{}, fmt.Errorf("waiting for %s: %w", method, err)
	}
	r, err := rpctest.ParseCall(f)
	if err == nil && r.Method != method {
		err = fmt.Errorf("request %s, want %s", f, method)
	}
	return r, err
}

// send writes one frame (format and args as fmt.Sprintf), LF added. A
// client that is gone makes the write fail, which is fine: what the test
// checks is what the client saw.
func (p *clPeer) send(format string, args ...any) {
	_ = p.TrySend(fmt.Sprintf(format, args...))
}

// sendRaw writes frames given as JSON values or strings.
func (p *clPeer) sendRaw(frames ...json.RawMessage) {
	for _, f := range frames {
		_ = p.TrySend(string(compactLine(f)))
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

func (p *clPeer) result(r rpctest.Call, result string) {
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
func (p *clPeer) clTurn(r rpctest.Call, session, msgID, text string) {
	p.send("%s", clReceipt(session, msgID, 3))
	p.send("%s", clStatus(session, "running"))
	p.send("%s", clEvent(session, "turn/start", 4, `{"turn":1}`))
	p.result(r, fmt.Sprintf(`{"messageId":%q}`, msgID))
	p.send("%s", clDelta(session, text, 5))
	p.send("%s", clAssistant(session, text, 6))
	p.send("%s", clTurnEnd(session, "completed", 7))
	p.send("%s", clStatus(session, "idle"))
}
