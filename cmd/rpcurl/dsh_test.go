package main

import (
	"path/filepath"
	"testing"
)

// dshDoc is the OpenRPC document the DSH tests give with --doc: what
// 'dshrpc schema' prints (see TestMain).
func dshDoc() string { return filepath.Join(bin, "dsh.openrpc.json") }

// demoChild is the command line of dshrpc's demo runtime on its stdio.
func demoChild() []string { return []string{"--", filepath.Join(bin, "dshrpc"), "serve-demo"} }

// TestDSHDemo drives the DSH demo runtime (dshrpc serve-demo: newline
// framing, no rpc.discover) with a document from a file: list and
// describe read the file alone, and calls are checked against it.
func TestDSHDemo(t *testing.T) {
	c, doc := demoChild(), dshDoc()
	init := `{"cwd":"/","provider":"deepseek-official","model":"deepseek-v4-flash"}`
	runGolden(t, []goldenCase{
		{name: "dsh-list", args: args(w("--doc", doc, "list"), c)},
		{name: "dsh-describe", args: args(w("--doc", doc, "describe", "initialize"), c)},
		{name: "dsh-call", args: args(w("--doc", doc, "call", "initialize", init), c)},
		{name: "dsh-call-newline", args: args(w("--doc", doc, "-v", "--framing", "newline", "call", "shutdown"), c)},
		{name: "dsh-call-refused", args: args(w("--doc", doc, "call", "initialize", `{"cwd":".","provider":"deepseek-official","model":"deepseek-v4-flash"}`), c), code: exitUsage},
		{name: "dsh-call-error", args: args(w("--doc", doc, "--framing", "newline", "call", "session/prompt", `{"sessionId":"s1","contentBlocks":[{"type":"text","text":"hi"}]}`), c), code: exitAnswered},
		{name: "dsh-list-no-doc", args: args(w("--framing", "newline", "list"), c), code: exitAnswered},
		{name: "dsh-call-no-doc", args: args(w("-v", "--framing", "newline", "call", "initialize", init, "--compact"), c)},
	})
}
