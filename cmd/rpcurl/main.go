// Command rpcurl talks to JSON-RPC 2.0 servers from the command line, as
// grpcurl does to gRPC servers: it lists and describes a server's methods
// from its OpenRPC document (rpc.discover, or a file), calls a method with
// params checked against the document, and sends notifications.
//
//	rpcurl [flags] TARGET list                     list the methods
//	rpcurl [flags] TARGET describe [METHOD]        describe METHOD (or the API)
//	rpcurl [flags] TARGET call METHOD [PARAMS|-]   call METHOD, print the result
//	rpcurl [flags] TARGET notify METHOD [PARAMS|-] send a notification
//	rpcurl [flags] VERB ARGS... -- CMD [ARGS...]   the same, CMD's stdio as the target
//
// TARGET is tcp:HOST:PORT, unix:PATH, http://URL or https://URL; in its
// place, a command after "--" is started as a child and spoken to over its
// stdin and stdout (and its process group ended afterwards).
//
// On a stream (a child's stdio, tcp, unix) the framing is newline-delimited
// JSON or Content-Length headers, chosen with --framing or detected: the
// first request is written as a Content-Length frame whose body ends with a
// newline, which a server of either framing reads, and the first bytes of
// its reply show its framing (see 'rpcurl -h').
//
// Exit status: 0 success; 1 the server answered with a JSON-RPC error
// (describe: the document has no such method); 2 usage error (bad flags
// or arguments, PARAMS that are not JSON or that the document's schema
// refuses, an unreadable --doc); 3 transport failure (cannot connect or
// start the server, the server hung up or exited, broke the protocol, or
// --timeout ran out); 130 interrupted by Ctrl-C (or SIGTERM).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
)

// Exit statuses, documented in the package comment and in usage.
const (
	exitOK          = 0
	exitAnswered    = 1 // the server answered with a JSON-RPC error; describe: no such method
	exitUsage       = 2
	exitTransport   = 3
	exitInterrupted = 130
)

const usageText = `rpcurl talks to JSON-RPC 2.0 servers from the command line.

Usage:
  rpcurl [flags] TARGET list                       list the methods
  rpcurl [flags] TARGET describe [METHOD]          describe METHOD, or the API
  rpcurl [flags] TARGET call METHOD [PARAMS|-]     call METHOD, print its result
  rpcurl [flags] TARGET notify METHOD [PARAMS|-]   send the notification METHOD
  rpcurl [flags] VERB ARGS... -- CMD [ARGS...]     the same, CMD as the server
  rpcurl help                                      show this help

Verbs:
  list       one method name per line; a notification's is followed by
             " (notification)"
  describe   METHOD's summary and description, its params (name, type,
             required), the schema its params are checked against, its
             result's schema, its errors and examples, and the schemas they
             refer to; without METHOD, the API's title, version and methods
  call       print the result as JSON on stdout (indented, or --compact)
  notify     send; done once it is written (over HTTP, once its POST is
             answered)

TARGET:
  tcp:HOST:PORT       a TCP connection
  unix:PATH           a unix socket
  http://URL          one HTTP POST per message (https://URL too)
  -- CMD [ARGS...]    last, in place of TARGET: CMD's stdin and stdout. When
                      rpcurl is done it closes CMD's stdin; CMD gets SIGTERM if
                      it is still running 2s later (at once after Ctrl-C or
                      --timeout), SIGKILL 3s after that, and what it started
                      is ended the same way

PARAMS is the params member, as JSON (an object or an array); '-' reads it
from stdin; without it the request has no params member. Flags may come
anywhere before '--'.

Flags:
  --framing F         auto, newline or content-length (default auto; see below)
  --doc FILE          the OpenRPC document to list, describe and check params
                      with, instead of the server's rpc.discover (such as what
                      'rpcurl TARGET list --json' or 'dshrpc schema' printed)
  --no-validate       call or notify without checking PARAMS against the
                      document (and without asking for one)
  --json              list: print the whole document; describe: print the
                      method object (or the document), as JSON
  --compact           call: print the result on one line
  --timeout D         give up waiting for the server after D, e.g. 10s
                      (default: no limit); exit status 3
  -H, --header 'Name: value'
                      an HTTP header for http and https targets; repeatable
  -v, --verbose       say on stderr what happens: the framing, the document,
                      the server's notifications and requests, a child's stderr

The document:
  list and describe show the document of rpc.discover, or of --doc, which
  they read alone (the server is not reached). Before a call or a
  notification, rpcurl asks for the document too and checks PARAMS against
  the method's params schema: params it refuses are not sent, and the path
  that failed is printed (exit status 2). A server without rpc.discover (any
  error answers it) is called by name, unchecked; -v says so.

Framing (streams: child, tcp, unix):
  newline is one JSON message per line (MCP, DeepSeek Harness); content-length
  is a "Content-Length: N" header block before each message (LSP). With auto,
  the first request is written as a Content-Length frame whose body ends with
  a newline: a Content-Length server reads one frame, a newline server skips
  the header line (it may answer it with an error, which is ignored) and
  reads the JSON line. The first bytes of the server's reply, a header or a
  JSON value, then set the framing for the rest of the connection. That
  first request is rpc.discover, or the call itself when no document is
  needed (--doc, --no-validate); notify sends rpc.discover first. A server
  that answers nothing to it needs --framing (or --timeout to give up).

While a call runs, the server's own requests are answered -32601 (method not
found): rpcurl serves no methods. Its notifications are shown with -v.

Exit status:
  0    success: the result is printed (call), the notification written (notify)
  1    the server answered with a JSON-RPC error: its code, message and data
       are printed on stderr; describe: the document has no such method
  2    usage error: bad flags or arguments, PARAMS that are not JSON or that
       the document's schema refuses, an unreadable or invalid --doc
  3    transport failure: cannot connect or start the server, the server hung
       up or exited before answering, broke the protocol, or --timeout ran out
  130  interrupted (Ctrl-C, SIGTERM)

Examples:
  rpcurl list -- ./calc serve
  rpcurl call calc/add '{"a":1,"b":2}' -- ./calc serve
  echo '{"a":1,"b":2}' | rpcurl tcp:127.0.0.1:7000 call calc/add -
  dshrpc schema > dsh.json
  rpcurl --doc dsh.json describe initialize -- dshrpc serve-demo
`

// env is what a command may touch of the process: tests run commands
// in-process through it, and main passes the real streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// ctx ends when the user interrupts rpcurl (SIGINT, SIGTERM): the
	// command then tears down and returns exitInterrupted.
	ctx context.Context
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, ctx: ctx}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs rpcurl with args and returns the exit status. Every goroutine
// it starts, and the child process it may start, is gone when it returns.
func run(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText)
		return exitUsage
	}
	if args[0] == "help" {
		if len(args) > 1 {
			return usageError(e, fmt.Errorf("help takes no arguments: rpcurl has one usage text (%q given)", args[1]))
		}
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	}
	o, err := parse(e, args)
	switch {
	case errors.Is(err, errHelpShown):
		return exitOK
	case err != nil:
		return usageError(e, err)
	}
	return o.run(e)
}

// usageError reports a usage error and returns exitUsage.
func usageError(e *env, err error) int {
	fmt.Fprintf(e.stderr, "rpcurl: %v\nRun 'rpcurl -h' for usage.\n", err)
	return exitUsage
}

// errHelpShown tells run that -h was handled and it should exit 0.
var errHelpShown = errors.New("help shown")

// newFlagSet returns a flag set that reports nothing itself: parse turns
// its errors into our usage errors, and -h into the usage on stdout.
func newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("rpcurl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterleaved parses flags that may come before, between or after
// the positional arguments (so that `rpcurl tcp:h:1 call m --compact`
// works, which the flag package alone does not allow), and returns the
// positionals. It is dshrpc's, without "--", which parse has cut off.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagName matches a flag name as the flag package's errors spell it, with
// one dash, after the words that precede it in those errors.
var flagName = regexp.MustCompile(`(defined: |argument: |for flag |value "[^"]*" for )-([A-Za-z0-9][A-Za-z0-9-]*)`)

// twoDashes respells the flag names in an error of the flag package with
// two dashes, as the usage text writes them (the package accepts both).
func twoDashes(err error) error {
	return errors.New(flagName.ReplaceAllString(err.Error(), "$1--$2"))
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
