package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// httpTarget is the exchange with an http or https target: a Conn of
// transport.DialHTTP's, whose messages are each POSTed, through a client
// of rpcurl's own that watches the POSTs.
type httpTarget struct {
	url    string
	client *http.Client
	posts  *postWatch
}

// dialHTTP returns a started Conn whose messages are POSTed to url, with
// the headers of -H (a Host header sets the request's host).
func dialHTTP(url string, header http.Header, opts *rpc.Options) (*rpc.Conn, *httpTarget, error) {
	w := &postWatch{base: http.DefaultTransport.(*http.Transport).Clone(), host: header.Get("Host"), changed: make(chan struct{})}
	header = header.Clone()
	header.Del("Host")
	t := &httpTarget{url: url, client: &http.Client{Transport: w}, posts: w}
	conn, err := transport.DialHTTP(url, &transport.HTTPClientOptions{Options: opts, Client: t.client, Header: header})
	if err != nil {
		return nil, nil, err
	}
	return conn, t, nil
}

// failure turns the error with which DialHTTP's Conn ends a call whose
// POST brought no answer (transport.CodeHTTPError: the POST failed, or
// its response held no answer) into the transport failure it is, and
// returns nil for any other error.
func (t *httpTarget) failure(err *rpc.Error) error {
	if err.Code != transport.CodeHTTPError || err.CodeMissing {
		return nil
	}
	return fmt.Errorf("POST %s: %s", t.url, strings.TrimPrefix(err.Message, "http: "))
}

// delivered waits for the POST of a notification, the next POST after
// the first done ones, to be answered, and returns its failure: a
// notification's POST has nobody to report it, and Close cancels the
// POSTs in flight.
func (t *httpTarget) delivered(ctx context.Context, done int, conn *rpc.Conn) error {
	for {
		t.posts.mu.Lock()
		var outcome *postOutcome
		if len(t.posts.outcomes) > done && t.posts.outcomes[done].over {
			outcome = &t.posts.outcomes[done]
		}
		changed := t.posts.changed
		t.posts.mu.Unlock()
		if outcome != nil {
			return outcome.err
		}
		select {
		case <-changed:
		case <-conn.Done():
			return conn.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// started returns how many POSTs have started.
func (t *httpTarget) started() int {
	t.posts.mu.Lock()
	defer t.posts.mu.Unlock()
	return len(t.posts.outcomes)
}

// end closes the idle connections, once the Conn has ended.
func (t *httpTarget) end() { t.client.CloseIdleConnections() }

// postWatch is the RoundTripper of the POSTs: it notes how each ended,
// in the order they started.
type postWatch struct {
	base *http.Transport
	host string

	mu       sync.Mutex
	outcomes []postOutcome
	changed  chan struct{} // closed and replaced at every change of outcomes
}

type postOutcome struct {
	over bool
	err  error // a failed POST, a status that is not 2xx
}

func (w *postWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	if w.host != "" {
		req = req.Clone(req.Context())
		req.Host = w.host
	}
	w.mu.Lock()
	i := len(w.outcomes)
	w.outcomes = append(w.outcomes, postOutcome{})
	w.mu.Unlock()
	resp, err := w.base.RoundTrip(req)
	var failed error
	switch {
	case err != nil:
		failed = fmt.Errorf("POST %s: %w", req.URL, unwrapOp(err))
	case resp.StatusCode/100 != 2:
		failed = fmt.Errorf("POST %s: %s", req.URL, resp.Status)
	}
	w.mu.Lock()
	w.outcomes[i] = postOutcome{over: true, err: failed}
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	return resp, err
}

func (w *postWatch) CloseIdleConnections() { w.base.CloseIdleConnections() }
