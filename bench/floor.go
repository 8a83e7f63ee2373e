package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	gojson "github.com/goccy/go-json"
	jsonv2 "github.com/goccy/go-json/v2"
)

// The floor: the same frames as the JSON-RPC contenders, with no RPC
// machinery at all. Each frame is a typed envelope encoded with go-json
// (jsonv2.MarshalWriteOf into a reused buffer, compact, no HTML escaping),
// written as one line with one Write, read back with a bufio.Reader line
// reader, decoded with go-json (json.UnmarshalOf) straight into the typed
// envelope of the one method the workload uses, and answered. There is no
// dispatch by name, no id table, no concurrency: the calling side holds a
// mutex across write-request-read-response, so 64 concurrent callers take
// turns (the floor cannot pipeline), and the serving side handles one line
// after the other on one goroutine.
//
// The line reader has a maximum frame size (floorMaxFrame, linerpc's
// default): a longer line is discarded as it is read, so that the floor of
// workload 6 is a bounded reader too. Lines that do not decode are skipped.

const floorMaxFrame = 64 << 20

var floorContender = &contender{
	name:  "floor",
	serve: startFloorServer,
	dial:  startFloorClient,
}

// The envelopes as written, in the members' wire order.
type floorRequest[P any] struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  P      `json:"params"`
}

type floorNotification[P any] struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  P      `json:"params"`
}

type floorResponse struct {
	JSONRPC string      `json:"jsonrpc"`
	ID      uint64      `json:"id"`
	Result  Reply       `json:"result"`
	Error   *floorError `json:"error,omitempty"`
}

type floorError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// The envelopes as read: only the members the floor uses, so that decoding
// allocates nothing beyond the payload (an unknown member is skipped without
// allocating; "jsonrpc" and "method" would each cost a string).
type floorRequestIn[P any] struct {
	ID     uint64 `json:"id"`
	Params P      `json:"params"`
}

type floorNotificationIn[P any] struct {
	Params P `json:"params"`
}

type floorResponseIn struct {
	ID     uint64      `json:"id"`
	Result Reply       `json:"result"`
	Error  *floorError `json:"error"`
}

func (e *floorError) Error() string { return fmt.Sprintf("floor: error %d: %s", e.Code, e.Message) }

// floorWriter encodes a value and writes it as one line with one Write.
type floorWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf appendBuffer
}

type appendBuffer struct{ b []byte }

func (a *appendBuffer) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func floorWrite[T any](fw *floorWriter, v T) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.buf.b = fw.buf.b[:0]
	if err := jsonv2.MarshalWriteOf(&fw.buf, v); err != nil {
		return err
	}
	fw.buf.b = append(fw.buf.b, '\n')
	_, err := fw.w.Write(fw.buf.b)
	if cap(fw.buf.b) > 4<<20 {
		fw.buf.b = nil
	}
	return err
}

// lineReader returns the lines of r without their '\n', skipping lines
// longer than max as it reads them. A returned line is valid until the next
// call.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (l *lineReader) next() ([]byte, error) {
	if cap(l.buf) > 4<<20 {
		l.buf = nil // do not pin the buffer of a large line
	}
	for {
		line, err := l.br.ReadSlice('\n')
		if err == nil {
			return line[:len(line)-1], nil // the common case: no copy
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
		l.buf = append(l.buf[:0], line...)
		over := false
		for err == bufio.ErrBufferFull {
			line, err = l.br.ReadSlice('\n')
			if !over && len(l.buf)+len(line) > l.max+1 {
				over, l.buf = true, nil
			}
			if !over {
				l.buf = grow(l.buf, len(line), l.max+1)
				l.buf = append(l.buf, line...)
			}
		}
		if err != nil {
			return nil, err
		}
		if !over {
			return l.buf[:len(l.buf)-1], nil
		}
	}
}

// grow makes room for n more bytes in b, doubling its capacity (append
// grows large slices by 1.25×, which would allocate about five times the
// final size on the way), up to limit.
func grow(b []byte, n, limit int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := min(max(2*cap(b), len(b)+n), max(limit, len(b)+n))
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

type floorServer struct {
	out *floorWriter
}

func startFloorServer(rw *end, h *handlers) server {
	s := &floorServer{out: &floorWriter{w: rw}}
	lr := newLineReader(rw, floorMaxFrame)
	switch {
	case h.prompt != nil:
		go floorServe(lr, s.out, h.prompt)
	case h.blob != nil:
		go floorServe(lr, s.out, h.blob)
	case h.note != nil:
		// Every line that decodes is the note: the workload sends no other.
		n := new(floorNotificationIn[Prompt])
		go func() {
			for {
				line, err := lr.next()
				if err != nil {
					return
				}
				n.Params = Prompt{}
				if gojson.UnmarshalOf(line, n) == nil {
					h.note(&n.Params)
				}
			}
		}()
	}
	return s
}

// floorServe answers the requests, one line after the other: every line
// with an id is a request for the workload's one method (a line without, the
// oversize notification of workload 6, is skipped).
func floorServe[P any](lr *lineReader, out *floorWriter, handle func(*P) (Reply, error)) {
	req := new(floorRequestIn[P])
	for {
		line, err := lr.next()
		if err != nil {
			return
		}
		*req = floorRequestIn[P]{}
		if gojson.UnmarshalOf(line, req) != nil || req.ID == 0 {
			continue
		}
		resp := floorResponse{JSONRPC: "2.0", ID: req.ID}
		r, err := handle(&req.Params)
		if err != nil {
			resp.Error = &floorError{Code: -32603, Message: err.Error()}
		} else {
			resp.Result = r
		}
		if floorWrite(out, resp) != nil {
			return
		}
	}
}

func (s *floorServer) notifyEvent(_ context.Context, e *Event) error {
	return floorWrite(s.out, floorNotification[*Event]{JSONRPC: "2.0", Method: notifyEvent, Params: e})
}

func (s *floorServer) close() {}

type floorClient struct {
	mu     sync.Mutex // held across a whole round trip
	out    *floorWriter
	in     *lineReader
	nextID uint64
}

func startFloorClient(rw *end, h *handlers) client {
	c := &floorClient{out: &floorWriter{w: rw}, in: newLineReader(rw, floorMaxFrame)}
	if h.event != nil {
		// Every line is an event: the workload sends nothing else.
		n := new(floorNotificationIn[Event])
		go func() {
			for {
				line, err := c.in.next()
				if err != nil {
					return
				}
				n.Params = Event{}
				if gojson.UnmarshalOf(line, n) == nil {
					h.event(&n.Params)
				}
			}
		}()
	}
	return c
}

var errFloorClosed = errors.New("floor: connection ended")

func floorCall[P any](c *floorClient, method string, p *P) (Reply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	if err := floorWrite(c.out, floorRequest[*P]{JSONRPC: "2.0", ID: id, Method: method, Params: p}); err != nil {
		return Reply{}, err
	}
	line, err := c.in.next()
	if err != nil {
		return Reply{}, errors.Join(errFloorClosed, err)
	}
	var resp floorResponseIn
	if err := gojson.UnmarshalOf(line, &resp); err != nil {
		return Reply{}, err
	}
	if resp.Error != nil {
		return Reply{}, resp.Error
	}
	if resp.ID != id {
		return Reply{}, fmt.Errorf("floor: response %d to call %d", resp.ID, id)
	}
	return resp.Result, nil
}

func (c *floorClient) callPrompt(_ context.Context, p *Prompt) (Reply, error) {
	return floorCall(c, methodPrompt, p)
}

func (c *floorClient) callBlob(_ context.Context, p *Blob) (Reply, error) {
	return floorCall(c, methodBlob, p)
}

func (c *floorClient) close() {}
