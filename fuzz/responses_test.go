package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// callResult is the result type of the pending calls: go-json decodes
// every kind of value into one of these fields.
type callResult struct {
	A int64           `json:"a"`
	S []string        `json:"s"`
	O map[string]any  `json:"o"`
	R json.RawMessage `json:"r"`
}

// FuzzResponses feeds arbitrary lines, twice over, to a Conn that has up
// to four calls pending (ids 1 to 4). A response settles at most the call
// whose id it denotes (a number equal to the id, as JavaScript compares),
// and only once: the second copy of a line settles nothing more and is
// dropped as unmatched. A call the input does not settle ends with
// ErrInputEnded, and each call ends with the outcome its response
// carried: an *rpc.Error for an error object or array, otherwise success
// or ErrInvalidResult. An array of responses only is the answer to a
// Batch: its elements are responses as lone lines are.
func FuzzResponses(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1,"s":["x"],"o":{"k":[{}]},"r":null}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"no","data":[1]}}`,
		`{"jsonrpc":"2.0","id":3.0,"error":[]}` + "\n" + `{"id":3e0,"result":1}`,
		`{"jsonrpc":"2.0","id":"1","result":{}}`,
		`{"id":4,"result":"wrong type","error":"ignored"}`,
		`{"id":1,"error":{"code":1.5,"message":7}}`,
		`{"id":2,"method":"m","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"id":2,"error":{"code":1,"message":"x"}}]`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, calls uint8) {
		k := 1 + int(calls)%4

		// The oracle: which line settles which call, how, and how many
		// responses match nothing.
		complete, tail := splitLines(data)
		complete = append(complete, tail)
		type outcome struct{ err bool }
		settled := map[int64]outcome{}
		unmatched := 0
		for range 2 {
			for _, c := range responsesOf(complete) {
				n, ok := int64(0), false
				if c.id.Kind == wire.Number {
					n, ok = wire.NumberInt64(c.id.Raw)
				}
				if _, done := settled[n]; !ok || n < 1 || n > int64(k) || done {
					unmatched++
					continue
				}
				ek := c.env.Error.Kind
				settled[n] = outcome{err: ek == wire.Object || ek == wire.Array}
			}
		}

		token := fmt.Sprintf("%x", time.Now().UnixNano())
		synced := make(chan struct{})
		reg := rpc.NewRegistry()
		rpc.HandleNotification(reg, rpc.NewNotification[string]("sync"), func(_ context.Context, s string) {
			if s == token {
				close(synced)
			}
		})
		drops := 0
		requests := make(chan [2]int64, 8) // {id, call index}
		w := &rpctest.Recorder{OnFrame: func(b []byte) {
			var fr struct {
				ID     int64
				Method string
				Params struct{ I int64 }
			}
			if json.Unmarshal(b, &fr) == nil && fr.Method == "m" {
				requests <- [2]int64{fr.ID, fr.Params.I}
			}
		}}
		pr, pw := io.Pipe()
		c := rpc.NewConn(pr, w, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) {
			if d.Reason == rpc.DropUnmatchedResponse {
				drops++
			}
		}})
		c.Start()
		type ended struct {
			i   int64
			err error
		}
		ends := make(chan ended, k)
		for i := range k {
			go func() {
				var res callResult
				err := c.Call(context.Background(), "m", map[string]int{"i": i}, &res)
				ends <- ended{int64(i), err}
			}()
		}
		callOf := map[int64]int64{} // request id -> call index
		for range k {
			select {
			case r := <-requests:
				callOf[r[0]] = r[1]
			case <-time.After(waitBound):
				c.Close()
				pr.Close()
				t.Fatalf("the calls were not sent within 10s: %q", w.Frames(t))
			}
		}
		go func() {
			pw.Write(append(append(append(append([]byte(nil), data...), '\n'), data...), '\n'))
			fmt.Fprintf(pw, "{\"jsonrpc\":\"2.0\",\"method\":\"sync\",\"params\":%q}\n", token)
		}()
		select {
		case <-synced:
		case <-time.After(waitBound):
			c.Close()
			pr.Close()
			t.Fatal("the Conn did not read the input within 10s")
		}
		pw.Close()
		got := map[int64]error{}
		for range k {
			select {
			case e := <-ends:
				got[e.i] = e.err
			case <-time.After(waitBound):
				t.Fatal("a call did not end within 10s")
			}
		}
		waitOrFail(t, c)

		for id, i := range callOf {
			err := got[i]
			want, ok := settled[id]
			switch {
			case !ok:
				if !errors.Is(err, rpc.ErrInputEnded) {
					t.Fatalf("call %d: %v, want ErrInputEnded (nothing answered it)", id, err)
				}
			case want.err:
				var re *rpc.Error
				if !errors.As(err, &re) {
					t.Fatalf("call %d: %v, want an *rpc.Error", id, err)
				}
			default:
				if err != nil && !errors.Is(err, rpc.ErrInvalidResult) {
					t.Fatalf("call %d: %v, want success or ErrInvalidResult", id, err)
				}
			}
		}
		if drops != unmatched {
			t.Fatalf("%d responses dropped as unmatched, want %d", drops, unmatched)
		}
	})
}

// responsesOf returns the responses of lines, in order: each line that is
// one, and each element of a line that is an array of responses only (an
// answer to a Batch, which a Conn without Options.Batches reads too).
func responsesOf(lines [][]byte) []classified {
	var out []classified
	for _, l := range lines {
		c := classify(l)
		if c.class == classResponse {
			out = append(out, c)
			continue
		}
		if c.class != classNotObject || len(c.line) == 0 || c.line[0] != '[' {
			continue
		}
		var s wire.Scanner
		var env wire.Envelope
		if _, depth, err := s.Scan(c.line, &env); err != nil || depth > rpc.MaxDepth {
			continue
		}
		var elems []classified
		wire.Elements(c.line, func(elem []byte) bool {
			e := classify(elem)
			elems = append(elems, e)
			return e.class == classResponse
		})
		if len(elems) > 0 && elems[len(elems)-1].class == classResponse {
			out = append(out, elems...)
		}
	}
	return out
}
