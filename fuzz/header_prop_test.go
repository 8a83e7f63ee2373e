package fuzz

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"pgregory.net/rapid"
)

// headerGarbage is what a peer of ContentLengthFraming may send between
// its frames that is not a frame: each item is dropped as one malformed
// header block (DropBadHeader), but for blank lines, which are skipped.
// After a malformed block the reader resynchronises at the next
// "Content-Length", so an item that does not begin with one is swallowed
// by the drop of a malformed item before it (nothing in these items but
// their first line says "Content-Length").
var headerGarbage = []struct {
	text      string
	malformed bool // dropped as a malformed block
	startsCL  bool // begins with a Content-Length header line
}{
	{"\r\n", false, false},
	{"\n\r\n\n", false, false},
	{"X-Trace: 1\r\n\r\n{}", true, false},                                  // no Content-Length
	{"Content-Type: application/json\r\n\r\n", true, false},                // no Content-Length
	{"not a header\r\n", true, false},                                      // not "Name: value"
	{`{"jsonrpc":"2.0","method":"typed","params":{}}` + "\n", true, false}, // a line of the other framing
	{"X: " + strings.Repeat("y", rpc.MaxHeaderBytes) + "\r\n\r\n", true, false},
	{"Content-Length: -2\r\n\r\n{}", true, true},
	{"Content-Length: 2x\r\n\r\n{}", true, true},
	{"content-length: 99999999999999999999\r\n\r\n", true, true}, // 20 digits: not a count
	{"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", true, true},
	{"Content-Length: 2\r\nX Y: 1\r\n\r\n{}", true, true}, // a bad name after a good line
}

// headerStreamOf draws a stream of Content-Length frames (bodies from
// genLine, headers in every style of headerFrame, a Content-Type that is
// not JSON now and then) mixed with headerGarbage, and what a Conn of the
// properties does with it; with validFirst, its first frame is a valid
// notification.
func headerStreamOf(rt *rapid.T, max int, validFirst bool) ([]byte, *connLog) {
	var stream bytes.Buffer
	want := &connLog{}
	resyncing := false // after a malformed block, until the next Content-Length
	frame := func(body []byte) {
		style := rapid.Byte().Draw(rt, "style")
		if rapid.IntRange(0, 9).Draw(rt, "text/plain") == 0 {
			// Read despite its Content-Type, and only logged.
			stream.WriteString("Content-Type: text/plain\r\n")
			style &^= 16
		}
		stream.Write(headerFrame(body, style))
		expectFrame(want, body, max)
		resyncing = false
	}
	if validFirst {
		frame([]byte(`{"jsonrpc":"2.0","method":"typed","params":{"text":"first"}}`))
	}
	n := rapid.IntRange(0, 30).Draw(rt, "items")
	for i := range n {
		if rapid.IntRange(0, 3).Draw(rt, "garbage") > 0 {
			frame([]byte(genLine(rt, i, max)))
			continue
		}
		g := rapid.SampledFrom(headerGarbage).Draw(rt, "item")
		stream.WriteString(g.text)
		if g.malformed && (!resyncing || g.startsCL) {
			want.drop("drop")
			resyncing = true
		}
	}
	if rapid.Bool().Draw(rt, "tail") {
		// A frame cut short by the end of the input is thrown away, and
		// reported as DropUnterminated (a resynchronisation stops at its
		// header too).
		stream.WriteString("Content-Length: 50\r\n\r\n" + `{"method":"typed","params":{"text":"tail"}}`)
		want.drop("drop")
	}
	return stream.Bytes(), want
}

// TestPropertyHeaderGarbageAndChunking is TestPropertyGarbageInterleavingAndChunking
// for ContentLengthFraming: frames whose bodies are valid, malformed,
// blank, oversize, too deep or arbitrary, in every header style, mixed
// with malformed header blocks and blank lines, whole and cut into
// arbitrary chunks: every notification delivered once and in order, every
// request answered once, every other frame dropped once, and each
// malformed header block dropped once (with what follows it up to the
// next Content-Length).
func TestPropertyHeaderGarbageAndChunking(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		max := rapid.SampledFrom([]int{64, 300, rpc.MaxDepth*2 + 100}).Draw(rt, "max")
		data, want := headerStreamOf(rt, max, false)
		checkChunking(rt, data, want, rpc.ContentLengthFraming, max, rpc.ContentLengthFraming)
	})
}

// TestPropertyDetectGarbageAndChunking is the same for DetectFraming:
// streams of either framing, whose first frame is a valid one, after
// blank lines, whole and chunked: the Conn chooses the stream's framing
// and does with it exactly what a Conn of that framing does.
func TestPropertyDetectGarbageAndChunking(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		max := rapid.SampledFrom([]int{64, 300, rpc.MaxDepth*2 + 100}).Draw(rt, "max")
		lead := rapid.SampledFrom([]string{"", "\n", "\r\n", "\r\n\r\n\n"}).Draw(rt, "lead")
		framing := rapid.SampledFrom([]rpc.Framing{rpc.NewlineFraming, rpc.ContentLengthFraming}).Draw(rt, "framing")
		var data []byte
		var want *connLog
		if framing == rpc.NewlineFraming {
			data, want = newlineStream(rt, max, true)
		} else {
			data, want = headerStreamOf(rt, max, true)
		}
		data = append([]byte(lead), data...)
		checkChunking(rt, data, want, rpc.DetectFraming, max, framing)
	})
}

// TestHeaderGarbageThatHidesAFrame: the garbage the fuzz targets sanitise
// (header_test.go) does hide the frame after it, so the constraint is
// needed, and the exact property would fail without it.
func TestHeaderGarbageThatHidesAFrame(t *testing.T) {
	note := []byte(`{"jsonrpc":"2.0","method":"n"}`)
	for _, garbage := range []string{
		"ab",                                  // glued: "abContent-Length: 30", another header
		"X:",                                  // glued: "X:Content-Length: 30", another header
		"X-Trace: 1\r\nContent-Length: 4\r\n", // unfinished, with a Content-Length: given twice
		"Content-Length: 40\r\n\r\n",          // a length that claims the frame as its body
		"X: 1\r\n\r\nContent-Length: 9\r\n",   // resynchronised at an unfinished block
	} {
		stream := append([]byte(garbage), headerFrame(note, 0)...)
		log, _, _ := framedConnTrace(t, bytes.NewReader(stream), rpc.ContentLengthFraming, 1<<10)
		if len(log.notes) != 0 {
			t.Errorf("%q: the frame after it was handled: %q", stream, log.notes)
		}
		clean := append(sanitiseGarbage([]byte(garbage)), headerFrame(note, 0)...)
		log, _, _ = framedConnTrace(t, bytes.NewReader(clean), rpc.ContentLengthFraming, 1<<10)
		if want := fmt.Sprintf("notification %q ", "n"); len(log.notes) != 1 || log.notes[0] != want {
			t.Errorf("%q sanitised: notifications %q, want [%q]", clean, log.notes, want)
		}
	}
}
