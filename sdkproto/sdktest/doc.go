// Package sdktest is a scriptable DSH runtime for the tests of programs
// that drive one with package sdkproto: a test declares what the runtime
// does for each prompt (text streamed in deltas, reasoning, tool calls
// and their results, a subagent with its own events, a refused prompt, a
// failed model call, usage, pauses on the test's clock) and gets a
// connected *sdkproto.Client, or a command line that starts the runtime
// for a program that launches its own. The runtime is an sdkproto.Server
// whose Runtime plays the script, so its frames have the envelope, the
// seqs, the order and the status transitions of the real runtime's
// recorded turns (testdata/transcripts); it records every frame in both
// directions for the test's assertions.
package sdktest
