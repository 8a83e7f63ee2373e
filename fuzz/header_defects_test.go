package fuzz

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/lines"
)

// Defects of the Content-Length framing found while fuzzing it, fixed,
// each with the test that failed before the fix.

// TestHeaderReaderReportsAnUnfinishedHeaderOnce: at the end of the input,
// lines.HeaderReader reported the bytes of an unfinished header block as
// discarded, but kept them: every later call of Next reported them again
// (input "Content-Len": tail 11, then 11, 11, ...). lines.Reader, and the
// HeaderReader itself for a frame cut in its body, report a tail once and
// then 0.
func TestHeaderReaderReportsAnUnfinishedHeaderOnce(t *testing.T) {
	for _, in := range []string{"Content-Len", "X: 1\r\n", "abc", "Content-Length: 10\r\n\r\n{}"} {
		h := lines.NewHeaderReader(strings.NewReader(in), 64)
		_, tail, err := h.Next()
		if !errors.Is(err, io.EOF) || tail != len(in) {
			t.Errorf("%q: first Next: tail %d, %v; want %d, EOF", in, tail, err, len(in))
		}
		for range 2 {
			if _, tail, err := h.Next(); !errors.Is(err, io.EOF) || tail != 0 {
				t.Errorf("%q: Next after the end: tail %d, %v; want 0, EOF (the tail was reported)", in, tail, err)
			}
		}
	}
}

// TestHeaderReaderBadBlockPrefixIsWhatWasDiscarded: the Prefix of a
// malformed block (rpc.Drop.Line of DropBadHeader, "the first KiB" of the
// bytes discarded) was the first KiB of what was buffered when the block
// was found malformed: it held bytes that were not discarded (the frames
// after the block, up to a KiB of them), and it depended on how the input
// was cut into reads (FuzzHeaderFraming's seed-588ca3ddb063210a).
func TestHeaderReaderBadBlockPrefixIsWhatWasDiscarded(t *testing.T) {
	frame := string(headerFrame([]byte(`{"jsonrpc":"2.0","method":"n"}`), 0))
	in := "garbage\n" + frame
	for _, oneByte := range []bool{false, true} {
		var r io.Reader = strings.NewReader(in)
		if oneByte {
			r = cutReader([]byte(in), bytes.Repeat([]byte{1}, len(in)), false)
		}
		h := lines.NewHeaderReader(r, 64)
		ev, _, err := h.Next()
		if err != nil || ev.Malformed == nil || ev.Size != 8 {
			t.Fatalf("one byte a read %v: %+v, %v; want a malformed block of 8 bytes", oneByte, ev, err)
		}
		if string(ev.Prefix) != "garbage\n" {
			t.Errorf("one byte a read %v: prefix %q, want the 8 bytes discarded, %q", oneByte, ev.Prefix, "garbage\n")
		}
	}
}
