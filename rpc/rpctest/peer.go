package rpctest

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
// By default a frame is read only when the test asks for one, one at a
// time, so a test can also play a peer that does not read: until it asks,
// the writer blocks. ReadAhead makes a goroutine read every frame as it
// comes instead.
//
// Every wait is bounded by MaxWait: a frame that does not come, or a line
// that the thing under test does not read, fails the test with what it
// waited for.
//
// The methods that fail a test (Send, Next, Expect, NextCall, Answer)
// must be called from the test's goroutine; a goroutine of the test's own
// uses TryNext and TrySend and hands their errors to the test. Frames are
// taken by one goroutine at a time.
type Peer struct {
	// ConnIn is what the thing under test reads: the peer's lines.
	ConnIn *io.PipeReader
	// ConnOut is where the thing under test writes its frames.
	ConnOut *io.PipeWriter

	t      testing.TB
	in     io.WriteCloser // what the peer sends
	out    io.ReadCloser  // what the thing under test wrote
	frames *bufio.Reader

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: the readers stop

	mu      sync.Mutex
	read    []string       // every frame taken so far, without its LF
	pending chan frameRead // the read of one frame under way, without ReadAhead
	ahead   chan frameRead // the frames read ahead, with ReadAhead
	closing bool           // Close began: no reader goroutine starts any more
	readers sync.WaitGroup // the goroutines reading out
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
	p := newPeer(t, in, out)
	p.ConnIn, p.ConnOut = connIn, connOut
	return p
}

// Attach returns a peer of streams the test already has, such as a child
// process's stdin (in: what the peer sends) and stdout (out: what the
// child writes); ConnIn and ConnOut are nil. The streams close when the
// test ends.
func Attach(t testing.TB, in io.WriteCloser, out io.ReadCloser) *Peer {
	return newPeer(t, in, out)
}

func newPeer(t testing.TB, in io.WriteCloser, out io.ReadCloser) *Peer {
	p := &Peer{t: t, in: in, out: out, frames: bufio.NewReader(out), closed: make(chan struct{})}
	t.Cleanup(p.Close)
	return p
}

// Close closes both streams, so that the thing under test sees its input
// end and its writes fail, and waits for the goroutines reading its output;
// one still reading after MaxWait (a stream whose Close does not end a
// Read) fails the test. It is called when the test ends, and may be called
// before.
func (p *Peer) Close() {
	p.closeOnce.Do(func() { close(p.closed) })
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.in.Close()
	p.out.Close()
	readersDone := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(readersDone)
	}()
	if !waitBounded(readersDone) {
		p.t.Errorf("rpctest: the peer's reader still ran %v after its streams were closed", MaxWait)
	}
}

// ReadAhead starts a goroutine that reads each frame as it is written.
// A frame for which hook (when not nil) returns true is taken by the hook
// (it may TrySend, as a scripted runtime answers its own shutdown); the
// others wait for Next, up to 65,536 of them: past that the goroutine
// stops reading, as a peer that falls behind does. It is called before
// Close.
func (p *Peer) ReadAhead(hook func(p *Peer, frame string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// A read a timed-out Next left under way holds the next frame.
	pending := p.pending
	p.pending = nil
	ahead := make(chan frameRead, 1<<16)
	p.ahead = ahead
	p.readers.Go(func() {
		defer close(ahead)
		for {
			var r frameRead
			if pending != nil {
				r, pending = <-pending, nil
			} else {
				r.frame, r.err = p.readFrame()
			}
			if r.err == nil && hook != nil && hook(p, r.frame) {
				continue
			}
			select {
			case ahead <- r:
			case <-p.closed:
				return
			}
			if r.err != nil {
				return
			}
		}
	})
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

// nextRead returns the channel the next frame comes on: the read-ahead
// queue, or else the read of one frame, on a goroutine so that its wait
// can be bounded, started now unless one is already under way.
func (p *Peer) nextRead() (ch chan frameRead, ahead bool) {
	p.mu.Lock()
	if p.ahead != nil {
		defer p.mu.Unlock()
		return p.ahead, true
	}
	if p.pending != nil {
		defer p.mu.Unlock()
		return p.pending, false
	}
	ch = make(chan frameRead, 1)
	p.pending = ch
	closing := p.closing
	if !closing {
		p.readers.Add(1)
	}
	p.mu.Unlock()
	read := func() {
		var r frameRead
		r.frame, r.err = p.readFrame()
		ch <- r
	}
	if closing {
		// The streams are closed, so the read ends at once; a goroutine
		// started now would race with Close's wait for the readers.
		read()
	} else {
		go func() {
			defer p.readers.Done()
			read()
		}()
	}
	return ch, false
}

// errNoFrame is TryNext's error when no frame came within MaxWait.
var errNoFrame = fmt.Errorf("no frame within %v", MaxWait)

// TryNext returns the next frame written (without its LF), or why there is
// none: io.EOF when the thing under test closed its output, or an error
// saying that no frame came within MaxWait (a frame that comes later is
// the next one taken).
func (p *Peer) TryNext() (string, error) {
	ch, ahead := p.nextRead()
	timer := newBound()
	defer timer.Stop()
	select {
	case r, ok := <-ch:
		if !ok {
			return "", io.EOF // ReadAhead's goroutine delivered its error already
		}
		if !ahead {
			p.mu.Lock()
			p.pending = nil
			p.mu.Unlock()
		}
		return r.frame, r.err
	case <-timer.C:
		return "", errNoFrame
	}
}

// Next returns the next frame written, without its LF; it fails the test
// when the output ends instead, or when no frame comes within MaxWait.
func (p *Peer) Next() string {
	p.t.Helper()
	f, _ := p.next("a frame")
	return f
}

// next is Next; want says what the test waits for, in its failure.
func (p *Peer) next(want string) (frame string, ok bool) {
	p.t.Helper()
	f, err := p.TryNext()
	if err != nil {
		if err != errNoFrame {
			err = fmt.Errorf("the output ended: %w", err)
		}
		p.t.Fatalf("rpctest: %v; waited for %s; %s", err, want, p.takenSummary())
		return "", false // for a testing.TB whose Fatalf returns
	}
	return f, true
}

// takenSummary describes the frames taken so far, the last ones quoted.
func (p *Peer) takenSummary() string {
	const shown, maxLen = 5, 300
	taken := p.Taken()
	if len(taken) == 0 {
		return "no frame taken before"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d frames taken before, the last ones:", len(taken))
	for _, f := range taken[max(0, len(taken)-shown):] {
		if len(f) > maxLen {
			f = f[:maxLen] + "..."
		}
		sb.WriteString("\n\t" + f)
	}
	return sb.String()
}

// Expect takes the next frame and matches it against want, with the
// placeholders of the wire vectors and numbers compared by value.
func (p *Peer) Expect(want string) string {
	p.t.Helper()
	if !json.Valid([]byte(want)) {
		// Before the wait, so that a mistyped pattern fails at once and
		// says so, not as a frame that did not match.
		hint := ""
		if strings.Contains(want, "{{") {
			hint = ` (a placeholder is a JSON string: write "{{any}}", quotes included)`
		}
		p.t.Fatalf("rpctest: Expect: the pattern is not JSON%s: %s", hint, want)
		return ""
	}
	got, ok := p.next("a frame matching " + want)
	if !ok {
		return ""
	}
	if err := vectortest.Match(json.RawMessage(want), json.RawMessage(got)); err != nil {
		p.t.Fatalf("frame %s\nwant %s\n%v", got, want, err)
	}
	return got
}

// Call is a request the thing under test sent, as its Peer took it: a
// frame with an id and a method, which the Peer may Answer.
type Call struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// ParseCall reads frame as a request: an object with an id and a
// string method.
func ParseCall(frame string) (Call, error) {
	var r Call
	if err := json.Unmarshal([]byte(frame), &r); err != nil {
		return r, err
	}
	if r.ID == nil || r.Method == "" {
		return r, errors.New("not a request: " + frame)
	}
	return r, nil
}

// NextCall takes the next frame, which must be a request.
func (p *Peer) NextCall() Call {
	p.t.Helper()
	f, ok := p.next("a request")
	if !ok {
		return Call{}
	}
	r, err := ParseCall(f)
	if err != nil {
		p.t.Fatal(err)
	}
	return r
}

// Send writes one line to the thing under test, an LF appended; it fails
// the test when that side no longer reads, or has not read the line
// within MaxWait.
func (p *Peer) Send(line string) {
	p.t.Helper()
	if err := p.TrySend(line); err != nil {
		p.t.Fatalf("rpctest: send: %v", err)
	}
}

// TrySend writes one line, an LF appended, and returns the error of the
// write: a side that is gone makes it fail. A line not read within MaxWait
// makes it return an error saying so; the line stays on its way (a later
// line follows it), until the thing under test reads it or Close.
func (p *Peer) TrySend(line string) error {
	return p.trySend([]byte(line + "\n"))
}

// SendBytes writes b, which must end with an LF, as it is: a test that
// bounds memory sends its large lines so, as Send writes a copy.
func (p *Peer) SendBytes(b []byte) {
	p.t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' {
		p.t.Fatal("rpctest: SendBytes: the bytes do not end with an LF")
	}
	if err := p.trySend(b); err != nil {
		p.t.Fatalf("rpctest: send: %v", err)
	}
}

// trySend is TrySend of b, a line with its LF.
func (p *Peer) trySend(b []byte) error {
	line := b[:len(b)-1]
	written := make(chan error, 1)
	// On a goroutine, so that the wait for the reader can be bounded.
	go func() {
		_, err := p.in.Write(b)
		written <- err
	}()
	timer := newBound()
	defer timer.Stop()
	select {
	case err := <-written:
		return err
	case <-timer.C:
		return fmt.Errorf("the thing under test did not read the line within %v; waited to send %.300s", MaxWait, line)
	}
}

// Answer sends the response with result (a JSON text) to r.
func (p *Peer) Answer(r Call, result string) {
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
