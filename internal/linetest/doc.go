// Package linetest is the vocabulary of the module's own tests of
// line-framed streams, in one place for rpc, sdkproto, interop, fuzz and
// cmd/dshrpc, as net/http/httptest and testing/iotest are for theirs:
//
//   - ChunkReader serves bytes cut where a test (or a fuzzer) chooses;
//   - LockedBuffer is a bytes.Buffer that many goroutines may write;
//   - Recorder keeps each frame written to it, tells a test when a frame it
//     waits for arrives, and notes a Write that split a frame;
//   - Peer is the far end of a stream under test, scripted from the test's
//     goroutine: send a line, take the next frame, expect one, answer a
//     request;
//   - CheckNoLeak fails a test that leaves goroutines behind.
//
// Failures are reported on the test's goroutine, through the testing.TB
// the test passed in: nothing here ends a goroutine with runtime.Goexit.
// No wait hangs: each fails the test with what it waited for once MaxWait
// has passed.
package linetest
