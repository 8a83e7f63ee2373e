package main

import (
	"path/filepath"
	"testing"
)

// lspChild is the command line of examples/lsp serving on its stdio.
func lspChild() []string { return []string{"--", filepath.Join(bin, "lsp")} }

// TestLSPStdio drives examples/lsp over its stdio: Content-Length
// framing, detected and chosen (the server detects its client's framing,
// so newline works too), and no rpc.discover, so that a method is called
// by name, unchecked, and list and describe say what is missing. LSP's
// life cycle refuses any request before initialize.
func TestLSPStdio(t *testing.T) {
	c := lspChild()
	init := `{"processId":null,"capabilities":{}}`
	runGolden(t, []goldenCase{
		{name: "lsp-call-initialize", args: args(w("-v", "call", "initialize", init, "--compact"), c)},
		{name: "lsp-call-content-length", args: args(w("-v", "--framing", "content-length", "call", "initialize", init, "--compact"), c)},
		{name: "lsp-call-newline", args: args(w("--framing", "newline", "call", "initialize", init, "--compact"), c)},
		{name: "lsp-call-before-initialize", args: args(w("call", "toy/add", "[1,2]"), c), code: exitAnswered},
		{name: "lsp-list", args: args(w("list"), c), code: exitAnswered},
		{name: "lsp-notify", args: args(w("-v", "notify", "exit"), c)},
	})
}

// TestLSPSocket drives examples/lsp listening on a unix socket.
func TestLSPSocket(t *testing.T) {
	s := startServer(t, "lsp", "-listen", "unix:"+filepath.Join(t.TempDir(), "lsp.sock"))
	runGolden(t, []goldenCase{
		{name: "lsp-unix-call", args: w(s.addr, "-v", "call", "initialize", `{"capabilities":{}}`, "--compact")},
		{name: "lsp-unix-describe", args: w(s.addr, "describe", "initialize"), code: exitAnswered},
	}, s.addr, "unix:$SOCKET")
}
