package rpc

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/goccy/go-json"
	"github.com/goccy/go-json/jsontext"
	jsonv2 "github.com/goccy/go-json/v2"

	"github.com/linerpc/linerpc/internal/wire"
)

// frame is a pooled buffer in which one outgoing frame is assembled, so that
// it can be written with a single Write: the room the framer asked for
// before the body (see framer), the body, and what the framer put around
// it once sealed.
type frame struct {
	b   []byte
	off int    // where the body begins: the framer's room before it (the framing's header, once sealed)
	at  int    // where the body begins, once sealed
	n   int    // the body's length, once sealed
	seq uint64 // the number it was queued with (see Conn.withdraw)
	// unsealed: sealed before DetectFraming chose, it waits for the
	// choice to be delimited (see sendWith).
	unsealed bool
}

// newFrame returns an empty frame, with the room the framer needs before
// the body.
func (c *Conn) newFrame() *frame {
	f := getFrame()
	f.off = c.framer.headroom()
	f.b = f.b[:f.off]
	return f
}

// seal ends the body of f, an object, and lets the framer delimit it.
func (c *Conn) seal(f *frame) { c.sealWith(f, '}') }

// sealWith ends the body of f with end, and lets the framer delimit it.
func (c *Conn) sealWith(f *frame, end byte) {
	f.b = append(f.b, end)
	f.at, f.n = f.off, len(f.b)-f.off
	c.framer.seal(f)
}

// body returns the body of the sealed frame f.
func (f *frame) body() []byte { return f.b[f.at : f.at+f.n] }

// size returns the length of the body, which MaxFrameSize bounds.
func (f *frame) size() int { return f.n }

// Write appends p to the frame; it lets the go-json Encoder write into it.
func (f *frame) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

var framePool = sync.Pool{New: func() any { return &frame{b: make([]byte, 0, 512)} }}

// encodeOptions make go-json encode as encoding/json does, except that
// '<', '>' and '&' are written as they are (as JSON.stringify writes them)
// and that MarshalJSON methods with pointer receivers are called on values
// too, so a payload encodes the same whether it is passed by value or not.
var encodeOptions = jsonv2.JoinOptions(
	json.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false),
	json.CallMethodsWithLegacySemantics(false),
)

// maxPooledFrame is the largest buffer returned to the pool, so that a
// stream of large frames reuses its buffers; a larger one is left to the
// garbage collector, so that one huge frame does not pin memory. (The pool
// itself lets go of what stays unused across garbage collections.)
const maxPooledFrame = 4 << 20

func getFrame() *frame {
	f := framePool.Get().(*frame)
	f.b = f.b[:0]
	f.unsealed = false
	return f
}

func putFrame(f *frame) {
	if f != nil && cap(f.b) <= maxPooledFrame {
		framePool.Put(f)
	}
}

// appendValue appends the compact JSON encoding of v to f. Taking v by its
// type, rather than as an interface, saves an allocation per frame. A panic
// in a MarshalJSON method (or in the encoder) is contained and returned as
// an error, as it is when decoding.
func appendValue[T any](f *frame, v T) (err error) {
	n := len(f.b)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("encoder panic: %v", p)
		}
		if err != nil {
			f.b = f.b[:n]
		}
	}()
	return jsonv2.MarshalWriteOf(f, v, encodeOptions)
}

func (f *frame) raw(s string) { f.b = append(f.b, s...) }

// request starts a request frame: {"jsonrpc":"2.0","id":ID,"method":NAME
func (f *frame) request(id uint64, method string) {
	f.b = append(f.b, `{"jsonrpc":"2.0","id":`...)
	f.b = strconv.AppendUint(f.b, id, 10)
	f.b = append(f.b, `,"method":`...)
	f.b = wire.AppendJSString(f.b, method)
}

// notification starts a notification frame: {"jsonrpc":"2.0","method":NAME
func (f *frame) notification(method string) {
	f.b = append(f.b, `{"jsonrpc":"2.0","method":`...)
	f.b = wire.AppendJSString(f.b, method)
}

// response starts a response frame: {"jsonrpc":"2.0","id":ID
func (f *frame) response(id []byte) {
	f.b = append(f.b, `{"jsonrpc":"2.0","id":`...)
	f.b = append(f.b, id...)
}

// errorObject appends ,"error":{...} for e. Data that is not valid JSON
// is left out, and the error says why.
func (f *frame) errorObject(e *Error) (err error) {
	f.b = append(f.b, `,"error":{`...)
	if !e.CodeMissing {
		f.b = append(f.b, `"code":`...)
		f.b = strconv.AppendInt(f.b, int64(e.Code), 10)
		f.b = append(f.b, ',')
	}
	f.b = append(f.b, `"message":`...)
	f.b = wire.AppendJSString(f.b, e.Message)
	if len(e.Data) > 0 {
		n := len(f.b)
		f.b = append(f.b, `,"data":`...)
		if err = appendValue(f, e.Data); err != nil {
			f.b = f.b[:n]
		}
	}
	f.b = append(f.b, '}')
	return err
}
