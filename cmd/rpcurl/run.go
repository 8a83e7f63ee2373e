package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
)

// errTimedOut is the cause of a context ended by --timeout.
var errTimedOut = errors.New("timed out")

// run runs the verb: it reaches the server when it needs to, tears the
// connection down, and reports the outcome.
func (o *options) run(e *env) int {
	e = &env{stdin: e.stdin, stdout: e.stdout, stderr: &lockedWriter{w: e.stderr}, ctx: e.ctx}
	base := e.ctx
	if base == nil {
		base = context.Background()
	}
	ctx := base
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(base, o.timeout, errTimedOut)
		defer cancel()
	}
	var c *client
	err := o.exchange(ctx, e, &c)
	var we *waitError
	if err != nil && !errors.As(err, &we) {
		// Said at once: the teardown that follows may take a while.
		code := o.report(e, base, ctx, c, err)
		if c != nil {
			c.close(true)
		}
		return code
	}
	if c != nil {
		c.close(err == nil || ctx.Err() == nil)
	}
	if err == nil {
		return exitOK
	}
	// Said after the teardown, which tells how a child ended.
	return o.report(e, base, ctx, c, err)
}

// exchange does the verb's part, printing what it shows; *c is set once a
// connection is made, for run to close.
func (o *options) exchange(ctx context.Context, e *env, c **client) error {
	validate := (o.verb == verbCall || o.verb == verbNotify) && !o.noValidate
	var v *validator.Validator
	if o.doc != nil {
		if o.verb == verbList || o.verb == verbDescribe {
			return o.show(e, o.doc) // the file alone: the server is not reached
		}
		if validate {
			var err error
			if v, err = validator.New(o.doc.Document); err != nil {
				return &usageFailure{fmt.Errorf("--doc %s: %w", o.docPath, err)}
			}
			if err := o.check(v); err != nil {
				return err
			}
		}
	}
	if ctx.Err() != nil {
		return &waitError{awaited: "the start", err: ctx.Err()}
	}
	cl, err := connect(ctx, e, o)
	if cl != nil {
		*c = cl
	}
	if err != nil {
		return err
	}
	if o.doc == nil && (validate || o.verb == verbList || o.verb == verbDescribe) {
		doc, err := o.discover(ctx, cl)
		if err != nil {
			var af *answerFailure
			if !errors.As(err, &af) || o.verb == verbList || o.verb == verbDescribe {
				return err
			}
			cl.verbosef("rpc.discover answered error %d (%s): no document; %s %s by name, params not checked", af.err.Code, af.err.Message, o.verb, o.method)
		}
		if doc != nil {
			cl.verbosef("rpc.discover: %s", docSummary(doc.Document))
		}
		switch {
		case o.verb == verbList || o.verb == verbDescribe:
			return o.show(e, doc)
		case doc != nil:
			if v, err = validator.New(doc.Document); err != nil {
				fmt.Fprintf(e.stderr, "rpcurl: the server's document does not compile (%v): params not checked\n", err)
			} else if err := o.check(v); err != nil {
				return err
			}
		}
	}
	switch o.verb {
	case verbCall:
		res, err := cl.request(ctx, o.method, o.params)
		if err != nil {
			return o.answered(o.method, err)
		}
		return o.printResult(e, res)
	case verbNotify:
		if cl.probing { // the framing is told by an answer: rpc.discover's
			if _, err := cl.request(ctx, openrpc.Discover.Name(), nil); err != nil {
				var re *rpc.Error
				if !errors.As(err, &re) {
					return err
				}
			}
		}
		posted := 0
		if cl.http != nil {
			posted = cl.http.started()
		}
		if err := cl.notify(ctx, o.method, o.params); err != nil {
			return err
		}
		if cl.http != nil { // written is not sent: wait for its POST's answer
			if err := cl.http.delivered(ctx, posted, cl.conn); err != nil {
				return &waitError{awaited: "the POST of " + o.method, err: err}
			}
		}
		// The notification is written once the Conn is shut down.
		if err := cl.conn.Shutdown(ctx); err != nil {
			return &waitError{awaited: "the writing of " + o.method, err: err}
		}
		if err := cl.conn.Err(); err != nil && !errors.Is(err, rpc.ErrClosed) && !errors.Is(err, rpc.ErrInputEnded) {
			return &waitError{awaited: "the writing of " + o.method, err: err}
		}
		cl.verbosef("notification %s written", o.method)
	}
	return nil
}

// firstRequest returns the first request exchange sends once connected,
// which connect sends as the framing probe with --framing auto: the
// document's rpc.discover when it is needed (and by notify, which has
// nothing else to tell the framing by), else the call itself.
func (o *options) firstRequest() (string, json.RawMessage) {
	validate := (o.verb == verbCall || o.verb == verbNotify) && !o.noValidate
	if o.verb == verbCall && (o.doc != nil || !validate) {
		return o.method, o.params
	}
	return openrpc.Discover.Name(), nil
}

// discover asks the server for its document. A JSON-RPC error answer is
// returned as an *rpc.Error.
func (o *options) discover(ctx context.Context, c *client) (*document, error) {
	res, err := c.request(ctx, openrpc.Discover.Name(), nil)
	if err != nil {
		return nil, o.answered(openrpc.Discover.Name(), err)
	}
	doc, err := parseDoc(res)
	if err != nil {
		return nil, &protocolFailure{fmt.Errorf("the result of rpc.discover is %v", err)}
	}
	return doc, nil
}

// check checks the params against v, before they are sent.
func (o *options) check(v *validator.Validator) error {
	err := v.Params(o.method, o.params)
	var ve *validator.Error
	if errors.As(err, &ve) {
		return &usageFailure{fmt.Errorf("%s: params refused by the document's schema: %v (--no-validate sends them anyway)", o.method, ve)}
	}
	return err
}

// answered keeps a JSON-RPC error answer with the method it answers.
func (o *options) answered(method string, err error) error {
	var re *rpc.Error
	if errors.As(err, &re) {
		return &answerFailure{method: method, err: re}
	}
	return err
}

// printResult prints a call's result as JSON: indented, or compact.
func (o *options) printResult(e *env, res json.RawMessage) error {
	var buf bytes.Buffer
	var err error
	if o.compact {
		err = json.Compact(&buf, res)
	} else {
		err = json.Indent(&buf, res, "", "  ")
	}
	if err != nil {
		return &protocolFailure{fmt.Errorf("the result of %s is not JSON: %v", o.method, err)}
	}
	buf.WriteByte('\n')
	_, err = e.stdout.Write(buf.Bytes())
	return err
}

// The failures run reports, besides *startError and *waitError.
type (
	// usageFailure: bad input found after parsing (params the schema
	// refuses, a --doc whose schemas do not compile); exit status 2.
	usageFailure struct{ err error }
	// answerFailure: the server answered with an error; exit status 1.
	answerFailure struct {
		method string
		err    *rpc.Error
	}
	// missingFailure: describe of a method the document lacks; exit 1.
	missingFailure struct{ err error }
	// protocolFailure: the server's answer is not what the protocol
	// says; exit status 3.
	protocolFailure struct{ err error }
)

func (f *usageFailure) Error() string    { return f.err.Error() }
func (f *answerFailure) Error() string   { return f.err.Error() }
func (f *missingFailure) Error() string  { return f.err.Error() }
func (f *protocolFailure) Error() string { return f.err.Error() }

// report prints why the command failed and returns its exit status. base
// is the context of Ctrl-C, ctx the command's (with --timeout); c, when
// set, has been closed.
func (o *options) report(e *env, base, ctx context.Context, c *client, err error) int {
	say := func(format string, args ...any) { fmt.Fprintf(e.stderr, "rpcurl: "+format+"\n", args...) }
	var (
		usage    *usageFailure
		answer   *answerFailure
		missing  *missingFailure
		protocol *protocolFailure
		start    *startError
		wait     *waitError
	)
	switch {
	case errors.As(err, &usage):
		say("%v", usage.err)
		return exitUsage
	case errors.As(err, &answer):
		re := answer.err
		code := "error " + fmt.Sprint(int64(re.Code))
		if re.CodeMissing {
			code = "an error without a code"
		}
		say("the server answered %s with %s: %s", answer.method, code, re.Message)
		if re.Data != nil {
			fmt.Fprintf(e.stderr, "  data: %s\n", excerptAll(re.Data))
		}
		if answer.method == openrpc.Discover.Name() {
			fmt.Fprintln(e.stderr, "  (the server does not serve its OpenRPC document: give one with --doc FILE)")
		}
		return exitAnswered
	case errors.As(err, &missing):
		say("%v", missing.err)
		return exitAnswered
	case errors.As(err, &protocol):
		say("%v", protocol.err)
		return exitTransport
	case errors.As(err, &start):
		say("%v", start.err)
		return exitTransport
	case errors.As(err, &wait):
		switch {
		case base.Err() != nil:
			say("interrupted while waiting for %s", wait.awaited)
			return exitInterrupted
		case errors.Is(context.Cause(ctx), errTimedOut):
			say("--timeout %s ran out waiting for %s%s", o.timeout, wait.awaited, c.silence())
			return exitTransport
		case errors.Is(wait.err, errEchoed):
			say("%v", errEchoed)
			return exitTransport
		case c != nil && (c.child != nil || hungUp(wait.err)):
			say("%s", c.hangUp(wait.err, wait.awaited))
			return exitTransport
		}
		say("waiting for %s: %v", wait.awaited, reason(wait.err))
		return exitTransport
	}
	say("%v", err)
	return exitTransport
}

// reason is err without the wrapping of rpc's "reading input".
func reason(err error) error {
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "rpc: reading input: ") {
		return inner
	}
	return err
}

// hungUp reports whether err says the server ended the connection.
func hungUp(err error) bool {
	for _, e := range []error{errHungUp, rpc.ErrInputEnded, io.EOF, io.ErrUnexpectedEOF, syscall.EPIPE, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// excerptAll returns b compacted when it is JSON.
func excerptAll(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		return buf.String()
	}
	return string(b)
}

// lockedWriter serialises the writes of the goroutines that report on
// stderr: the command's, the Conn's handlers and hooks, a child's stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
