package lines

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestTrimSpaceFollowsECMAScript(t *testing.T) {
	cases := []struct{ in, want string }{
		{" \t\v\f\r\n x \r", "x"},
		{"\uFEFF{}", "{}"},                   // BOM: trimmed, unlike bytes.TrimSpace
		{"\u0085{}", "\u0085{}"},             // NEL: kept, unlike bytes.TrimSpace
		{"\u00A0\u3000{}\u2028\u2029", "{}"}, // NBSP, ideographic space, separators
		{"\u1680\u2000\u200A\u202F\u205Fa", "a"},
		{"\u200Ba", "\u200Ba"}, // zero width space is not white space
		{"", ""},
		{"   ", ""},
		{"a b", "a b"},
	}
	for _, c := range cases {
		if got := string(TrimSpace([]byte(c.in))); got != c.want {
			t.Errorf("TrimSpace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendValidUTF8FollowsWHATWG(t *testing.T) {
	const r = "\uFFFD"
	cases := []struct{ in, want string }{
		{"a\xffb", "a" + r + "b"},
		{"\xe4\xbcx", r + "x"},              // truncated 3-byte sequence: one U+FFFD
		{"\xe4\xbc", r},                     // truncated at the end
		{"\xed\xa0\x80", r + r + r},         // surrogate: ED is a maximal subpart alone
		{"\xf0\x9f\x98", r},                 // truncated 4-byte sequence
		{"\xf0\x9f\x98\x80", "\U0001F600"},  // valid
		{"\xc0\x80", r + r},                 // overlong
		{"\xf4\x90\x80\x80", r + r + r + r}, // above U+10FFFF
		{"\xe0\x80\x80", r + r + r},         // overlong 3-byte
		{"ok", "ok"},
	}
	for _, c := range cases {
		got := string(AppendValidUTF8(nil, []byte(c.in)))
		if got != c.want {
			t.Errorf("AppendValidUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("result of %q is not valid UTF-8", c.in)
		}
	}
}

// readAll collects every event of r.
func readAll(t *testing.T, r *Reader) (lines []string, oversize []int64, tail int, err error) {
	t.Helper()
	for {
		ev, tl, e := r.Next()
		if e != nil {
			return lines, oversize, tl, e
		}
		if ev.Oversize {
			oversize = append(oversize, ev.Size)
		} else {
			lines = append(lines, string(ev.Line))
		}
	}
}

func TestReaderCutsLinesWhateverTheChunking(t *testing.T) {
	input := "a\n\nbb\r\nccc\n" + strings.Repeat("d", 200) + "\ntail"
	for _, wrap := range []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r },
		iotest.OneByteReader,
		iotest.HalfReader,
		iotest.DataErrReader,
	} {
		r := NewReader(wrap(strings.NewReader(input)), 1000)
		lines, oversize, tail, err := readAll(t, r)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("err = %v", err)
		}
		want := []string{"a", "", "bb\r", "ccc", strings.Repeat("d", 200)}
		if strings.Join(lines, "|") != strings.Join(want, "|") || oversize != nil || tail != 4 {
			t.Fatalf("lines %q oversize %v tail %d", lines, oversize, tail)
		}
	}
}

func TestReaderSkipsOversizeLinesInBoundedMemory(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 10*MinBuffer)
	input := append(append([]byte("ok\n"), big...), "\nafter\n"...)
	r := NewReader(iotest.HalfReader(bytes.NewReader(input)), 100)
	lines, oversize, _, err := readAll(t, r)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if strings.Join(lines, "|") != "ok|after" || len(oversize) != 1 || oversize[0] != int64(len(big)) {
		t.Fatalf("lines %q oversize %v", lines, oversize)
	}
	if len(r.buf) > MinBuffer {
		t.Fatalf("buffer grew to %d bytes for a limit of 100", len(r.buf))
	}
}

func TestReaderGrowsUpToTheLimitAndShrinksBack(t *testing.T) {
	long := strings.Repeat("y", 3*ReadChunk)
	input := long + "\nshort\n"
	r := NewReader(iotest.OneByteReader(strings.NewReader(input+strings.Repeat("z\n", 2*keepLargeRefills))), 4*ReadChunk)
	ev, _, err := r.Next()
	if err != nil || string(ev.Line) != long {
		t.Fatalf("long line: %v", err)
	}
	ev, _, err = r.Next()
	if err != nil || string(ev.Line) != "short" {
		t.Fatalf("short line: %q %v", ev.Line, err)
	}
	if len(r.buf) <= ReadChunk {
		t.Fatal("the grown buffer was dropped at once; a stream of long frames would regrow it every time")
	}
	for {
		if _, _, err := r.Next(); errors.Is(err, io.EOF) {
			break
		}
	}
	if len(r.buf) > MinBuffer {
		t.Fatalf("buffer kept %d bytes after long lines stopped", len(r.buf))
	}
}

func TestReaderLineOfExactlyTheLimit(t *testing.T) {
	r := NewReader(strings.NewReader(strings.Repeat("z", 10)+"\n"+strings.Repeat("z", 11)+"\n"), 10)
	lines, oversize, _, _ := readAll(t, r)
	if len(lines) != 1 || len(oversize) != 1 || oversize[0] != 11 {
		t.Fatalf("lines %q oversize %v", lines, oversize)
	}
}

type errAfter struct {
	data []byte
	err  error
}

func (r *errAfter) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReaderReportsReadErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(&errAfter{data: []byte("one\npart"), err: boom}, 100)
	lines, _, tail, err := readAll(t, r)
	if !errors.Is(err, boom) || len(lines) != 1 || tail != 4 {
		t.Fatalf("lines %q tail %d err %v", lines, tail, err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderGivesUpOnAReaderThatMakesNoProgress(t *testing.T) {
	if _, _, err := NewReader(zeroReader{}, 10).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v", err)
	}
}

// chunkReader returns its input in reads of at most n bytes.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func TestReaderBufferFollowsTheTraffic(t *testing.T) {
	line := strings.Repeat("b", 100) + "\n"
	busy := &chunkReader{data: []byte(strings.Repeat(line, 4000)), n: 1 << 30}
	r := NewReader(busy, 1<<20)
	if len(r.buf) != MinBuffer {
		t.Fatalf("a new Reader holds %d bytes, want %d", len(r.buf), MinBuffer)
	}
	for range 3000 {
		if _, _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.buf) != ReadChunk {
		t.Fatalf("under load the buffer is %d bytes, want %d", len(r.buf), ReadChunk)
	}
	// The input now comes a line per read: the buffer goes back to rest.
	r.r = &chunkReader{data: []byte(strings.Repeat(line, 10)), n: len(line)}
	r.err = nil
	for {
		if _, _, err := r.Next(); err != nil {
			break
		}
	}
	if len(r.buf) != MinBuffer {
		t.Fatalf("after light traffic the buffer is %d bytes, want %d", len(r.buf), MinBuffer)
	}
}
