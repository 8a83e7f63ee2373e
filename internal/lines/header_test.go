package lines

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// frameOf is a well-formed Content-Length frame of body.
func frameOf(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// readHeaderFrames reads every event of input (read one byte at a time when
// oneByte), describing each: "frame BODY", "warn BODY", "oversize N",
// "malformed N: ERR", "end N".
func readHeaderFrames(t *testing.T, input string, max int, oneByte bool) []string {
	t.Helper()
	var r io.Reader = strings.NewReader(input)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	h := NewHeaderReader(r, max)
	var got []string
	for range 10_000 {
		ev, tail, err := h.Next()
		if len(h.buf) > max+MaxHeaderBytes && len(h.buf) > skipChunk {
			t.Fatalf("buffer of %d bytes, over the bound of %d", len(h.buf), max+MaxHeaderBytes)
		}
		switch {
		case err != nil:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("error: %v", err)
			}
			return append(got, fmt.Sprintf("end %d", tail))
		case ev.Oversize:
			got = append(got, fmt.Sprintf("oversize %d", ev.Size))
		case ev.Malformed != nil:
			got = append(got, fmt.Sprintf("malformed %d: %v", ev.Size, ev.Malformed))
		case ev.Warning != nil:
			got = append(got, "warn "+string(ev.Line))
		default:
			got = append(got, "frame "+string(ev.Line))
		}
	}
	t.Fatal("no end after 10,000 events")
	return nil
}

func TestHeaderReader(t *testing.T) {
	big := strings.Repeat("x", 100)
	cases := []struct {
		name, in string
		want     []string
	}{
		{"frames", frameOf(`{"a":1}`) + frameOf(`[]`), []string{`frame {"a":1}`, `frame []`, "end 0"}},
		{"case and LF alone", "content-LENGTH:2\n\n{}" + "CONTENT-length :", []string{"frame {}", "end 16"}},
		{"blank lines between", "\r\n\n" + frameOf("{}") + "\r\n" + frameOf("1"), []string{"frame {}", "frame 1", "end 0"}},
		{"other headers", "X-Y: z\r\nContent-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}", []string{"frame {}", "end 0"}},
		{"content type warned", "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}", []string{"warn {}", "end 0"}},
		{"charset warned", "Content-Type: application/json; charset=latin1\r\nContent-Length: 2\r\n\r\n{}", []string{"warn {}", "end 0"}},
		{"empty body", frameOf("") + frameOf("{}"), []string{"frame ", "frame {}", "end 0"}},
		{"garbage first", "garbage\r\n" + frameOf("{}"), []string{"malformed 9: not a header line: \"garbage\"", "frame {}", "end 0"}},
		{"garbage glued", `{"x":1}` + frameOf("{}"), []string{"malformed 7: not a header line: \"{\\\"x\\\":1}Content-Length: 2\"", "frame {}", "end 0"}},
		{"missing length", "X: 1\r\n\r\n{}" + frameOf("3"), []string{"malformed 10: no Content-Length header", "frame 3", "end 0"}},
		{"negative", "Content-Length: -2\r\n\r\n{}" + frameOf("3"), []string{"malformed 24: Content-Length \"-2\" is not a byte count", "frame 3", "end 0"}},
		{"non-numeric", "Content-Length: 2x\r\n\r\n{}" + frameOf("3"), []string{"malformed 24: Content-Length \"2x\" is not a byte count", "frame 3", "end 0"}},
		{"twice", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}" + frameOf("3"), []string{"malformed 42: Content-Length given twice", "frame 3", "end 0"}},
		{"oversize", frameOf(big) + frameOf("{}"), []string{"oversize 100", "frame {}", "end 0"}},
		{"cut in the body", frameOf("{}") + "Content-Length: 10\r\n\r\n{}", []string{"frame {}", "end 24"}},
		{"cut in the header", frameOf("{}") + "Content-Len", []string{"frame {}", "end 11"}},
		{"cut in an oversize body", "Content-Length: 100\r\n\r\n" + big[:60], []string{"end 60"}},
		{"garbage to the end", frameOf("{}") + "no frame here", []string{"frame {}", "end 13"}},
		{"garbage lines to the end", "a\nb\n", []string{"malformed 4: not a header line: \"a\"", "end 0"}},
		{"bad name", "Content Length: 2\r\n\r\n{}" + frameOf("3"), []string{"malformed 23: not a header line: \"Content Length: 2\"", "frame 3", "end 0"}},
	}
	for _, c := range cases {
		for _, oneByte := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneByte=%v", c.name, oneByte), func(t *testing.T) {
				got := readHeaderFrames(t, c.in, 64, oneByte)
				if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
					t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
				}
			})
		}
	}
}

func TestHeaderReaderBlockTooLong(t *testing.T) {
	in := "X: " + strings.Repeat("y", MaxHeaderBytes) + "\r\n\r\n" + frameOf("{}")
	got := readHeaderFrames(t, in, 64, false)
	if len(got) != 3 || !strings.Contains(got[0], "header block longer than") || got[1] != "frame {}" {
		t.Errorf("got %q", got)
	}
}

func TestHeaderReaderLargeFrames(t *testing.T) {
	body := strings.Repeat("z", 1<<20)
	got := readHeaderFrames(t, frameOf(body)+frameOf("{}")+frameOf(body), 2<<20, false)
	if len(got) != 4 || got[0] != "frame "+body || got[1] != "frame {}" || got[2] != got[0] {
		t.Errorf("large frames: %d events", len(got))
	}
}

// errWouldBlock is what onceReader returns once its bytes are read: a
// read that a real stream would have blocked in.
var errWouldBlock = errors.New("would block")

// onceReader returns its bytes, then errWouldBlock.
type onceReader struct{ b []byte }

func (r *onceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errWouldBlock
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// HasFrame reports true only when a whole, well-formed frame is buffered,
// and then Next returns it without reading: over a stream whose bytes are
// all in, after a first frame, it says whether the second is whole.
func TestHasFrame(t *testing.T) {
	const first = "Content-Length: 2\r\n\r\n{}"
	for _, tc := range []struct {
		rest string
		want bool
	}{
		{"", false},
		{"\r\n", false},
		{"Content-Length: 2\r\n\r\n{}", true},
		{"\r\n\r\nContent-Length: 2\r\n\r\n{}", true},
		{"Content-Length: 2\r\n\r\n{", false},
		{"Content-Length: 2\r\n", false},
		{"Content-Len", false},
		{"Content-Type: application/json\r\nContent-Length: 2\n\n[]", true},
		{"not a header\r\n", false},                            // malformed: Next reads on
		{"not a header\r\nContent-Length: 2\r\n\r\n{}", false}, // likewise, though it may not
		{"Content-Length: x\r\n", false},                       // malformed
		{"Content-Length: 2\r\nContent-Length: 2\r\n", false},  // malformed
		{"Content-Type: application/json\r\n\r\n", false},      // no length: malformed
		{"Content-Length: 999\r\n\r\n{}", false},               // oversize: skipped by reading
	} {
		h := NewHeaderReader(&onceReader{b: []byte(first + tc.rest)}, 100)
		if _, _, err := h.Next(); err != nil {
			t.Fatalf("%q: the first frame: %v", tc.rest, err)
		}
		got := h.HasFrame()
		_, _, err := h.Next()
		if read := errors.Is(err, errWouldBlock); got && read || got != tc.want {
			t.Errorf("after a frame, %q: HasFrame %v (want %v), and Next read more: %v", tc.rest, got, tc.want, read)
		}
	}
}

// A header block that ends exactly at MaxHeaderBytes is a frame; one whose
// blank line ends a byte past it is malformed, and Next would read on for
// the next Content-Length: HasFrame must say false for it.
func TestHasFrameAtTheHeaderBound(t *testing.T) {
	for _, tc := range []struct {
		pad  int
		want bool
	}{
		{MaxHeaderBytes - 26, true},
		{MaxHeaderBytes - 25, false},
	} {
		frame := "Content-Length: 2\r\nX: " + strings.Repeat("x", tc.pad) + "\r\n\r\n{}"
		h := NewHeaderReader(&onceReader{}, 100)
		h.buf = []byte(frame) // all of it buffered, as after a large read
		h.start, h.end = 0, len(frame)
		got := h.HasFrame()
		_, _, err := h.Next()
		if read := errors.Is(err, errWouldBlock); got != tc.want || got && read {
			t.Errorf("a header block of %d bytes: HasFrame %v (want %v), and Next read more: %v", len(frame)-2, got, tc.want, read)
		}
	}
}
