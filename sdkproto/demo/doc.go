// Package demo is a scripted DeepSeek Harness runtime: no model, no
// network. It is to package sdkproto what net/http/httptest is to
// net/http, a stand-in peer for demos and tests of a client, and it is
// kept out of sdkproto so that the protocol package holds only the
// protocol. dshrpc serve-demo, the examples and the interop tests run it.
//
// # Serve it
//
// Serve runs a default Runtime behind an sdkproto.Server on any pair of
// streams; a runtime's main is one line:
//
//	err := demo.Serve(ctx, os.Stdin, os.Stdout)
//
// NewRuntime takes Options (the providers and reasoning efforts it
// accepts, the pace of streamed deltas) for a Server of the caller's own:
//
//	srv := sdkproto.NewServer(demo.NewRuntime(&demo.Options{Delay: 20 * time.Millisecond}), nil)
//
// # The script
//
// Every prompt is answered by echoing its text as an assistant message,
// with the event sequence of a real turn:
//
//	agent/inbox/spliced (receipt; inserted[0].id is the returned messageId)
//	session.status running          (only when the session was idle)
//	turn/start, agent/inbox/spliced (claim: removedCount 1, inserted [])
//	                                 -- the prompt result is written here
//	step/start, user/message, request/header (first turn of a session)
//	assistant/chunk: block-start, text-delta..., block-end, usage, finish
//	assistant/message (usage, sourceEventSeqs = the chunk seqs)
//	step/end, turn/end {kind: completed}
//	session.status idle             (when nothing else is queued)
//
// A prompt whose text starts with a command changes the script:
//
//	/think X     streams a reasoning block before the text X
//	/tool X      step 1 calls the tool "echo" with {"text":X}: tool/call and
//	             tool/result follow its assistant/message; step 2 answers
//	             "tool said: X"
//	/subagent X  step 1 calls the tool "subagent"; a child session (random
//	             UUID, seqs from 0) runs the prompt X between
//	             subagent.started and subagent.finished (provider spawn,
//	             lastAssistantMessage = the child's answer); the parent
//	             then answers "subagent said: <answer>"
//	/fail X      the model fails: finish {kind: error}, step/end, turn/end
//	             {kind: error, error: {message: X, code: FailureCode}}
//	/slow X      streams X word by word, Options.SlowDelay apart (for
//	             interrupting a turn with shutdown or Ctrl-C)
//
// Prompts queue per session: one turn at a time per session, while
// different sessions run concurrently. Shutdown cuts turns off.
package demo
