package lines

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
)

// MaxHeaderBytes bounds the header block of a Content-Length frame (its
// lines and the blank line that ends it); a longer block is malformed.
// Real peers write one or two short headers.
const MaxHeaderBytes = 8 << 10

// HeaderReader reads frames delimited as LSP and DAP delimit them: a block
// of "Name: value" header lines, ended by a blank line, then a body of
// exactly Content-Length bytes. Header names are matched without regard to
// case; lines end with CRLF, or LF alone (read leniently, never written);
// blank lines between frames are ignored. Bodies that fit its buffer are
// returned as sub-slices of it, valid until the next call to Next. It is
// not safe for concurrent use.
//
// A malformed header block (a line that is not a header, a missing,
// negative, non-numeric or repeated Content-Length, a block longer than
// MaxHeaderBytes) is reported once, and the reader resynchronises: it
// discards input up to the next "Content-Length" it finds, where the next
// frame is taken to begin. A body longer than the limit is skipped
// without being held in memory.
type HeaderReader struct {
	window
	max    int
	sized  bool   // makeRoom sized the buffer for a body: the next fill keeps it
	prefix []byte // the start of the last frame skipped, once there was one
}

// NewHeaderReader returns a HeaderReader of frames whose bodies are no
// longer than max bytes.
func NewHeaderReader(r io.Reader, max int) *HeaderReader {
	return &HeaderReader{window: window{r: r, buf: make([]byte, min(MinBuffer, max+MaxHeaderBytes))}, max: max}
}

// HasFrame reports whether a whole, well-formed frame is buffered: its
// header block and its body, blank lines before the block aside. Next then
// returns it without reading. (A malformed block makes Next read on to
// the next "Content-Length", so HasFrame reports false for it.)
func (h *HeaderReader) HasFrame() bool {
	b := h.buf[h.start:h.end]
	for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	length := int64(-1)
	for at := 0; at < MaxHeaderBytes; {
		i := bytes.IndexByte(b[at:], '\n')
		if i < 0 {
			return false
		}
		line := bytes.TrimSuffix(b[at:at+i], []byte{'\r'})
		at += i + 1
		if at > MaxHeaderBytes {
			return false // a block that ends past the bound is malformed
		}
		if len(line) == 0 {
			return length >= 0 && length <= int64(h.max) && int64(len(b)-at) >= length
		}
		name, value, ok := headerLine(line)
		if !ok {
			return false
		}
		if bytes.EqualFold(name, []byte("Content-Length")) {
			n, ok := contentLength(value)
			if !ok || length >= 0 {
				return false
			}
			length = n
		}
	}
	return false
}

// limit is the largest the buffer grows: a header block and a body.
func (h *HeaderReader) limit() int { return h.max + MaxHeaderBytes }

// Next returns the next frame's body (Event.Line), reports a frame skipped
// as oversize (Event.Oversize) or a malformed header block and the bytes
// discarded after it (Event.Malformed), or returns io.EOF (or the read
// error) at the end of the input with the number of bytes of an
// unfinished frame that were discarded. Event.Warning is set on a frame
// delivered whose Content-Type is not JSON in UTF-8.
func (h *HeaderReader) Next() (ev Event, tail int, err error) {
	// Blank lines before a block are not a block.
	for {
		for h.start < h.end && (h.buf[h.start] == '\r' || h.buf[h.start] == '\n') {
			h.start++
		}
		if h.start < h.end {
			break
		}
		if err := h.fill(h.limit()); err != nil {
			return Event{}, 0, err
		}
	}
	hdr, bad, err := h.headerBlock()
	if err != nil {
		tail := h.end - h.start
		h.start, h.end = 0, 0 // reported once
		return Event{}, tail, err
	}
	if bad != nil {
		return h.resync(bad)
	}
	h.start += hdr.size
	if hdr.length > int64(h.max) {
		return h.skip(hdr.length)
	}
	n := int(hdr.length)
	for h.end-h.start < n {
		if len(h.buf)-h.start < n {
			h.makeRoom(n)
		}
		if err := h.fillKeeping(); err != nil {
			tail := hdr.size + h.end - h.start
			h.start, h.end = 0, 0
			return Event{}, tail, err
		}
	}
	body := h.buf[h.start : h.start+n]
	h.start += n
	if n >= ReadChunk {
		h.keepLarge = keepLargeRefills
	}
	return Event{Line: body, Size: int64(n), Warning: hdr.warning}, 0, nil
}

// fillKeeping is fill, but that it keeps a buffer makeRoom sized, which
// fill would size to the traffic when it is empty.
func (h *HeaderReader) fillKeeping() error {
	if !h.sized || h.start != h.end {
		h.sized = false
		return h.fill(h.limit())
	}
	h.sized = false
	h.start, h.end = 0, 0
	n, err := h.read(h.buf)
	h.end = n
	h.lastRead, h.lastFull = n, n == len(h.buf)
	if n > 0 {
		return nil
	}
	return err
}

// makeRoom moves the partial body at h.start to the front of a buffer
// that holds n bytes (twice the old one's size, if that is more, so that
// bodies of growing sizes do not each grow it), which the next fill keeps.
func (h *HeaderReader) makeRoom(n int) {
	buf := h.buf
	if len(buf) < n {
		buf = make([]byte, min(max(n, 2*len(buf)), h.limit()))
	}
	h.end = copy(buf, h.buf[h.start:h.end])
	h.start, h.buf = 0, buf
	h.sized = true
}

// header is a well-formed header block.
type header struct {
	size    int   // the block's length, the blank line included
	length  int64 // Content-Length
	warning error // a Content-Type that is not JSON in UTF-8
}

// malformed is a header block that is not one, and where to look for the
// next: from (an offset from h.start) on.
type malformed struct {
	err  error
	from int
}

// headerBlock parses the header block at h.start, reading until it is
// whole. It returns the block, or what is wrong with it; err is a read
// error met before the block ended.
func (h *HeaderReader) headerBlock() (hdr header, bad *malformed, err error) {
	hdr.length = -1
	at := 0 // the offset from h.start of the line being parsed
	for {
		i := bytes.IndexByte(h.buf[h.start+at:h.end], '\n')
		if i < 0 {
			if h.end-h.start >= MaxHeaderBytes {
				return hdr, &malformed{fmt.Errorf("header block longer than %d bytes", MaxHeaderBytes), 1}, nil
			}
			if err := h.fill(h.limit()); err != nil {
				return hdr, nil, err
			}
			continue
		}
		line := h.buf[h.start+at : h.start+at+i]
		next := at + i + 1
		if next > MaxHeaderBytes {
			return hdr, &malformed{fmt.Errorf("header block longer than %d bytes", MaxHeaderBytes), 1}, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 { // the blank line: the block is whole
			hdr.size = next
			if hdr.length < 0 {
				return hdr, &malformed{errors.New("no Content-Length header"), next}, nil
			}
			return hdr, nil, nil
		}
		name, value, ok := headerLine(line)
		if !ok {
			return hdr, &malformed{fmt.Errorf("not a header line: %q", Excerpt(line)), at + 1}, nil
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if hdr.length >= 0 {
				return hdr, &malformed{errors.New("Content-Length given twice"), next}, nil
			}
			n, ok := contentLength(value)
			if !ok {
				return hdr, &malformed{fmt.Errorf("Content-Length %q is not a byte count", Excerpt(value)), next}, nil
			}
			hdr.length = n
		case bytes.EqualFold(name, []byte("Content-Type")):
			hdr.warning = checkContentType(string(value))
		}
		at = next
	}
}

// headerLine splits a header line at its colon. The name must be a token
// (RFC 9110: letters, digits and !#$%&'*+-.^_`|~); the value is trimmed of
// spaces and tabs and must be printable ASCII.
func headerLine(line []byte) (name, value []byte, ok bool) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, false
	}
	for _, b := range line[:colon] {
		if !isToken(b) {
			return nil, nil, false
		}
	}
	value = bytes.Trim(line[colon+1:], " \t")
	for _, b := range value {
		if b < ' ' && b != '\t' || b > '~' {
			return nil, nil, false
		}
	}
	return line[:colon], value, true
}

func isToken(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// contentLength parses a decimal byte count: digits only, no sign.
func contentLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 { // 18 digits cannot overflow an int64
		return 0, false
	}
	var n int64
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, false
		}
		n = n*10 + int64(b-'0')
	}
	return n, true
}

// checkContentType returns why a Content-Type is not JSON in UTF-8, or
// nil: application/json, LSP's application/vscode-jsonrpc, or any
// +json type, with no charset or a UTF-8 one.
func checkContentType(v string) error {
	mediaType, params, err := mime.ParseMediaType(v)
	if err != nil {
		return fmt.Errorf("Content-Type %q does not parse: %v", v, err)
	}
	if mediaType != "application/json" && mediaType != "application/vscode-jsonrpc" && !strings.HasSuffix(mediaType, "+json") {
		return fmt.Errorf("Content-Type %q is not a JSON type; the body is read as JSON", v)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return fmt.Errorf("Content-Type %q names a charset other than UTF-8; the body is read as UTF-8", v)
	}
	return nil
}

// contentLengthName is what resync looks for, in lower case.
const contentLengthName = "content-length"

// resync discards the malformed block and what follows it, up to the next
// "Content-Length" (in any case) at or after bad.from, and reports them.
// At the end of the input it reports what it discarded; the next call
// returns the end.
func (h *HeaderReader) resync(bad *malformed) (Event, int, error) {
	h.prefix = h.prefix[:0]
	h.keepDiscarded(h.buf[h.start : h.start+bad.from])
	skipped := int64(bad.from)
	h.start += bad.from
	for {
		if i := indexFold(h.buf[h.start:h.end], contentLengthName); i >= 0 {
			h.keepDiscarded(h.buf[h.start : h.start+i])
			skipped += int64(i)
			h.start += i
			break
		}
		// Keep what may be the start of the name, cut by the read.
		keep := min(h.end-h.start, len(contentLengthName)-1)
		h.keepDiscarded(h.buf[h.start : h.end-keep])
		skipped += int64(h.end - h.start - keep)
		h.start = h.end - keep
		if err := h.fill(h.limit()); err != nil {
			h.keepDiscarded(h.buf[h.start:h.end])
			skipped += int64(h.end - h.start)
			h.start, h.end = 0, 0
			break // the end comes with the next call
		}
	}
	return Event{Malformed: bad.err, Size: skipped, Prefix: h.prefix}, 0, nil
}

// keepDiscarded appends the start of b, discarded, to h.prefix, up to
// PrefixSize bytes in all.
func (h *HeaderReader) keepDiscarded(b []byte) {
	if h.prefix == nil {
		h.prefix = make([]byte, 0, PrefixSize)
	}
	h.prefix = append(h.prefix, b[:min(len(b), PrefixSize-len(h.prefix))]...)
}

// indexFold returns the index of the first occurrence of lower (a lower
// case ASCII string) in b, matched without regard to case, or -1.
func indexFold(b []byte, lower string) int {
	first := [2]byte{lower[0], lower[0] - 'a' + 'A'}
	for i := 0; i+len(lower) <= len(b); {
		j := bytes.IndexAny(b[i:len(b)-len(lower)+1], string(first[:]))
		if j < 0 {
			return -1
		}
		i += j
		if strings.EqualFold(string(b[i:i+len(lower)]), lower) {
			return i
		}
		i++
	}
	return -1
}

// skip discards a body of n bytes, longer than the limit, without holding
// it, keeping its first PrefixSize bytes.
func (h *HeaderReader) skip(n int64) (Event, int, error) {
	h.prefix = h.prefix[:0]
	h.keepDiscarded(h.buf[h.start:h.end][:min(int64(h.end-h.start), n)])
	left := n
	for {
		take := int(min(int64(h.end-h.start), left))
		h.start += take
		left -= int64(take)
		if left == 0 {
			return Event{Oversize: true, Size: n, Prefix: h.prefix}, 0, nil
		}
		// Read into one buffer of skipChunk bytes (or the limit), reused.
		if size := min(skipChunk, h.limit()); len(h.buf) != size {
			h.buf = make([]byte, size)
		}
		h.start, h.end = 0, 0
		m, err := h.read(h.buf)
		h.end = m
		if m == 0 {
			return Event{}, int(min(n-left, int64(^uint(0)>>1))), err
		}
		h.keepDiscarded(h.buf[:min(int64(m), left)]) // in int64: left may not fit an int
	}
}
