package scripted_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

// maxWait bounds every wait of these tests: reaching it fails the test
// with what it waited for.
const maxWait = time.Minute

// A misused Turn is refused by Script.Err, NewRuntime and Serve, naming
// the turn.
func TestMisusedScriptRefused(t *testing.T) {
	s := scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn(), scripted.NewTurn().MaxTokens().Text("late")}}
	const want = "Script.Turns[1]: scripted: text after the turn ended (Refuse, ModelError and MaxTokens end it)"
	if err := s.Err(); err == nil || err.Error() != want {
		t.Errorf("Script.Err = %v, want %s", err, want)
	}
	if rt, err := scripted.NewRuntime(s, nil); rt != nil || err == nil || err.Error() != want {
		t.Errorf("NewRuntime = %v, %v, want nil, %s", rt, err, want)
	}
	if err := scripted.Serve(t.Context(), s, strings.NewReader(""), io.Discard); err == nil || err.Error() != want {
		t.Errorf("Serve = %v, want %s", err, want)
	}
	if err := (scripted.Script{Turns: []*scripted.Turn{nil}}).Err(); err == nil || err.Error() != "scripted: Script.Turns[0] is nil" {
		t.Errorf("Script.Err of a nil Turn = %v", err)
	}
}

// A prompt past the script is answered with -32603 and its error, and
// Serve returns, once serving has ended, the error of the first such
// prompt, wrapping ErrPastScript: after a shutdown request, and when ctx
// ends, which does not hide it. A Reply that returns nil is said so.
func TestServePastScript(t *testing.T) {
	const first = "scripted: no turn scripted for prompt 1 (session s2), past the script's 1 turn"
	for _, c := range []struct {
		name  string
		reply func(scripted.Prompt) *scripted.Turn
		end   string // "close" or "ctx"
		want  []string
		serve string
	}{
		{"shutdown", nil, "close", []string{first, "scripted: no turn scripted for prompt 2 (session main), past the script's 1 turn"},
			first + " (and 1 more prompt after it)"},
		{"ctx", nil, "ctx", []string{first}, first},
		{"reply", func(scripted.Prompt) *scripted.Turn { return nil }, "close", []string{first + ", and Reply returned nil"},
			first + ", and Reply returned nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				toRuntime, clientOut := io.Pipe()
				clientIn, fromRuntime := io.Pipe()
				served := make(chan error, 1)
				go func() {
					served <- scripted.Serve(ctx, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one")}, Reply: c.reply},
						toRuntime, fromRuntime)
					fromRuntime.Close()
					toRuntime.Close()
				}()
				cl := sdkproto.NewClient(clientIn, clientOut, nil)
				defer cl.Close()
				if _, err := cl.Initialize(t.Context(), params); err != nil {
					t.Fatal(err)
				}
				if _, err := cl.Run(t.Context(), "main", sdkproto.TextBlock("a")); err != nil {
					t.Fatal(err)
				}
				for i, want := range c.want {
					session := []string{"s2", "main"}[i]
					_, err := cl.Prompt(t.Context(), session, sdkproto.TextBlock("past"))
					var re *sdkproto.ResponseError
					if !errors.As(err, &re) || re.Code != -32603 || re.Message != want {
						t.Errorf("prompt %d: %v, want -32603 %q", i+1, err, want)
					}
				}
				if c.end == "ctx" {
					cancel()
				} else if err := cl.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				timer := time.NewTimer(maxWait)
				defer timer.Stop()
				select {
				case err := <-served:
					if !errors.Is(err, scripted.ErrPastScript) || err.Error() != c.serve {
						t.Errorf("Serve returned %v, want %q, an ErrPastScript", err, c.serve)
					}
				case <-timer.C:
					t.Fatalf("Serve had not returned %v after the serving ended (%s)", maxWait, c.end)
				}
			})
		})
	}
}
