// Package fuzz holds the native fuzz targets and the rapid properties that
// show a peer cannot crash, hang, leak or lose a good frame of a linerpc
// connection, whatever bytes it sends and however they are cut.
//
// It has no API: everything is in its tests. The targets are
//
//	FuzzLineFraming     bytes in fuzzer-chosen chunks: lines.Reader and Conn
//	FuzzHeaderReader    garbage and Content-Length frames in turn, chunked: lines.HeaderReader
//	FuzzHeaderFraming   the same to a Conn with ContentLengthFraming: each frame after garbage handled once, in order
//	FuzzDetectFraming   white space, then frames of either framing: DetectFraming chooses right
//	FuzzDispatch        any lines to a serving Conn: one well-formed answer per request
//	FuzzResponses       any lines to a Conn with pending calls: the right call settles, once
//	FuzzSDKPayloads     any bytes as every sdkproto type, and through a Client
//	FuzzParamsDecoding  go-json decodes no invalid JSON into a params type
//	FuzzCancellation    any cancel params to a Conn under MCP's or LSP's policy: each request answered at most once, as the policy says
//	FuzzHTTPHandler     any body and Content-Type, whole or in chunks, to a transport.HTTPHandler: a documented status, well-formed answers with the ids expected
//	FuzzSchemaFor       any Go type reflect can build: openrpc describes it, or refuses exactly the types without JSON, and accepts what encoding/json and go-json write for it
//
// and, beside the scanner in internal/wire (its checks use that package's
// unexported helpers),
//
//	FuzzScan            wire.Scanner against encoding/json and go-json, lazy and guessed params against the full scan
//
// Run one with
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzDispatch$' -fuzztime 1m -parallel 1
//
// and all of them with make fuzz. The seed corpora under testdata/fuzz are
// generated from testdata/vectors and testdata/transcripts by
//
//	go test ./fuzz -run TestSeedCorpus -update
package fuzz
