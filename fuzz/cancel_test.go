package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// FuzzCancellation sends a Conn under MCP's or LSP's cancellation policy
// three requests (ids 1, "a" and 2.5; one handler slot, so that two wait)
// whose handlers wait for their context, then each line of the input as
// the params of a cancel notification, then releases the handlers. The
// peer's bytes (each line that is one JSON value) reach the policy's
// params parser and the id matching: the
// Conn never fails, each request is answered at most once, with its result
// or (LSP) -32800, and nothing else is ever answered.
func FuzzCancellation(f *testing.F) {
	for _, s := range []string{
		`{"requestId":1,"reason":"x"}`,
		`{"requestId":"a"}` + "\n" + `{"requestId":2.50}`,
		`{"id":1e0}` + "\n" + `{"id":"\u0061"}`,
		`{"requestId":25e-1,"reason":7}`,
		`[1]`, `null`, `{"requestId":{}}`, `{"id":-0}`, `{"requestId":1e400}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		policy, method := rpc.MCPCancellation(), "notifications/cancelled"
		if which%2 == 1 {
			policy, method = rpc.LSPCancellation(), "$/cancelRequest"
		}
		release := make(chan struct{})
		synced := make(chan struct{})
		reg := rpc.NewRegistry()
		rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, string]("wait"), func(ctx context.Context, _ rpc.NoParams) (string, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return "done", nil
		})

		in, feed := io.Pipe()
		out := &rpctest.Recorder{}
		// "sync" has no handler: the reader drops it as it reads it,
		// whatever runs, so its drop says every cancel before it was read.
		c := rpc.NewConn(in, out, &rpc.Options{Handler: reg, Cancellation: policy, MaxConcurrentRequests: 1,
			OnDrop: func(d rpc.Drop) {
				if d.Method == "sync" {
					close(synced)
				}
			}})
		c.Start()
		go func() {
			for _, id := range []string{`1`, `"a"`, `2.5`} {
				io.WriteString(feed, `{"jsonrpc":"2.0","id":`+id+`,"method":"wait"}`+"\n")
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if !json.Valid(line) {
					continue // params must be one value, or the line would be another frame
				}
				io.WriteString(feed, `{"jsonrpc":"2.0","method":"`+method+`","params":`+string(line)+"}\n")
			}
			io.WriteString(feed, `{"jsonrpc":"2.0","method":"sync"}`+"\n")
		}()
		<-synced
		close(release)
		feed.Close()
		c.Wait()

		answered := map[string]int{}
		for _, frame := range out.Frames(t) {
			var r struct {
				ID     json.RawMessage
				Result *string
				Error  *struct{ Code int }
			}
			if err := json.Unmarshal(frame, &r); err != nil || r.ID == nil {
				t.Fatalf("unexpected frame %s", frame)
			}
			id := string(r.ID)
			if id != `1` && id != `"a"` && id != `2.5` {
				t.Fatalf("answer to no request: %s", frame)
			}
			answered[id]++
			switch {
			case r.Result != nil && *r.Result == "done":
			case r.Error != nil && r.Error.Code == -32800 && which%2 == 1:
			default:
				t.Fatalf("answer %s under %s", frame, method)
			}
		}
		for id, n := range answered {
			if n > 1 {
				t.Fatalf("request %s answered %d times:\n%s", id, n, strings.Join(frameStrings(out.Frames(t)), ""))
			}
		}
	})
}

func frameStrings(frames [][]byte) []string {
	var s []string
	for _, f := range frames {
		s = append(s, string(f))
	}
	return s
}
