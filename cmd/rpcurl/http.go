package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/linerpc/linerpc/rpc"
)

// dialHTTP returns a started Conn whose messages go to url, one HTTP POST
// each, and its stream, whose end ends the exchange once the Conn is
// closed (after it, the Conn's Wait returns).
//
// It is rpcurl's own adapter until rpc/transport has an HTTP client
// (transport.DialHTTP), which it is to be replaced with: a message is
// POSTed as the body, with Content-Type application/json and the headers
// of -H; a 2xx answer with an empty body (a notification's) brings
// nothing back; any answer whose body is JSON (also with a 4xx or 5xx
// status, as servers answer errors) is read by the Conn as one message;
// any other ends the connection with an error that shows the status and
// the start of the body.
func dialHTTP(url string, header http.Header, opts *rpc.Options) (*rpc.Conn, *httpStream) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	h := &httpStream{url: url, header: header, ctx: ctx, pw: pw, client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	o := *opts
	o.Framing = rpc.NewlineFraming
	h.cancel, h.pr = cancel, pr
	conn := rpc.NewConn(pr, h, &o)
	conn.Start()
	return conn, h
}

// flush waits until the POSTs of what the Conn has written are done, or
// ctx ends, and returns the error of the first that failed: a
// notification's POST has no other way to report it.
func (h *httpStream) flush(ctx context.Context) error {
	h.mu.Lock()
	last := h.last
	h.mu.Unlock()
	if last != nil {
		select {
		case <-last:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// end ends the exchange once the Conn is closed: the POSTs in flight are
// cancelled, the Conn's reading ends (its Wait can return), and the idle
// connections are closed.
func (h *httpStream) end() {
	h.cancel()
	h.pr.Close()
	h.pw.Close()
	h.wg.Wait()
	h.client.CloseIdleConnections()
}

// httpStream is the Conn's writer: each frame it writes (a line) is
// POSTed, and each answer's body written to the Conn's reader as a line.
type httpStream struct {
	url    string
	header http.Header
	ctx    context.Context
	client *http.Client
	pw     *io.PipeWriter
	cancel context.CancelFunc
	pr     *io.PipeReader
	wg     sync.WaitGroup // the posts in flight
	failed atomic.Bool    // a post failed: the connection is over

	mu   sync.Mutex
	last chan struct{} // closed once the last Write's posts are done
	err  error         // the first post that failed
}

// Write posts each line of p, in order, on a goroutine of its own, so
// that the Conn's writer does not wait for the server's answers (nor a
// caller that writes its own frame for the answer it is to read).
func (h *httpStream) Write(p []byte) (int, error) {
	var frames [][]byte
	for rest := p; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte{'\n'})
		if len(bytes.TrimSpace(line)) > 0 {
			frames = append(frames, bytes.Clone(line))
		}
		rest = after
	}
	// The Conn writes from one goroutine at a time: each Write's posts
	// follow the previous Write's.
	h.mu.Lock()
	prev, done := h.last, make(chan struct{})
	h.last = done
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		for _, f := range frames {
			if h.failed.Load() {
				return
			}
			if err := h.post(f); err != nil {
				h.mu.Lock()
				if h.err == nil {
					h.err = err
				}
				h.mu.Unlock()
				h.failed.Store(true)
				h.pw.CloseWithError(err)
				return
			}
		}
	}()
	return len(p), nil
}

// post sends one message and hands the answer to the Conn.
func (h *httpStream) post(body []byte) error {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for name, values := range h.header {
		if name == "Host" && len(values) > 0 {
			req.Host = values[0]
			continue
		}
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, rpc.DefaultMaxFrameSize+1))
	if err != nil {
		return fmt.Errorf("POST %s: reading the answer: %w", h.url, err)
	}
	answer = bytes.TrimSpace(answer)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if len(answer) == 0 && ok {
		return nil
	}
	var line bytes.Buffer
	if json.Compact(&line, answer) != nil {
		excerpt := string(answer)
		if len(excerpt) > 200 {
			excerpt = excerpt[:200] + "..."
		}
		excerpt = strings.TrimSpace(excerpt)
		if excerpt == "" {
			return fmt.Errorf("POST %s: HTTP %s", h.url, resp.Status)
		}
		return fmt.Errorf("POST %s: HTTP %s, not JSON: %q", h.url, resp.Status, excerpt)
	}
	line.WriteByte('\n')
	_, err = h.pw.Write(line.Bytes())
	return err
}
