package main

import (
	"bytes"
	"testing"
)

// TestUsage: the usage text on stdout for -h and help (status 0), on
// stderr without arguments (status 2), and every usage error, found
// before anything is started (status 2).
func TestUsage(t *testing.T) {
	for _, a := range [][]string{{"-h"}, {"--help"}, {"help"}, {"tcp:h:1", "call", "m", "-h"}} {
		r := rpcurl(t, "", a...)
		r.wantCode(t, exitOK)
		if r.stdout != usageText || r.stderr != "" {
			t.Errorf("rpcurl %q: stdout is not the usage text, or stderr is not empty:\n%s\n%s", a, r.stdout, r.stderr)
		}
	}
	r := rpcurl(t, "")
	r.wantCode(t, exitUsage)
	if r.stderr != usageText || r.stdout != "" {
		t.Errorf("rpcurl without arguments: stderr is not the usage text:\n%s", r.stderr)
	}
	golden(t, "usage", rpcurl(t, "", "-h"))

	calc := calcChild()
	runGolden(t, []goldenCase{
		{name: "usage-help-extra", args: w("help", "call"), code: exitUsage},
		{name: "usage-unknown-flag", args: w("--bogus", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-missing-target", args: w("list"), code: exitUsage},
		{name: "usage-unknown-target", args: w("localhost:7000", "list"), code: exitUsage},
		{name: "usage-tcp-no-port", args: w("tcp:localhost", "list"), code: exitUsage},
		{name: "usage-missing-verb", args: w("tcp:h:1"), code: exitUsage},
		{name: "usage-unknown-verb", args: w("tcp:h:1", "invoke", "m"), code: exitUsage},
		{name: "usage-list-extra", args: w("tcp:h:1", "list", "x"), code: exitUsage},
		{name: "usage-call-no-method", args: w("tcp:h:1", "call"), code: exitUsage},
		{name: "usage-call-extra", args: w("tcp:h:1", "call", "m", `{"a":1}`, `{"b":2}`), code: exitUsage},
		{name: "usage-params-not-json", args: w("tcp:h:1", "call", "m", `{a:1}`), code: exitUsage},
		{name: "usage-params-two-values", args: w("tcp:h:1", "call", "m", `{} {}`), code: exitUsage},
		{name: "usage-params-stdin-empty", args: w("tcp:h:1", "call", "m", "-"), code: exitUsage},
		{name: "usage-params-stdin-not-json", stdin: "{\"a\":\n", args: w("tcp:h:1", "call", "m", "-"), code: exitUsage},
		{name: "usage-framing", args: w("--framing", "lsp", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-framing-http", args: w("--framing", "newline", "http://h/rpc", "list"), code: exitUsage},
		{name: "usage-header-tcp", args: w("-H", "X-A: b", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-header-malformed", args: w("-H", "no colon", "http://h/rpc", "list"), code: exitUsage},
		{name: "usage-compact-list", args: w("tcp:h:1", "list", "--compact"), code: exitUsage},
		{name: "usage-json-call", args: w("tcp:h:1", "call", "m", "--json"), code: exitUsage},
		{name: "usage-no-validate-list", args: w("tcp:h:1", "list", "--no-validate"), code: exitUsage},
		{name: "usage-doc-empty", args: w("--doc", "", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-doc-missing", args: w("--doc", "testdata/no-such.json", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-doc-not-a-doc", args: w("--doc", "testdata/not-a-doc.json", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-timeout-negative", args: w("--timeout", "-1s", "tcp:h:1", "list"), code: exitUsage},
		{name: "usage-target-and-command", args: args(w("tcp:h:1", "list"), calc), code: exitUsage},
		{name: "usage-no-command", args: w("list", "--"), code: exitUsage},
	})
}

// TestStdinParams: PARAMS from stdin are compacted before they are sent,
// so that a newline server reads them on one line, the framing probe's
// included.
func TestStdinParams(t *testing.T) {
	var pretty bytes.Buffer
	pretty.WriteString("{\n\t\"a\": 1,\n\n\t\"b\": [\n2\n][0]\n}")
	r := rpcurl(t, pretty.String(), args(w("--framing", "newline", "call", "calc/add", "-"), calcChild())...)
	r.wantCode(t, exitUsage) // not JSON: [0] after the array
	for _, framing := range []string{"newline", "auto"} {
		// Without a document to check them against, the params are sent in
		// the first request: the framing probe, with auto.
		r = rpcurl(t, "{\n\t\"a\": 1,\n\n\t\"b\": 2\n}\n", args(w("--framing", framing, "--no-validate", "call", "calc/add", "-", "--compact"), calcChild())...)
		r.wantCode(t, exitOK)
		if r.stdout != "{\"value\":3}\n" {
			t.Errorf("--framing %s: stdout %q, want the sum", framing, r.stdout)
		}
	}
}
