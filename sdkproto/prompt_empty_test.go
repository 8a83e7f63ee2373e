package sdkproto_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

// TestPromptRefusesNoContent: a prompt without a content block, which the
// contract refuses, fails at the call with ErrEmptyPrompt naming the
// session, before anything is sent, through each of Prompt, Run, RunFunc
// and Stream; a text block with an empty text, which the contract
// accepts, is sent, and is the first frame the runtime reads.
func TestPromptRefusesNoContent(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	ctx := t.Context()
	check := func(call string, err error, session string) {
		t.Helper()
		if !errors.Is(err, sdkproto.ErrEmptyPrompt) {
			t.Fatalf("%s: %v, want ErrEmptyPrompt", call, err)
		}
		if want := `the prompt to session "` + session + `" has none`; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", call, err.Error(), want)
		}
	}
	_, err := c.Prompt(ctx, "main")
	check("Prompt without blocks", err, "main")
	_, err = c.Prompt(ctx, "main", []sdkproto.ContentBlock{}...)
	check("Prompt with an empty slice", err, "main")
	_, err = c.Run(ctx, "say hi") // the text taken for the session id
	check("Run(ctx, text)", err, "say hi")
	_, err = c.Run(ctx, "")
	check(`Run(ctx, "")`, err, "")
	_, err = c.RunFunc(ctx, "main", func(sdkproto.Notification) error { return nil })
	check("RunFunc without blocks", err, "main")
	n := 0
	for note, err := range c.Stream(ctx, "main") {
		n++
		if note.Method != "" {
			t.Errorf("Stream without blocks yielded %v", note)
		}
		check("Stream without blocks", err, "main")
	}
	if n != 1 {
		t.Errorf("Stream without blocks yielded %d times, want once", n)
	}

	prompt := clGo(func() (string, error) { return c.Prompt(ctx, "main", sdkproto.TextBlock("")) })
	r := p.expect("session/prompt") // the first frame: nothing was sent before it
	if got := string(compactLine(r.Params)); got != `{"contentBlocks":[{"text":"","type":"text"}],"sessionId":"main"}` {
		t.Errorf("prompt params %s", got)
	}
	p.result(r, `{"messageId":"m-1"}`)
	if id, err := prompt(); err != nil || id != "m-1" {
		t.Fatalf("Prompt of an empty text: %q, %v", id, err)
	}
}
