package scripted_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

// connect serves rt with an sdkproto.Server on two pipes and returns an
// initialized Client of it, and a channel that gets what the Server's
// Serve returned; the test's cleanup closes the Client.
func connect(t *testing.T, rt *scripted.Runtime) (*sdkproto.Client, <-chan error) {
	t.Helper()
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- sdkproto.NewServer(rt, nil).Serve(context.Background(), toRuntime, fromRuntime)
		fromRuntime.Close()
		toRuntime.Close()
	}()
	c := sdkproto.NewClient(clientIn, clientOut, nil)
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	return c, served
}

// waitServed returns what served gets, failing the test when nothing
// comes within linetest.WaitBound.
func waitServed(t *testing.T, served <-chan error) error {
	t.Helper()
	return linetest.Within(t, served, "Serve to return after the client closed")
}

// Prompts are numbered from 1 in the error of a prompt past the script:
// the third prompt of a two-turn script is prompt 3, in the answer the
// client gets, in what Options.PastScript hears and in Runtime.Err.
func TestPastScriptNumbersPromptsFromOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			heard []string
		)
		var rt *scripted.Runtime
		rt, err := scripted.NewRuntime(scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one"), scripted.NewTurn().Text("two")}},
			&scripted.Options{PastScript: func(p scripted.Prompt, err error) {
				mu.Lock()
				defer mu.Unlock()
				heard = append(heard, err.Error()+" / N="+string(rune('0'+p.N))+" / Err: "+rt.Err().Error())
			}})
		if err != nil {
			t.Fatal(err)
		}
		c, served := connect(t, rt)
		for _, text := range []string{"a", "b"} {
			if _, err := c.Run(t.Context(), "main", sdkproto.TextBlock(text)); err != nil {
				t.Fatal(err)
			}
		}
		if rt.Err() != nil {
			t.Errorf("Err before any prompt past the script: %v", rt.Err())
		}
		const third = "scripted: no turn scripted for prompt 3 (session main), past the script's 2 turns"
		_, err = c.Prompt(t.Context(), "main", sdkproto.TextBlock("c"))
		var re *sdkproto.ResponseError
		if !errors.As(err, &re) || re.Code != -32603 || re.Message != third {
			t.Errorf("the third prompt: %v, want -32603 %q", err, third)
		}
		c.Prompt(t.Context(), "other", sdkproto.TextBlock("d"))
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := waitServed(t, served); err != nil {
			t.Errorf("the Server's Serve: %v", err)
		}
		want := []string{
			third + " / N=2 / Err: " + third,
			"scripted: no turn scripted for prompt 4 (session other), past the script's 2 turns / N=3 / Err: " + third + " (and 1 more prompt after it)",
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(heard, "\n") != strings.Join(want, "\n") {
			t.Errorf("PastScript heard\n%s\nwant\n%s", strings.Join(heard, "\n"), strings.Join(want, "\n"))
		}
		if err := rt.Err(); !errors.Is(err, scripted.ErrPastScript) || err.Error() != third+" (and 1 more prompt after it)" {
			t.Errorf("Err = %v", err)
		}
	})
}

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
	const first = "scripted: no turn scripted for prompt 2 (session s2), past the script's 1 turn"
	for _, c := range []struct {
		name  string
		reply func(scripted.Prompt) *scripted.Turn
		end   string // "close" or "ctx"
		want  []string
		serve string
	}{
		{"shutdown", nil, "close", []string{first, "scripted: no turn scripted for prompt 3 (session main), past the script's 1 turn"},
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
				err := linetest.Within(t, served, "Serve to return after the serving ended ("+c.end+")")
				if !errors.Is(err, scripted.ErrPastScript) || err.Error() != c.serve {
					t.Errorf("Serve returned %v, want %q, an ErrPastScript", err, c.serve)
				}
			})
		})
	}
}
