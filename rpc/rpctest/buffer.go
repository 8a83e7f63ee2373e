package rpctest

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that goroutines may write at once, and
// read while they write. It counts the Write calls too.
type LockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

// Write appends p; it never fails.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

// Bytes returns a copy of what was written so far.
func (b *LockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// String returns what was written so far.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Writes returns how many Write calls there were.
func (b *LockedBuffer) Writes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}
