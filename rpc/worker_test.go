package rpc

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// An idle Conn keeps only the worker that reads: a worker that served a
// request, or was woken to read while another served it, waits for more a
// while, then exits. (The time is the bubble's, so no
// test waits for it; the count is the Conn's own, which other tests'
// goroutines cannot disturb.)
func TestIdleWorkersExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut := io.Pipe()
		peerIn, connOut := io.Pipe()
		reg := NewRegistry()
		Handle(reg, NewMethod[string, string]("echo"), func(_ context.Context, s string) (string, error) { return s, nil })
		c := NewConn(connIn, connOut, &Options{Handler: reg})
		c.Start()
		defer func() { c.Close(); peerOut.Close(); peerIn.Close(); c.Wait() }()
		go io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}`+"\n")
		if line, err := bufio.NewReader(peerIn).ReadString('\n'); err != nil || !strings.Contains(line, `"result":"x"`) {
			t.Fatalf("reply %q, %v", line, err)
		}
		goroutines := func() int {
			synctest.Wait()
			c.lock()
			defer c.mu.Unlock()
			return c.st.goroutines
		}
		if n := goroutines(); n != 2 {
			t.Fatalf("%d goroutines right after a request, want 2: the reader and a parked worker", n)
		}
		time.Sleep(2*idleTimeout + time.Millisecond)
		if n := goroutines(); n != 1 {
			t.Fatalf("%d goroutines after two idle periods, want the reader alone", n)
		}
	})
}
