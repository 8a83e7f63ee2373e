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

// The bounds on a lent reading role (lend): a handler that runs on the
// worker that read it, and waits for something the Conn cannot see, leaves
// the input unread for at most two periods of the watchdog, after which a
// worker reads it; so does a lone caller that read its own response and
// went away. (In the bubble, time moves only when every goroutine waits:
// the periods are exact.)
func TestLentReadingRoleGoesToAWorkerWithinTwoPeriods(t *testing.T) {
	for _, lender := range []string{"handler", "caller"} {
		t.Run(lender, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				connIn, peerOut := io.Pipe()
				peerIn, connOut := io.Pipe()
				release := make(chan struct{})
				read := make(chan string, 4)
				reg := NewRegistry()
				HandleNotification(reg, NewNotification[NoParams]("block"), func(context.Context, NoParams) { <-release })
				c := NewConn(deadlined{connIn}, connOut, &Options{Handler: reg, OnDrop: func(d Drop) { read <- d.Method }})
				c.Start()
				defer func() { close(release); c.Close(); peerOut.Close(); peerIn.Close(); c.Wait() }()
				out := bufio.NewReader(peerIn)
				switch lender {
				case "handler":
					go io.WriteString(peerOut, `{"jsonrpc":"2.0","method":"block"}`+"\n")
				case "caller":
					called := make(chan error, 1)
					go func() { called <- c.Call(context.Background(), "ping", nil, nil) }()
					if _, err := out.ReadString('\n'); err != nil {
						t.Fatal(err)
					}
					go io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"result":null}`+"\n")
					if err := <-called; err != nil {
						t.Fatal(err)
					}
				}
				synctest.Wait()
				c.lock()
				lent := c.st.reading == readLent
				c.mu.Unlock()
				if !lent {
					t.Fatalf("the reading role is %d, want lent", c.st.reading)
				}
				// Unasked, and with no handler: the reader drops it as it
				// reads it.
				go io.WriteString(peerOut, `{"jsonrpc":"2.0","method":"unasked"}`+"\n")
				start := time.Now()
				synctest.Wait()
				select {
				case m := <-read:
					t.Fatalf("%s read while the role was lent, before the watchdog's period", m)
				default:
				}
				time.Sleep(2 * lendPeriod)
				synctest.Wait()
				select {
				case m := <-read:
					if m != "unasked" {
						t.Fatalf("dropped %q", m)
					}
				default:
					t.Fatalf("nothing read %v after the role was lent", time.Since(start))
				}
			})
		})
	}
}
