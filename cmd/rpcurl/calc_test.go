package main

import (
	"path/filepath"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
)

// goldenCase is one command whose outputs are compared with a golden file.
type goldenCase struct {
	name  string
	stdin string
	args  []string
	code  int
}

func runGolden(t *testing.T, cases []goldenCase, replace ...string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rpcurl(t, c.stdin, c.args...)
			golden(t, c.name, r, replace...)
			r.wantCode(t, c.code)
		})
	}
}

// args joins the words of a command line: a target and a verb with its
// arguments, or a verb with its arguments and a child's command line
// after "--".
func args(words ...[]string) []string {
	var all []string
	for _, w := range words {
		all = append(all, w...)
	}
	return all
}

func w(words ...string) []string { return words }

// calcChild is the command line of examples/calc serving on its stdio.
func calcChild() []string { return []string{"--", filepath.Join(bin, "calc"), "serve"} }

// TestCalcStdio drives examples/calc over its stdio (newline framing,
// detected; rpc.discover served): each verb, the checks of params, the
// server's errors, its notifications and its request of the caller.
func TestCalcStdio(t *testing.T) {
	c := calcChild()
	runGolden(t, []goldenCase{
		{name: "calc-list", args: args(w("list"), c)},
		{name: "calc-list-json", args: args(w("list", "--json"), c)},
		{name: "calc-describe", args: args(w("describe"), c)},
		{name: "calc-describe-method", args: args(w("describe", "calc/divide"), c)},
		{name: "calc-describe-notification", args: args(w("describe", "calc/log"), c)},
		{name: "calc-describe-json", args: args(w("describe", "calc/add", "--json"), c)},
		{name: "calc-describe-missing", args: args(w("describe", "calc/nope"), c), code: exitAnswered},
		{name: "calc-call", args: args(w("call", "calc/add", `{"a":1,"b":2}`), c)},
		{name: "calc-call-verbose", args: args(w("-v", "call", "calc/add", `{"a":1,"b":2}`, "--compact"), c)},
		{name: "calc-call-stdin", stdin: "{\n  \"a\": 1.5,\n  \"b\": 2\n}\n", args: args(w("call", "calc/add", "-"), c)},
		{name: "calc-call-refused", args: args(w("call", "calc/add", `{"a":"one","b":2}`), c), code: exitUsage},
		{name: "calc-call-refused-missing", args: args(w("call", "calc/add", `{"a":1}`), c), code: exitUsage},
		{name: "calc-call-refused-array", args: args(w("call", "calc/add", `[1,2]`), c), code: exitUsage},
		{name: "calc-call-no-validate", args: args(w("call", "--no-validate", "calc/add", `[1,2]`), c), code: exitAnswered},
		{name: "calc-call-unknown", args: args(w("call", "calc/nope", `{}`), c), code: exitAnswered},
		{name: "calc-call-error", args: args(w("call", "calc/divide", `{"a":1,"b":0}`), c), code: exitAnswered},
		{name: "calc-call-callback", args: args(w("-v", "call", "calc/divide", `{"a":1,"b":2}`), c), code: exitAnswered},
		{name: "calc-notify", args: args(w("notify", "calc/log", `{"text":"hello"}`), c)},
		{name: "calc-notify-refused", args: args(w("notify", "calc/log", `{"text":1}`), c), code: exitUsage},
		{name: "calc-framing-newline", args: args(w("-v", "--framing", "newline", "call", "calc/add", `{"a":1,"b":2}`), c)},
		{name: "calc-framing-wrong", args: args(w("--framing", "content-length", "--timeout", "300ms", "list"), c), code: exitTransport},
	})
}

// TestCalcSockets drives examples/calc listening on TCP and on a unix
// socket.
func TestCalcSockets(t *testing.T) {
	tcp := startServer(t, "calc", "listen", "tcp:127.0.0.1:0")
	unix := startServer(t, "calc", "listen", "unix:"+filepath.Join(t.TempDir(), "calc.sock"))
	runGolden(t, []goldenCase{
		{name: "calc-tcp-list", args: w(tcp.addr, "list")},
		{name: "calc-tcp-call", args: w("-v", tcp.addr, "call", "calc/add", `{"a":2,"b":3}`)},
		{name: "calc-tcp-call-refused", args: w(tcp.addr, "call", "calc/add", `{"a":2}`), code: exitUsage},
		{name: "calc-tcp-call-error", args: w(tcp.addr, "call", "calc/divide", `{"a":2,"b":0}`), code: exitAnswered},
		{name: "calc-unix-describe", args: w(unix.addr, "describe", "calc/add")},
		{name: "calc-unix-call-newline", args: w("--framing", "newline", unix.addr, "call", "calc/add", `{"a":2,"b":3}`, "--compact")},
	}, tcp.addr, "tcp:$ADDR", unix.addr, "unix:$SOCKET")

	// A notification reaches the server: it writes calc/log's text.
	for _, s := range []*server{tcp, unix} {
		seen := s.log.lineWith("calc: log: over " + s.addr)
		rpcurl(t, "", s.addr, "notify", "calc/log", `{"text":"over `+s.addr+`"}`).wantCode(t, exitOK)
		linetest.Within(t, seen, "calc/log's line in the log of the server on "+s.addr)
	}
}
