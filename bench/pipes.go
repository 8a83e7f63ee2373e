package bench

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
)

// The three pipes every workload runs over.
//
//   - net: net.Pipe, synchronous and unbuffered: every Write waits for Reads
//     that consume it, so a frame costs a goroutine hand-off.
//   - io: a pair of io.Pipe, also synchronous and unbuffered, but without
//     deadlines (a blocked read cannot be interrupted).
//   - os: a pair of os.Pipe, kernel pipes with a 64 KiB buffer: every Write
//     and Read is a system call, as with the stdio of a child process.
var pipeKinds = []string{"net", "io", "os"}

// end is one end of a duplex pipe: what it reads comes from the other end,
// what it writes goes to the other end. It is an io.ReadWriteCloser for the
// contenders that want one; r and w are also given as they are, so that a
// contender can see the concrete *os.File or net.Conn (deadlines).
type end struct {
	r io.Reader
	w io.Writer

	closeOnce sync.Once
	closers   []io.Closer
}

func (e *end) Read(p []byte) (int, error)  { return e.r.Read(p) }
func (e *end) Write(p []byte) (int, error) { return e.w.Write(p) }

// Close closes both directions of this end: the other end reads EOF and its
// writes fail.
func (e *end) Close() error {
	var err error
	e.closeOnce.Do(func() {
		for _, c := range e.closers {
			err = errors.Join(err, c.Close())
		}
	})
	return err
}

// newPipe returns the two ends of a duplex pipe of the given kind.
func newPipe(kind string) (a, b *end) {
	switch kind {
	case "net":
		x, y := net.Pipe()
		return &end{r: x, w: x, closers: []io.Closer{x}}, &end{r: y, w: y, closers: []io.Closer{y}}
	case "io":
		ar, bw := io.Pipe() // b → a
		br, aw := io.Pipe() // a → b
		return &end{r: ar, w: aw, closers: []io.Closer{ar, aw}}, &end{r: br, w: bw, closers: []io.Closer{br, bw}}
	case "os":
		ar, bw, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		br, aw, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		return &end{r: ar, w: aw, closers: []io.Closer{ar, aw}}, &end{r: br, w: bw, closers: []io.Closer{br, bw}}
	}
	panic("unknown pipe kind " + kind)
}
