package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// lineEvent is one event of lines.Reader, or of the reference splitter.
type lineEvent struct {
	line     string
	oversize bool
	size     int64
}

// referenceLines cuts data the obvious way: at every LF, lines longer than
// max reported as oversize, the unterminated tail counted.
func referenceLines(data []byte, max int) (evs []lineEvent, tail int) {
	complete, rest := splitLines(data)
	for _, l := range complete {
		if len(l) > max {
			evs = append(evs, lineEvent{oversize: true, size: int64(len(l))})
		} else {
			evs = append(evs, lineEvent{line: string(l), size: int64(len(l))})
		}
	}
	return evs, len(rest)
}

// readLines runs a lines.Reader over r to the end and checks, after every
// event, that its buffer stays within max+1 bytes.
func readLines(t *testing.T, r io.Reader, max int) (evs []lineEvent, tail int) {
	lr := lines.NewReader(r, max)
	for {
		ev, tl, err := lr.Next()
		if lr.BufferSize() > max+1 {
			t.Fatalf("buffer of %d bytes for lines of at most %d", lr.BufferSize(), max)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Next: %v", err)
			}
			return evs, tl
		}
		if ev.Oversize {
			evs = append(evs, lineEvent{oversize: true, size: ev.Size})
		} else {
			if int64(len(ev.Line)) != ev.Size {
				t.Fatalf("line of %d bytes reported as %d", len(ev.Line), ev.Size)
			}
			evs = append(evs, lineEvent{line: string(ev.Line), size: ev.Size})
		}
	}
}

// connTrace feeds r to a Conn that has no request handler and records
// what it does with each line: drops in order, notifications in order,
// method-not-found answers as a multiset. It depends on the bytes alone,
// never on the chunking.
func connTrace(t *testing.T, r io.Reader, max int) *connLog {
	log := &connLog{}
	reg := rpc.NewRegistry()
	reg.HandleUnknownNotification(func(_ context.Context, method string, params json.RawMessage) {
		log.note(fmt.Sprintf("notification %q %s", method, params))
	})
	w := &rpctest.Recorder{}
	w.OnFrame = func(b []byte) { log.answer(string(b)) }
	c := rpc.NewConn(r, w, &rpc.Options{Handler: reg, MaxFrameSize: max, OnDrop: func(d rpc.Drop) {
		log.drop(fmt.Sprintf("drop %v %d %q", d.Reason, d.Size, d.Line))
	}})
	c.Start()
	if err := c.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Wait: %v", err)
	}
	w.Frames(t)
	return log
}

// FuzzLineFraming delivers arbitrary bytes in chunks the fuzzer chooses
// (each byte of cuts is a Read size) with a maximum line length it chooses
// too. The line reader must give exactly the lines of a reference split at
// LF, in order, oversize ones skipped, with a buffer bounded by the limit;
// a Conn must handle every complete line exactly once, in order, the same
// way whatever the chunking.
func FuzzLineFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\r\n{\"id\":1}\r\n\uFEFF[]\nnot json\n{\"id\":\"x\",\"method\":\"m\"}\ntail"), []byte{3, 0, 7, 1, 200}, uint16(20))
	f.Add([]byte(strings.Repeat("x", 300)+"\n{\"method\":\"n\"}\n"), []byte{1, 1, 1}, uint16(100))
	f.Fuzz(func(t *testing.T, data, cuts []byte, maxLine uint16) {
		max := int(maxLine) + 1
		want, wantTail := referenceLines(data, max)

		got, tail := readLines(t, cutReader(data, cuts, len(cuts)%2 == 1), max)
		if tail != wantTail {
			t.Fatalf("tail of %d bytes, want %d", tail, wantTail)
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d:\n%+v\n%+v", len(got), len(want), got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("event %d = %+v, want %+v", i, got[i], want[i])
			}
		}

		whole := connTrace(t, bytes.NewReader(data), max)
		chunked := connTrace(t, cutReader(data, cuts, len(cuts)%2 == 1), max)
		if whole.String() != chunked.String() {
			t.Fatalf("the chunking changed what the Conn did:\nwhole:\n%s\nchunked:\n%s", whole, chunked)
		}
		// Exactly one event per complete line that is not blank, plus one
		// for an unterminated tail.
		n := 0
		for _, ev := range want {
			if ev.oversize || classify([]byte(ev.line)).class != classBlank {
				n++
			}
		}
		if wantTail > 0 {
			n++
		}
		if whole.len() != n {
			t.Fatalf("%d things done for %d lines:\n%s", whole.len(), n, whole)
		}
	})
}
