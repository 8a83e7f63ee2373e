package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/linerpc/linerpc/openrpc"
)

// The verbs.
const (
	verbList     = "list"
	verbDescribe = "describe"
	verbCall     = "call"
	verbNotify   = "notify"
)

// The framings of --framing.
const (
	framingAuto          = "auto"
	framingNewline       = "newline"
	framingContentLength = "content-length"
)

// options are the parsed command line.
type options struct {
	framing    string
	docPath    string
	noValidate bool
	json       bool
	compact    bool
	timeout    time.Duration
	headers    stringList
	verbose    bool

	target target
	verb   string
	method string          // describe (may be empty), call, notify
	params json.RawMessage // call, notify; nil: no params member

	doc *document // from --doc, once loaded
}

// target is where the server is.
type target struct {
	kind    string   // "tcp", "unix", "http" (http and https), "exec"
	address string   // tcp: HOST:PORT; unix: PATH; http: the URL
	argv    []string // exec: the command line
	header  http.Header
}

// String names the target as the user wrote it.
func (t target) String() string {
	switch t.kind {
	case "exec":
		return strings.Join(t.argv, " ")
	case "http":
		return t.address
	}
	return t.kind + ":" + t.address
}

// parse parses args: flags anywhere before "--", the positionals, and the
// child's command line after "--". Every error is a usage error, found
// before anything is started; PARAMS are read (from stdin for '-') and
// checked to be JSON here, and --doc loaded.
func parse(e *env, args []string) (*options, error) {
	var argv []string
	dashes := false
	for i, a := range args {
		if a == "--" {
			args, argv, dashes = args[:i], args[i+1:], true
			break
		}
	}
	o := &options{}
	fs := newFlagSet()
	fs.StringVar(&o.framing, "framing", framingAuto, "")
	fs.StringVar(&o.docPath, "doc", "", "")
	fs.BoolVar(&o.noValidate, "no-validate", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.compact, "compact", false, "")
	fs.DurationVar(&o.timeout, "timeout", 0, "")
	fs.Var(&o.headers, "H", "")
	fs.Var(&o.headers, "header", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	pos, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(e.stdout, usageText)
		return nil, errHelpShown
	case err != nil:
		return nil, twoDashes(err)
	}
	var set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// The target: the command after "--", or the first positional.
	if dashes {
		if len(argv) == 0 {
			return nil, errors.New("missing the server's command after '--' (rpcurl VERB ARGS... -- CMD [ARGS...])")
		}
		if len(pos) > 0 && !isVerb(pos[0]) && looksLikeTarget(pos[0]) {
			return nil, fmt.Errorf("both a TARGET (%s) and a command after '--': give one", pos[0])
		}
		o.target = target{kind: "exec", argv: argv}
	} else {
		if len(pos) == 0 || isVerb(pos[0]) {
			return nil, errors.New("missing TARGET: tcp:HOST:PORT, unix:PATH, http(s)://URL, or '-- CMD [ARGS...]' last")
		}
		t, err := parseTarget(pos[0])
		if err != nil {
			return nil, err
		}
		o.target = t
		pos = pos[1:]
	}

	// The verb and its arguments.
	if len(pos) == 0 {
		return nil, errors.New("missing VERB: list, describe, call or notify")
	}
	o.verb, pos = pos[0], pos[1:]
	switch o.verb {
	case verbList:
		if len(pos) > 0 {
			return nil, fmt.Errorf("list takes no arguments (%q given)", pos[0])
		}
	case verbDescribe:
		if len(pos) > 1 {
			return nil, fmt.Errorf("describe takes one METHOD at most (%q given after %q)", pos[1], pos[0])
		}
		if len(pos) == 1 {
			o.method = pos[0]
		}
	case verbCall, verbNotify:
		if len(pos) == 0 {
			return nil, fmt.Errorf("%s needs a METHOD", o.verb)
		}
		if len(pos) > 2 {
			return nil, fmt.Errorf("%s takes METHOD and PARAMS (%q given after them; quote PARAMS as one argument)", o.verb, pos[2])
		}
		o.method = pos[0]
		if o.method == "" {
			return nil, errors.New("METHOD must not be empty")
		}
		if len(pos) == 2 {
			if o.params, err = readParams(e, pos[1]); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown verb %q: want list, describe, call or notify", o.verb)
	}

	// Flags that the verb or the target does not take.
	switch o.framing {
	case framingAuto, framingNewline, framingContentLength:
	default:
		return nil, fmt.Errorf("--framing must be auto, newline or content-length, not %q", o.framing)
	}
	switch {
	case set["framing"] && o.target.kind == "http" && o.framing != framingAuto:
		return nil, errors.New("--framing does not apply to http and https targets (one message per request)")
	case len(o.headers) > 0 && o.target.kind != "http":
		return nil, errors.New("-H applies to http and https targets only")
	case o.compact && o.verb != verbCall:
		return nil, errors.New("--compact applies to call only")
	case o.json && o.verb != verbList && o.verb != verbDescribe:
		return nil, errors.New("--json applies to list and describe only")
	case o.noValidate && o.verb != verbCall && o.verb != verbNotify:
		return nil, errors.New("--no-validate applies to call and notify only")
	case set["doc"] && o.docPath == "":
		return nil, errors.New("--doc must not be empty; leave it out to ask the server (rpc.discover)")
	case o.timeout < 0:
		return nil, fmt.Errorf("--timeout must not be negative, not %s; leave it out for no limit", o.timeout)
	}
	if o.target.kind == "http" {
		h, err := parseHeaders(o.headers)
		if err != nil {
			return nil, err
		}
		o.target.header = h
	}
	if o.docPath != "" {
		if o.doc, err = loadDoc(o.docPath); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func isVerb(s string) bool {
	switch s {
	case verbList, verbDescribe, verbCall, verbNotify:
		return true
	}
	return false
}

// looksLikeTarget reports whether s is written as a TARGET is.
func looksLikeTarget(s string) bool {
	for _, p := range []string{"tcp:", "unix:", "http://", "https://"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// parseTarget reads a TARGET.
func parseTarget(s string) (target, error) {
	want := "want tcp:HOST:PORT, unix:PATH, http(s)://URL, or '-- CMD [ARGS...]' last"
	switch {
	case strings.HasPrefix(s, "tcp:"):
		addr := strings.TrimPrefix(s, "tcp:")
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return target{}, fmt.Errorf("TARGET %q: want tcp:HOST:PORT", s)
		}
		return target{kind: "tcp", address: addr}, nil
	case strings.HasPrefix(s, "unix:"):
		path := strings.TrimPrefix(s, "unix:")
		if path == "" {
			return target{}, fmt.Errorf("TARGET %q: want unix:PATH", s)
		}
		return target{kind: "unix", address: path}, nil
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return target{}, fmt.Errorf("TARGET %q: not a URL with a host", s)
		}
		return target{kind: "http", address: s}, nil
	}
	return target{}, fmt.Errorf("unknown TARGET %q: %s", s, want)
}

// parseHeaders reads the -H flags, each "Name: value".
func parseHeaders(hs []string) (http.Header, error) {
	h := http.Header{}
	for _, line := range hs {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("-H %q: want 'Name: value'", line)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

// readParams reads PARAMS: the argument, or stdin for '-', which must be
// one JSON value.
func readParams(e *env, arg string) (json.RawMessage, error) {
	b, where := []byte(arg), "PARAMS"
	if arg == "-" {
		var err error
		if b, err = io.ReadAll(e.stdin); err != nil {
			return nil, fmt.Errorf("reading PARAMS from stdin: %w", err)
		}
		where = "PARAMS on stdin"
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: empty; leave PARAMS out to send no params member", where)
	}
	if err := checkJSON(b); err != nil {
		return nil, fmt.Errorf("%s: not JSON: %v", where, err)
	}
	// Compact, as newline framing needs them on one line.
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("%s: not JSON: %v", where, err)
	}
	return json.RawMessage(compact.Bytes()), nil
}

// checkJSON returns why b is not one JSON value, with the offset of the
// fault, or nil.
func checkJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%v (at byte %d)", se, se.Offset)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("unexpected end of JSON input")
		}
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// document is an OpenRPC document as read, with its JSON as it came, for
// --json to show it whole (members that openrpc.Document does not name
// included).
type document struct {
	*openrpc.Document
	raw json.RawMessage
}

// loadDoc reads an OpenRPC document from path.
func loadDoc(path string) (*document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--doc: %w", err)
	}
	doc, err := parseDoc(b)
	if err != nil {
		return nil, fmt.Errorf("--doc %s: %w", path, err)
	}
	return doc, nil
}

// parseDoc reads an OpenRPC document: a JSON object with an openrpc
// member and a methods array.
func parseDoc(b []byte) (*document, error) {
	if err := checkJSON(b); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	var doc openrpc.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("not an OpenRPC document: %v", err)
	}
	if doc.OpenRPC == "" || doc.Methods == nil {
		return nil, errors.New("not an OpenRPC document (it needs an openrpc member and a methods array)")
	}
	return &document{Document: &doc, raw: bytes.Clone(b)}, nil
}
