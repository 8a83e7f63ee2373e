package rpc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// wirePeer is the far end of a Conn that reads and writes raw bytes, for
// framings other than lines.
type wirePeer struct {
	t    *testing.T
	conn *rpc.Conn
	in   *io.PipeWriter // what the Conn reads
	out  *bufio.Reader  // what the Conn wrote
}

func newWirePeer(t *testing.T, opts *rpc.Options) *wirePeer {
	t.Helper()
	rpctest.CheckNoLeak(t)
	connIn, in := io.Pipe()
	out, connOut := io.Pipe()
	c := rpc.NewConn(interruptible{connIn}, connOut, opts)
	t.Cleanup(func() {
		c.Close()
		in.Close()
		out.Close()
		c.Wait()
	})
	c.Start()
	return &wirePeer{t: t, conn: c, in: in, out: bufio.NewReader(out)}
}

// send writes s to the Conn's input, on a goroutine: the Conn may be
// writing too.
func (p *wirePeer) send(s string) { p.sendBytes([]byte(s)) }

// sendBytes is send of b, written as it is (send copies).
func (p *wirePeer) sendBytes(b []byte) {
	done := make(chan error, 1)
	go func() {
		_, err := p.in.Write(b)
		done <- err
	}()
	if err := linetest.Within(p.t, done, "the Conn to read what the peer sent"); err != nil {
		p.t.Fatalf("sending: %v", err)
	}
}

// clFrame is body framed with a Content-Length header.
func clFrame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// nextContentLength reads the Conn's next frame, which must be exactly a
// Content-Length header and a body, and returns the body.
func (p *wirePeer) nextContentLength() string {
	p.t.Helper()
	type result struct {
		body string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := p.out.ReadString('\n')
		if err != nil {
			ch <- result{err: err}
			return
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "Content-Length: "), "\r\n"))
		if err != nil || !strings.HasPrefix(line, "Content-Length: ") || !strings.HasSuffix(line, "\r\n") {
			ch <- result{err: fmt.Errorf("not a Content-Length header: %q", line)}
			return
		}
		blank, err := p.out.ReadString('\n')
		if err != nil || blank != "\r\n" {
			ch <- result{err: fmt.Errorf("header not ended by a blank line: %q, %v", blank, err)}
			return
		}
		body := make([]byte, n)
		_, err = io.ReadFull(p.out, body)
		ch <- result{string(body), err}
	}()
	r := linetest.Within(p.t, ch, "a Content-Length frame from the Conn")
	if r.err != nil {
		p.t.Fatalf("reading a frame: %v", r.err)
	}
	return r.body
}

// nextLine reads the Conn's next frame, which must be a line.
func (p *wirePeer) nextLine() string {
	p.t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := p.out.ReadString('\n')
		ch <- line
	}()
	line := linetest.Within(p.t, ch, "a line from the Conn")
	if !strings.HasSuffix(line, "\n") {
		p.t.Fatalf("not a line: %q", line)
	}
	return strings.TrimSuffix(line, "\n")
}

var echoString = rpc.NewMethod[string, string]("echo")

func stringEcho() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echoString, func(_ context.Context, s string) (string, error) { return s, nil })
	return reg
}

// drops collects what a Conn drops.
type drops struct {
	ch chan rpc.Drop
}

func newDrops() *drops { return &drops{ch: make(chan rpc.Drop, 100)} }

func (d *drops) on(x rpc.Drop) {
	x.Line = []byte(string(x.Line))
	d.ch <- x
}

func TestContentLengthFraming(t *testing.T) {
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho()})
	p.send(clFrame(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"hé"}`))
	if got, want := p.nextContentLength(), `{"jsonrpc":"2.0","id":1,"result":"hé"}`; got != want {
		t.Errorf("response %q, want %q", got, want)
	}
	// Header names in any case, other headers, LF alone, blank lines between.
	p.send("\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\nCONTENT-LENGTH:  56\n\n" +
		`{"jsonrpc":"2.0","id":"a","method":"echo","params":"x"}` + " ")
	if got, want := p.nextContentLength(), `{"jsonrpc":"2.0","id":"a","result":"x"}`; got != want {
		t.Errorf("response %q, want %q", got, want)
	}
	if f := p.conn.Framing(); f != rpc.ContentLengthFraming {
		t.Errorf("Framing() = %v", f)
	}
}

func TestContentLengthBothEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	opts := &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho()}
	a, b := rpc.NewConn(aIn, aOut, opts), rpc.NewConn(bIn, bOut, opts)
	t.Cleanup(func() {
		a.Close()
		b.Close()
		for _, p := range []io.Closer{aIn, bIn, aOut, bOut} {
			p.Close()
		}
		a.Wait()
		b.Wait()
	})
	a.Start()
	b.Start()
	big := strings.Repeat("é\n\"", 100_000)
	for _, s := range []string{"", "x", big} {
		got, err := echoString.Call(context.Background(), a, s)
		if err != nil || got != s {
			t.Fatalf("echo of %d bytes: %d bytes, %v", len(s), len(got), err)
		}
	}
}

func TestContentLengthBadHeadersAreDroppedAndSkipped(t *testing.T) {
	d := newDrops()
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho(), OnDrop: d.on, MaxFrameSize: 100})
	req := func(id int) string {
		return clFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":"%d"}`, id, id))
	}
	cases := []struct {
		garbage string
		reason  rpc.DropReason
		err     string
	}{
		{"Content-Length: -3\r\n\r\n{}", rpc.DropBadHeader, "is not a byte count"},
		{"Content-Length: 3x\r\n\r\n{}", rpc.DropBadHeader, "is not a byte count"},
		{"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", rpc.DropBadHeader, "given twice"},
		{"Content-Type: application/json\r\n\r\n{}", rpc.DropBadHeader, "no Content-Length"},
		{`{"jsonrpc":"2.0","id":9,"method":"echo"}` + "\n", rpc.DropBadHeader, "not a header line"},
		{clFrame(strings.Repeat(" ", 101)), rpc.DropOversize, ""},
		{clFrame(`{"jsonrpc":"2.0","id":7,"method":"nope"`), rpc.DropMalformed, ""},
	}
	for i, c := range cases {
		p.send(c.garbage + req(i))
		got := linetest.Within(t, d.ch, "a drop of "+c.garbage)
		if got.Reason != c.reason || c.err != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), c.err)) {
			t.Errorf("%q: dropped %v (%v), want %v (%s)", c.garbage, got.Reason, got.Err, c.reason, c.err)
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"%d"}`, i, i)
		if got := p.nextContentLength(); got != want {
			t.Errorf("after %q: %q, want %q", c.garbage, got, want)
		}
	}
}

func TestContentLengthCutBodyIsUnterminated(t *testing.T) {
	d := newDrops()
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, OnDrop: d.on})
	p.send("Content-Length: 10\r\n\r\n{}")
	p.in.Close()
	got := linetest.Within(t, d.ch, "the drop of the cut frame")
	if got.Reason != rpc.DropUnterminated {
		t.Errorf("dropped %v, want DropUnterminated", got.Reason)
	}
	linetest.Within(t, p.conn.Done(), "the Conn to end")
	if !errors.Is(p.conn.Err(), rpc.ErrInputEnded) {
		t.Errorf("Err() = %v", p.conn.Err())
	}
}

func TestContentLengthOversizeResponseFailsItsCall(t *testing.T) {
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, MaxFrameSize: 64})
	errc := make(chan error, 1)
	go func() {
		_, err := echoString.Call(context.Background(), p.conn, "x")
		errc <- err
	}()
	p.nextContentLength()
	p.send(clFrame(`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("y", 100) + `"}`))
	if err := linetest.Within(t, errc, "the call to fail"); !errors.Is(err, rpc.ErrFrameTooLarge) {
		t.Errorf("call: %v, want ErrFrameTooLarge", err)
	}
}

func TestContentTypeWarningIsLoggedOnce(t *testing.T) {
	var log rpctest.LockedBuffer
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho(),
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	for i := range 3 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":"a"}`, i)
		p.send(fmt.Sprintf("Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		p.nextContentLength() // the frame was served
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "not a JSON type") {
		t.Errorf("%d warnings logged, want 1:\n%s", n, log.String())
	}
}

func TestDetectFraming(t *testing.T) {
	t.Run("content-length", func(t *testing.T) {
		p := newWirePeer(t, &rpc.Options{Framing: rpc.DetectFraming, Handler: stringEcho()})
		if f := p.conn.Framing(); f != rpc.DetectFraming {
			t.Errorf("Framing() before any byte = %v", f)
		}
		// The header arrives in pieces.
		body := `{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}`
		frame := strings.Repeat("\r\n", 300) + "cOnTeNt-LeNgTh: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		for i := 0; i < len(frame); i += 7 {
			p.send(frame[i:min(i+7, len(frame))])
		}
		if got, want := p.nextContentLength(), `{"jsonrpc":"2.0","id":1,"result":"a"}`; got != want {
			t.Errorf("response %q, want %q", got, want)
		}
		if f := p.conn.Framing(); f != rpc.ContentLengthFraming {
			t.Errorf("Framing() = %v", f)
		}
	})
	t.Run("newline", func(t *testing.T) {
		p := newWirePeer(t, &rpc.Options{Framing: rpc.DetectFraming, Handler: stringEcho()})
		p.send(strings.Repeat(" \n", 1000) + `{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}` + "\n")
		if got, want := p.nextLine(), `{"jsonrpc":"2.0","id":1,"result":"a"}`; got != want {
			t.Errorf("response %q, want %q", got, want)
		}
		if f := p.conn.Framing(); f != rpc.NewlineFraming {
			t.Errorf("Framing() = %v", f)
		}
		// Locked: a header block is now a malformed line, not a frame.
		p.send("Content-Length: 53\r\n\r\n" + `{"jsonrpc":"2.0","id":3,"method":"echo","params":"c"}` + "\n")
		if got, want := p.nextLine(), `{"jsonrpc":"2.0","id":3,"result":"c"}`; got != want {
			t.Errorf("response %q, want %q", got, want)
		}
	})
	t.Run("a notification before the peer's first bytes waits for them", func(t *testing.T) {
		p := newWirePeer(t, &rpc.Options{Framing: rpc.DetectFraming})
		note := rpc.NewNotification[int]("early")
		sent := make(chan error, 1)
		go func() { sent <- note.Notify(context.Background(), p.conn, 1) }()
		p.send(clFrame(`{"jsonrpc":"2.0","method":"hello"}`))
		if got, want := p.nextContentLength(), `{"jsonrpc":"2.0","method":"early","params":1}`; got != want {
			t.Errorf("notification %q, want %q", got, want)
		}
		if err := linetest.Within(t, sent, "Notify to return"); err != nil {
			t.Errorf("Notify: %v", err)
		}
	})
	t.Run("a sender's context ends its wait for the choice", func(t *testing.T) {
		p := newWirePeer(t, &rpc.Options{Framing: rpc.DetectFraming})
		ctx, cancel := context.WithCancel(context.Background())
		sent := make(chan error, 1)
		go func() { sent <- rpc.NewNotification[int]("early").Notify(ctx, p.conn, 1) }()
		cancel()
		if err := linetest.Within(t, sent, "Notify to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("Notify: %v, want context.Canceled", err)
		}
	})
	t.Run("an input that ends at once keeps newline framing", func(t *testing.T) {
		p := newWirePeer(t, &rpc.Options{Framing: rpc.DetectFraming})
		p.in.Close()
		linetest.Within(t, p.conn.Done(), "the Conn to end")
		if f := p.conn.Framing(); f != rpc.NewlineFraming {
			t.Errorf("Framing() = %v", f)
		}
	})
}

func TestFramingString(t *testing.T) {
	for f, want := range map[rpc.Framing]string{rpc.NewlineFraming: "newline", rpc.ContentLengthFraming: "Content-Length", rpc.DetectFraming: "detect", 9: "unknown framing"} {
		if got := f.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", f, got, want)
		}
	}
}

// A peer sending oversize bodies and headerless garbage makes a Conn hold
// no more than its read buffer grown for one frame of the limit.
func TestFloodOfContentLengthGarbage(t *testing.T) {
	const frameLimit = 1 << 20
	// Sent as they are, as send would copy them.
	oversize := []byte("Content-Length: " + strconv.Itoa(3*frameLimit) + "\r\n\r\n" + strings.Repeat("o", 3*frameLimit))
	garbage := []byte("not a header\r\n" + strings.Repeat("g", 2*frameLimit) + "\r\n\r\n")
	fits := []byte(clFrame(`{"jsonrpc":"2.0","id":"x","result":"` + strings.Repeat("r", frameLimit-100) + `"}`))
	var peak atomic.Int64
	base := linetest.LiveHeap()
	drops := 0
	opts := &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho(), MaxFrameSize: frameLimit, OnDrop: func(d rpc.Drop) {
		if drops++; drops%5 == 0 {
			if h := linetest.LiveHeap() - base; h > peak.Load() {
				peak.Store(h)
			}
		}
	}}
	p := newWirePeer(t, opts)
	for range 20 {
		p.sendBytes(oversize)
		p.sendBytes(garbage)
		p.sendBytes(fits)
	}
	p.send(clFrame(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"still here"}`))
	if got := p.nextContentLength(); got != `{"jsonrpc":"2.0","id":1,"result":"still here"}` {
		t.Fatalf("after the flood: %q", got)
	}
	if drops != 60 {
		t.Errorf("%d drops, want 60", drops)
	}
	bound := int64(frameLimit) + rpc.MaxHeaderBytes + 1<<20 // the read buffer grown for a frame of the limit, and the test's own
	t.Logf("peak live heap at the drops: %d KiB (bound %d KiB)", peak.Load()>>10, bound>>10)
	if peak.Load() > bound {
		t.Fatalf("peak live heap %d bytes, over %d", peak.Load(), bound)
	}
}

// With DetectFraming as with any framing, a call before Start fails at
// once, and a read error that comes with the first bytes is the Conn's.
func TestDetectFramingEdges(t *testing.T) {
	c := rpc.NewConn(strings.NewReader(""), io.Discard, &rpc.Options{Framing: rpc.DetectFraming})
	if _, err := echoString.Call(context.Background(), c, "x"); !errors.Is(err, rpc.ErrNotStarted) {
		t.Errorf("call before Start: %v, want ErrNotStarted", err)
	}
	boom := errors.New("boom")
	c = rpc.NewConn(&oneReadThenError{data: "{}\n", err: boom}, io.Discard, &rpc.Options{Framing: rpc.DetectFraming})
	c.Start()
	linetest.Within(t, c.Done(), "the Conn to end")
	if err := c.Err(); !errors.Is(err, boom) {
		t.Errorf("Err() = %v, want the read error", err)
	}
}

// oneReadThenError returns data with err, then blocks no read: io.EOF.
type oneReadThenError struct {
	data string
	err  error
	done bool
}

func (r *oneReadThenError) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	r.done = true
	return copy(p, r.data), r.err
}
