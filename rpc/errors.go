package rpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Code is a JSON-RPC error code.
type Code int64

// The error codes that JSON-RPC 2.0 reserves. This package writes only
// CodeMethodNotFound, CodeInvalidParams, CodeInternalError and
// CodeOverloaded on its own (and CodeRequestCancelled under
// LSPCancellation); a handler may return any code in an *Error.
const (
	CodeParseError     Code = -32700
	CodeInvalidRequest Code = -32600
	CodeMethodNotFound Code = -32601
	CodeInvalidParams  Code = -32602
	CodeInternalError  Code = -32603
)

// CodeOverloaded answers a request that found every handler slot taken and
// no room to wait for its turn, or whose turn came at the cap of handlers
// alive (see Options.MaxWaiting, MaxConcurrentRequests): the request was
// not run, and the peer may send it again later. It is in the range that
// JSON-RPC 2.0 leaves to servers, clear of the codes MCP and LSP use.
const CodeOverloaded Code = -32050

// Error is a JSON-RPC error object. A call that the peer answers with an
// error returns an *Error; a handler that returns an *Error (or an error
// wrapping one) has it sent as is.
//
// It round-trips a peer's error object: a missing or unusable code sets
// CodeMissing, and Data keeps the raw JSON of the data member (nil when the
// member is absent, the bytes "null" when it is null).
type Error struct {
	Code    Code
	Message string
	Data    json.RawMessage
	// CodeMissing reports that the error object has no integer code: the
	// member is absent, not a number, or not an integer that fits Code. When
	// set, Code is zero and no code member is written.
	CodeMissing bool
}

// Error returns "jsonrpc error CODE: MESSAGE", or "jsonrpc error: MESSAGE"
// when the code is missing.
func (e *Error) Error() string {
	if e.CodeMissing {
		return "jsonrpc error: " + e.Message
	}
	return "jsonrpc error " + strconv.FormatInt(int64(e.Code), 10) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code, so that a
// code is matched with errors.Is, whatever the message and data:
//
//	if errors.Is(err, &rpc.Error{Code: rpc.CodeMethodNotFound}) { ... }
//
// An error object without a code matches a target without one
// (CodeMissing set).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && e.CodeMissing == t.CodeMissing && e.Code == t.Code
}

// errorMessageFallback is the message of an error object whose message member
// is absent or not a string; the TypeScript peers use the same text.
const errorMessageFallback = "JSON-RPC error"

var (
	// ErrClosed is returned by calls and notifications on a connection that
	// Close has ended, and ends the calls pending when it was closed.
	ErrClosed = errors.New("rpc: connection closed")
	// ErrInputEnded ends the calls pending when the peer's input stream
	// reached its end; no response can arrive after it.
	ErrInputEnded = errors.New("rpc: input ended")
	// ErrWriteTimeout ends a connection whose Write made no progress for
	// Options.WriteTimeout.
	ErrWriteTimeout = errors.New("rpc: write timed out")
	// ErrInvalidResult wraps the decoding error of a result that does not
	// decode into the call's result type.
	ErrInvalidResult = errors.New("rpc: invalid result")
	// ErrNotStarted is returned by a call on a Conn whose Start was never
	// called: nothing would ever read its response.
	ErrNotStarted = errors.New("rpc: call on a Conn that was not started (call Start first)")
	// ErrFrameTooLarge is returned when a frame to send is longer than
	// Options.MaxFrameSize: the peer would drop it unread, and nothing is
	// sent. It also ends a call whose response was longer than
	// MaxFrameSize, when the id could be read from the start of the
	// response the Conn skipped (the peer wrote it early, as peers do).
	ErrFrameTooLarge = errors.New("rpc: frame larger than the maximum frame size")
	// ErrPeerCancelled is the cause (context.Cause) of a request handler's
	// context that the peer's cancel notification ended (see
	// CancelPolicy). It is wrapped with the peer's reason when the peer
	// gave one.
	ErrPeerCancelled = errors.New("rpc: request cancelled by the peer")
)
