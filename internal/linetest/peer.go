package linetest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
)

// Peer is the far end of a line-framed stream under test, so that a test
// reads as a script of the wire: the thing under test reads ConnIn and
// writes ConnOut; the test sends it lines and takes the frames it writes.
//
// By default a frame is read only when the test asks for one, so a test
// can also play a peer that does not read. ReadAhead makes a goroutine
// read every frame as it comes instead.
//
// The methods that fail a test (Send, Next, Expect, NextRequest, Answer)
// must be called from the test's goroutine; a goroutine of the test's own
// uses TryNext and hands its error to the test.
type Peer struct {
	// ConnIn is what the thing under test reads: the peer's lines.
	ConnIn *io.PipeReader
	// ConnOut is where the thing under test writes its frames.
	ConnOut *io.PipeWriter

	t      testing.TB
	in     io.WriteCloser // what the peer sends
	out    io.ReadCloser  // what the thing under test wrote
	frames *bufio.Reader

	mu    sync.Mutex
	read  []string // every frame taken so far, without its LF
	ahead chan frameRead
	done  chan struct{} // closed when the read-ahead goroutine ends
}

type frameRead struct {
	frame string
	err   error
}

// NewPeer returns a peer whose streams close when the test ends (after
// the cleanups the test registers later, which usually close the thing
// under test).
func NewPeer(t testing.TB) *Peer {
	connIn, in := io.Pipe()
	out, connOut := io.Pipe()
	p := &Peer{ConnIn: connIn, ConnOut: connOut, t: t, in: in, out: out, frames: bufio.NewReader(out)}
	t.Cleanup(p.Close)
	return p
}

// Attach returns a peer of streams the test already has, such as a child
// process's stdin (in: what the peer sends) and stdout (out: what the
// child writes); ConnIn and ConnOut are nil. The streams close when the
// test ends.
func Attach(t testing.TB, in io.WriteCloser, out io.ReadCloser) *Peer {
	p := &Peer{t: t, in: in, out: out, frames: bufio.NewReader(out)}
	t.Cleanup(p.Close)
	return p
}

// Close closes both streams, so that the thing under test sees its input
// end and its writes fail, and waits for the read-ahead goroutine. It is
// called when the test ends, and may be called before.
func (p *Peer) Close() {
	p.in.Close()
	p.out.Close()
	if p.done != nil {
		<-p.done
	}
}

// ReadAhead starts a goroutine that reads each frame as it is written.
// A frame for which hook (when not nil) returns true is taken by the hook
// (it may TrySend, as a scripted runtime answers its own shutdown); the
// others wait for Next, up to 65,536 of them: past that the goroutine
// stops reading, as a peer that falls behind does.
func (p *Peer) ReadAhead(hook func(p *Peer, frame string) bool) {
	p.ahead = make(chan frameRead, 1<<16)
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		defer close(p.ahead)
		for {
			f, err := p.readFrame()
			if err != nil {
				p.ahead <- frameRead{err: err}
				return
			}
			if hook != nil && hook(p, f) {
				continue
			}
			p.ahead <- frameRead{frame: f}
		}
	}()
}

func (p *Peer) readFrame() (string, error) {
	line, err := p.frames.ReadString('\n')
	if err != nil {
		if line != "" {
			err = fmt.Errorf("an unterminated frame %q, then %w", line, err)
		}
		return "", err
	}
	f := strings.TrimSuffix(line, "\n")
	p.mu.Lock()
	p.read = append(p.read, f)
	p.mu.Unlock()
	return f, nil
}

// TryNext returns the next frame written (without its LF), or why there is
// none: io.EOF when the thing under test closed its output.
func (p *Peer) TryNext() (string, error) {
	if p.ahead == nil {
		return p.readFrame()
	}
	r, ok := <-p.ahead
	if !ok {
		return "", io.EOF
	}
	return r.frame, r.err
}

// Next returns the next frame written, without its LF; it fails the test
// when the output ends instead.
func (p *Peer) Next() string {
	p.t.Helper()
	f, err := p.TryNext()
	if err != nil {
		p.t.Fatalf("reading the next frame: %v", err)
	}
	return f
}

// Expect takes the next frame and matches it against want, with the
// placeholders of the wire vectors and numbers compared by value.
func (p *Peer) Expect(want string) string {
	p.t.Helper()
	got := p.Next()
	if err := vectortest.Match(json.RawMessage(want), json.RawMessage(got)); err != nil {
		p.t.Fatalf("frame %s\nwant %s\n%v", got, want, err)
	}
	return got
}

// Request is a request frame as a peer sees it.
type Request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// ParseRequest reads frame as a request: an object with an id and a
// string method.
func ParseRequest(frame string) (Request, error) {
	var r Request
	if err := json.Unmarshal([]byte(frame), &r); err != nil {
		return r, err
	}
	if r.ID == nil || r.Method == "" {
		return r, errors.New("not a request: " + frame)
	}
	return r, nil
}

// NextRequest takes the next frame, which must be a request.
func (p *Peer) NextRequest() Request {
	p.t.Helper()
	r, err := ParseRequest(p.Next())
	if err != nil {
		p.t.Fatal(err)
	}
	return r
}

// Send writes one line to the thing under test, an LF appended; it fails
// the test when that side no longer reads.
func (p *Peer) Send(line string) {
	p.t.Helper()
	if err := p.TrySend(line); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// TrySend writes one line, an LF appended, and returns the error of the
// write: a side that is gone makes it fail.
func (p *Peer) TrySend(line string) error {
	_, err := io.WriteString(p.in, line+"\n")
	return err
}

// Answer sends the response with result (a JSON text) to r.
func (p *Peer) Answer(r Request, result string) {
	p.t.Helper()
	p.Send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":` + result + `}`)
}

// CloseInput ends what the thing under test reads: its next Read returns
// io.EOF, or err when not nil and the stream is a pipe of NewPeer's.
func (p *Peer) CloseInput(err error) {
	if pw, ok := p.in.(*io.PipeWriter); ok {
		pw.CloseWithError(err)
		return
	}
	p.in.Close()
}

// Taken returns every frame taken so far, in order.
func (p *Peer) Taken() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.read...)
}
