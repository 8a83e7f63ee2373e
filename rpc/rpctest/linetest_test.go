package rpctest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

func readAll(t *testing.T, r io.Reader) (reads []string) {
	t.Helper()
	buf := make([]byte, 64)
	for {
		n, err := r.Read(buf)
		reads = append(reads, string(buf[:n]))
		if err == io.EOF {
			return reads
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCut(t *testing.T) {
	got := readAll(t, Cut([]byte("abcdefgh"), []byte{2, 0, 0, 3}))
	want := []string{"ab", "", "c", "def", "gh", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("reads %q, want %q", got, want)
	}
	r := Chunks([]byte("ab"), []byte("c"))
	r.EOFWithLast = true
	if got := readAll(t, r); strings.Join(got, "|") != "ab|c" {
		t.Fatalf("EOFWithLast reads %q", got)
	}
}

func TestLockedBuffer(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { b.Write([]byte("x")) })
	}
	wg.Wait()
	if b.String() != "xxxxxxxx" || b.Writes() != 8 || !bytes.Equal(b.Bytes(), []byte("xxxxxxxx")) {
		t.Fatalf("%q after %d writes", b.String(), b.Writes())
	}
}

// fakeTB records failures instead of ending the test, so that a test can
// check what a failing wait reports.
type fakeTB struct {
	testing.TB
	failures []string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatal(args ...any)              { f.fail(fmt.Sprint(args...)) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.fail(fmt.Sprintf(format, a...)) }
func (f *fakeTB) Errorf(format string, a ...any) { f.fail(fmt.Sprintf(format, a...)) }
func (f *fakeTB) fail(msg string)                { f.failures = append(f.failures, msg) }

// only returns the one failure reported, or fails t.
func (f *fakeTB) only(t *testing.T) string {
	t.Helper()
	if len(f.failures) != 1 {
		t.Fatalf("%d failures reported, want 1: %q", len(f.failures), f.failures)
	}
	return f.failures[0]
}

func TestRecorder(t *testing.T) {
	var seen []string
	r := &Recorder{OnFrame: func(f []byte) { seen = append(seen, string(f)) }}
	r.Write([]byte("a\nb\n"))
	r.Write([]byte("c\n"))
	if got := r.Frames(t); len(got) != 3 || string(got[2]) != "c\n" || len(seen) != 3 || r.Writes() != 2 {
		t.Fatalf("frames %q, seen %q", got, seen)
	}
	go r.Write([]byte("d\n"))
	if got := r.WaitForFrames(t, 4); string(got[3]) != "d\n" || r.String() != "a\nb\nc\nd\n" {
		t.Fatalf("WaitForFrames returned %q", got)
	}
	r.Write([]byte("e"))
	f := &fakeTB{TB: t}
	r.Frames(f)
	if got := f.only(t); !strings.Contains(got, "does not end a frame") {
		t.Fatalf("a split frame went unreported: %q", got)
	}
}

func TestRecorderStream(t *testing.T) {
	var seen []string
	r := &Recorder{Stream: true, OnFrame: func(f []byte) { seen = append(seen, string(f)) }}
	for _, p := range []string{"a", "b\nc", "\n", "d"} {
		r.Write([]byte(p))
	}
	got := r.Frames(t)
	if len(got) != 2 || string(got[0]) != "ab\n" || string(got[1]) != "c\n" || strings.Join(seen, "") != "ab\nc\n" {
		t.Fatalf("frames %q, seen %q", got, seen)
	}
	if d := r.WaitFor(t, func(d []byte) bool { return bytes.HasSuffix(d, []byte("d")) }); string(d) != "ab\nc\nd" {
		t.Fatalf("WaitFor returned %q", d)
	}
}

func TestPeerScript(t *testing.T) {
	p := NewPeer(t)
	go func() {
		// The thing under test: answers each line with a request and echoes.
		buf := make([]byte, 256)
		n, _ := p.ConnIn.Read(buf)
		io.WriteString(p.ConnOut, `{"jsonrpc":"2.0","id":7,"method":"ask","params":{}}`+"\n")
		p.ConnOut.Write(buf[:n])
		n, _ = p.ConnIn.Read(buf)
		p.ConnOut.Write(buf[:n])
		p.ConnOut.Close()
	}()
	p.Send(`{"method":"hello"}`)
	r := p.NextCall()
	if string(r.ID) != "7" || r.Method != "ask" {
		t.Fatalf("request %+v", r)
	}
	p.Expect(`{"method":"hello"}`)
	p.Answer(r, `{"ok":true}`)
	p.Expect(`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`)
	if _, err := p.TryNext(); err != io.EOF {
		t.Fatalf("after the output closed: %v", err)
	}
	if got := p.Taken(); len(got) != 3 {
		t.Fatalf("taken %q", got)
	}
}

func TestPeerReadAhead(t *testing.T) {
	p := NewPeer(t)
	p.ReadAhead(func(p *Peer, f string) bool {
		if strings.Contains(f, "ping") {
			p.TrySend("pong")
			return true
		}
		return false
	})
	go func() {
		io.WriteString(p.ConnOut, "{\"ping\":1}\n{\"other\":2}\n")
		buf := make([]byte, 16)
		n, _ := p.ConnIn.Read(buf)
		p.ConnOut.Write(buf[:n])
		p.ConnOut.CloseWithError(errors.New("gone"))
	}()
	if f := p.Next(); f != `{"other":2}` {
		t.Fatalf("next %q", f)
	}
	if f := p.Next(); f != "pong" {
		t.Fatalf("the hook's answer came back as %q", f)
	}
	if _, err := p.TryNext(); err == nil || err.Error() != "gone" {
		t.Fatalf("after the output failed: %v", err)
	}
}

// Once closed, a peer neither takes nor sends, and says so at once.
func TestPeerAfterClose(t *testing.T) {
	p := NewPeer(t)
	p.Close()
	if _, err := p.TryNext(); err != io.ErrClosedPipe {
		t.Errorf("TryNext after Close: %v", err)
	}
	if err := p.TrySend("{}"); err != io.ErrClosedPipe {
		t.Errorf("TrySend after Close: %v", err)
	}
}

func TestCheckNoLeak(t *testing.T) {
	// A goroutine the test stops in a cleanup registered after the check
	// is gone by the time the check runs.
	CheckNoLeak(t)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { <-stop; close(done) }()
	t.Cleanup(func() { close(stop); <-done })
}

func TestAttach(t *testing.T) {
	childIn, in := io.Pipe()
	out, childOut := io.Pipe()
	p := Attach(t, in, out)
	go func() {
		// An echoing child.
		br := make([]byte, 64)
		for {
			n, err := childIn.Read(br)
			if err != nil {
				childOut.Close()
				return
			}
			childOut.Write(br[:n])
		}
	}()
	p.Send(`{"a":1}`)
	p.Expect(`{"a":1}`)
	p.CloseInput(nil)
	if _, err := p.TryNext(); err != io.EOF {
		t.Fatalf("after the child's output ended: %v", err)
	}
}

func TestExpectRefusesAPatternThatIsNotJSON(t *testing.T) {
	f := &fakeTB{TB: t}
	p := NewPeer(f)
	p.Expect(`{"id":{{any}}}`)
	if got := f.only(t); !strings.Contains(got, `write "{{any}}", quotes included`) {
		t.Fatalf("a bare placeholder failed with %q", got)
	}
}
