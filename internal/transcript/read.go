package transcript

import (
	"bytes"
	"encoding/json"
	"io"

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

// isTranscriptLine tells a transcript line from a raw frame: an object
// with dir and frame members and none of a frame's own.
func isTranscriptLine(raw []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, dir := m["dir"]
	_, frame := m["frame"]
	_, method := m["method"]
	_, rpc := m["jsonrpc"]
	return dir && frame && !method && !rpc
}

// transcriptLine unwraps one line of a transcript or tap log.
func (c *Checker) transcriptLine(n int, raw []byte) {
	if len(lines.TrimSpace(raw)) == 0 {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		c.add(n, Malformed, "not a transcript line (want {\"dir\":\"c2s\"|\"s2c\",\"frame\":...}): %s", lines.Excerpt(raw))
		return
	}
	var dir Dir
	if json.Unmarshal(m["dir"], &dir) != nil || dir != c2s && dir != s2c {
		c.add(n, Malformed, "transcript line without dir \"c2s\" or \"s2c\": %s", lines.Excerpt(raw))
		return
	}
	var frame []byte
	var s string
	switch fr := bytes.TrimSpace(m["frame"]); {
	case len(fr) == 0:
		c.add(n, Malformed, "transcript line without frame: %s", lines.Excerpt(raw))
		return
	case wire.KindOf(fr) == wire.String:
		if json.Unmarshal(fr, &s) != nil {
			c.add(n, Malformed, "transcript frame is not a valid JSON string: %s", lines.Excerpt(raw))
			return
		}
		frame = []byte(s)
	default:
		frame = fr // the frame itself, as JSON
	}
	var truncated bool
	json.Unmarshal(m["truncated"], &truncated)
	if truncated {
		var size int64
		json.Unmarshal(m["size"], &size)
		if size > int64(c.maxFrame) {
			c.oversize(n, dir, size)
		} else {
			c.cutFrame(n, dir, frame, size)
		}
		return
	}
	var unterminated bool
	json.Unmarshal(m["unterminated"], &unterminated)
	if unterminated {
		c.add(n, Malformed, "%s: unterminated last line: the reader discards it (docs/wire.md §2.1): %s", dir, lines.Excerpt(frame))
		return
	}
	c.checkFrame(n, dir, frame)
}
