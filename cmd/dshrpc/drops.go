package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/linerpc/linerpc/rpc"
)

// The serve commands (serve-demo, serve-replay, serve-script) report on
// stderr each line of the client's that they do not serve, so that
// someone debugging a client sees why a line got no answer.

// quietUsage is the line of each serve command's usage for --quiet.
const quietUsage = `  --quiet  do not report on stderr the input lines that are not served
           (by default each gets one line there: why, and its first
           80 bytes, control characters escaped)
`

// maxShown is how much of a line a report shows.
const maxShown = 80

// dropReporter reports the input lines that a serve command's connection
// did not serve, one line each on w; a nil *dropReporter (--quiet)
// reports nothing. Its methods are safe for concurrent use.
type dropReporter struct {
	cmd string // "serve-demo", ...

	mu  sync.Mutex
	w   io.Writer
	in  *inputTail // the input, for the start of an unterminated line
	err error      // of the first write that failed: no more are tried
}

// newDropReporter returns the reporter of cmd on stderr, nil when quiet.
func newDropReporter(e *env, cmd string, quiet bool) *dropReporter {
	if quiet {
		return nil
	}
	return &dropReporter{cmd: cmd, w: e.stderr}
}

// watch returns r, through which the command reads its client: a line
// that the input ends without an LF is then reported with its start.
func (d *dropReporter) watch(r io.Reader) io.Reader {
	if d == nil {
		return r
	}
	d.in = &inputTail{r: r}
	return d.in
}

// onDrop is the rpc.Options.OnDrop of the connection (nil when quiet).
func (d *dropReporter) onDrop() func(rpc.Drop) {
	if d == nil {
		return nil
	}
	return d.drop
}

// drop reports a line that the connection did not serve: ignored, or
// answered with an error (Drop.Reply).
func (d *dropReporter) drop(drop rpc.Drop) {
	what := drop.Reason.String()
	if drop.Method != "" {
		what += ", method " + drop.Method
	}
	if drop.Err != nil {
		what += ": " + drop.Err.Error()
	}
	verb := "ignored an input line"
	if drop.Reply != nil {
		verb = fmt.Sprintf("answered an input line with error %d", drop.Reply.Code)
	}
	line := drop.Line
	if drop.Reason == rpc.DropUnterminated && d.in != nil {
		line = d.in.start()
	}
	d.report(verb, what, line, drop.Size)
}

// unterminated reports the line that the input ended without an LF,
// which is no frame, once the input has ended (nothing before): for
// serve-replay, whose reader drops it without a word.
func (d *dropReporter) unterminated() {
	if d == nil || d.in == nil {
		return
	}
	if start, size := d.in.unterminated(); size > 0 {
		d.report("ignored an input line", rpc.DropUnterminated.String(), start, size)
	}
}

// report writes one line: verb, why, and the start of the line (or its
// size alone when there is none to show).
func (d *dropReporter) report(verb, why string, line []byte, size int64) {
	if d == nil {
		return
	}
	msg := fmt.Sprintf("dshrpc %s: %s (%s): %s\n", d.cmd, verb, legible(why), shown(line, size))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		_, d.err = io.WriteString(d.w, msg)
	}
}

// shown renders the start of a line of size bytes for a report: at most
// maxShown bytes of it, cut on a character, made legible, followed by its
// size when it was cut; its size alone when there is nothing to show.
func shown(line []byte, size int64) string {
	if len(line) == 0 {
		if size == 0 {
			return "an empty line"
		}
		return fmt.Sprintf("%d bytes, not shown", size)
	}
	cut := len(line) > maxShown || int64(len(line)) < size
	if len(line) > maxShown {
		line = line[:maxShown]
	}
	if cut {
		// A character that the bound cut in two is left out.
		for i := 1; i <= min(utf8.UTFMax, len(line)); i++ {
			if utf8.RuneStart(line[len(line)-i]) {
				if !utf8.FullRune(line[len(line)-i:]) {
					line = line[:len(line)-i]
				}
				break
			}
		}
		return fmt.Sprintf("%s… (%d bytes)", legible(string(line)), size)
	}
	return legible(string(line))
}

// legible returns text with what a terminal would not show as it is
// escaped as Go writes it: control characters (\t, \r, \x1b, \u0085) and
// bytes that are not UTF-8 (\xff). The rest, quotes and backslashes
// included, is left as it is, so that a JSON line reads as it was sent.
func legible(text string) string {
	var b strings.Builder
	for len(text) > 0 {
		r, n := utf8.DecodeRuneInString(text)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, text[0])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteString(text[:n])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		text = text[n:]
	}
	return b.String()
}

// inputTail passes the client's input through, keeping the first
// maxShown bytes of the line being read, and tells at the end of the
// input how long the line left unterminated is.
type inputTail struct {
	r io.Reader

	mu    sync.Mutex
	head  []byte // the start of the current line
	size  int64  // the bytes of the current line read so far
	ended bool   // a Read returned an error: io.EOF, say
}

// Read reads r, keeping the start of the line in progress.
func (t *inputTail) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	t.mu.Lock()
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		t.head, t.size, b = t.head[:0], 0, b[i+1:]
	}
	if room := maxShown - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, len(b))]...)
	}
	t.size += int64(len(b))
	if err != nil {
		t.ended = true
	}
	t.mu.Unlock()
	return n, err
}

// start returns a copy of the start of the line in progress.
func (t *inputTail) start() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.head)
}

// unterminated returns the start and the size of the line that the
// input ended without an LF; size is 0 when there is none, or when the
// input has not ended.
func (t *inputTail) unterminated() ([]byte, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		return nil, 0
	}
	return bytes.Clone(t.head), t.size
}
