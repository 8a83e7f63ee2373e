// Package rpctest is the test kit of package rpc, as net/http/httptest is
// net/http's: what a test of a JSON-RPC server or client written with rpc
// needs, with nothing to write by hand.
//
//   - Start starts a Conn under test with its Peer, the far end of its
//     streams, scripted from the test's goroutine: Send a frame, take the
//     Next one, Expect one (a JSON pattern, numbers compared by value,
//     with placeholders such as "{{any}}" and "{{string}}"), take the
//     NextCall and Answer it;
//   - Pair connects two Conns in process, a client and its server;
//   - Recorder keeps each frame written to it, tells a test when a frame it
//     waits for arrives, and notes a Write that split a frame;
//   - ChunkReader serves bytes cut where a test (or a fuzzer) chooses, to
//     prove that a reader does not depend on how its input is cut;
//   - LockedBuffer is a bytes.Buffer that many goroutines may write;
//   - CheckNoLeak fails a test that leaves goroutines behind.
//
// A test of a server, in full:
//
//	func TestAdd(t *testing.T) {
//		_, peer := rpctest.Start(t, &rpc.Options{Handler: registry()})
//		peer.Send(`{"jsonrpc":"2.0","id":1,"method":"math/add","params":{"A":2,"B":3}}`)
//		peer.Expect(`{"jsonrpc":"2.0","id":1,"result":{"Sum":5}}`)
//	}
//
// Failures are reported on the test's goroutine, through the testing.TB
// the test passed in: nothing here ends a goroutine with runtime.Goexit.
// No wait hangs: each fails the test with what it waited for once MaxWait
// has passed. The Peer speaks newline framing.
//
// The placeholders of Expect stand where a value stands, and are JSON
// strings, quotes included, so that a pattern is itself JSON:
// "{{any}}" (any value), "{{absent}}" (the member is missing),
// "{{string}}" (any string), "{{uuid}}" (a lowercase canonical UUID),
// "{{positive-int}}" (an integer above 0). For example
//
//	peer.Expect(`{"jsonrpc":"2.0","id":"{{positive-int}}","method":"ping","params":"{{any}}"}`)
//
// A bare {{any}} is not JSON, and fails the test as a pattern it cannot
// read. Objects must have exactly the members expected; arrays match
// element by element.
package rpctest
