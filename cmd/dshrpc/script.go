package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

const scriptUsage = `Usage: dshrpc serve-script [--quiet] FILE

Serve a script on stdin/stdout as a runtime, for clients in any language and
for programs that start their runtime themselves: the scripted runtime of
package sdkproto/scripted, which sends what the real runtime sends around
each scripted turn (the envelope, seqs, order and statuses of its recorded
turns). FILE holds the turns as JSON, one a prompt, in the order the prompts
come, whatever their sessions; each turn is a list of actions:

  {"turns": [
    [{"kind": "text", "parts": ["Hel", "lo"]},
     {"kind": "usage", "usage": {"inputTokens": 12, "outputTokens": 2}}],
    [{"kind": "tool-call", "name": "bash", "arguments": {"command": "date"},
      "output": "Mon\n"},
     {"kind": "text", "parts": ["It is Monday."]}],
    [{"kind": "text", "parts": ["cut"]}, {"kind": "max-tokens"}]
  ]}

The kinds: text and reasoning (parts), usage (usage), tool-call (id, name,
arguments, output, isError, error), subagent (label, prompt, child: a list of
actions), model-error (failure), max-tokens, refuse (message; alone in its
turn), pause (duration, as "1.5s"), ask (method, params: a request to the
client), event (type, data). The Go documentation of scripted.Script says
what each does and what each member holds. A prompt past the last turn is
answered with a -32603 error, and once serving ends serve-script says which
came first (its number, the first prompt being 1, and its session) and
exits 1.

  dshrpc run --runtime "dshrpc serve-script turns.json" "say hi"

A line that is not served gets no answer, as from the real runtime (a line
that is not JSON, not an object, a notification, a response to nothing, a
line without its LF at the end of the input); each is reported on stderr,
with why and how the line starts:

  dshrpc serve-script: ignored an input line (malformed JSON: ...): hello

Flags:
` + quietUsage + `
Exit status: 0 served until a shutdown request, the end of the client's
input, SIGINT or SIGTERM; 1 the same, but a prompt came past the script (the
error names it: "no turn scripted for prompt 3 (session main), past the
script's 2 turns"); 2 usage error; 3 the script cannot be read (the error
names the turn and action, as turns[1][2]) or served.
`

func scriptCmd(e *env, args []string) int {
	fs := newFlagSet("serve-script")
	quiet := fs.Bool("quiet", false, "")
	pos, code, err := parseArgs(e, "serve-script", scriptUsage, fs, args, true)
	if err != nil {
		return code
	}
	if err := servedFile(pos, "script"); err != nil {
		return usageError(e, "serve-script", err)
	}
	script, err := scripted.LoadScript(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc serve-script: %s\n", strings.TrimPrefix(err.Error(), "scripted: "))
		return exitRuntime
	}
	rt, err := scripted.NewRuntime(script, nil)
	if err != nil { // LoadScript refuses what NewRuntime would
		fmt.Fprintf(e.stderr, "dshrpc serve-script: %s\n", strings.TrimPrefix(err.Error(), "scripted: "))
		return exitRuntime
	}
	// SIGTERM and SIGINT end serving with 0, as the real runtime exits 0
	// on SIGTERM; a prompt past the script is reported then too.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	drops := newDropReporter(e, "serve-script", *quiet)
	err = sdkproto.NewServer(rt, &sdkproto.ServerOptions{OnDrop: drops.onDrop()}).Serve(ctx, drops.watch(e.stdin), e.stdout)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		fmt.Fprintf(e.stderr, "dshrpc serve-script: %v\n", err)
		return exitRuntime
	case rt.Err() != nil: // as scripted.Serve returns it
		fmt.Fprintf(e.stderr, "dshrpc serve-script: %s\n", strings.TrimPrefix(rt.Err().Error(), "scripted: "))
		return exitFailed
	}
	return exitOK
}
