package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// The framing probe: with --framing auto, the first request is written
// by rpcurl itself, on the raw stream, as a Content-Length frame whose
// body ends with a newline (Content-Length counting it):
//
//	Content-Length: 61\r\n
//	\r\n
//	{"jsonrpc":"2.0","id":"rpcurl-probe","method":"rpc.discover"}\n
//
// A Content-Length server reads one frame (JSON allows the trailing
// white space). A newline server reads three lines: the header line, not
// JSON, which it drops or answers with an error with a null id; a blank
// line, which means nothing; and the request. Either way the request is
// served, and the first bytes the server writes afterwards (the answer,
// an error for the header line, a notification or a request of its own)
// show its framing: a header name and ':' for Content-Length, a JSON value
// for newline. The rpc.Conn is then made with that framing over the
// stream, those bytes put back in front of it, and it reads the answer to
// the probe as a response to no call of its own, which its OnDrop hands to
// rpcurl (see client.onDrop): the probe's id is a string, which the Conn's
// own numeric ids never are.
//
// The Conn cannot do this itself: with rpc.DetectFraming it decides from
// the peer's first bytes, and holds back what it sends until then, which
// suits a server and not a client, that speaks first.

// probeID is the id of the probe's request, as JSON.
const probeID = `"rpcurl-probe"`

// probeFrame returns the probe's bytes: a request for method with params
// (nil: no params member, which must be compact JSON) framed as above.
func probeFrame(method string, params json.RawMessage) []byte {
	name, _ := json.Marshal(method)
	body := []byte(`{"jsonrpc":"2.0","id":` + probeID + `,"method":`)
	body = append(body, name...)
	if params != nil {
		body = append(body, `,"params":`...)
		body = append(body, params...)
	}
	body = append(body, "}\n"...)
	frame := []byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	return append(frame, body...)
}

// readDeadliner and writeDeadliner are the deadlines of a stream to the
// server, with which a read or a write is interrupted: a net.Conn has
// both, and so do a child's pipes (os.File).
type (
	readDeadliner  interface{ SetReadDeadline(time.Time) error }
	writeDeadliner interface{ SetWriteDeadline(time.Time) error }
)

// maxPeek bounds the bytes read to tell the framing, white space before
// them aside: a header name is short.
const maxPeek = 256

// readFraming reads the first bytes of the server's output until they
// show its framing, as rpc.DetectFraming tells it: after white space, a
// header name followed by ':' means Content-Length, anything else (a JSON
// value) newline. It returns every byte read, which belongs to the Conn.
// ctx interrupts the read; the error is then ctx's.
func readFraming(ctx context.Context, r io.Reader) (rpc.Framing, []byte, error) {
	buf := make([]byte, 0, 4<<10)
	var f rpc.Framing
	var set func(time.Time) error
	if d, ok := r.(readDeadliner); ok {
		set = d.SetReadDeadline
	}
	err := withDeadline(ctx, set, func() error {
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			// White space before the first frame means nothing in either
			// framing: it is let go, so that any amount of it is bounded.
			if ws := len(buf) - len(bytes.TrimLeft(buf, " \t\r\n")); ws > 0 {
				buf = buf[:copy(buf, buf[ws:])]
			}
			if fr, ok := rpc.FramingOf(buf); ok {
				f = fr
				return nil
			}
			if len(buf) >= maxPeek { // no header name is this long
				f = rpc.NewlineFraming
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return f, buf, err
}

// writeAll writes b to w, interrupted by ctx (the error is then ctx's).
func writeAll(ctx context.Context, w io.Writer, b []byte) error {
	var set func(time.Time) error
	if d, ok := w.(writeDeadliner); ok {
		set = d.SetWriteDeadline
	}
	return withDeadline(ctx, set, func() error {
		_, err := w.Write(b)
		return err
	})
}

// withDeadline runs op, which reads or writes a stream whose deadline
// set sets, and interrupts it when ctx ends by setting the deadline in
// the past; it returns ctx's error then. The deadline is cleared after.
// Without set (a stream without a deadline), op is left to end when ctx
// ends by other means.
func withDeadline(ctx context.Context, set func(time.Time) error, op func() error) error {
	if set == nil {
		set = func(time.Time) error { return nil }
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		set(time.Unix(1, 0))
		close(fired)
	})
	err := op()
	if !stop() {
		<-fired
	}
	set(time.Time{})
	if ctx.Err() != nil && (err == nil || errors.Is(err, errDeadline)) {
		return ctx.Err()
	}
	return err
}

// probeReply is the server's answer to the probe.
type probeReply struct {
	result json.RawMessage // nil when the answer is an error
	err    *rpc.Error
}

// parseProbeReply reads line, a response, and reports whether it is the
// answer to the probe.
func parseProbeReply(line []byte) (probeReply, bool) {
	if !bytes.Contains(line, []byte(`rpcurl-probe`)) {
		return probeReply{}, false
	}
	var r struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &r) != nil || string(r.ID) != probeID {
		return probeReply{}, false
	}
	if r.Error != nil && string(r.Error) != "null" {
		return probeReply{err: parseErrorObject(r.Error)}, true
	}
	if r.Result == nil {
		r.Result = json.RawMessage("null")
	}
	return probeReply{result: bytes.Clone(r.Result)}, true
}

// parseErrorObject reads an error object leniently, as rpc does: a code
// that is not an integer is missing, a message that is not a string is
// "JSON-RPC error", data is kept verbatim.
func parseErrorObject(raw json.RawMessage) *rpc.Error {
	e := &rpc.Error{Message: "JSON-RPC error", CodeMissing: true}
	var obj struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return e
	}
	if code, err := strconv.ParseInt(string(obj.Code), 10, 64); err == nil {
		e.Code, e.CodeMissing = rpc.Code(code), false
	}
	var msg string
	if json.Unmarshal(obj.Message, &msg) == nil {
		e.Message = msg
	}
	if obj.Data != nil {
		e.Data = bytes.Clone(obj.Data)
	}
	return e
}
