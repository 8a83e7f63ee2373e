package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"pgregory.net/rapid"
)

// TestPropertyEveryRequestEndsOnce sends requests whose handlers return at
// once or wait for their context (or for the end of the script), and
// cancel notifications for them, for unknown ids and in other spellings of
// the same id, under no policy, MCP's and LSP's, with few handler slots so
// that requests also wait for one: every request ends exactly once, as
// its policy says — answered with its result, answered -32800 (LSP), or
// not answered (MCP) — and a handler runs at most once, seeing the peer's
// cancellation when it was cancelled before the end.
func TestPropertyEveryRequestEndsOnce(t *testing.T) {
	rpctest.CheckNoLeak(t)
	rapid.Check(t, func(rt *rapid.T) {
		policies := map[string]*rpc.CancelPolicy{"none": nil, "MCP": rpc.MCPCancellation(), "LSP": rpc.LSPCancellation()}
		policyName := rapid.SampledFrom([]string{"none", "MCP", "LSP"}).Draw(rt, "policy")
		policy := policies[policyName]

		type request struct {
			id        string // raw
			cancelIDs []string
			mode      string // "quick", "wait-error", "wait-result"
			cancelled bool   // a cancel naming it came after it
		}
		n := rapid.IntRange(1, 10).Draw(rt, "requests")
		reqs := make([]*request, n)
		byID := map[string]*request{}
		for i := range reqs {
			r := &request{mode: rapid.SampledFrom([]string{"quick", "wait-error", "wait-result"}).Draw(rt, "mode")}
			if rapid.Bool().Draw(rt, "string id") {
				r.id = fmt.Sprintf(`"r%d"`, i)
				r.cancelIDs = []string{r.id, fmt.Sprintf(`"\u0072%d"`, i)}
			} else {
				r.id = fmt.Sprint(i + 1)
				r.cancelIDs = []string{r.id, r.id + ".0", r.id + "e0", fmt.Sprintf("%d0e-1", i+1)}
			}
			reqs[i] = r
			byID[r.id] = r
		}

		// The script: each request in turn, with cancels drawn among them.
		var script []string
		cancel := func(id string) string {
			if policyName == "LSP" {
				return `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`
			}
			return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
		}
		for i, r := range reqs {
			script = append(script, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"work","params":{"text":%q}}`, r.id, r.mode))
			for range rapid.IntRange(0, 2).Draw(rt, "cancels") {
				switch k := rapid.IntRange(0, i+1).Draw(rt, "target"); {
				case k == i+1: // an id no request has
					script = append(script, cancel(`"nobody"`))
				default:
					target := reqs[k]
					script = append(script, cancel(rapid.SampledFrom(target.cancelIDs).Draw(rt, "spelling")))
					target.cancelled = true
				}
			}
		}

		var mu sync.Mutex
		ran := map[string]int{}
		causes := map[string]error{}
		release := make(chan struct{})
		synced := make(chan struct{})
		reg := rpc.NewRegistry()
		rpc.Handle(reg, rpc.NewMethod[echoParams, echoResult]("work"), func(ctx context.Context, p echoParams) (echoResult, error) {
			id := string(rpc.RequestFromContext(ctx).ID)
			mu.Lock()
			ran[id]++
			mu.Unlock()
			if p.Text != "quick" {
				select {
				case <-ctx.Done():
				case <-release:
				}
			}
			mu.Lock()
			causes[id] = context.Cause(ctx)
			mu.Unlock()
			if p.Text == "wait-error" && ctx.Err() != nil {
				return echoResult{}, ctx.Err()
			}
			return echoResult{Echo: id}, nil
		})

		connIn, feed := io.Pipe()
		var out rpctest.LockedBuffer
		c := rpc.NewConn(connIn, &out, &rpc.Options{
			Handler:               reg,
			Cancellation:          policy,
			MaxConcurrentRequests: rapid.IntRange(1, 3).Draw(rt, "slots"),
			// A notification without a handler is dropped as it is read,
			// whatever runs: the sync below says the reader got to it.
			OnDrop: func(d rpc.Drop) {
				if d.Method == "sync" {
					close(synced)
				}
			},
		})
		c.Start()
		for _, line := range script {
			io.WriteString(feed, line+"\n")
		}
		// Every cancel has been handled once the reader drops this.
		io.WriteString(feed, `{"jsonrpc":"2.0","method":"sync"}`+"\n")
		<-synced
		close(release)
		feed.Close()
		c.Wait()

		answers := map[string][]string{}
		sc := bufio.NewScanner(strings.NewReader(out.String())) // c.Wait returned: no more writes
		for sc.Scan() {
			var f struct {
				ID     json.RawMessage
				Result *echoResult
				Error  *struct{ Code int }
			}
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil || f.ID == nil {
				rt.Fatalf("unexpected frame %s", sc.Bytes())
			}
			what := "result"
			if f.Error != nil {
				what = fmt.Sprint(f.Error.Code)
			}
			answers[string(f.ID)] = append(answers[string(f.ID)], what)
		}
		for id := range answers {
			if byID[id] == nil {
				rt.Fatalf("answer to no request: %s", id)
			}
		}
		for _, r := range reqs {
			got := strings.Join(answers[r.id], ",")
			runs := ran[r.id]
			if runs > 1 {
				rt.Fatalf("request %s ran %d times", r.id, runs)
			}
			var want []string // the outcomes allowed
			switch {
			case policy == nil || !r.cancelled:
				want = []string{"result"}
			case policyName == "MCP" && r.mode == "quick":
				want = []string{"", "result"} // it may have ended before the cancel came
			case policyName == "MCP":
				want = []string{""}
			case r.mode == "wait-error":
				want = []string{"-32800"}
			case runs == 1: // LSP: a handler that ran returned its result
				want = []string{"result"}
			default:
				want = []string{"-32800"} // LSP: cancelled before it ran
			}
			if !contains(want, got) {
				rt.Fatalf("request %s (%s, cancelled %v, ran %d) under %s: answers %q, want one of %q", r.id, r.mode, r.cancelled, runs, policyName, got, want)
			}
			if policy != nil && r.cancelled && r.mode != "quick" && runs == 1 && !errors.Is(causes[r.id], rpc.ErrPeerCancelled) {
				rt.Fatalf("request %s was cancelled, but its handler saw %v", r.id, causes[r.id])
			}
			if (policy == nil || !r.cancelled) && runs != 1 {
				rt.Fatalf("request %s ran %d times, want once", r.id, runs)
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
