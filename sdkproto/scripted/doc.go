// Package scripted is a DSH runtime that plays a script: for each prompt
// it receives, the turn the script declares (text streamed in deltas,
// reasoning, tool calls and their results, a subagent with its own
// events, a refused prompt, a failed model call, usage, pauses, requests
// to the client), with the envelope, the seqs, the order and the status
// transitions of the real runtime's recorded turns
// (testdata/transcripts). It needs no model, no network and no Node.
//
// Package sdkproto/sdktest builds on it for tests: sdktest.NewRuntime
// plays a Script to a connected *sdkproto.Client, records every frame for
// the test's assertions and checks, when the test ends, that nothing was
// left running. This package is the runtime alone, with no dependency on
// package testing, for programs that serve a script (dshrpc serve-script
// FILE), examples and tests that connect it themselves. Package
// sdkproto/demo is the other scripted runtime: it answers each prompt by
// its text (/think, /tool, ...), with no script.
//
// # The script
//
// A Script lists the Turns, played in the order the prompts arrive,
// whatever their sessions: the first prompt plays Turns[0], the second
// Turns[1]. A Turn is a list of actions, built with NewTurn and its
// methods, played in order once the session's agent claims the prompt:
//
//	scripted.NewTurn().
//		Reasoning("The user ", "asks for the date.").   // a reasoning block, two deltas
//		ToolCall(scripted.ToolCall{Name: "bash",         // ends the message: tool/call, tool/result,
//			Arguments: `{"command":"date"}`,            // then the next step
//			Output: "Mon Jan 5\n"}).
//		Text("It is ", "Monday.").                      // the answer, two deltas
//		Usage(sdkproto.TokenUsage{InputTokens: 120, OutputTokens: 9})
//
// Around the actions the runtime sends what the real one does: the
// preamble of a new session (permission/preset, sandbox/mode,
// approval/policy), the receipt, running, turn/start and the claim before
// the reply to session/prompt; step/start, the user message and, on a
// session's first turn, the runtime-context snapshot, the title and the
// request header and context; block-start, the deltas, every block-end,
// usage and finish, then assistant/message (sourceEventSeqs the chunks');
// step/end, turn/end and idle. Subagent runs a child turn in a child
// session between subagent.started and subagent.finished; ModelError and
// MaxTokens end a turn with an error or at the output cap; Refuse makes
// the prompt fail; Event appends any event; Ask sends the client a
// request and waits for its answer. Prompts to a busy session queue (a
// receipt each, one turn after the other); sessions run concurrently.
// Script.Reply scripts the prompts past Script.Turns by their content.
//
// A prompt past the script (no turn, no Reply) is answered with -32603
// and the text of its error, which wraps ErrPastScript and numbers the
// prompt from 1: "scripted: no turn scripted for prompt 3 (session main),
// past the script's 2 turns".
//
// Pause waits on a timer of the runtime's goroutine: served inside a
// testing/synctest bubble, pauses take no real time.
//
// # Serving
//
// Serve plays a script on any pair of streams, as the runtime's side of
// one connection; a runtime's main is a few lines:
//
//	s, err := scripted.LoadScript("turns.json")
//	if err != nil {
//		log.Fatal(err)
//	}
//	err = scripted.Serve(ctx, s, os.Stdin, os.Stdout) // wraps ErrPastScript when a prompt came past the script
//
// NewRuntime returns the sdkproto.Runtime itself, for an sdkproto.Server
// of the caller's own (with sdkproto.ServerOptions), with Options that
// hear of each prompt past the script as it comes; Runtime.Err then says
// whether one came.
//
// # Scripts in JSON
//
// A Script has a JSON form, documented on Script, for scripts written by
// hand in any language; LoadScript reads one from a file, and dshrpc
// serve-script FILE serves one on stdin and stdout:
//
//	{"turns": [[{"kind": "text", "parts": ["A cat ", "sits."]}],
//	           [{"kind": "text", "parts": ["A cat"]}, {"kind": "max-tokens"}]]}
//
// Reading is strict, and its errors say where: turns[1][2]: unknown kind
// "txt".
package scripted
