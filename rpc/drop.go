package rpc

import (
	"log/slog"
	"strconv"
)

// Drop describes a frame that a Conn did not serve: ignored, or answered
// with an error when Reply says so.
type Drop struct {
	Reason DropReason
	// Line is the trimmed line. It is valid only during the OnDrop call,
	// and nil for DropOversize and DropUnterminated.
	Line []byte
	// Size is the length of the line as read, in bytes, LF excluded.
	Size int64
	// Method names the method of a request or notification dropped for
	// its params, for want of a handler, or for Shutdown.
	Method string
	// Err is the parse or decoding error behind the drop, if any.
	Err error
	// Reply is the error the peer was answered with, when it was told:
	// CodeInvalidParams for a request whose params do not decode, and,
	// under Options.AnswerInvalid, CodeParseError or CodeInvalidRequest
	// with a null id for a frame that is not valid JSON-RPC. Nil when the
	// frame went unanswered.
	Reply *Error
}

// DropReason says why a line was ignored.
type DropReason uint8

// The reasons a line is dropped.
const (
	// DropMalformed: the line is not exactly one valid JSON value.
	DropMalformed DropReason = iota + 1
	// DropNotObject: the frame is JSON but not an object. Without
	// Options.Batches, that includes every array but one of responses only
	// (the answer to a Batch of this side's); with it, an array inside a
	// batch.
	DropNotObject
	// DropUnclassified: an object with neither a string or number id nor a
	// string method; under Options.AnswerInvalid, an object that JSON-RPC
	// 2.0 makes neither a request, a notification nor a response (see
	// there).
	DropUnclassified
	// DropOversize: the line is longer than MaxFrameSize; it was skipped
	// without being held in memory.
	DropOversize
	// DropTooDeep: the line nests arrays and objects deeper than MaxDepth.
	DropTooDeep
	// DropUnterminated: the input ended after bytes that no LF terminated.
	DropUnterminated
	// DropUnmatchedResponse: a response whose id matches no pending call
	// (unknown, already settled, or abandoned by its context).
	DropUnmatchedResponse
	// DropUnhandledNotification: a notification with no handler.
	DropUnhandledNotification
	// DropInvalidParams: a request or notification whose params do not
	// decode into the handler's type (a request is answered
	// CodeInvalidParams; Err has the decoder's error, which the answer
	// does not carry), or that Options.CheckParams refused (a request is
	// answered as CheckParams says; Err has its error), or a cancel
	// notification whose params do not parse.
	DropInvalidParams
	// DropShutdown: a request or a notification read after Shutdown
	// began; it is not served.
	DropShutdown
	// DropUnmatchedCancel: a cancel notification (Options.Cancellation)
	// naming no request that is running or waiting: unknown, or finished.
	DropUnmatchedCancel
	// DropBadHeader (ContentLengthFraming): a header block that is not
	// one (a line that is not "Name: value", a missing, negative,
	// non-numeric or repeated Content-Length, more than
	// MaxHeaderBytes); it was discarded with what followed it, up to
	// the next "Content-Length". Err says what was wrong, Size counts the
	// bytes discarded, Line holds the first KiB of them.
	DropBadHeader
)

var dropReasonNames = [...]string{
	DropMalformed:             "malformed JSON",
	DropNotObject:             "not a JSON object",
	DropUnclassified:          "neither request, response nor notification",
	DropOversize:              "line longer than the maximum frame size",
	DropTooDeep:               "nesting deeper than the maximum depth",
	DropUnterminated:          "unterminated line at end of input",
	DropUnmatchedResponse:     "response to no pending call",
	DropUnhandledNotification: "notification without a handler",
	DropInvalidParams:         "params do not decode",
	DropShutdown:              "request or notification after shutdown began",
	DropUnmatchedCancel:       "cancellation of no running request",
	DropBadHeader:             "malformed header block",
}

// String describes the reason in a few words.
func (r DropReason) String() string {
	if int(r) < len(dropReasonNames) && dropReasonNames[r] != "" {
		return dropReasonNames[r]
	}
	return "unknown drop reason"
}

// LogValue reports a Drop to log/slog as what it means: the reason, the
// size, the method and the error when there are ones, and the start of the
// line as text.
func (d Drop) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("reason", d.Reason.String()), slog.Int64("size", d.Size))
	if d.Method != "" {
		attrs = append(attrs, slog.String("method", d.Method))
	}
	if d.Reply != nil {
		attrs = append(attrs, slog.Int64("answered", int64(d.Reply.Code)))
	}
	if d.Err != nil {
		attrs = append(attrs, slog.Any("error", d.Err))
	}
	if d.Line != nil {
		attrs = append(attrs, slog.String("line", excerpt(d.Line)))
	}
	return slog.GroupValue(attrs...)
}

// String describes a Drop in one line, as LogValue does: "rpc: dropped a
// frame (reason)…" for a frame left unanswered, "rpc: answered a frame
// with error CODE (reason)…" for one refused with Reply.
func (d Drop) String() string {
	s := "rpc: dropped a frame (" + d.Reason.String() + ")"
	if d.Reply != nil {
		s = "rpc: answered a frame with error " + strconv.Itoa(int(d.Reply.Code)) + " (" + d.Reason.String() + ")"
	}
	if d.Method != "" {
		s += " of method " + d.Method
	}
	if d.Err != nil {
		s += ": " + d.Err.Error()
	}
	if d.Line != nil {
		s += ": " + excerpt(d.Line)
	}
	return s
}

// maxExcerpt bounds the part of a dropped line a log shows.
const maxExcerpt = 200

// excerpt returns the start of line as text, marked when it was cut.
func excerpt(line []byte) string {
	if len(line) <= maxExcerpt {
		return string(line)
	}
	return string(line[:maxExcerpt]) + "…"
}

// refuse reports the frame d describes, which is not valid JSON-RPC, and
// under Options.AnswerInvalid answers it with e and a null id. (A frame
// that parse reads is answered through dispatch, as msgAnswer: this is
// for the framer's skipped frames and for an array with batches off.)
func (c *Conn) refuse(d Drop, e *Error) {
	if c.rd.answerInvalid {
		d.Reply = e
	}
	c.drop(d)
	if d.Reply != nil {
		c.reply(c.errorFrame(nullID, "", d.Reply), fromReadLoop)
	}
}

// drop reports an ignored frame to the hook and the logger.
func (c *Conn) drop(d Drop) {
	if c.onDrop != nil {
		if d.Reply != nil {
			r := *d.Reply // the hook's own: the answers are shared values
			d.Reply = &r
		}
		c.onDrop(d)
	}
	if c.log != nil {
		attrs := []slog.Attr{slog.String("reason", d.Reason.String()), slog.Int64("size", d.Size)}
		if d.Method != "" {
			attrs = append(attrs, slog.String("method", d.Method))
		}
		if d.Err != nil {
			attrs = append(attrs, slog.Any("error", d.Err))
		}
		msg := "rpc: line dropped"
		if d.Reply != nil {
			attrs = append(attrs, slog.Int64("answered", int64(d.Reply.Code)))
			msg = "rpc: line answered with an error"
		}
		c.log.LogAttrs(c.ctx, slog.LevelDebug, msg, attrs...)
	}
}
