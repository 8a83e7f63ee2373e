package rpctest

import "io"

// ChunkReader is an io.Reader that serves Chunks one per Read (a Read with
// a smaller buffer takes part of one), then io.EOF. An empty chunk is an
// empty read: (0, nil). With EOFWithLast the last bytes come together with
// io.EOF, as some readers deliver them. Read consumes Chunks: its
// elements are resliced as they are read.
type ChunkReader struct {
	Chunks      [][]byte
	EOFWithLast bool
}

// Chunks returns a ChunkReader of the given chunks. Reading leaves the
// caller's slice as it was.
func Chunks(chunks ...[]byte) *ChunkReader {
	return &ChunkReader{Chunks: append([][]byte(nil), chunks...)}
}

// Cut returns a ChunkReader of data cut into reads whose sizes are the bytes
// of cuts, as a fuzzer chooses them: 0 is an empty read (never two in a
// row: the second becomes 1 byte), and what cuts leaves over comes in one
// read.
func Cut(data, cuts []byte) *ChunkReader {
	r := &ChunkReader{}
	lastEmpty := false
	for len(data) > 0 {
		n := len(data)
		if len(cuts) > 0 {
			n = int(cuts[0])
			cuts = cuts[1:]
			if n == 0 && lastEmpty {
				n = 1
			}
		}
		n = min(n, len(data))
		lastEmpty = n == 0
		r.Chunks = append(r.Chunks, data[:n])
		data = data[n:]
	}
	return r
}

// Read serves the next chunk, or part of it when p is shorter.
func (r *ChunkReader) Read(p []byte) (int, error) {
	if len(r.Chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.Chunks[0])
	if r.Chunks[0] = r.Chunks[0][n:]; len(r.Chunks[0]) == 0 {
		r.Chunks = r.Chunks[1:]
	}
	if len(r.Chunks) == 0 && r.EOFWithLast {
		return n, io.EOF
	}
	return n, nil
}
