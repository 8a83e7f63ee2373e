package bench

import (
	"io"

	"github.com/linerpc/linerpc/rpc"
	lsp "go.lsp.dev/jsonrpc2"
	xj "golang.org/x/exp/jsonrpc2"
)

// The framing suite (framing_test.go): the workloads of calls and
// notifications with Content-Length framing (framing=header: the base
// protocol of LSP and DAP) beside newline framing (framing=newline), for
// the contenders that speak both:
//
//   - linerpc: Options.Framing = rpc.ContentLengthFraming, or the default
//     rpc.NewlineFraming;
//   - lspdev, lspdev-gojson: go.lsp.dev/jsonrpc2's NewHeaderStream (its
//     NewStream), or NewNDJSONStream as in the main suite;
//   - xexp: golang.org/x/exp/jsonrpc2's HeaderFramer, the package's own,
//     or lineFramer as in the main suite.
//
// The floor (a line reader), jrpc2 and sourcegraph are not in this
// suite.

// framings are the values of the framing= key.
var framings = []string{"newline", "header"}

// peer is an end of a connection that serves and calls: every end of the
// framing suite is both.
type peer interface {
	server
	client
}

// framedLib is a contender of the framing suite: start makes an end on rw
// that speaks the framing ("newline" or "header").
type framedLib struct {
	name  string
	start func(rw *end, h *handlers, framing string) peer
}

var framedLibs = []*framedLib{
	{"linerpc", func(rw *end, h *handlers, framing string) peer {
		f := rpc.NewlineFraming
		if framing == "header" {
			f = rpc.ContentLengthFraming
		}
		return startLinerpcFraming(rw, h, f)
	}},
	{"lspdev", func(rw *end, h *handlers, framing string) peer {
		return startLspdevStream(rw, h, nil, lspdevStream(framing))
	}},
	{"lspdev-gojson", func(rw *end, h *handlers, framing string) peer {
		return startLspdevStream(rw, h, goJSONCodec{}, lspdevStream(framing))
	}},
	{"xexp", func(rw *end, h *handlers, framing string) peer {
		var f xj.Framer = lineFramer{}
		if framing == "header" {
			f = xj.HeaderFramer()
		}
		return startXexpFramer(rw, h, f)
	}},
}

func lspdevStream(framing string) func(rw io.ReadWriteCloser) lsp.Stream {
	if framing == "header" {
		return lsp.NewHeaderStream
	}
	return lsp.NewNDJSONStream
}

// connectFramed starts a server of srv on one end of a pipe and a client
// of cl on the other, both speaking the framing.
func connectFramed(kind, framing string, srv, cl *framedLib, h *handlers) (server, client, func()) {
	a, b := newPipe(kind)
	s := srv.start(a, h, framing)
	c := cl.start(b, h, framing)
	return s, c, func() {
		// As contender.connect: the streams end first.
		a.Close()
		b.Close()
		c.close()
		s.close()
	}
}
