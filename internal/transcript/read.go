package transcript

import (
	"io"
	"strconv"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
)

// The formats of a transcript file, as Read reports them.
const (
	FormatRaw        = "raw frames" // one JSON-RPC frame a line; directions are inferred
	FormatTranscript = "transcript" // {"dir":"c2s"|"s2c","frame":...} a line, as tap logs
	FormatEmpty      = "empty"
)

// Read checks a transcript or raw frames read from in, as a Checker of
// frames of at most maxFrame bytes does, handing each finding to report as
// soon as it is found, then those of the end (Checker.Finish). It returns
// the format and what it counted; err is a read error of in. It holds at
// most one line in memory: lines are read up to twice maxFrame bytes (a
// transcript line quotes its frame); a longer line is skipped unread.
func Read(in io.Reader, maxFrame int, report func(Finding)) (format string, counts Counts, err error) {
	c := New(maxFrame)
	lineMax := 2*maxFrame + 4096
	lr := lines.NewReader(in, lineMax)
	wrapped, decided := false, false
	decide := func(raw []byte) {
		wrapped, decided = isTranscriptLine(raw), true
		if wrapped {
			format = FormatTranscript
		} else {
			format = FormatRaw
		}
	}
	for n := 1; ; n++ {
		c.report(report)
		ev, tail, err := lr.Next()
		if err != nil {
			if tail > 0 {
				c.counts.Lines++
				c.add(n, Malformed, "unterminated last line (%d bytes): the reader discards it (docs/wire.md §2.1)", tail)
			}
			if err == io.EOF {
				break
			}
			return format, c.counts, err
		}
		c.counts.Lines++
		raw := ev.Line
		if !ev.Oversize && !decided {
			if len(lines.TrimSpace(raw)) == 0 {
				continue
			}
			decide(raw)
		}
		if ev.Oversize || !wrapped && len(raw) > maxFrame {
			if !decided {
				format, decided = FormatRaw, true
			}
			c.counts.Frames++
			c.counts.Bad++
			if wrapped {
				c.add(n, Malformed, "a transcript line of %d bytes, longer than twice the maximum frame size (%d): skipped unread", ev.Size, maxFrame)
			} else {
				c.add(n, Malformed, "a line of %d bytes, longer than the maximum frame size (%d): the reader skips it", ev.Size, maxFrame)
			}
			continue
		}
		if wrapped {
			c.transcriptLine(n, raw)
		} else {
			c.frame(n, Unknown, raw)
		}
	}
	if !decided {
		format = FormatEmpty
	}
	c.report(report)
	c.finish()
	c.report(report)
	return format, c.counts, nil
}

// report hands the findings recorded so far to fn, and forgets them.
func (c *Checker) report(fn func(Finding)) {
	for _, f := range c.found {
		fn(f)
	}
	c.found = c.found[:0]
}

// transcriptMembers are the members of a transcript line that Read looks
// at, raw, nil when absent.
type transcriptMembers struct {
	dir, frame, truncated, size, unterminated, method, jsonrpc []byte
}

// maxJSONDepth is the nesting past which a line is not JSON to Read:
// encoding/json's limit, as tap logs are written with it.
const maxJSONDepth = 10000

// readTranscriptLine reads raw as encoding/json reads an object into a map:
// ok is false when it is not valid JSON (nested at most maxJSONDepth deep)
// or not an object; of a member present more than once, the last counts.
// The line is validated and its members delimited in one pass, where
// decoding it into a map walked a frame, the bulk of the line, three times.
func readTranscriptLine(raw []byte) (m transcriptMembers, ok bool) {
	top, depth, err := wire.ScanMembers(raw, func(key, value []byte) bool {
		switch string(key) {
		case "dir":
			m.dir = value
		case "frame":
			m.frame = value
		case "truncated":
			m.truncated = value
		case "size":
			m.size = value
		case "unterminated":
			m.unterminated = value
		case "method":
			m.method = value
		case "jsonrpc":
			m.jsonrpc = value
		}
		return true
	})
	if err != nil || depth > maxJSONDepth || top != wire.Object {
		return transcriptMembers{}, false
	}
	return m, true
}

// isTranscriptLine tells a transcript line from a raw frame: an object
// with dir and frame members and none of a frame's own.
func isTranscriptLine(raw []byte) bool {
	m, ok := readTranscriptLine(raw)
	return ok && m.dir != nil && m.frame != nil && m.method == nil && m.jsonrpc == nil
}

// transcriptLine unwraps one line of a transcript or tap log.
func (c *Checker) transcriptLine(n int, raw []byte) {
	if len(lines.TrimSpace(raw)) == 0 {
		return
	}
	m, ok := readTranscriptLine(raw)
	if !ok {
		c.add(n, Malformed, "not a transcript line (want {\"dir\":\"c2s\"|\"s2c\",\"frame\":...}): %s", lines.Excerpt(raw))
		return
	}
	var dir Dir
	if wire.KindOf(m.dir) == wire.String {
		dir = Dir(wire.AppendUnquoteUTF8(nil, m.dir))
	}
	if dir != c2s && dir != s2c { // null leaves dir empty, as decoding it does
		c.add(n, Malformed, "transcript line without dir \"c2s\" or \"s2c\": %s", lines.Excerpt(raw))
		return
	}
	var frame []byte
	switch fr := m.frame; {
	case len(fr) == 0:
		c.add(n, Malformed, "transcript line without frame: %s", lines.Excerpt(raw))
		return
	case wire.KindOf(fr) == wire.String: // valid: the line is
		frame = wire.AppendUnquoteUTF8(make([]byte, 0, len(fr)), fr)
	default:
		frame = fr // the frame itself, as JSON
	}
	// truncated, unterminated and size are read as decoding them into a
	// bool and an int64 reads them: a value of another type leaves them
	// false and 0.
	if string(m.truncated) == "true" {
		var size int64
		if wire.KindOf(m.size) == wire.Number {
			if v, err := strconv.ParseInt(string(m.size), 10, 64); err == nil {
				size = v
			}
		}
		if size > int64(c.maxFrame) {
			c.oversize(n, dir, size)
		} else {
			c.cutFrame(n, dir, frame, size)
		}
		return
	}
	if string(m.unterminated) == "true" {
		c.add(n, Malformed, "%s: unterminated last line: the reader discards it (docs/wire.md §2.1): %s", dir, lines.Excerpt(frame))
		return
	}
	c.checkFrame(n, dir, frame)
}
