package lines

import (
	"bytes"
	"sync"
)

// MaxTailLine bounds one line a Tail keeps; the rest of a longer line is
// dropped, so that a writer that never writes a newline cannot grow it.
const MaxTailLine = 4 << 10

// Tail keeps the last lines written to it, such as the end of a child's
// stderr, for an error message. A trailing CR is not part of a line.
// A Tail is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	max   int
	kept  []string
	split Splitter
}

// NewTail returns a Tail that keeps the last max lines (none when max
// is not positive).
func NewTail(max int) *Tail {
	return &Tail{max: max, split: Splitter{Max: MaxTailLine}}
}

// Write keeps the lines b completes, and the start of the line it leaves
// open. It never fails.
func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.split.Split(b, t.emit)
	return len(b), nil
}

// emit keeps one line written. Called with mu held.
func (t *Tail) emit(pieces [][]byte, _ int64) { t.keep(lineOf(pieces)) }

// lineOf returns the line that pieces hold, without a trailing CR.
func lineOf(pieces [][]byte) string {
	return string(bytes.TrimSuffix(bytes.Join(pieces, nil), []byte{'\r'}))
}

// Add keeps a line of the caller's own after those written so far.
func (t *Tail) Add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keep(line)
}

// Flush keeps an unterminated last line as a line of its own.
func (t *Tail) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.split.End(t.emit)
}

// keep appends a line, forgetting the oldest past max. Called with mu held.
func (t *Tail) keep(line string) {
	if t.max <= 0 {
		return
	}
	if len(t.kept) == t.max {
		copy(t.kept, t.kept[1:])
		t.kept = t.kept[:len(t.kept)-1]
	}
	t.kept = append(t.kept, line)
}

// Lines returns a copy of the last lines kept, the unterminated one being
// written included: at most max lines.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.kept...)
	if p := t.split.Pending(); p != nil {
		out = append(out, lineOf(p))
	}
	if len(out) > t.max {
		out = out[len(out)-t.max:]
	}
	return out
}
