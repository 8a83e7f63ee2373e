package bench

import "context"

// handlers are what the workloads serve; nil members are not served. The
// server side of a connection serves prompt, blob and note; the client side
// receives event. An adapter routes each by its wire name and decodes the
// params into the typed struct with the contender's own codec before calling
// the handler, and answers requests with the returned result.
//
// Every adapter ignores notifications it has no handler for (the oversize
// frame of workload 6 is one), as a correct program on that library would.
type handlers struct {
	prompt func(*Prompt) (Reply, error) // request "session/prompt"
	blob   func(*Blob) (Reply, error)   // request "blob/put"
	note   func(*Prompt)                // notification "session/note"
	event  func(*Event)                 // notification "session.event" (client side)
}

// server is the serving end of a connection. It can also notify its peer
// (workload 3 streams events server→client).
type server interface {
	notifyEvent(ctx context.Context, e *Event) error
	close()
}

// client is the calling end of a connection. Its methods are safe for
// concurrent use (workload 2).
type client interface {
	callPrompt(ctx context.Context, p *Prompt) (Reply, error)
	callBlob(ctx context.Context, p *Blob) (Reply, error)
	close()
}

// contender is one library (or the floor) under test.
type contender struct {
	// name is the value of the lib= key of the benchmark names.
	name string
	// serve starts the serving end on rw.
	serve func(rw *end, h *handlers) server
	// dial starts the calling end on rw; h.event receives notifications.
	dial func(rw *end, h *handlers) client

	// unordered, when set, says why notifications may be delivered out of
	// order; workload 3 then counts reorderings instead of failing on them.
	unordered string
	// diesOnGarbage, when set, says why a malformed line ends the
	// connection; workload 5 then reports the mixed stream as n/a. The
	// short tests check the claim either way.
	diesOnGarbage string
}

// contenders in the order of the tables: the floor first (the base of the
// ratios), then this library, then the peers.
var contenders = []*contender{
	floorContender,
	floorPipelinedContender,
	linerpcContender,
	lspdevContender,
	lspdevGojsonContender,
	jrpc2Contender,
	sourcegraphContender,
	xexpContender,
}

// connect starts a server on a and a client on b.
func (c *contender) connect(kind string, h *handlers) (server, client, func()) {
	a, b := newPipe(kind)
	s := c.serve(a, h)
	cl := c.dial(b, h)
	return s, cl, func() {
		// The streams end first, so that every read loop sees the end of
		// its input rather than its endpoint stopped under it: jrpc2 v1.3.6
		// crashes when Stop races its read loop answering a malformed line.
		a.Close()
		b.Close()
		cl.close()
		s.close()
	}
}
