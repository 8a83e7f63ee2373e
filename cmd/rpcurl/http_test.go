package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// httpServer serves reg over HTTP with transport's HTTPHandler, behind a
// check that refuses a POST without the header "Authorization: Bearer t"
// with a 401 that is not JSON.
func httpServer(t *testing.T, reg *rpc.Registry) *httptest.Server {
	h := transport.NewHTTPHandler(&rpc.Options{Handler: reg})
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// TestHTTP drives a server over HTTP: list and describe from rpc.discover,
// a call checked against the document, an error, a notification, the
// headers of -H, and an answer that is not JSON-RPC.
func TestHTTP(t *testing.T) {
	before := goroutineIDs()
	reg := linetest.EchoRegistry()
	notified := make(chan string, 1)
	rpc.HandleNotification(reg, rpc.NewNotification[linetest.EchoParams]("note"), func(_ context.Context, p linetest.EchoParams) {
		notified <- p.Text
	})
	if err := openrpc.HandleDiscover(reg, openrpc.Info{Title: "echo", Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	s := httpServer(t, reg)
	url := s.URL + "/rpc"
	auth := []string{"-H", "Authorization: Bearer t"}
	runGolden(t, []goldenCase{
		{name: "http-list", args: args(auth, w(url, "list"))},
		{name: "http-describe", args: args(auth, w(url, "describe", "echo"))},
		{name: "http-call", args: args(auth, w("-v", url, "call", "echo", `{"text":"hi"}`))},
		{name: "http-call-refused", args: args(auth, w(url, "call", "echo", `{"text":1}`)), code: exitUsage},
		{name: "http-call-error", args: args(auth, w(url, "call", "echo", `{"text":"coded"}`)), code: exitAnswered},
		{name: "http-notify", args: args(auth, w(url, "notify", "note", `{"text":"noted"}`))},
		{name: "http-unauthorized", args: w(url, "call", "echo", `{"text":"hi"}`), code: exitTransport},
		{name: "http-notify-unauthorized", args: w(url, "notify", "--no-validate", "note", `{"text":"lost"}`), code: exitTransport},
	}, s.URL, "http://$HOST")
	if got := linetest.Within(t, notified, "the notification's handler"); got != "noted" {
		t.Errorf("the server was notified %q, want noted", got)
	}
	s.Close()
	noGoroutinesLeft(t, before, "TestHTTP's server")
}

// TestAnswerInvalidServer: a newline server that answers the framing
// probe's header line with an error (Options.AnswerInvalid) is detected
// all the same, and the error, whose id is null, is ignored.
func TestAnswerInvalidServer(t *testing.T) {
	before := goroutineIDs()
	reg := linetest.EchoRegistry()
	sock := filepath.Join(t.TempDir(), "echo.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &transport.Server{Options: &rpc.Options{Handler: reg, AnswerInvalid: true}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	runGolden(t, []goldenCase{
		{name: "answer-invalid", args: w("-v", "--no-validate", "unix:"+sock, "call", "echo", `{"text":"hi"}`, "--compact")},
	}, "unix:"+sock, "unix:$SOCKET")
	srv.Close()
	linetest.Within(t, served, "the server to stop serving")
	noGoroutinesLeft(t, before, "TestAnswerInvalidServer's server")
}
