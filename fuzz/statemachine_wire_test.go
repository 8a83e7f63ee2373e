package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/linerpc/linerpc/rpc"
)

// What connMachine sees of its Conn: what the handlers and the calls
// report, the frames the Conn writes, the lines it drops.

// smObserved is what the goroutines of the bubble saw since the last
// check: the handlers that started, the frames written, the calls that
// ended, the lines dropped.
type smObserved struct {
	mu     sync.Mutex
	cmds   map[string]chan smCmd // each handler's commands, by label
	ctxs   map[string]context.Context
	starts []string
	frames []smWire
	ends   []smEnded
	drops  []rpc.DropReason
	split  string // a Write that did not carry whole frames
}

// smCmd is what the test tells a handler to do next.
type smCmd struct {
	kind cmdKind
	n    int64 // the call's number
}

type cmdKind uint8

const (
	cmdReturn cmdKind = iota
	cmdFail
	cmdYield
	cmdCall
)

// smEnded is a call that ended: its number and what it returned.
type smEnded struct {
	n      int64
	err    error
	result int64
}

// smWire is a frame the Conn wrote, read: its key (see smFrame), and what
// it says.
type smWire struct {
	key     string
	id      int64  // a call's
	outcome string // an answer's: "result", or the error's code
}

// started records that the handler label started with ctx, and returns
// its commands.
func (o *smObserved) started(label string, ctx context.Context) chan smCmd {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.starts = append(o.starts, label)
	o.ctxs[label] = ctx
	return o.cmds[label]
}

func (o *smObserved) ended(n int64, err error, result int64) {
	o.mu.Lock()
	o.ends = append(o.ends, smEnded{n, err, result})
	o.mu.Unlock()
}

func (o *smObserved) dropped(d rpc.Drop) {
	o.mu.Lock()
	o.drops = append(o.drops, d.Reason)
	o.mu.Unlock()
}

// wrote records the frames of one Write.
func (o *smObserved) wrote(p []byte) {
	frames, split := readFrames(p)
	o.mu.Lock()
	o.frames = append(o.frames, frames...)
	if split && o.split == "" {
		o.split = fmt.Sprintf("a Write of %q does not end a frame", p)
	}
	o.mu.Unlock()
}

// take returns what was seen since the last take, and forgets it.
func (o *smObserved) take() (starts []string, frames []smWire, ends []smEnded, drops []rpc.DropReason, split string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	starts, frames, ends, drops, split = o.starts, o.frames, o.ends, o.drops, o.split
	o.starts, o.frames, o.ends, o.drops = nil, nil, nil, nil
	return
}

// contextEnded reports whether the context of the handler label has
// ended.
func (o *smObserved) contextEnded(label string) bool {
	o.mu.Lock()
	ctx := o.ctxs[label]
	o.mu.Unlock()
	return ctx.Err() != nil
}

// readFrames reads the frames of a Write, and reports whether it ends
// with a frame cut short.
func readFrames(p []byte) (frames []smWire, split bool) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return frames, true
		}
		frames = append(frames, readFrame(p[:i]))
		p = p[i+1:]
	}
	return frames, false
}

// readFrame reads a frame of the Conn's: the request of a call (method
// "work", its number as params), a cancellation, or an answer.
func readFrame(b []byte) smWire {
	var f struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &f) != nil {
		return smWire{key: fmt.Sprintf("a frame that is not JSON: %q", b)}
	}
	switch f.Method {
	case "work":
		var id, n int64
		if json.Unmarshal(f.ID, &id) != nil || json.Unmarshal(f.Params, &n) != nil {
			break
		}
		return smWire{key: fmt.Sprintf("call %d", n), id: id}
	case "$/cancelRequest":
		var p struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(f.Params, &p) != nil {
			break
		}
		return smWire{key: fmt.Sprintf("cancel %d", p.ID)}
	case "":
		var label string
		if json.Unmarshal(f.ID, &label) != nil {
			break
		}
		w := smWire{key: "answer " + label, outcome: "result"}
		switch {
		case f.Error != nil:
			w.outcome = strconv.Itoa(f.Error.Code)
		case string(f.Result) != strconv.Quote(label):
			w.outcome = "result " + string(f.Result)
		}
		return w
	}
	return smWire{key: fmt.Sprintf("an unexpected frame %s", b)}
}

// gatedWriter passes the Conn's Writes to obs, but while stalled: then
// every Write waits until the output resumes, as with a peer that stopped
// reading, and what it carries is in flight.
type gatedWriter struct {
	obs      *smObserved
	mu       sync.Mutex
	stalled  chan struct{}
	inFlight []byte
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.stalled
	if ch != nil {
		g.inFlight = bytes.Clone(p)
	}
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
	g.obs.wrote(p)
	g.mu.Lock()
	g.inFlight = nil
	g.mu.Unlock()
	return len(p), nil
}

func (g *gatedWriter) stall() {
	g.mu.Lock()
	g.stalled = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedWriter) resume() {
	g.mu.Lock()
	if g.stalled != nil {
		close(g.stalled)
		g.stalled = nil
	}
	g.mu.Unlock()
}

// held returns the frames of the Write the stall holds.
func (g *gatedWriter) held() []smWire {
	g.mu.Lock()
	defer g.mu.Unlock()
	frames, _ := readFrames(g.inFlight)
	return frames
}
