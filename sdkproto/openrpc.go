package sdkproto

import (
	"encoding/json"
	"slices"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

// DirectionExtension is the member of each method of OpenRPCDocument that
// says which end sends it, DirectionClientToRuntime or
// DirectionRuntimeToClient. OpenRPC describes the methods a server
// serves; in DSH the runtime also sends notifications to its client,
// which OpenRPC has no word for, so the document describes them as
// methods without a result and marks them with this extension.
const DirectionExtension = "x-dsh-direction"

// The values of DirectionExtension.
const (
	// DirectionClientToRuntime marks the requests a client sends and the
	// runtime answers: initialize, session/prompt and shutdown.
	DirectionClientToRuntime = "client-to-runtime"
	// DirectionRuntimeToClient marks the notifications the runtime sends
	// its client: session.event, session.status, subagent.started and
	// subagent.finished.
	DirectionRuntimeToClient = "runtime-to-client"
)

// OpenRPCDocument returns the OpenRPC 1.3 document of the DSH protocol,
// written by openrpc.Describe from the package's descriptors (Initialize,
// SessionPrompt, Shutdown, SessionEvent, SessionStatus, SubagentStarted,
// SubagentFinished) and the schemas of the wire types (their JSONSchema
// methods), with:
//
//   - for each method, a summary, a description, the errors the runtime
//     answers it with (-32603 and the texts of docs/wire.md; it answers
//     with no other code) and an example recorded from the real runtime
//     (testdata/transcripts);
//   - the DirectionExtension member on every method: the four
//     notifications are methods without a result sent by the runtime;
//   - the shared schemas in its components ("#/components/schemas/...").
//
// The schemas say what docs/wire.md §3 and §4 and this package's checks
// (validate.go) say, wherever JSON Schema draft-07 can: see the
// JSONSchema methods and docs/sdkproto.md, which lists the rules of the
// contract that no schema can state (those across frames, across two
// params, or about the runtime's state). They refuse nothing the runtime
// or its clients send: unknown members are allowed everywhere, and the
// unions the runtime's output may extend (content blocks, events, stream
// chunks, message sources, turn-end reasons) stay open.
//
// Each call builds a new document, which the caller may change; the same
// document, encoded, gives the same bytes every time. validator.New
// compiles it to check params and results:
//
//	v, err := validator.New(sdkproto.OpenRPCDocument())
//	err = v.Params("session/prompt", params) // a *validator.Error
func OpenRPCDocument() *openrpc.Document {
	doc, err := openrpc.Describe(documentInfo(),
		Initialize.Info(), SessionPrompt.Info(), Shutdown.Info(),
		SessionEvent.Info(), SessionStatus.Info(), SubagentStarted.Info(), SubagentFinished.Info())
	if err != nil {
		panic("sdkproto: OpenRPCDocument: " + err.Error()) // the descriptors are the package's own: a test catches it
	}
	schemas := schemaComponents()
	if doc.Components != nil {
		for name, s := range doc.Components.Schemas {
			if _, taken := schemas[name]; taken {
				panic("sdkproto: OpenRPCDocument: two schemas named " + name)
			}
			schemas[name] = s
		}
	}
	doc.Components = &openrpc.Components{Schemas: schemas}
	for i := range doc.Methods {
		m := &doc.Methods[i]
		dir := DirectionClientToRuntime
		if m.IsNotification() {
			dir = DirectionRuntimeToClient
		}
		if m.Extensions == nil {
			m.Extensions = map[string]json.RawMessage{}
		}
		m.Extensions[DirectionExtension] = rawJSON(dir)
		if order := paramsOrder[m.Name]; order != nil {
			slices.SortStableFunc(m.Params, func(a, b openrpc.ContentDescriptor) int {
				return slices.Index(order, a.Name) - slices.Index(order, b.Name)
			})
		}
	}
	return doc
}

// paramsOrder lists the params of each method in the order docs/wire.md
// gives them (Describe sorts the members of a type whose fields do not
// name them).
var paramsOrder = map[string][]string{
	"initialize":        {"cwd", "provider", "model", "reasoningEffort", "maxTokens"},
	"session/prompt":    {"sessionId", "contentBlocks"},
	"session.event":     {"sessionId", "event"},
	"session.status":    {"sessionId", "status"},
	"subagent.started":  {"parentSessionId", "childSessionId"},
	"subagent.finished": {"provider", "agentId", "parentSessionId", "childSessionId", "status", "stopReason", "lastAssistantMessage"},
}

func documentInfo() openrpc.Info {
	return openrpc.Info{
		Title:   "DeepSeek Harness SDK protocol (DSH)",
		Version: ServerVersion,
		Description: "The protocol between a DeepSeek Harness runtime and the SDK clients that drive it " +
			"(docs/wire.md of github.com/linerpc/linerpc, which this document follows; the newer upstream revision). " +
			"A client starts the runtime as a child process and speaks JSON-RPC 2.0 on its stdin and stdout, one " +
			"compact frame per line, each ended by LF. The client sends the requests initialize, session/prompt " +
			"and shutdown; the runtime sends the notifications session.event, session.status, subagent.started and " +
			"subagent.finished, which this document describes as methods without a result. The member " +
			DirectionExtension + " of each method says who sends it: " + DirectionClientToRuntime + " or " +
			DirectionRuntimeToClient + ". The runtime answers every failure, and a method it does not serve, with " +
			"code -32603 and a message (\"unknown DeepSeek Harness SDK runtime method: ${method}\"), never with another " +
			"code; it answers no notification. The schemas allow members they do not name, and the unions the " +
			"runtime may extend (content blocks, events, stream chunks, message sources, turn-end reasons) stay open. " +
			"info.version is the serverInfo.version the runtime reports in every revision.",
	}
}

// internalError is the code of every error the runtime answers.
const internalError = int64(rpc.CodeInternalError)

// The descriptions of the methods, attached to the descriptors. The
// examples are frames recorded from the real runtime, verbatim: the test
// of OpenRPCDocument finds each in the transcript its summary names.
var (
	initializeDoc = rpc.Doc{
		Summary: "Sets the route (cwd, provider, model, output cap) of the sessions created afterwards; the runtime's readiness barrier.",
		Description: "docs/wire.md §3.1. The runtime checks, in order: reasoningEffort, when present, is a non-empty string; " +
			"maxTokens, when present, is a positive safe integer; cwd is a string (it resolves it as Node's path.resolve " +
			"does); an adapter serves the provider (it mounts the DeepSeek adapter itself for deepseek-official); the " +
			"adapter resolves the exact route (model, effort). On success the route applies to sessions created " +
			"afterwards; a failed initialize changes nothing, and a second one replaces the route. The runtime answers " +
			"once its plugins have loaded, so the answer includes its boot: a client waits for it before session/prompt.",
		ResultName: "InitializeResult",
		Errors: []rpc.ErrorDoc{
			{Code: internalError, Message: ErrReasoningEffort.Error()},
			{Code: internalError, Message: ErrMaxTokens.Error()},
			{Code: internalError, Message: `The "paths[0]" argument must be of type string. Received undefined (cwd missing or not a string: Node's own TypeError)`},
			{Code: internalError, Message: `no adapter registered for provider "${provider}"`},
			{Code: internalError, Message: `provider "${provider}" model "${model}" does not support reasoning effort "${effort}" (the route's resolution, by the adapter)`},
		},
		Examples: []rpc.Example{{
			Name:    "text-turn",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"cwd":"/tmp/TestRecordtext-turn2453169345/002","maxTokens":4096,"model":"deepseek-v4-flash","provider":"deepseek-official"}`),
			Result:  json.RawMessage(`{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}`),
		}},
	}
	sessionPromptDoc = rpc.Doc{
		Summary: "Queues a user message on a session, creating the session on first use, and returns the queued message's id.",
		Description: "docs/wire.md §3.2, §5.3. The runtime writes the prompt's receipt (a session.event agent/inbox/spliced " +
			"whose inserted messages include the one whose id it returns) and, when the agent was idle, session.status " +
			"running before its answer. The answer names the enqueueing only: the turn's events follow, and the session's " +
			"next session.status idle ends it. Image uploads are admitted (checked as canonical base64, then against the " +
			"store's limits and types, then decoded) and stored as durable references. A client subscribes before it " +
			"prompts, and mints a fresh session id per conversation.",
		ResultName: "SessionPromptResult",
		Errors: []rpc.ErrorDoc{
			{Code: internalError, Message: ErrNotInitialized.Error()},
			{Code: internalError, Message: ErrShuttingDown.Error()},
			{Code: internalError, Message: "session agent was disposed outside the server: ${sessionId}"},
			{Code: internalError, Message: `session "${sessionId}" already has a persisted log on disk; load/resume it instead of creating`},
			{Code: internalError, Message: ErrNoAttachmentStore.Error()},
			{Code: internalError, Message: "Image upload is not canonical base64."},
			{Code: internalError, Message: "Image type ${mimeType} is not accepted by this deployment."},
			{Code: internalError, Message: "Declared image type does not match its bytes."},
			{Code: internalError, Message: "Unsupported or malformed image data."},
			{Code: internalError, Message: "Cannot read properties of undefined (reading 'filter') (contentBlocks missing; null: of null; not an array: blocks.filter is not a function)"},
		},
		Examples: []rpc.Example{{
			Name:    "text-turn",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"contentBlocks":[{"text":"say hi","type":"text"}],"sessionId":"main"}`),
			Result:  json.RawMessage(`{"messageId":"4b684f85-984c-430c-a534-b8516bb9d317"}`),
		}},
	}
	shutdownDoc = rpc.Doc{
		Summary: "Stops the runtime: it disposes its agents, answers {} and exits 0.",
		Description: "docs/wire.md §3.3, §5.6. Takes no params (the TypeScript client sends {}, the Python client none; " +
			"the runtime ignores them). From the start of shutdown no notification is sent and session/prompt is " +
			"refused. Repeated or concurrent shutdowns share one task. When teardown fails the answer is an error " +
			"(one failure: its message) and the process does not exit by itself.",
		ResultName: "ShutdownResult",
		Errors:     []rpc.ErrorDoc{{Code: internalError, Message: ErrTeardownFailed.Error() + " (several teardown failures; one answers with its own message)"}},
		Examples: []rpc.Example{{
			Name:    "text-turn",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Result:  json.RawMessage(`{}`),
		}},
	}
	sessionEventDoc = rpc.Doc{
		Summary: "Runtime to client: one event appended to the log of a session of the runtime.",
		Description: "docs/wire.md §3.4, §5.5. Every event of every session the runtime publishes (the SDK's sessions, " +
			"subagent children, sessions other plugins create), in the order appended; a session's forwarded events " +
			"have contiguous seqs from its first. The client tells a session's tree by subagent.started.",
		Examples: []rpc.Example{{
			Name:    "text-turn: the receipt of a prompt",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"sessionId":"main","event":{"type":"agent/inbox/spliced","seq":3,"time":1796072797833,"data":{"target":"next-turn","start":0,"inserted":[{"content":[{"text":"say hi","type":"text"}],"source":{"kind":"user"},"role":"user","id":"4b684f85-984c-430c-a534-b8516bb9d317"}]}}}`),
		}, {
			Name:    "text-turn: the end of the turn",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"sessionId":"main","event":{"type":"turn/end","seq":21,"time":1796072798133,"data":{"turn":1,"reason":{"kind":"completed"}}}}`),
		}},
	}
	sessionStatusDoc = rpc.Doc{
		Summary: "Runtime to client: the agent of a session entered running or idle.",
		Description: "docs/wire.md §3.5, §5.4. Sent on every change of every agent of the runtime, children included; the " +
			"same status is never sent twice in a row. The root session's next idle after a prompt's receipt ends what " +
			"the prompt started.",
		Examples: []rpc.Example{{
			Name:    "text-turn: running",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"sessionId":"main","status":"running"}`),
		}, {
			Name:    "text-turn: idle",
			Summary: "testdata/transcripts/text-turn.ndjson",
			Params:  json.RawMessage(`{"sessionId":"main","status":"idle"}`),
		}},
	}
	subagentStartedDoc = rpc.Doc{
		Summary: "Runtime to client: a session was created whose header names a parent session.",
		Description: "docs/wire.md §3.6, §5.5, §6.2. The child's own events follow. Clients record the edge child to " +
			"parent (two non-empty ids that differ; a later edge for the same child replaces it) before they dispatch " +
			"the notification, to scope subscriptions to a session's tree.",
		Examples: []rpc.Example{{
			Name:    "subagent",
			Summary: "testdata/transcripts/subagent.ndjson",
			Params:  json.RawMessage(`{"parentSessionId":"main","childSessionId":"cde254d6-ad0c-4db0-833f-baf12c6e6149"}`),
		}},
	}
	subagentFinishedDoc = rpc.Doc{
		Summary: "Runtime to client: a local subagent run ended.",
		Description: "docs/wire.md §3.7, §5.5. Sent after the child's idle, before the parent's tool/result, for the runs " +
			"the subagent service recorded as local (agentId then equals childSessionId); each continuation of a " +
			"child gets its own. status is ok when stopReason is completed (or max-tokens, with the runtime's " +
			"maxTokensAsSuccess), error otherwise.",
		Examples: []rpc.Example{{
			Name:    "subagent",
			Summary: "testdata/transcripts/subagent.ndjson",
			Params:  json.RawMessage(`{"provider":"spawn","agentId":"cde254d6-ad0c-4db0-833f-baf12c6e6149","parentSessionId":"main","childSessionId":"cde254d6-ad0c-4db0-833f-baf12c6e6149","status":"ok","stopReason":"completed","lastAssistantMessage":[{"type":"text","text":"hi from the child"}]}`),
		}},
	}
)
