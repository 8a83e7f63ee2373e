// Command dshrpc drives, watches and checks a DSH wire end: the JSON-RPC
// line protocol between a DeepSeek Harness runtime and its SDK clients,
// whose contract is docs/wire.md in the linerpc repository.
//
//	dshrpc run [flags] PROMPT        prompt a runtime (default: the built-in demo) and render the turn
//	dshrpc tap [--log FILE] -- CMD   run a runtime as a child and log every frame crossing its stdio
//	dshrpc check [FILE|-]...         report every frame of transcripts that breaks the contract
//	dshrpc serve-demo                the demo runtime on stdin/stdout
//	dshrpc serve-replay FILE         a recorded conversation served as a runtime on stdin/stdout
//	dshrpc serve-script FILE         scripted turns (JSON) served as a runtime on stdin/stdout
//	dshrpc schema                    the protocol's OpenRPC document (JSON Schema of every payload)
//	dshrpc version                   the binary's version and the commit it was built from
//
// Exit status: 0 success; 1 the turn did not complete (run), problems
// were found (check), the client departed from the recording
// (serve-replay) or a prompt came past the script (serve-script); 2 usage
// error (bad flags or arguments, an unreadable or unsupported image); 3
// the runtime failed (missing binary, died, refused a request, broke the
// protocol), a transcript could not be read (check, serve-replay) or a
// script (serve-script); 130 interrupted by Ctrl-C.
// tap exits with its child's status.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Exit statuses, documented in the package comment and in usage.
const (
	exitOK          = 0
	exitFailed      = 1 // turn did not complete; check found problems; the client departed (serve-replay); a prompt past the script (serve-script)
	exitUsage       = 2
	exitRuntime     = 3 // the runtime failed; check could not read a file; serve-script its script
	exitInterrupted = 130
)

const usageText = `dshrpc drives, watches and checks a DSH (DeepSeek Harness) wire end.

Usage:
  dshrpc run [flags] PROMPT...      prompt a runtime and render the turn as it streams
                                    (default runtime: the built-in demo, in-process)
  dshrpc tap [--log FILE] -- CMD ARGS...
                                    run a runtime as a child, pass its stdio through and
                                    log every frame (NDJSON) to stderr or FILE
  dshrpc check [FILE|-]...          report frames of transcripts that break the contract
  dshrpc serve-demo                 serve the demo runtime on stdin/stdout
  dshrpc serve-replay FILE          serve a recorded conversation (a transcript, a tap
                                    log, raw frames) on stdin/stdout as a runtime
  dshrpc serve-script FILE          serve scripted turns (JSON, see its -h) on stdin/stdout
                                    as a runtime
  dshrpc schema                     print the protocol's OpenRPC document: the JSON Schema
                                    of every method's params and result
  dshrpc version                    print the binary's version, Go version, platform and
                                    the commit it was built from (also --version)
  dshrpc help [COMMAND]             show help

Run 'dshrpc COMMAND -h' for the flags of a command.

Exit status:
  0    success
  1    the turn did not complete (run), problems found (check), the client
       departed from the recording (serve-replay), a prompt came past the
       script (serve-script)
  2    usage error: bad flags or arguments, unreadable or unsupported image
  3    runtime failure: missing binary, runtime died, request refused, protocol error;
       a transcript that cannot be read (check, serve-replay), a script (serve-script)
  130  interrupted (Ctrl-C)
  tap exits with the status of its child.
`

// env is what a command may touch of the process: tests run commands
// in-process through it, and main passes the real streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// command is one subcommand.
type command struct {
	name  string
	usage string // full usage text shown by -h
	run   func(e *env, args []string) int
}

func commands() []command {
	return []command{
		{"run", runUsage, runCmd},
		{"tap", tapUsage, tapCmd},
		{"check", checkUsage, checkCmd},
		{"serve-demo", serveUsage, serveCmd},
		{"serve-replay", replayUsage, replayCmd},
		{"serve-script", scriptUsage, scriptCmd},
		{"schema", schemaUsage, schemaCmd},
		{"version", versionUsage, versionCmd},
	}
}

func main() {
	os.Exit(dispatch(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

// dispatch runs the command named by args[0] and returns the exit status.
func dispatch(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			for _, c := range commands() {
				if c.name == args[1] {
					fmt.Fprint(e.stdout, c.usage)
					return exitOK
				}
			}
			return usageError(e, "", fmt.Errorf("unknown command %q", args[1]))
		}
		fmt.Fprint(e.stdout, usageText)
		return exitOK
	case "-version", "--version":
		return versionCmd(e, args[1:])
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(e, args[1:])
		}
	}
	return usageError(e, "", fmt.Errorf("unknown command %q", name))
}

// usageError reports a usage error of cmd ("" for dshrpc itself) and
// returns exitUsage.
func usageError(e *env, cmd string, err error) int {
	prefix, help := "dshrpc", "dshrpc -h"
	if cmd != "" {
		prefix, help = "dshrpc "+cmd, "dshrpc "+cmd+" -h"
	}
	fmt.Fprintf(e.stderr, "%s: %v\nRun '%s' for usage.\n", prefix, err, help)
	return exitUsage
}

// newFlagSet returns a flag set that reports nothing itself: parse turns
// its errors into our usage errors, and -h into the command's usage on
// stdout (help that was asked for is not an error).
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// errHelpShown tells a command that -h was handled and it should exit 0.
var errHelpShown = errors.New("help shown")

// parseInterleaved parses flags that may come before, between or after the
// positional arguments (so that `dshrpc run "hi" --json` works, which the
// flag package alone does not allow), and returns the positionals. A "--"
// ends the flags: everything after it is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseArgs parses args for cmd with fs, handling -h and flag errors; on
// a non-nil error the caller returns the status it got.
func parseArgs(e *env, cmd, usage string, fs *flag.FlagSet, args []string, interleaved bool) ([]string, int, error) {
	var pos []string
	var err error
	if interleaved {
		pos, err = parseInterleaved(fs, args)
	} else {
		err = fs.Parse(args)
		pos = fs.Args()
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(e.stdout, usage)
		return nil, exitOK, errHelpShown
	case err != nil:
		return nil, usageError(e, cmd, twoDashes(err)), err
	}
	return pos, exitOK, nil
}

// flagName matches a flag name as the flag package's errors spell it, with
// one dash, after the words that precede it in those errors.
var flagName = regexp.MustCompile(`(defined: |argument: |for flag |value "[^"]*" for )-([A-Za-z0-9][A-Za-z0-9-]*)`)

// twoDashes respells the flag names in an error of the flag package with
// two dashes, as the usage texts and the README write them (the package
// accepts both).
func twoDashes(err error) error {
	return errors.New(flagName.ReplaceAllString(err.Error(), "$1--$2"))
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
