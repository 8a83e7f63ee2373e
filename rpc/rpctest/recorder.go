package rpctest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Recorder is an io.Writer that keeps everything written to it and cuts
// it into frames (lines, LF included). A writer of frames may put several
// in one Write, but must never split one across Writes: a Write that does
// not end with LF is noted, and Frames reports it. With Stream set, the
// Recorder records bytes that may be cut anywhere (what a reader got), and
// nothing is noted. Goroutines may write and read at once.
type Recorder struct {
	// OnFrame, when set, is called with each frame as its LF arrives, in
	// order, on the writing goroutine, after the frame is recorded.
	OnFrame func(frame []byte)
	// Stream says the Writes are cut anywhere, not at frame ends.
	Stream bool

	mu      sync.Mutex
	data    []byte
	start   int // where the frame not yet ended begins
	writes  int
	split   string
	changed chan struct{} // closed, and forgotten, by the next Write
}

// Write records p; it never fails.
func (r *Recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.writes++
	if !r.Stream && (len(p) == 0 || p[len(p)-1] != '\n') && r.split == "" {
		r.split = fmt.Sprintf("Write %d (%.200q) does not end a frame", r.writes, p)
	}
	r.data = append(r.data, p...)
	var ended [][]byte
	if i := bytes.LastIndexByte(r.data, '\n'); i >= r.start {
		if r.OnFrame != nil {
			ended = splitFrames(bytes.Clone(r.data[r.start : i+1]))
		}
		r.start = i + 1
	}
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	on := r.OnFrame
	r.mu.Unlock()
	for _, f := range ended {
		on(f)
	}
	return len(p), nil
}

// splitFrames cuts data, which ends with LF, after each LF.
func splitFrames(data []byte) [][]byte {
	var frames [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		frames = append(frames, data[:i+1:i+1])
		data = data[i+1:]
	}
	return frames
}

// Frames returns the frames ended so far (not the bytes after the last
// LF), and fails t if a Write split one.
func (r *Recorder) Frames(t testing.TB) [][]byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.split != "" {
		t.Fatal(r.split)
	}
	return splitFrames(bytes.Clone(r.data[:r.start]))
}

// Bytes returns a copy of everything written so far.
func (r *Recorder) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.data)
}

// String returns everything written so far.
func (r *Recorder) String() string { return string(r.Bytes()) }

// Writes returns how many Write calls there were.
func (r *Recorder) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

// WaitFor waits until done reports true of everything written so far, and
// returns it. It fails t when no Write made done true within MaxWait.
func (r *Recorder) WaitFor(t testing.TB, done func(data []byte) bool) []byte {
	t.Helper()
	return r.waitFor(t, "a write that makes the condition true", done)
}

// WaitForFrames waits until at least n frames have ended, and returns
// them. It fails t when they have not within MaxWait.
func (r *Recorder) WaitForFrames(t testing.TB, n int) [][]byte {
	t.Helper()
	r.waitFor(t, fmt.Sprintf("%d frames", n), func(data []byte) bool { return bytes.Count(data, []byte("\n")) >= n })
	return r.Frames(t)
}

// waitFor is WaitFor; want says what the test waits for, in its failure.
func (r *Recorder) waitFor(t testing.TB, want string, done func(data []byte) bool) []byte {
	t.Helper()
	timer := newBound()
	defer timer.Stop()
	for {
		r.mu.Lock()
		if done(r.data) {
			d := bytes.Clone(r.data)
			r.mu.Unlock()
			return d
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("rpctest: no write within %v; waited for %s; %s", MaxWait, want, r.summary())
			return r.Bytes() // for a testing.TB whose Fatalf returns
		}
	}
}

// summary describes what was written so far, its end quoted.
func (r *Recorder) summary() string {
	const tail = 500
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.data) <= tail {
		return fmt.Sprintf("%d writes so far, of %q", r.writes, r.data)
	}
	return fmt.Sprintf("%d writes so far, of %d bytes ending %q", r.writes, len(r.data), r.data[len(r.data)-tail:])
}
