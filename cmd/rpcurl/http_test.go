package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

// httpServer serves reg over HTTP, one message per POST, for the http
// target: the answers of a Conn that reads the body as its whole input.
// It refuses a POST without the header "Authorization: Bearer t" with a
// 401 that is not JSON. (It stands for rpc/transport's HTTP handler until
// that one lands.)
func httpServer(t *testing.T, reg *rpc.Registry) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out bytes.Buffer
		conn := rpc.NewConn(bytes.NewReader(append(body, '\n')), &out, &rpc.Options{Handler: reg})
		conn.Start()
		conn.Wait()
		if out.Len() == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out.Bytes())
	}))
	return s
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
