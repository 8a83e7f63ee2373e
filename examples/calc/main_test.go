package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// TestMain lets the test binary play the child, as the program does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve()
		return
	}
	os.Exit(m.Run())
}

func TestRunTalksToItsChild(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	runErr := run()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if runErr != nil {
		t.Fatal(runErr)
	}
	for _, want := range []string{
		"progress: adding 2 and 3", "2 + 3 = 5 <nil>", "child asks: divide 1 by 4? yes",
		"1 / 4 = 0.25 <nil>", `1 / 0 fails: code 1, "division by zero"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The child's registry describes its methods, and serves the document as
// rpc.discover.
func TestDiscover(t *testing.T) {
	conn, _ := pipeTo(t, newRegistry(io.Discard))
	doc, err := openrpc.Discover.Call(context.Background(), conn, rpc.NoParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range doc.Methods {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "calc/add calc/divide calc/log" {
		t.Errorf("methods %q, want calc/add calc/divide calc/log", got)
	}
	if doc.Info.Title != "calc" || doc.Methods[1].Summary == "" || len(doc.Methods[1].Errors) != 2 || !doc.Methods[2].IsNotification() {
		t.Errorf("document lacks its descriptions: %+v", doc)
	}
}

// A caller that does not serve ui/confirm is answered CodeNotConfirmed,
// with why.
func TestDivideUnconfirmed(t *testing.T) {
	conn, _ := pipeTo(t, newRegistry(io.Discard))
	_, err := Divide.Call(context.Background(), conn, Operands{A: 1, B: 2})
	var re *rpc.Error
	if !errors.As(err, &re) || re.Code != CodeNotConfirmed || !strings.Contains(re.Message, "method not found: ui/confirm") {
		t.Fatalf("divide without ui/confirm: %v, want code %d and the reason", err, CodeNotConfirmed)
	}
}

// listen serves every client of a unix socket, and ends with its context.
func TestListen(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "calc.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	logged := newWatched("calc: listening on unix:" + sock + "\n")
	served := make(chan error, 1)
	go func() { served <- listen(ctx, "unix:"+sock, logged) }()
	linetest.Within(t, logged.seen, "calc to say it listens")

	conn, err := transport.Dial(context.Background(), "unix", sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if sum, err := Add.Call(context.Background(), conn, Operands{A: 2, B: 3}); err != nil || sum.Value != 5 {
		t.Errorf("calc/add over the socket: %v, %v", sum, err)
	}
	logged.want("calc: log: hello\n")
	if err := Log.Notify(context.Background(), conn, Step{"hello"}); err != nil {
		t.Fatal(err)
	}
	linetest.Within(t, logged.seen, "calc/log to write on the log")
	conn.Close()
	conn.Wait()
	stop()
	if err := linetest.Within(t, served, "listen to return once its context ended"); err != nil {
		t.Errorf("listen: %v", err)
	}
	if err := listen(context.Background(), "udp:x", io.Discard); err == nil {
		t.Error("listen on udp: no error")
	}
}

// pipeTo connects a client Conn to a server Conn serving reg, over pipes.
func pipeTo(t *testing.T, reg *rpc.Registry) (client, server *rpc.Conn) {
	t.Helper()
	c2s, s2c := newPipe(t), newPipe(t)
	server = rpc.NewConn(c2s.r, s2c.w, &rpc.Options{Handler: reg})
	client = rpc.NewConn(s2c.r, c2s.w, nil)
	server.Start()
	client.Start()
	t.Cleanup(func() {
		client.Close()
		server.Close()
		client.Wait()
		server.Wait()
	})
	return client, server
}

type pipe struct{ r, w *os.File }

func newPipe(t *testing.T) pipe {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return pipe{r, w}
}

// watched is a log that says when it holds a text.
type watched struct {
	mu     sync.Mutex
	buf    strings.Builder
	wanted string
	seen   chan struct{}
}

func newWatched(want string) *watched {
	w := &watched{}
	w.want(want)
	return w
}

// want makes seen a new channel, closed once the log holds text.
func (w *watched) want(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wanted, w.seen = text, make(chan struct{})
	w.check()
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.check()
	return len(p), nil
}

func (w *watched) check() {
	if w.wanted != "" && strings.Contains(w.buf.String(), w.wanted) {
		close(w.seen)
		w.wanted = ""
	}
}
