package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gojson "github.com/goccy/go-json"
)

// The pipelined floor: the floor's server, and a client with the least
// machinery that lets calls overlap: requests are written under a mutex, a
// reader goroutine reads the responses and hands each to its caller
// through a channel found by id. Beside the floor, whose callers take
// turns writing a request and reading its response themselves (lock-step,
// no goroutine hand-off), it shows what the hand-off of a response from a
// reading goroutine to its caller costs, which every concurrent JSON-RPC
// client pays.
var floorPipelinedContender = &contender{
	name:  "floor-pipelined",
	serve: startFloorServer,
	dial:  startFloorPipelinedClient,
}

type floorPipelinedClient struct {
	out *floorWriter

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan floorResponseIn
	err     error
}

func startFloorPipelinedClient(rw *end, h *handlers) client {
	if h.event != nil {
		return startFloorClient(rw, h) // a stream of events has no calls to pipeline
	}
	c := &floorPipelinedClient{out: &floorWriter{w: rw}, waiting: map[uint64]chan floorResponseIn{}}
	in := newLineReader(rw, floorMaxFrame)
	go func() {
		for {
			line, err := in.next()
			if err != nil {
				c.mu.Lock()
				c.err = errors.Join(errFloorClosed, err)
				for id, ch := range c.waiting {
					close(ch)
					delete(c.waiting, id)
				}
				c.mu.Unlock()
				return
			}
			var resp floorResponseIn
			if gojson.UnmarshalOf(line, &resp) != nil {
				continue
			}
			c.mu.Lock()
			ch := c.waiting[resp.ID]
			delete(c.waiting, resp.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- resp
			}
		}
	}()
	return c
}

func floorPipelinedCall[P any](c *floorPipelinedClient, method string, p *P) (Reply, error) {
	ch := make(chan floorResponseIn, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return Reply{}, c.err
	}
	c.nextID++
	id := c.nextID
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := floorWrite(c.out, floorRequest[*P]{JSONRPC: "2.0", ID: id, Method: method, Params: p}); err != nil {
		return Reply{}, err
	}
	resp, ok := <-ch
	switch {
	case !ok:
		return Reply{}, errFloorClosed
	case resp.Error != nil:
		return Reply{}, resp.Error
	case resp.ID != id:
		return Reply{}, fmt.Errorf("floor: response %d to call %d", resp.ID, id)
	}
	return resp.Result, nil
}

func (c *floorPipelinedClient) callPrompt(_ context.Context, p *Prompt) (Reply, error) {
	return floorPipelinedCall(c, methodPrompt, p)
}

func (c *floorPipelinedClient) callBlob(_ context.Context, p *Blob) (Reply, error) {
	return floorPipelinedCall(c, methodBlob, p)
}

func (c *floorPipelinedClient) close() {}
