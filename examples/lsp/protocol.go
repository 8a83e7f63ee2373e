package main

import (
	"encoding/json"

	"github.com/linerpc/linerpc/rpc"
)

// The part of the Language Server Protocol this server speaks, as Go
// types and method descriptors. Member names follow the specification;
// positions count UTF-16 code units, as LSP's default position encoding
// does.

// Position is a place in a document: a zero-based line, and a zero-based
// offset in UTF-16 code units within it.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is the text between two positions, end excluded.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type DidOpenParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// ContentChange is one change of a document: the whole text when Range is
// nil (what this server asks for, full sync), or the text replacing Range.
type ContentChange struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

type DidChangeParams struct {
	TextDocument   VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []ContentChange                 `json:"contentChanges"`
}

type DidCloseParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

type HoverParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

type Hover struct {
	Contents MarkupContent `json:"contents"`
	Range    *Range        `json:"range,omitempty"`
}

// SeverityWarning is a Diagnostic's severity for a warning.
const SeverityWarning = 2

type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"`
	Source   string `json:"source"`
	Message  string `json:"message"`
}

type PublishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"` // never null: [] clears
}

type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// ClientCapabilities holds the one capability this server looks at.
type ClientCapabilities struct {
	Workspace struct {
		Configuration bool `json:"configuration"`
	} `json:"workspace"`
}

type InitializeParams struct {
	ProcessID    *int               `json:"processId"`
	ClientInfo   *ClientInfo        `json:"clientInfo,omitempty"`
	Capabilities ClientCapabilities `json:"capabilities"`
}

// TextDocumentSyncFull: the client sends the whole text on each change.
const TextDocumentSyncFull = 1

type ExecuteCommandOptions struct {
	Commands []string `json:"commands"`
}

type ServerCapabilities struct {
	TextDocumentSync       int                   `json:"textDocumentSync"`
	HoverProvider          bool                  `json:"hoverProvider"`
	ExecuteCommandProvider ExecuteCommandOptions `json:"executeCommandProvider"`
}

type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}

type ConfigurationItem struct {
	Section string `json:"section"`
}

type ConfigurationParams struct {
	Items []ConfigurationItem `json:"items"`
}

// The types of window/logMessage.
const (
	MessageError = 1
	MessageInfo  = 3
	MessageLog   = 4
)

type LogMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

type ExecuteCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

// LSP's error codes beyond JSON-RPC's (rpc.CodeRequestCancelled is the
// third).
const (
	CodeServerNotInitialized rpc.Code = -32002
	// CodeToyFailure is what toy/fail answers, with data.
	CodeToyFailure rpc.Code = 4001
)

// The methods. The server handles the requests and the notifications the
// client sends; it sends publishDiagnostics and logMessage, and calls
// workspace/configuration.
var (
	Initialize     = rpc.NewMethod[InitializeParams, InitializeResult]("initialize")
	Initialized    = rpc.NewNotification[rpc.NoParams]("initialized")
	Shutdown       = rpc.NewMethod[rpc.NoParams, any]("shutdown")
	Exit           = rpc.NewNotification[rpc.NoParams]("exit")
	DidOpen        = rpc.NewNotification[DidOpenParams]("textDocument/didOpen")
	DidChange      = rpc.NewNotification[DidChangeParams]("textDocument/didChange")
	DidClose       = rpc.NewNotification[DidCloseParams]("textDocument/didClose")
	HoverMethod    = rpc.NewMethod[HoverParams, *Hover]("textDocument/hover")
	ExecuteCommand = rpc.NewMethod[ExecuteCommandParams, any]("workspace/executeCommand")

	PublishDiagnostics = rpc.NewNotification[PublishDiagnosticsParams]("textDocument/publishDiagnostics")
	LogMessage         = rpc.NewNotification[LogMessageParams]("window/logMessage")
	Configuration      = rpc.NewMethod[ConfigurationParams, []json.RawMessage]("workspace/configuration")

	// Two methods of this server's own: toy/add takes its params by
	// position (an array of numbers) and answers their sum; toy/fail
	// always fails, with an error whose data echoes its params.
	Add  = rpc.NewMethod[[]float64, float64]("toy/add")
	Fail = rpc.NewMethod[json.RawMessage, any]("toy/fail")
)
