package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
)

// The flood tests hold a Conn to the memory bound of the package
// documentation: whatever the peer sends, and whether or not it reads,
// the Conn holds at most about
//
//	2×MaxFrameSize + MaxWriteQueue + 2×MaxWaitingBytes
//	  + MaxConcurrentRequests × (a request's decoded params and its reply)
//
// Each floods a Conn inside a synctest bubble until everything in it is
// blocked (synctest.Wait), which is where the Conn holds the most, then
// measures the live heap against that formula, then lets the flood drain
// and checks that nothing was lost.

// memoryBound is the formula above for opts, with reply as the size of
// one request's params and reply, plus 1 MiB for the test's own state.
func memoryBound(opts *rpc.Options, reply int) int64 {
	slots := opts.MaxConcurrentRequests
	if slots == 0 {
		slots = rpc.DefaultMaxConcurrentRequests
	}
	return int64(2*opts.MaxFrameSize+opts.MaxWriteQueue+2*opts.MaxWaitingBytes+slots*reply) + 1<<20
}

type floodParams struct{ Data string }
type floodResult struct{ Data string }

var flood = rpc.NewMethod[floodParams, floodResult]("flood")

// kib is the payload of the flood frames.
var kib = strings.Repeat("x", 1<<10)

func floodRequest(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"flood","params":{"Data":%q}}`+"\n", i, kib)
}

// replyCounts reads n responses and counts results and overloaded errors,
// failing on anything else.
func replyCounts(t *testing.T, r *bufio.Reader, n int) (results, overloaded int) {
	t.Helper()
	for range n {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %d replies: %v", results+overloaded, err)
		}
		var f struct {
			Result *floodResult
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		switch {
		case f.Result != nil && f.Result.Data == kib:
			results++
		case f.Error != nil && f.Error.Code == int(rpc.CodeOverloaded):
			overloaded++
		default:
			t.Fatalf("unexpected reply %.200s", line)
		}
	}
	return results, overloaded
}

// pipes returns the two ends' streams: the Conn reads connIn and writes
// connOut; the peer writes peerOut and reads peerIn.
func pipes() (connIn *io.PipeReader, peerOut *io.PipeWriter, peerIn *io.PipeReader, connOut *io.PipeWriter) {
	connIn, peerOut = io.Pipe()
	peerIn, connOut = io.Pipe()
	return
}

// flooded is a started Conn under a flood, with the live heap it began
// with.
type flooded struct {
	c       *rpc.Conn
	peerOut *io.PipeWriter
	peerIn  *io.PipeReader
	base    int64
}

func startFlood(opts *rpc.Options) *flooded {
	connIn, peerOut, peerIn, connOut := pipes()
	f := &flooded{c: rpc.NewConn(connIn, connOut, opts), peerOut: peerOut, peerIn: peerIn, base: linetest.LiveHeap()}
	f.c.Start()
	return f
}

// check fails the test if the Conn holds more than bound now.
func (f *flooded) check(t *testing.T, bound int64, what string) {
	t.Helper()
	held := linetest.LiveHeap() - f.base
	t.Logf("%s: holding %d KiB (bound %d KiB)", what, held>>10, bound>>10)
	if held > bound {
		t.Fatalf("the Conn holds %d bytes, over the bound of %d", held, bound)
	}
}

func (f *flooded) end() {
	f.c.Close()
	f.peerOut.Close()
	f.peerIn.Close()
	f.c.Wait()
}

// untilReadingStops lets the bubble's time run until the Conn reads no
// more of what the peer writes (sent, the lines the peer has written,
// stops growing for a whole second): a goroutine that reads and runs a
// handler, or writes, lends the reading role, which a worker takes after
// the watchdog's periods, so synctest.Wait alone would catch the Conn
// before it has read all it will.
func untilReadingStops(sent *atomic.Int64) {
	for {
		synctest.Wait()
		before := sent.Load()
		time.Sleep(time.Second)
		synctest.Wait()
		if sent.Load() == before {
			return
		}
	}
}

// A peer that sends requests and never reads the replies: once the write
// queue, the handler slots and the waiting room are full, the Conn stops
// reading until the peer reads again; then every request is answered.
func TestFloodFromAPeerThatDoesNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20000
		reg := rpc.NewRegistry()
		rpc.Handle(reg, flood, func(ctx context.Context, p floodParams) (floodResult, error) {
			return floodResult(p), nil
		})
		opts := &rpc.Options{Handler: reg, MaxFrameSize: 64 << 10, MaxWriteQueue: 1 << 20, MaxWaitingBytes: 256 << 10}
		f := startFlood(opts)
		defer f.end()
		var sent atomic.Int64
		go func() {
			for i := range n {
				if _, err := io.WriteString(f.peerOut, floodRequest(i+1)); err != nil {
					return
				}
				sent.Add(1)
			}
		}()
		untilReadingStops(&sent) // the peer is blocked in Write: the Conn stopped reading
		f.check(t, memoryBound(opts, 4<<10), fmt.Sprintf("paused after %d of %d requests", sent.Load(), n))
		if sent.Load() == n {
			t.Fatal("the Conn read every request although the peer read nothing")
		}
		results, overloaded := replyCounts(t, bufio.NewReader(f.peerIn), n)
		t.Logf("%d results, %d overloaded", results, overloaded)
	})
}

// Handlers that block: requests beyond the slots and the waiting room are
// answered CodeOverloaded at once, and reading goes on.
func TestFloodOfRequestsToBlockedHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, slots, room = 5000, 16, 64
		reg := rpc.NewRegistry()
		rpc.Handle(reg, flood, func(ctx context.Context, p floodParams) (floodResult, error) {
			<-ctx.Done()
			return floodResult{}, ctx.Err()
		})
		opts := &rpc.Options{Handler: reg, MaxFrameSize: 64 << 10, MaxWriteQueue: 64 << 10,
			MaxConcurrentRequests: slots, MaxWaiting: room, MaxWaitingBytes: 1 << 20}
		f := startFlood(opts)
		defer f.end()
		replies := make(chan [2]int, 1)
		go func() {
			r, o := replyCounts(t, bufio.NewReader(f.peerIn), n-slots-room)
			replies <- [2]int{r, o}
		}()
		for i := range n {
			if _, err := io.WriteString(f.peerOut, floodRequest(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		got := <-replies
		synctest.Wait()
		f.check(t, memoryBound(opts, 4<<10), fmt.Sprintf("%d requests, %d overloaded", n, got[1]))
		if got != [2]int{0, n - slots - room} {
			t.Fatalf("replies (results, overloaded) = %v, want %v", got, [2]int{0, n - slots - room})
		}
	})
}

// A notification handler that blocks holds the line: the notifications
// read after it wait in the room, up to its bounds, the rest in the peer,
// and all arrive, in order, once it returns.
func TestFloodOfNotificationsToASlowHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20000
		note := rpc.NewNotification[floodParams]("note")
		release := make(chan struct{})
		var got atomic.Int64
		var misordered atomic.Bool
		reg := rpc.NewRegistry()
		rpc.HandleNotification(reg, note, func(ctx context.Context, p floodParams) {
			<-release
			if !strings.HasPrefix(p.Data, fmt.Sprint(got.Load(), ":")) {
				misordered.Store(true)
			}
			got.Add(1)
		})
		opts := &rpc.Options{Handler: reg, MaxFrameSize: 64 << 10, MaxWriteQueue: 64 << 10, MaxWaitingBytes: 64 << 10}
		f := startFlood(opts)
		defer f.end()
		var sent atomic.Int64
		go func() {
			for i := range n {
				line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"Data":"%d:%s"}}`+"\n", i, kib)
				if _, err := io.WriteString(f.peerOut, line); err != nil {
					return
				}
				sent.Add(1)
			}
			f.peerOut.Close()
		}()
		untilReadingStops(&sent)
		f.check(t, memoryBound(opts, 0), fmt.Sprintf("after %d of %d notifications", sent.Load(), n))
		close(release)
		if err := f.c.Wait(); err != rpc.ErrInputEnded {
			t.Fatalf("Wait = %v", err)
		}
		if got.Load() != n || misordered.Load() {
			t.Fatalf("%d of %d notifications delivered, misordered %v", got.Load(), n, misordered.Load())
		}
	})
}

// Huge responses that match no call, and lines over the limit, cost no
// more than the frame limit, and the Conn keeps serving.
func TestFloodOfHugeUnmatchedResponses(t *testing.T) {
	const frameLimit = 1 << 20
	// Sent as they are, as Send would copy them.
	unmatched := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1000,"result":%q}`+"\n", strings.Repeat("r", frameLimit-100))
	oversize := []byte(`{"jsonrpc":"2.0","id":"x","result":"` + strings.Repeat("o", 3*frameLimit) + `"}` + "\n")
	var peak atomic.Int64
	base := linetest.LiveHeap()
	drops := 0
	opts := &rpc.Options{Handler: echoRegistry(), MaxFrameSize: frameLimit, OnDrop: func(d rpc.Drop) {
		if drops++; drops%5 == 0 {
			if h := linetest.LiveHeap() - base; h > peak.Load() {
				peak.Store(h)
			}
		}
	}}
	p := newPeer(t, opts)
	for range 30 {
		p.SendBytes(unmatched)
		p.SendBytes(oversize)
	}
	p.Send(`{"jsonrpc":"2.0","id":"after","method":"echo","params":{"text":"still here"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":"after","result":{"echo":"still here"}}`)
	bound := int64(2*frameLimit) + 1<<20 // the read buffer grown for a line of the limit, and the test's own
	t.Logf("peak live heap at the drops: %d KiB (bound %d KiB)", peak.Load()>>10, bound>>10)
	if peak.Load() > bound {
		t.Fatalf("peak live heap %d bytes, over %d", peak.Load(), bound)
	}
}

// A huge line of invalid UTF-8 is repaired in a scratch buffer that is not
// kept once the line is handled.
func TestInvalidUTF8RepairIsNotKept(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	base := linetest.LiveHeap()
	p.Send(`{"jsonrpc":"2.0","method":"nobody","params":"` + strings.Repeat("\xff", 8<<20) + `"}`)
	// Enough reads for the read buffer, grown for the line, to shrink back.
	for i := range 20 {
		p.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"after"}}`, i))
		p.Expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"after"}}`, i))
	}
	if held := linetest.LiveHeap() - base; held > 2<<20 {
		t.Fatalf("the Conn still holds %d bytes after the line", held)
	}
}

// An idle Conn is small, after it served a request (on the worker that
// read it, the reading role lent and its watchdog made) and dropped a
// notification: its read buffer shrinks back after traffic, and the
// worker that reads is the one that waits.
func TestIdleConnIsSmall(t *testing.T) {
	const conns = 200
	var closers []func()
	base := linetest.LiveHeap()
	for range conns {
		connIn, peerOut, peerIn, connOut := pipes()
		c := rpc.NewConn(connIn, connOut, &rpc.Options{Handler: echoRegistry()})
		c.Start()
		go io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`+"\n"+`{"jsonrpc":"2.0","method":"nobody"}`+"\n")
		if line, err := bufio.NewReader(peerIn).ReadString('\n'); err != nil || !strings.Contains(line, `"echo":"x"`) {
			t.Fatalf("answer %q, %v", line, err)
		}
		closers = append(closers, func() { c.Close(); peerOut.Close(); peerIn.Close(); c.Wait() })
	}
	perConn := (linetest.LiveHeap() - base) / conns
	t.Logf("%d bytes of heap per idle Conn", perConn)
	if perConn > 16<<10 {
		t.Fatalf("an idle Conn holds %d bytes, over 16 KiB", perConn)
	}
	for _, c := range closers {
		c()
	}
}
