package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/linerpc/linerpc/sdkproto/replay"
)

const replayUsage = `Usage: dshrpc serve-replay [--list] [--quiet] FILE

Serve a recorded conversation on stdin/stdout as a runtime, for clients in
any language: a transcript (testdata/transcripts/*.ndjson), a 'dshrpc tap'
log, or raw frames (one JSON-RPC frame a line, its direction inferred, or
given by "c2s " or "s2c " before it). Each frame the client writes must be
the recording's next client frame: the same method and the same params,
compared as JSON values (client frames recorded back to back may come in
any order). It is answered with the recorded responses and notifications,
each written once the client frame that caused it has come.

What a new client chooses is rewritten, not compared: request ids (each
response echoes the client's), session ids (the first prompt naming a
recorded session binds it to the client's id, which every frame about that
session then carries), and the cwd of initialize (written where the
recorded one appears, as in the system prompt). Message ids are the
runtime's: they are written as recorded.

When the client departs from the recording (another method, other params,
a frame after the recording's last, a line that is not a JSON-RPC frame, an
input that ends too early), a departing request is answered with a -32603
error that names the line of the recording and what differed, the same is
printed on stderr with how the client's line starts, and serve-replay exits
1. A line that the input ends without its LF is no frame: it is reported on
stderr too.

It exits 0 once the recording's last client frame, a shutdown request, is
answered, or when the client's input ends after its last client frame;
SIGINT and SIGTERM end it with 0 too.

  dshrpc run --runtime "dshrpc serve-replay testdata/transcripts/text-turn.ndjson" \
      --max-tokens 4096 "say hi"

Flags:
  --list   print the client frames the recording expects, one a line
           with its line number, and exit
` + quietUsage + `
Exit status: 0 the client followed the recording; 1 it departed from it;
2 usage error; 3 the recording cannot be read or replayed.
`

func replayCmd(e *env, args []string) int {
	fs := newFlagSet("serve-replay")
	list := fs.Bool("list", false, "")
	quiet := fs.Bool("quiet", false, "")
	pos, code, err := parseArgs(e, "serve-replay", replayUsage, fs, args, true)
	if err != nil {
		return code
	}
	if err := servedFile(pos, "recording"); err != nil {
		return usageError(e, "serve-replay", err)
	}
	rec, err := loadRecording(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc serve-replay: %v\n", err)
		return exitRuntime
	}
	if *list {
		for _, f := range rec.ClientFrames() {
			fmt.Fprintf(e.stdout, "%d\t%s\n", f.Line, f.Text)
		}
		return exitOK
	}
	// SIGTERM and SIGINT end serving with 0, as the real runtime exits 0
	// on SIGTERM.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	drops := newDropReporter(e, "serve-replay", *quiet)
	err = rec.Serve(ctx, drops.watch(e.stdin), e.stdout)
	drops.unterminated()
	var d *replay.Departure
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case errors.As(err, &d):
		fmt.Fprintf(e.stderr, "dshrpc serve-replay: %s: %s\n", pos[0], legible(strings.TrimPrefix(err.Error(), "replay: ")))
		if d.Got != "" {
			fmt.Fprintf(e.stderr, "  the client sent: %s\n", shown([]byte(d.Got), int64(len(d.Got))))
		}
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "dshrpc serve-replay: %v\n", err)
	return exitRuntime
}

// loadRecording loads the recording of path.
func loadRecording(path string) (*replay.Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := replay.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "replay: "))
	}
	return rec, nil
}

// servedFile checks the arguments of a command that serves one FILE (what
// names it: a recording, a script) on stdin and stdout, which cannot then
// be read from stdin.
func servedFile(pos []string, what string) error {
	switch {
	case len(pos) == 0:
		return fmt.Errorf("missing FILE, the %s to serve", what)
	case len(pos) > 1:
		return fmt.Errorf("unexpected argument %q: one %s is served", pos[1], what)
	case pos[0] == "-":
		return fmt.Errorf("the %s cannot be read from stdin, which is the client's: name a FILE", what)
	}
	return nil
}
