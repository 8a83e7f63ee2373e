package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linerpc/linerpc/sdkproto"
)

// isTerminal reports whether w is a character device (a terminal). The
// module has no golang.org/x/term, and ModeCharDevice is all we need to
// tell a terminal from a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// outputStyle decides colour and wrapping: both only on a terminal,
// colour unless --no-color or NO_COLOR (https://no-color.org) says no,
// wrapping at $COLUMNS or 80.
func outputStyle(e *env, noColor bool) (color bool, width int) {
	if !isTerminal(e.stdout) {
		return false, 0
	}
	width = 80
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 10 {
		width = n
	}
	return !noColor && e.getenv("NO_COLOR") == "", width
}

// style is a text attribute, rendered as ANSI SGR only with colour on.
type style string

const (
	plain     style = ""
	dim       style = "2"
	dimItalic style = "2;3"
	bold      style = "1"
	cyan      style = "36"
	green     style = "32"
	red       style = "31"
	yellow    style = "33"
	boldGreen style = "1;32"
	boldRed   style = "1;31"
)

// wrapper writes text with an indent at the start of every line and, when
// width > 0, breaks lines between words so that they fit. It streams: a
// word is written once the blank or newline after it arrives (or on
// endLine), so a partial word never has to be moved to the next line, and
// blanks are held until the next word, so that no line ends with one.
type wrapper struct {
	w      io.Writer
	color  bool
	width  int // 0: no wrapping
	indent int

	started bool  // the indent of the current line is written
	content bool  // and something after it
	col     int   // display columns on the current line, indent included
	soft    bool  // the current line began with a wrap: drop leading blanks
	active  style // the SGR attributes in effect on the terminal

	word      strings.Builder
	wordStyle style
	wordCols  int
	blanks    int // held blanks before the next word
}

// emit writes s in st. Attributes change only when st differs from the
// active ones, so a styled run costs one escape sequence, not one a word.
func (t *wrapper) emit(s string, st style) {
	if s == "" {
		return
	}
	if t.color && st != t.active {
		if t.active != plain {
			io.WriteString(t.w, "\x1b[0m")
		}
		if st != plain {
			io.WriteString(t.w, "\x1b["+string(st)+"m")
		}
		t.active = st
	}
	io.WriteString(t.w, s)
}

// startLine writes the indent when nothing is on the line yet.
func (t *wrapper) startLine() {
	if !t.started {
		io.WriteString(t.w, strings.Repeat(" ", t.indent))
		t.started, t.col = true, t.indent
	}
}

// newline ends the line; attributes are reset first so that they never
// bleed into the indent or into another program's output.
func (t *wrapper) newline(soft bool) {
	if t.active != plain {
		io.WriteString(t.w, "\x1b[0m")
		t.active = plain
	}
	io.WriteString(t.w, "\n")
	t.started, t.content, t.col, t.soft, t.blanks = false, false, 0, soft, 0
}

// flushWord writes the held blanks and the buffered word, first breaking
// the line when the word would not fit.
func (t *wrapper) flushWord() {
	if t.word.Len() == 0 {
		return
	}
	if t.width > 0 && t.content && t.col+t.blanks+t.wordCols > t.width {
		t.newline(true)
	}
	t.startLine()
	if t.blanks > 0 {
		t.emit(strings.Repeat(" ", t.blanks), t.wordStyle)
		t.col += t.blanks
		t.blanks = 0
	}
	t.emit(t.word.String(), t.wordStyle)
	t.col += t.wordCols
	t.content, t.soft = true, false
	t.word.Reset()
	t.wordCols = 0
}

// text writes s in st.
func (t *wrapper) text(s string, st style) {
	if t.width == 0 {
		// No wrapping: write through, tracking only the line start.
		for s != "" {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				t.startLine()
				t.emit(s, st)
				t.col += utf8.RuneCountInString(s)
				t.content = true
				return
			}
			if i > 0 {
				t.startLine()
				t.emit(s[:i], st)
			}
			t.newline(false)
			s = s[i+1:]
		}
		return
	}
	if st != t.wordStyle {
		t.flushWord()
		t.wordStyle = st
	}
	for _, r := range s {
		switch r {
		case '\n':
			t.flushWord()
			t.newline(false)
		case ' ', '\t':
			t.flushWord()
			if t.soft && !t.content {
				continue // no leading blanks on a wrapped line
			}
			t.blanks++
		default:
			t.word.WriteRune(r)
			t.wordCols++
		}
	}
}

// endLine ends the current line, if anything is on it (held blanks are
// dropped).
func (t *wrapper) endLine() {
	t.flushWord()
	if t.started {
		t.newline(false)
	}
	t.blanks = 0
}

// line writes s on a line of its own, cut to the width with an ellipsis
// rather than wrapped: tool lines are summaries.
func (t *wrapper) line(s string, st style) {
	t.endLine()
	limit := 160
	if t.width > 0 {
		limit = t.width - t.indent
	}
	if utf8.RuneCountInString(s) > limit && limit > 1 {
		s = string([]rune(s)[:limit-1]) + "…"
	}
	t.startLine()
	t.emit(s, st)
	t.newline(false)
}

// renderer draws a turn for a human as its notifications arrive: the
// root's text as it streams, reasoning dimmed, tool calls and results as
// one-line summaries, subagent runs indented under their parent, and a
// final line with the turn-end reason and token usage.
type renderer struct {
	out    *wrapper
	root   string
	parent func(child string) (string, bool) // the client's lineage

	session  string                                 // whose output is on the current line
	delta    map[string]sdkproto.ChunkType          // per session: the kind of the last delta
	streamed map[string]map[sdkproto.ChunkType]bool // per session: the kinds of delta since its last assistant/message
	tools    map[string]string                      // call id -> tool name

	reason    *sdkproto.TurnEndReason // of the root's last turn/end
	rootUsage usageSum
	subUsage  usageSum
}

// usageSum adds up the usage of assistant messages.
type usageSum struct {
	in, out, reasoning, cacheRead int64
	n                             int
}

func (u *usageSum) add(t sdkproto.TokenUsage) {
	u.in += t.InputTokens
	u.out += t.OutputTokens
	if t.ReasoningTokens != nil {
		u.reasoning += *t.ReasoningTokens
	}
	if t.CacheReadTokens != nil {
		u.cacheRead += *t.CacheReadTokens
	}
	u.n++
}

func (u usageSum) String() string {
	s := fmt.Sprintf("%d input + %d output tokens", u.in, u.out)
	var extra []string
	if u.reasoning > 0 {
		extra = append(extra, fmt.Sprintf("%d reasoning", u.reasoning))
	}
	if u.cacheRead > 0 {
		extra = append(extra, fmt.Sprintf("%d cached input", u.cacheRead))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func newRenderer(w io.Writer, color bool, width int, root string, parent func(string) (string, bool)) *renderer {
	return &renderer{
		out:  &wrapper{w: w, color: color, width: width},
		root: root, parent: parent,
		delta:    map[string]sdkproto.ChunkType{},
		streamed: map[string]map[sdkproto.ChunkType]bool{},
		tools:    map[string]string{},
	}
}

// depth is how far below the root session s is (0 for the root and for
// sessions outside the tree).
func (r *renderer) depth(s string) int {
	seen := map[string]bool{}
	d := 0
	for s != r.root && !seen[s] {
		seen[s] = true
		p, ok := r.parent(s)
		if !ok {
			return 0
		}
		s, d = p, d+1
	}
	return d
}

// to makes session s the owner of the output: another session's open
// line is ended first, so interleaved sessions never share a line.
func (r *renderer) to(s string, indentDepth int) {
	if r.session != s {
		r.out.endLine()
		r.session = s
		r.delta[s] = ""
	}
	if ind := 2 * indentDepth; ind != r.out.indent {
		r.out.endLine()
		r.out.indent = ind
	}
}

// notification renders one notification of the run.
func (r *renderer) notification(n sdkproto.Notification) {
	switch n.Method {
	case sdkproto.SessionEvent.Name():
		p, err := n.SessionEvent()
		if err != nil || p.CheckEnvelope() != nil {
			return
		}
		r.event(p.SessionID, p.Event)
	case sdkproto.SubagentStarted.Name():
		p, err := n.SubagentStarted()
		if err != nil {
			return
		}
		r.to(p.ParentSessionID, r.depth(p.ParentSessionID))
		r.out.line("↳ subagent "+short(p.ChildSessionID)+" started", yellow)
	case sdkproto.SubagentFinished.Name():
		p, err := n.SubagentFinished()
		if err != nil {
			return
		}
		r.to(p.ParentSessionID, r.depth(p.ParentSessionID))
		st := yellow
		if p.Status != sdkproto.RunOK {
			st = red
		}
		r.out.line(fmt.Sprintf("↳ subagent %s finished: %s (%s)", short(p.ChildSessionID), p.Status, p.StopReason), st)
	}
}

// short abbreviates a session id (children get random UUIDs).
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func (r *renderer) event(session string, ev sdkproto.Event) {
	depth := r.depth(session)
	switch ev.Type {
	case sdkproto.EventAssistantChunk:
		d, err := ev.AssistantChunk()
		if err != nil {
			return
		}
		r.chunk(session, depth, d.Chunk)
	case sdkproto.EventAssistantMessage:
		d, err := ev.AssistantMessage()
		if err != nil {
			return
		}
		r.unstreamed(session, depth, d.Message.Content)
		if session == r.session {
			r.out.endLine()
			r.delta[session] = ""
		}
		if d.Usage != nil {
			if session == r.root {
				r.rootUsage.add(*d.Usage)
			} else {
				r.subUsage.add(*d.Usage)
			}
		}
	case sdkproto.EventToolCall:
		d, err := ev.ToolCall()
		if err != nil {
			return
		}
		r.tools[d.CallID] = d.Name
		r.to(session, depth)
		r.out.line("→ "+d.Name+" "+oneLine(d.Arguments), cyan)
	case sdkproto.EventToolResult:
		d, err := ev.ToolResult()
		if err != nil {
			return
		}
		r.to(session, depth)
		r.out.line(r.toolResult(d))
	case sdkproto.EventTurnEnd:
		d, err := ev.TurnEnd()
		if err != nil || session != r.root {
			return
		}
		r.reason = &d.Reason
	}
}

// toolResult summarises a tool/result: the tool's name and the first
// part of its output.
func (r *renderer) toolResult(d sdkproto.ToolResultData) (string, style) {
	var text string
	failed := d.Error != nil
	var callID string
	for _, b := range d.Message.Content {
		if b.Type == sdkproto.BlockTypeToolResult {
			callID = b.ToolCallID
			text += sdkproto.FinalText(b.Content)
			failed = failed || b.Failed()
		}
	}
	name := r.tools[callID]
	if name == "" {
		name = "tool"
	}
	if failed {
		return "✗ " + name + ": " + oneLine(text), red
	}
	return "← " + name + ": " + oneLine(text), green
}

// oneLine folds text onto one line for a summary.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (r *renderer) chunk(session string, depth int, c sdkproto.StreamChunk) {
	switch c.Type {
	case sdkproto.ChunkTextDelta, sdkproto.ChunkReasoningDelta:
	default:
		return // block boundaries, usage and finish show in other events
	}
	if r.streamed[session] == nil {
		r.streamed[session] = map[sdkproto.ChunkType]bool{}
	}
	r.streamed[session][c.Type] = true
	r.delta[session] = r.deltaText(session, depth, c.Type, c.Text)
}

// deltaText renders text of a delta kind (text or reasoning) for session
// and returns that kind, the session's last one now.
func (r *renderer) deltaText(session string, depth int, kind sdkproto.ChunkType, text string) sdkproto.ChunkType {
	r.to(session, depth)
	// A change between reasoning and text starts a new line; block-end
	// cannot mark it, since the runtime sends every block-end after all
	// the deltas.
	if r.delta[session] != kind {
		r.out.endLine()
		if kind == sdkproto.ChunkReasoningDelta && !r.out.color {
			r.out.text("thinking: ", plain)
		}
		r.delta[session] = kind
	}
	if kind == sdkproto.ChunkReasoningDelta {
		r.out.text(text, dimItalic)
	} else {
		r.out.text(text, plain)
	}
	return kind
}

// unstreamed renders the text and reasoning blocks of an assistant
// message whose kind no delta carried since the session's previous
// message: a runtime that does not stream sends its answer only there.
func (r *renderer) unstreamed(session string, depth int, content []sdkproto.ContentBlock) {
	streamed := r.streamed[session]
	delete(r.streamed, session)
	for _, b := range content {
		var kind sdkproto.ChunkType
		switch b.Type {
		case sdkproto.BlockTypeText:
			kind = sdkproto.ChunkTextDelta
		case sdkproto.BlockTypeReasoning:
			kind = sdkproto.ChunkReasoningDelta
		default:
			continue
		}
		if streamed[kind] || b.Text == "" {
			continue
		}
		r.deltaText(session, depth, kind, b.Text)
	}
}

// finish writes the final line: how the turn ended and the tokens used.
func (r *renderer) finish() {
	r.out.endLine()
	r.out.indent = 0
	kind, st := "no turn/end", boldRed
	if r.reason != nil {
		kind = string(r.reason.Kind)
		if r.reason.Kind == sdkproto.TurnCompleted {
			st = boldGreen
		}
		if e := r.reason.Error; e != nil {
			kind += ": " + e.Message
			if e.Code != "" {
				kind += " (" + e.Code + ")"
			}
		}
		if a := r.reason.Reason; a != nil && a.Kind != "" {
			kind += " (" + a.Kind + ")"
		}
	}
	s := "── turn " + kind
	if r.rootUsage.n > 0 {
		s += " · " + r.rootUsage.String()
	}
	if r.subUsage.n > 0 {
		s += " · subagents " + r.subUsage.String()
	}
	r.out.startLine()
	r.out.emit(s, st)
	r.out.newline(false)
}

// frameWriter prints notifications as JSON-RPC notification frames, one
// per line, params exactly as received (--json).
type frameWriter struct{ w io.Writer }

func (f frameWriter) notification(n sdkproto.Notification) error {
	method, _ := json.Marshal(n.Method)
	_, err := fmt.Fprintf(f.w, `{"jsonrpc":"2.0","method":%s,"params":%s}`+"\n", method, n.Params)
	return err
}
