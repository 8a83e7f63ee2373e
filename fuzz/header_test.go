package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/rpc"
)

// Content-Length framing (LSP, DAP): lines.HeaderReader and a Conn with
// ContentLengthFraming or DetectFraming, fed any bytes in any chunking.
//
// The inputs of FuzzHeaderReader and FuzzHeaderFraming are garbage and
// well-formed frames in turn: data is cut at every NUL byte into pieces,
// the even ones (0, 2, ...) garbage and the odd ones frame bodies, each
// body framed by headerFrame (in the header style the fuzzer chose). So
// the stream is garbage₀ frame₀ garbage₁ frame₁ … and, when the count of
// pieces is odd, a last garbage.
//
// When can garbage swallow the frame after it? The reader resynchronises
// after a malformed block at the next "Content-Length" (in any case), and
// takes what it finds there as the start of a frame. So garbage may hide
// the frame after it when it
//   - contains "content-length" in any case: a block of its own may then be
//     well formed and claim the following bytes as its body (a length that
//     reaches into the frame), or a resynchronisation may stop inside the
//     garbage at a header block that is not finished when the frame begins;
//   - ends in a partial line: that line, glued to the frame's first header
//     line, may make one header line of another name (garbage "ab" or
//     "X:" before "Content-Length: 2" reads "abContent-Length: 2" or
//     "X:Content-Length: 2"), so that the frame's block has no
//     Content-Length of its own and is dropped, its body skipped with it.
//
// Garbage that does neither cannot: every block it begins is malformed (it
// has no Content-Length), every resynchronisation it starts stops at the
// frame's Content-Length at the latest (whatever the malformed block, it
// resumes no later than the end of the garbage), and header lines it leaves
// unfinished at its end only join the frame's block (whose one
// Content-Length then counts; a block grown past MaxHeaderBytes so is
// malformed, and resynchronises at the frame's own Content-Length). So
// sanitiseGarbage makes the garbage so (it breaks each "content-length"
// and ends the garbage with LF), and then the property is exact: every
// frame is delivered exactly once, in order, as though the garbage were
// not there (an oversize one reported as oversize), and the garbage
// delivers nothing. With raw garbage (the fuzzer's choice) only the
// properties that hold for any input are checked: no panic, the same
// events whatever the chunking, and bounded memory.

// skipChunk is the size of the buffer through which lines.HeaderReader
// skips a body longer than its limit (lines.skipChunk).
const skipChunk = 256 << 10

// readBound is the longest Read a HeaderReader of bodies of at most limit
// bytes may ask for: its buffer holds at most a header block and a body,
// or the skip buffer.
func readBound(limit int) int { return max(limit+lines.MaxHeaderBytes, skipChunk) }

// pieces cuts data at NUL bytes into garbage (even) and bodies (odd).
func pieces(data []byte) (garbage, bodies [][]byte) {
	for i, p := range bytes.Split(data, []byte{0}) {
		if i%2 == 0 {
			garbage = append(garbage, p)
		} else {
			bodies = append(bodies, p)
		}
	}
	return garbage, bodies
}

// headerFrame frames body with a well-formed header block in one of the
// spellings peers use, chosen by the bits of style: LF alone for CRLF, the
// name in lower or upper case, blanks around the value or none, a
// Content-Type before, another header after.
func headerFrame(body []byte, style byte) []byte {
	eol := "\r\n"
	if style&1 != 0 {
		eol = "\n"
	}
	name := "Content-Length"
	switch style >> 1 & 3 {
	case 1:
		name = "content-length"
	case 2:
		name = "CONTENT-LENGTH"
	case 3:
		name = "cOnTeNt-LeNgTh"
	}
	value := ": " + strconv.Itoa(len(body))
	if style&8 != 0 {
		value = ":\t " + strconv.Itoa(len(body)) + " \t"
	}
	var b bytes.Buffer
	if style&16 != 0 {
		b.WriteString("Content-Type: application/vscode-jsonrpc; charset=utf-8" + eol)
	}
	b.WriteString(name + value + eol)
	if style&32 != 0 {
		b.WriteString("X-Trace: 1" + eol)
	}
	b.WriteString(eol)
	b.Write(body)
	return b.Bytes()
}

// sanitiseGarbage returns g changed so that it cannot hide the frame that
// follows it (see above): every "content-length", in any case, has its
// first letter replaced with '_', and a garbage that does not end with LF
// gets one.
func sanitiseGarbage(g []byte) []byte {
	g = bytes.Clone(g)
	for {
		i := bytes.Index(asciiLower(g), []byte("content-length"))
		if i < 0 {
			break
		}
		g[i] = '_'
	}
	if len(g) > 0 && g[len(g)-1] != '\n' {
		g = append(g, '\n')
	}
	return g
}

// asciiLower returns b with ASCII letters in lower case, byte for byte
// (bytes.ToLower maps runes, and may change the length).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// headerStream lays out garbage and frames in turn (see above).
func headerStream(garbage, bodies [][]byte, style byte) []byte {
	var b bytes.Buffer
	for i, g := range garbage {
		b.Write(g)
		if i < len(bodies) {
			b.Write(headerFrame(bodies[i], style))
		}
	}
	return b.Bytes()
}

// sizedReads records the longest Read asked of it: a reader reads into
// its buffer, so that is what shows of its size.
type sizedReads struct {
	r       io.Reader
	mu      sync.Mutex
	longest int
}

func (s *sizedReads) Read(p []byte) (int, error) {
	s.mu.Lock()
	s.longest = max(s.longest, len(p))
	s.mu.Unlock()
	return s.r.Read(p)
}

func (s *sizedReads) max() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.longest
}

// headerEvent is one event of lines.HeaderReader.
type headerEvent struct {
	kind string // "frame", "oversize", "malformed"
	body string // a frame's
	size int64
	warn bool // a frame's Content-Type is not JSON
}

// readHeaderEvents runs a HeaderReader over r to the end, checking that
// it never reads into more than its bound, and that each event is
// consistent.
func readHeaderEvents(t *testing.T, r io.Reader, limit int) (evs []headerEvent, tail int) {
	t.Helper()
	sr := &sizedReads{r: r}
	h := lines.NewHeaderReader(sr, limit)
	for {
		ev, tl, err := h.Next()
		if n := sr.max(); n > readBound(limit) {
			t.Fatalf("a Read of %d bytes, over the bound of %d for bodies of at most %d", n, readBound(limit), limit)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Next: %v", err)
			}
			return evs, tl
		}
		switch {
		case ev.Oversize:
			if ev.Size <= int64(limit) || len(ev.Prefix) > lines.PrefixSize {
				t.Fatalf("oversize event of %d bytes (limit %d), prefix of %d", ev.Size, limit, len(ev.Prefix))
			}
			evs = append(evs, headerEvent{kind: "oversize", size: ev.Size})
		case ev.Malformed != nil:
			if ev.Size <= 0 || len(ev.Prefix) == 0 || len(ev.Prefix) > lines.PrefixSize {
				t.Fatalf("malformed event (%v) of %d bytes, prefix of %d", ev.Malformed, ev.Size, len(ev.Prefix))
			}
			evs = append(evs, headerEvent{kind: "malformed", size: ev.Size})
		default:
			if int64(len(ev.Line)) != ev.Size || len(ev.Line) > limit {
				t.Fatalf("frame of %d bytes reported as %d (limit %d)", len(ev.Line), ev.Size, limit)
			}
			evs = append(evs, headerEvent{kind: "frame", body: string(ev.Line), size: ev.Size, warn: ev.Warning != nil})
		}
	}
}

// FuzzHeaderReader feeds lines.HeaderReader garbage and well-formed frames
// in turn (see the top of this file), in reads whose sizes the fuzzer
// chose, with a body limit it chose too. For any input: no panic, no Read
// larger than a header block and a body (or the skip buffer), and the same
// events whatever the chunking. With sanitised garbage (raw false): the
// frames, exactly, in order, each delivered (or reported oversize) once,
// between malformed blocks that together discard no more than the
// garbage; the end of the input discards none of a frame.
func FuzzHeaderReader(f *testing.F) {
	f.Add([]byte("\x00{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\x00garbage\r\n\x00[]\x00X: 1\r\n\r\n\x00"), []byte{3, 0, 7, 1, 200}, uint16(40), byte(0), false)
	f.Add([]byte("Content-Type: text/plain\r\n\x00{}\x00Content-Length: 5\r\n\r\n{}\x00Content-Length: 3\r\n\r\nab"), []byte{1, 1, 1}, uint16(100), byte(0x31), true)
	f.Add([]byte("ab\x00{}\x00X:\x00{\"id\":1}"), []byte{}, uint16(10), byte(2), true)
	f.Add([]byte("\r\n\n\x00"+strings.Repeat("y", 90)+"\x00no header here\x00{}"), []byte{5, 0, 9}, uint16(64), byte(0x0d), false)
	f.Fuzz(func(t *testing.T, data, cuts []byte, maxBody uint16, style byte, raw bool) {
		limit := int(maxBody)
		garbage, bodies := pieces(data)
		if !raw {
			for i, g := range garbage {
				garbage[i] = sanitiseGarbage(g)
			}
		}
		stream := headerStream(garbage, bodies, style)

		whole, wholeTail := readHeaderEvents(t, bytes.NewReader(stream), limit)
		chunked, chunkedTail := readHeaderEvents(t, cutReader(stream, cuts, len(cuts)%2 == 1), limit)
		if fmt.Sprint(whole, wholeTail) != fmt.Sprint(chunked, chunkedTail) {
			t.Fatalf("the chunking changed the events:\nwhole:   %+v, tail %d\nchunked: %+v, tail %d", whole, wholeTail, chunked, chunkedTail)
		}
		if raw {
			return
		}

		var frames []headerEvent
		var discarded int64
		for _, ev := range whole {
			if ev.kind == "malformed" {
				discarded += ev.size
				continue
			}
			ev.warn = false // a Content-Type the garbage left unfinished may join a frame's block
			frames = append(frames, ev)
		}
		var want []headerEvent
		for _, b := range bodies {
			if len(b) > limit {
				want = append(want, headerEvent{kind: "oversize", size: int64(len(b))})
			} else {
				want = append(want, headerEvent{kind: "frame", body: string(b), size: int64(len(b))})
			}
		}
		if fmt.Sprint(frames) != fmt.Sprint(want) {
			t.Fatalf("frames after sanitised garbage:\ngot  %+v\nwant %+v\nstream %q", frames, want, stream)
		}
		// A resynchronisation that starts in garbage may pass over the
		// header lines of the next frame before its Content-Length.
		var mayDiscard int64
		for _, g := range garbage {
			mayDiscard += int64(len(g))
		}
		mayDiscard += int64(len(bodies) * bytes.Index(asciiLower(headerFrame(nil, style)), []byte("content-length")))
		if discarded > mayDiscard {
			t.Fatalf("malformed blocks discarded %d bytes, more than the %d bytes of garbage and headers before Content-Length", discarded, mayDiscard)
		}
		last := 0
		if len(garbage) > len(bodies) {
			last = len(garbage[len(garbage)-1])
		}
		if wholeTail > last {
			t.Fatalf("the end discarded %d bytes, but only the %d bytes of garbage after the last frame may be unfinished", wholeTail, last)
		}
	})
}

// frameRecorder is the writer of a Conn: it cuts what is written into
// frames, each of which must be a line, or exactly "Content-Length:
// N\r\n\r\n" and N bytes, the Conn's one framing for all its frames, and
// never split across Writes, and hands each body (a line without its LF)
// to onFrame.
type frameRecorder struct {
	onFrame func(body []byte)
	mu      sync.Mutex
	seen    bool        // a frame was written
	framing rpc.Framing // the first frame's
	problem string
}

func (w *frameRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := rpc.NewlineFraming
	if bytes.HasPrefix(p, []byte("Content-Length: ")) {
		f = rpc.ContentLengthFraming
	}
	if !w.seen {
		w.seen, w.framing = true, f
	}
	var frames [][]byte
	rest := p
	for len(rest) > 0 {
		if f == rpc.NewlineFraming {
			line, after, ok := bytes.Cut(rest, []byte("\n"))
			if !ok {
				break
			}
			frames, rest = append(frames, line), after
			continue
		}
		header, after, ok := bytes.Cut(rest, []byte("\r\n\r\n"))
		n, err := strconv.Atoi(strings.TrimPrefix(string(header), "Content-Length: "))
		if !ok || !bytes.HasPrefix(header, []byte("Content-Length: ")) || err != nil || n < 0 || n > len(after) {
			break
		}
		frames, rest = append(frames, after[:n]), after[n:]
	}
	switch {
	case w.problem != "":
	case f != w.framing:
		w.problem = fmt.Sprintf("a Write (%.200q) in %v framing after frames in %v framing", p, f, w.framing)
	case len(p) == 0 || len(rest) > 0:
		w.problem = fmt.Sprintf("a Write (%.200q) that is not whole %v frames", p, f)
	default:
		for _, b := range frames {
			w.onFrame(b)
		}
	}
	return len(p), nil
}

// check says what was wrong with the Writes, if anything, or with their
// framing, when frames were written in another than want.
func (w *frameRecorder) check(want rpc.Framing) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.problem == "" && w.seen && w.framing != want {
		return fmt.Sprintf("frames written in %v framing, want %v", w.framing, want)
	}
	return w.problem
}

// waitEnded waits for c to end, at most waitBound.
func waitEnded(t interface {
	Helper()
	Fatalf(format string, args ...any)
}, c *rpc.Conn) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(waitBound):
		t.Fatalf("waited %v for the Conn to end after its input ended", waitBound)
		return nil
	}
}

// framedConnTrace feeds r to a Conn of the given framing that has no
// request handler, and records what it does with each frame, as
// connTrace does: drops in order (with their reason, size and line),
// notifications in order, answers as a multiset. It returns the Conn's
// framing once it ended, and the longest Read it asked for.
func framedConnTrace(t *testing.T, r io.Reader, framing rpc.Framing, limit int) (log *connLog, chosen rpc.Framing, longestRead int) {
	t.Helper()
	log = &connLog{}
	reg := rpc.NewRegistry()
	reg.HandleUnknownNotification(func(_ context.Context, method string, params json.RawMessage) {
		log.note(fmt.Sprintf("notification %q %s", method, params))
	})
	sr := &sizedReads{r: r}
	w := &frameRecorder{onFrame: func(b []byte) { log.answer(string(b)) }}
	c := rpc.NewConn(sr, w, &rpc.Options{Handler: reg, Framing: framing, MaxFrameSize: limit, OnDrop: func(d rpc.Drop) {
		log.drop(fmt.Sprintf("drop %v %d %q", d.Reason, d.Size, d.Line))
	}})
	c.Start()
	if err := waitEnded(t, c); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Wait: %v", err)
	}
	chosen = c.Framing()
	if problem := w.check(chosen); problem != "" {
		t.Fatal(problem)
	}
	return log, chosen, sr.max()
}

// withoutGarbageDrops returns the log less the drops garbage may cause:
// malformed header blocks, and (trailing, when the garbage is last) an
// unfinished block at the end of the input.
func withoutGarbageDrops(l *connLog, trailing bool) string {
	kept := &connLog{notes: l.notes, answers: l.answers}
	for i, d := range l.drops {
		if strings.HasPrefix(d, "drop "+rpc.DropBadHeader.String()+" ") {
			continue
		}
		if trailing && i == len(l.drops)-1 && strings.HasPrefix(d, "drop "+rpc.DropUnterminated.String()+" ") {
			continue
		}
		kept.drops = append(kept.drops, d)
	}
	return kept.String()
}

// FuzzHeaderFraming feeds a Conn with ContentLengthFraming garbage and
// well-formed frames in turn (see the top of this file), in reads whose
// sizes the fuzzer chose, with a maximum frame size it chose too; the
// bodies are the fuzzer's bytes, which the Conn handles as the wire rules
// say (notifications to the unknown-notification handler, requests
// answered method-not-found, the rest dropped). For any input: no panic,
// no Read larger than a header block and a frame (or the skip buffer),
// every answer a whole Content-Length frame in one Write, and the same
// trace whatever the chunking. With sanitised garbage (raw false): the
// trace, less the garbage's DropBadHeader drops (and the unfinished block
// a last garbage may leave), is that of the frames alone, which does one
// thing per frame whose body is not blank: every frame is handled once,
// in order, whatever garbage came before it.
func FuzzHeaderFraming(f *testing.F) {
	f.Add([]byte("\x00{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\x00garbage\r\n\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\x00X: 1\r\n\r\n{}\x00{\"id\":2}\x00tail"), []byte{3, 0, 7, 1, 200}, uint16(60), byte(0), false)
	f.Add([]byte("Content-Length: 300\r\n\r\n\x00{\"method\":\"n\"}\x00"+strings.Repeat("x", 300)+"\x00{\"method\":\"n2\"}"), []byte{1, 1, 1}, uint16(100), byte(0x12), true)
	f.Add([]byte("ab\x00{\"method\":\"lost\"}\x00X:\x00{\"method\":\"lost too\"}"), []byte{}, uint16(100), byte(1), true)
	f.Fuzz(func(t *testing.T, data, cuts []byte, maxFrame uint16, style byte, raw bool) {
		limit := int(maxFrame) + 1
		garbage, bodies := pieces(data)
		if !raw {
			for i, g := range garbage {
				garbage[i] = sanitiseGarbage(g)
			}
		}
		stream := headerStream(garbage, bodies, style)

		whole, _, n1 := framedConnTrace(t, bytes.NewReader(stream), rpc.ContentLengthFraming, limit)
		chunked, _, n2 := framedConnTrace(t, cutReader(stream, cuts, len(cuts)%2 == 1), rpc.ContentLengthFraming, limit)
		if n := max(n1, n2); n > readBound(limit) {
			t.Fatalf("a Read of %d bytes, over the bound of %d for frames of at most %d", n, readBound(limit), limit)
		}
		if whole.String() != chunked.String() {
			t.Fatalf("the chunking changed what the Conn did:\nwhole:\n%s\nchunked:\n%s", whole, chunked)
		}
		if raw {
			return
		}

		clean, _, _ := framedConnTrace(t, bytes.NewReader(headerStream(make([][]byte, len(bodies)), bodies, style)), rpc.ContentLengthFraming, limit)
		things := 0
		for _, b := range bodies {
			if len(b) > limit || len(lines.TrimSpace(b)) > 0 {
				things++
			}
		}
		if clean.len() != things {
			t.Fatalf("%d things done for %d frames that are not blank:\n%s", clean.len(), things, clean)
		}
		trailing := len(garbage) > len(bodies)
		if got := withoutGarbageDrops(whole, trailing); got != clean.String() {
			t.Fatalf("frames after sanitised garbage were not handled as the frames alone:\ngot:\n%s\nwant:\n%s\nstream %q", got, clean, stream)
		}
	})
}

// blanks maps bytes to the white space a peer may send before its first
// frame.
func blanks(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = " \t\r\n"[c%4]
	}
	return out
}

// maxDetectBlank bounds the white space FuzzDetectFraming puts before
// the first frame: well past the 256 bytes DetectFraming decides within
// (it lets the white space before them go).
const maxDetectBlank = 2048

// FuzzDetectFraming sends a Conn with DetectFraming white space (spaces,
// tabs, CR, LF: the fuzzer's bytes mapped onto them, up to
// maxDetectBlank), then three notifications, framed with Content-Length
// headers (in the spelling chosen by style, see headerFrame) or as lines,
// in reads the fuzzer chose. The Conn must choose the framing of the
// first frame, and handle the three notifications exactly once, in
// order, dropping nothing, whatever the white space and the chunking.
func FuzzDetectFraming(f *testing.F) {
	f.Add([]byte{}, []byte("hello"), []byte{}, false, byte(0))
	f.Add([]byte{3, 2, 3}, []byte("é\n\"x"), []byte{1, 0, 2}, true, byte(0x10))
	f.Add([]byte{0, 1, 2, 3}, []byte(""), []byte{9, 9}, true, byte(0x07))
	f.Add([]byte{2, 3, 2, 3}, []byte("{}"), []byte{1}, false, byte(0))
	f.Fuzz(func(t *testing.T, ws, text, cuts []byte, header bool, style byte) {
		if len(ws) > maxDetectBlank {
			ws = ws[:maxDetectBlank]
		}
		lead := blanks(ws)
		wantFraming := rpc.NewlineFraming
		if header {
			wantFraming = rpc.ContentLengthFraming
		}
		var stream bytes.Buffer
		stream.Write(lead)
		var want []string
		for i := range 3 {
			s, _ := json.Marshal(fmt.Sprintf("%d:%s", i, text)) // invalid UTF-8 becomes U+FFFD
			body := []byte(`{"jsonrpc":"2.0","method":"n","params":` + string(s) + `}`)
			if header {
				stream.Write(headerFrame(body, style))
			} else {
				stream.Write(append(body, '\n'))
			}
			want = append(want, fmt.Sprintf("notification %q %s", "n", s))
		}
		data := stream.Bytes()
		for _, r := range []io.Reader{bytes.NewReader(data), cutReader(data, cuts, len(cuts)%2 == 1)} {
			log, chosen, longest := framedConnTrace(t, r, rpc.DetectFraming, rpc.DefaultMaxFrameSize)
			if chosen != wantFraming {
				t.Fatalf("chose %v for %q, want %v", chosen, data, wantFraming)
			}
			if longest > readBound(rpc.DefaultMaxFrameSize) {
				t.Fatalf("a Read of %d bytes", longest)
			}
			if strings.Join(log.notes, "\n") != strings.Join(want, "\n") {
				t.Fatalf("notifications of %q:\ngot  %q\nwant %q", data, log.notes, want)
			}
			if len(log.drops) != 0 {
				t.Fatalf("drops of %q: %q, want none", data, log.drops)
			}
		}
	})
}

// TestDetectFramingAfterLongWhiteSpace: DetectFraming decides within
// 256 bytes after the white space before the first frame, however much
// of it there is (white space that filled the 256 bytes made it choose
// NewlineFraming, and a Content-Length peer's frames were lost).
func TestDetectFramingAfterLongWhiteSpace(t *testing.T) {
	note := []byte(`{"jsonrpc":"2.0","method":"n","params":1}`)
	for _, lead := range []string{strings.Repeat("\r\n", 128), strings.Repeat("\n", 300), strings.Repeat(" ", 256)} {
		stream := append([]byte(lead), headerFrame(note, 0)...)
		log, chosen, _ := framedConnTrace(t, bytes.NewReader(stream), rpc.DetectFraming, 1<<10)
		if chosen != rpc.ContentLengthFraming || len(log.notes) != 1 {
			t.Errorf("%d bytes of %q, then a Content-Length frame: chose %v, notifications %q, drops %q",
				len(lead), lead[:1], chosen, log.notes, log.drops)
		}
	}
}
